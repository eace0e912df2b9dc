"""How each reader of the Spark benchmarks opens a table and runs it into a sink, and the
benchmarks' Spark session."""

from __future__ import annotations

import os

import paimon_feed.spark
from benchmarks._common import spark_stats
from benchmarks._common.java_connector import JavaConnector
from benchmarks._common.spark_setup import STATS_DIR, WIDE_DDL, data_files
from benchmarks._common.spark_sources import ArrowFilesSource, SnapshotIdsSource
from benchmarks.java_connector_worker import DIGEST_SQL, into_sink  # (the same fingerprint on both sides)

#: How the session's Python workers talk to the JVM: the benchmark's session uses Unix domain
#: sockets, as the Spark docs page advises; ``measure_python_sockets`` compares both in probe processes.
SOCKETS = {"tcp": "false", "unix": "true"}
SESSION_SOCKETS = "unix"


class Readers:
    """How each reader opens a table as a batch or a stream DataFrame (same table, same rows),
    and runs it into a sink. Paimon's Java connector runs in its own process (``java``, a
    :class:`JavaConnector`), so for it :meth:`available_now`, :meth:`run_batch` and
    :meth:`digest` send the same work there."""

    def __init__(self, spark, warehouse: str, java: JavaConnector | None) -> None:
        self.spark, self.warehouse, self.java = spark, warehouse, java

    def names(self) -> list[str]:
        return ["source", "python_ceiling", "spark_parquet"] + (["java_connector"] if self.java else [])

    def table_uri(self, name: str) -> str:
        return "file:" + os.path.join(self.warehouse, "db.db", name)

    def batch(self, reader: str, name: str, ddl: str):
        spark = self.spark
        if reader == "source":
            return spark.read.format("paimon_feed").option("warehouse", self.warehouse).option("table", f"db.{name}").load()
        if reader == "python_ceiling":
            return self._arrow_files(spark.read, name, ddl).load()
        if reader == "spark_parquet":
            return spark.read.parquet(*data_files(self.warehouse, name))
        raise ValueError(f"{reader} has no DataFrame in this session")

    def stream(self, reader: str, name: str, ddl: str, **source_options):
        spark = self.spark
        if reader == "source":
            stream = spark.readStream.format("paimon_feed").option("warehouse", self.warehouse)
            return stream.option("table", f"db.{name}").options(**source_options).load()
        if reader == "python_ceiling":
            return self._arrow_files(spark.readStream, name, ddl).options(**source_options).load()
        if reader == "spark_parquet":
            return spark.readStream.schema(ddl.replace(" not null", "")).options(**source_options).parquet(
                os.path.join(self.warehouse, "db.db", name, "bucket-*"))
        raise ValueError(f"{reader} has no DataFrame in this session")

    def available_now(self, reader: str, name: str, ddl: str, sink: str, out_dir: str, checkpoint: str,
                      **options) -> int:
        """An ``AvailableNow`` query of ``reader`` into ``sink``, from the DataFrame's creation
        through ``start()`` to termination; the rows it read. ``options`` are the reader's."""
        if reader == "java_connector":
            return self.java.call("available_now", path=self.table_uri(name), sink=sink, out=out_dir,
                                  checkpoint=checkpoint, options=options)["rows"]
        return run_available_now(self.stream(reader, name, ddl, **options), sink, out_dir, checkpoint)

    def run_batch(self, reader: str, name: str, ddl: str, sink: str, out_dir: str) -> None:
        if reader == "java_connector":
            self.java.call("batch", path=self.table_uri(name), sink=sink, out=out_dir, options={})
        else:
            run_batch(self.batch(reader, name, ddl), sink, out_dir)

    def digest(self, reader: str, name: str, *, stream: bool, checkpoint: str, out_dir: str, **options) -> dict:
        """:data:`DIGEST_SQL` over a batch read, or over the rows an ``AvailableNow`` stream
        wrote into a Parquet sink at ``out_dir`` (the memory sink would hold them all in the
        driver)."""
        if reader == "java_connector":
            return self.java.call("digest", path=self.table_uri(name), stream=stream, options=options,
                                  checkpoint=checkpoint, out=out_dir)["digest"]
        if stream:
            self.available_now(reader, name, WIDE_DDL, "parquet", out_dir, checkpoint, **options)
            df = self.spark.read.parquet(out_dir)
        else:
            df = self.batch(reader, name, WIDE_DDL)
        row = df.selectExpr(*DIGEST_SQL).collect()[0]
        return {key: (None if value is None else int(value)) for key, value in row.asDict().items()}

    def _arrow_files(self, builder, name: str, ddl: str):
        from paimon_feed.spark.driver import READ_BATCH_ROWS

        builder = builder.format("arrow_files").option("files", ",".join(data_files(self.warehouse, name)))
        return builder.option("partitions", "2").option("batchRows", str(READ_BATCH_ROWS)).option("ddl", ddl)


def run_available_now(df, sink: str, out_dir: str, checkpoint: str) -> int:
    """Start ``df`` as an ``AvailableNow`` query into ``sink``; rows it read, after termination."""
    writer = df.writeStream.option("checkpointLocation", checkpoint).trigger(availableNow=True)
    query = into_sink(writer, sink, out_dir).start()
    query.awaitTermination()
    return sum(progress.numInputRows for progress in query.recentProgress)


def run_batch(df, sink: str, out_dir: str) -> None:
    if sink == "noop":
        df.write.format("noop").mode("overwrite").save()
    else:
        df.write.mode("overwrite").parquet(out_dir)


# --- 1. throughput --------------------------------------------------------------------------------


def new_session(app_name: str, sockets: str):
    """The benchmark's ``local[2]`` session, its Python workers on ``sockets`` (a key of
    :data:`SOCKETS`), with this source and the do-nothing sources registered."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]").appName(app_name)
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
        .config(paimon_feed.spark.UNIX_SOCKETS_CONF, SOCKETS[sockets])
    )
    for name, value in spark_stats.worker_env(STATS_DIR).items():
        builder = builder.config(f"spark.executorEnv.{name}", value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    paimon_feed.spark.register(spark)
    ArrowFilesSource.register(spark)
    SnapshotIdsSource.register(spark)
    return spark
