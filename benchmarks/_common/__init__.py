"""What the benchmarks share: scratch directories (:mod:`.scratch`), latency statistics
(:mod:`.stats`), storage-call counters (:mod:`.counting`), S3 request kinds and prices
(:mod:`.s3_costs`), the Spark driver's counters (:mod:`.spark_stats`), the Spark benchmarks' set-up
(:mod:`.spark_setup`, :mod:`.spark_sources`, :mod:`.spark_readers`, :mod:`.java_connector`), the
set-up of the catch-up, S3, warehouse and reliability benchmarks' parts (:mod:`.catchup_setup`,
:mod:`.s3_setup`, :mod:`.warehouse_setup`, :mod:`.reliability_setup`) and the docs' number formats
(:mod:`.figures`); the moto helpers are
the tests' own (``tests.s3_support``). Measurement code lives here, not in ``paimon_feed``."""
