"""What the benchmarks share: scratch directories (:mod:`.scratch`), latency statistics
(:mod:`.stats`), storage-call counters (:mod:`.counting`), S3 request kinds and prices
(:mod:`.s3_costs`) and the Spark driver's counters (:mod:`.spark_stats`); the moto helpers are
the tests' own (``tests.s3_support``). Measurement code lives here, not in ``paimon_feed``."""
