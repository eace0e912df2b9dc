"""Do-nothing Python data sources: the ceilings the Spark benchmarks hold this source against."""

from __future__ import annotations

import os


class ArrowFilesSource:
    """The ceiling of Spark's Python data source path: a source that does nothing but yield the
    Arrow batches pyarrow reads from the given Parquet files (no Paimon planning, merging or
    schema work), as a batch source and as a stream source whose offset counts the files read
    (all of them in one micro-batch, or ``filesPerTrigger`` a micro-batch, in the order given).
    Registered as ``arrow_files``; built lazily so the module imports without PySpark."""

    @staticmethod
    def register(spark) -> None:
        from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
        from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

        def split(options, start: int = 0, end: int | None = None) -> list:
            files, count = options["files"].split(",")[start:end], int(options["partitions"])
            return [InputPartition(files[i::count]) for i in range(count)]

        def read_files(options, partition):
            import pyarrow.parquet as pq

            for path in partition.value:
                yield from pq.ParquetFile(path).iter_batches(batch_size=int(options["batchRows"]))

        class Reader(DataSourceReader):
            def __init__(self, options):
                self.options = options

            def partitions(self):
                return split(self.options)

            def read(self, partition):
                return read_files(self.options, partition)

        class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
            def __init__(self, options):
                self.options = options

            def initialOffset(self):
                return {"files": 0}

            def latestOffset(self, start, limit):
                total, step = len(self.options["files"].split(",")), int(self.options.get("filesPerTrigger", 0))
                return {"files": min(total, start["files"] + step) if step else total}

            def prepareForTriggerAvailableNow(self):
                pass

            def partitions(self, start, end):
                return [] if start == end else split(self.options, start["files"], end["files"])

            def read(self, partition):
                return read_files(self.options, partition)

        class Source(DataSource):
            @classmethod
            def name(cls):
                return "arrow_files"

            def schema(self):
                return self.options["ddl"]

            def reader(self, schema):
                return Reader(self.options)

            def streamReader(self, schema):
                return StreamReader(self.options)

        spark.dataSource.register(Source)


class SnapshotIdsSource:
    """The floor under a Python stream source's commit-to-batch latency: its offset is the newest
    snapshot id in a local table's snapshot directory (one ``os.listdir`` per trigger: no
    notifier hand-over, no Paimon planning) and a micro-batch yields one ``(id, commit)`` row per
    new snapshot id, both the id, read from nowhere. Registered as ``snapshot_ids``."""

    @staticmethod
    def register(spark) -> None:
        from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

        def newest(directory: str) -> int:
            return max((int(name[len("snapshot-"):]) for name in os.listdir(directory)
                        if name.startswith("snapshot-")), default=0)

        class StreamReader(DataSourceStreamReader):
            def __init__(self, options):
                self.directory = options["snapshotDir"]

            def initialOffset(self):
                return {"snapshot": newest(self.directory)}

            def latestOffset(self, start=None, limit=None):
                return {"snapshot": newest(self.directory)}

            def partitions(self, start, end):
                return [InputPartition((start["snapshot"] + 1, end["snapshot"]))]

            def read(self, partition):
                first, last = partition.value
                for snapshot_id in range(first, last + 1):
                    yield snapshot_id, snapshot_id

        class Source(DataSource):
            @classmethod
            def name(cls):
                return "snapshot_ids"

            def schema(self):
                return "id bigint, commit bigint"

            def streamReader(self, schema):
                return StreamReader(self.options)

        spark.dataSource.register(Source)


# --- Paimon's Java connector ----------------------------------------------------------------------
