"""Spark benchmark: the ``paimon_feed`` source side by side with the other ways to read a Paimon
table in Spark, same run, same tables, same sinks.

    python -m benchmarks.spark_bench [--sizes 4000000,32000000] [--pk-rows 1000000]
                                     [--latency-commits 20] [--idle-seconds 60] [--smoke]

Readers: this source (``paimon_feed``, on the project's PySpark), Paimon's own Java Spark
connector, a do-nothing Python data source that yields the table's Parquet files' Arrow batches
(batch and stream: the ceiling of Spark's Python data source path) and, for context, Spark's own
Parquet reader on the same files. Spark runs ``local[2]``.

The Java connector is ``paimon-spark-3.5`` 0.9.0, the newest Paimon Spark connector Maven serves
here (no 1.x, none for Spark 4: see ``benchmarks/java/pom.xml``). It does not run on PySpark 4,
so it runs on PySpark 3.5.9 in a process of its own on the same machine
(``java_connector_worker.py``, one long-lived ``local[2]`` session answering JSON-line commands);
its cases are interleaved with the others' round by round like any other case. Maven copies the
jars into the cache of ``tests/interop/fetch_java.py`` and the bench makes the PySpark 3.5 venv
there once. Where Maven cannot supply the jars the run records Maven's answer and goes on
without the connector.

1. Throughput, for each append table of ``--sizes`` rows (one commit per million rows, at least
   16) and a primary-key table (``changelog-producer=input``; its second half of commits updates
   the first half's keys): each reader into ``noop`` and into a Parquet file sink, as a
   ``Trigger.AvailableNow`` query (``start()`` to termination) and as a batch read. Cases are
   interleaved: each round runs every case once, in an order of its own, after one warm-up
   round; medians of ``--repeats`` rounds. pypaimon's own ``to_arrow`` is there as a reference (no Spark). Then,
   untimed, a fingerprint of what this source and the connector read (batch and stream) is
   compared (``reads_compared``).
2. ``AvailableNow`` start-up: the same queries on a 10-row table, from the DataFrame's creation
   through ``start()`` to termination, in a session already up (for the connector: in its
   worker's session, timed here around the request).
3. Commit to the END of the micro-batch: a query follows a table while a writer commits;
   latency runs from the snapshot file's mtime to the moment the ``foreachBatch`` function
   returns, after it read the micro-batch's rows (its entry is kept too). With
   ``processingTime="0 seconds"`` the writer commits at random intervals (0.2-0.6 s); with a 1 s
   trigger, whose triggers Spark fires on whole seconds of the wall clock, it commits at random
   phases within the second, one commit per second. Every reader of a round gets the same
   intervals and phases, so the wait for the trigger is the same for all. This source with
   ``notifier=auto`` (the default: on a local table, a storage check on every trigger) and with
   push (``notifier=local``: inotify), a do-nothing Python stream source (the newest snapshot id by
   listing the snapshot directory on every trigger, rows read from nowhere: the floor under any
   Python source), Spark's own file source on the table's Parquet files (the JVM on the same
   Spark) and the Java connector (``scan.mode=latest``), which checks storage on every
   trigger. The session's Python workers use Unix domain sockets
   (``spark.python.unix.domain.socket.enabled``, as the Spark docs page advises); probe processes with
   sessions of their own measure this source and the do-nothing source at a 0 s trigger over
   TCP (Spark's default) and over Unix domain sockets, alternating.
4. Storage requests per idle minute, counted at the server: queries follow idle tables on a
   ``moto_server`` process, this source on ``s3://`` (push: ``notifier=sqs``; polling:
   ``storage-per-trigger``) and the Java connector on ``s3a://`` (hadoop-aws 3.3.4, the Hadoop of
   PySpark 3.5.9), and every request in moto's log that names a table is counted.

Writes ``benchmarks/results/spark.json``. This is a measurement, not a test: nothing here fails
on time. Load averages are recorded before and after each part, because Spark's figures on a
shared 2-core machine move with them. ``--smoke`` runs every part at toy size in minutes.
"""

from __future__ import annotations

import argparse
import collections
import glob
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import random
import re
import select
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

import paimon_feed.spark
from paimon_feed._layout import local_url
from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")

from benchmarks._common import spark_stats
from benchmarks._common.s3_costs import s3_request_kind, usd_per_month  # (S3 request kinds and prices)
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.stats import percentile
from benchmarks.java_connector_worker import DIGEST_SQL, ArrivalSink, into_sink  # (the same fingerprint on both sides)
from tests.interop.fetch_java import cache_dir  # (the Java cache root shared with interop tests)

WIDE = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("commit", pa.int64()),
        ("payload", pa.string()),
        ("value", pa.float64()),
        ("ts", pa.timestamp("us")),
    ]
)
WIDE_DDL = "id bigint not null, commit bigint, payload string, value double, ts timestamp_ntz"
SMALL = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64())])
SMALL_DDL = "id bigint not null, commit bigint"
PK_OPTIONS = {"bucket": "2", "changelog-producer": "input"}
WARM_UP_COMMITS = 3
#: How this source follows the local latency table: the default (on a local file system a
#: storage check, a ``stat``, on every trigger) and inotify push, asked for by name.
MODES = {
    "auto": {"notifier": "auto"},
    "push": {"notifier": "local"},
}
#: The floor under any Python stream source's latency: :class:`SnapshotIdsSource`.
PYTHON_CEILING = "python_ceiling"
LABELS = {
    "auto": "notifier=auto, the default (on a local table: a storage check on every trigger)",
    "push": "push (notifier=local: inotify)",
    "storage-per-trigger": "poll storage on every latestOffset",
    PYTHON_CEILING: "do-nothing Python source (lists the snapshot directory on every trigger, reads nothing)",
    "spark_parquet": "Spark's file source on the table's Parquet files (lists the bucket directories on every trigger)",
    "java_connector": "Paimon's Java connector (it checks storage on every trigger)",
}
TRIGGERS = {"0 seconds": "0 seconds", "1 second": "1 second"}
#: How the session's Python workers talk to the JVM: the benchmark's session uses Unix domain
#: sockets, as the Spark docs page advises; ``measure_python_sockets`` compares both in probe processes.
SOCKETS = {"tcp": "false", "unix": "true"}
SESSION_SOCKETS = "unix"
JAVA_POM = os.path.join(HERE, "java", "pom.xml")
# The newest Paimon Spark connector Maven serves here runs on Spark 3.5 only (see the pom).
JAVA_PAIMON_VERSION = "0.9.0"
JAVA_SPARK_LINE = "3.5"
CONNECTOR_PYSPARK = "3.5.9"  # the newest PySpark of the connector's Spark line
WORKER = os.path.join(HERE, "java_connector_worker.py")
# The connector's stream of a primary-key table from its first snapshot: each snapshot's
# changelog, as this source's startingPosition=earliest (from-snapshot, unlike
# from-snapshot-full, starts with no full read).
JAVA_CHANGELOG_OPTIONS = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
BUCKET = "spark-bench"
_SQS_REQUEST = re.compile(r'"POST /(?:[0-9]{12}/\S*)? HTTP')


# --- tables ---------------------------------------------------------------------------------------


def create_table(catalog, name: str, schema: pa.Schema, primary_keys=None, options=None):
    from pypaimon import Schema

    catalog.create_table(name, Schema.from_pyarrow_schema(schema, primary_keys=primary_keys, options=options), False)
    return catalog.get_table(name)


def wide_rows(ids: range, commit: int) -> pa.Table:
    id_array = pa.array(ids, pa.int64())
    return pa.table(
        {
            "id": id_array,
            "commit": pa.array([commit] * len(ids), pa.int64()),
            "payload": pa.array([f"payload-{i:012d}" for i in ids]),
            "value": pc.multiply(id_array, 0.5),
            "ts": pc.multiply(id_array, 1000).cast(pa.timestamp("us")),
        },
        schema=WIDE,
    )


def fill_wide_table(table, rows: int, commits: int) -> None:
    per_commit = rows // commits
    for n in range(commits):
        commit_arrow(table, wide_rows(range(n * per_commit, (n + 1) * per_commit), n))


def fill_pk_table(table, rows: int, commits: int) -> None:
    """``commits`` commits of ``rows // commits`` rows; the second half rewrites the first half's
    keys, so the changelog holds ``rows`` changes and the table ``rows / 2`` keys."""
    per_commit, half = rows // commits, max(1, commits // 2)
    for n in range(commits):
        start = (n % half) * per_commit
        commit_arrow(table, wide_rows(range(start, start + per_commit), n))


def commit_small(table, n: int) -> None:
    commit_arrow(table, pa.table({"id": [n * 10 + i for i in range(10)], "commit": [n] * 10}, schema=SMALL))


def data_files(warehouse: str, name: str) -> list[str]:
    return sorted(glob.glob(os.path.join(warehouse, "db.db", name, "bucket-*", "*.parquet")))


# --- helpers --------------------------------------------------------------------------------------


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


#: Where the source's drivers write their counters (the driver hook in new_session's workers).
STATS_DIR = scratch_dir("paimon-feed-spark-stats-")


def driver_stats(table_uri: str):
    """A reader of the counters the source's driver for ``table_uri`` writes (``{}`` until it
    answered its first offsets); the last query's file is removed first."""
    spark_stats.stats_file(STATS_DIR, table_uri).unlink(missing_ok=True)
    return lambda: spark_stats.read_stats(STATS_DIR, table_uri)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def interleaved(cases: dict, repeats: int, warm_ups: int = 1) -> dict[str, list[float]]:
    """Seconds per case: ``warm_ups`` warm-up rounds (imports, Python workers, file caches),
    then ``repeats`` rounds that each run every case once, so drift in load hits all alike.

    Each round runs the cases in its own (seeded) order: a case that always followed the same
    one would always pay for its aftermath, and the Java connector's process goes on working
    (collecting garbage, cleaning up) after it has answered."""
    for _ in range(warm_ups):
        for run in cases.values():
            run()
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for round_index in range(repeats):
        print(f"  round {round_index + 1}/{repeats}, load {load()}", flush=True)
        order = list(cases)
        random.Random(round_index).shuffle(order)
        for name in order:
            started = time.perf_counter()
            cases[name]()
            seconds[name].append(time.perf_counter() - started)
    return seconds


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


def _pom_hash() -> str:
    return hashlib.sha256(Path(JAVA_POM).read_bytes()).hexdigest()[:16]


def fetch_java_connector() -> dict:
    """Copy ``paimon-spark-<line>`` (and hadoop-aws for ``s3a://``) with Maven into the shared
    Java cache; returns what happened (``jars`` when they are there, Maven's answer when not).
    Fetched again only when ``benchmarks/java/pom.xml`` changes."""
    target = cache_dir() / f"paimon-spark-{JAVA_SPARK_LINE}-{JAVA_PAIMON_VERSION}"
    artifact = f"org.apache.paimon:paimon-spark-{JAVA_SPARK_LINE}:{JAVA_PAIMON_VERSION}"
    stamp = target / ".complete"
    if stamp.is_file() and stamp.read_text().strip() == _pom_hash():
        return {"artifact": artifact, "jars": sorted(str(p) for p in target.glob("*.jar"))}
    if shutil.which("mvn") is None:
        return {"artifact": artifact, "error": "mvn is not on PATH"}
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    result = subprocess.run(
        ["mvn", "--batch-mode", "--quiet", "--file", JAVA_POM, "dependency:copy-dependencies",
         f"-Dpaimon.version={JAVA_PAIMON_VERSION}", f"-Dspark.line={JAVA_SPARK_LINE}",
         "-DincludeScope=runtime", f"-DoutputDirectory={staging}",
         f"-Dmaven.repo.local={cache_dir() / 'm2'}"],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        # Without colour codes and the repository's address: the artifact name says what is missing.
        output = re.sub(r"\x1b\[[0-9;]*m| \(https?://[^)]*\)", "", result.stdout + result.stderr)
        answer = [line for line in output.splitlines() if "Could not" in line or "not found" in line]
        return {"artifact": artifact, "error": (answer or [f"mvn exit {result.returncode}"])[0][:400]}
    (staging / ".complete").write_text(_pom_hash())
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return {"artifact": artifact, "jars": sorted(str(p) for p in target.glob("*.jar"))}


def connector_python() -> str:
    """The Python of a venv holding PySpark ``CONNECTOR_PYSPARK`` (the newest Spark the
    connector runs on), made once in the shared Java cache with pip and reused after."""
    venv = cache_dir() / f"pyspark-{CONNECTOR_PYSPARK}"
    python = venv / "bin" / "python"
    stamp = venv / ".complete"
    if stamp.is_file():
        return str(python)
    shutil.rmtree(venv, ignore_errors=True)  # a venv cannot be moved into place: made where it stays
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"pyspark=={CONNECTOR_PYSPARK}"], check=True)
    stamp.write_text(CONNECTOR_PYSPARK)
    return str(python)


class JavaConnector:
    """Client of ``java_connector_worker.py``: Paimon's Java connector in its own process, on
    PySpark ``CONNECTOR_PYSPARK``, one long-lived ``local[2]`` session, so its cases interleave
    with the other readers' and pay what theirs pay (no session start-up per case)."""

    def __init__(self, jars: list[str], conf: dict[str, str], log_path: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYTHONPATH")}
        python = connector_python()
        env.update(PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)
        self.log_path = log_path
        self._log = open(log_path, "wb")
        config = {"jars": jars, "conf": {
            "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
            **conf}}
        self.process = subprocess.Popen([python, WORKER, json.dumps(config)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self._log, text=True, env=env)
        self.ready = self._answer(600)
        self.ready["ipc_round_trip_ms"] = statistics.median(self._ping() for _ in range(20))

    def _ping(self) -> float:
        started = time.perf_counter()
        self.call("ping")
        return (time.perf_counter() - started) * 1000

    def _answer(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"the Java connector's worker did not answer in {timeout:.0f} s "
                               f"(exit {self.process.poll()}); its log, {self.log_path}:\n{self.log_tail()}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the Java connector's worker failed:\n{answer['error']}")
        return answer

    def log_tail(self, lines: int = 30) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])

    def call(self, op: str, timeout: float = 3600, **arguments) -> dict:
        self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self.process.stdin.flush()
        return self._answer(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


# --- readers and sinks ----------------------------------------------------------------------------


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


def measure_throughput(readers: Readers, name: str, rows: int, repeats: int, workdir: str, *,
                       batch_rows: int, stream_rows: int, with_ceilings: bool,
                       stream_options: dict[str, dict] | None = None) -> dict:
    """Every reader x {noop, parquet} x {AvailableNow, batch}, interleaved; then, untimed, what
    this source and the Java connector read compared (:meth:`Readers.digest`).
    ``stream_options`` are per reader (the primary-key table is streamed from its first
    snapshot)."""
    runs = iter(range(1_000_000))
    ddl = WIDE_DDL
    stream_options = stream_options or {}
    paimon_readers = ("source", "java_connector")  # what reads Paimon's semantics, not files
    cases = {}
    for reader in readers.names():
        if not with_ceilings and reader in ("python_ceiling", "spark_parquet"):
            continue
        for sink in ("noop", "parquet"):
            def stream_case(reader=reader, sink=sink):
                n = next(runs)
                out = os.path.join(workdir, f"out-{name}-{n}")
                read = readers.available_now(reader, name, ddl, sink, out, os.path.join(workdir, f"checkpoint-{name}-{n}"),
                                             **stream_options.get(reader, {}))
                shutil.rmtree(out, ignore_errors=True)
                expected = stream_rows if reader in paimon_readers else rows
                assert read == expected, (reader, sink, read, expected)

            def batch_case(reader=reader, sink=sink):
                out = os.path.join(workdir, f"out-{next(runs)}")
                readers.run_batch(reader, name, ddl, sink, out)
                shutil.rmtree(out, ignore_errors=True)

            cases[f"{reader}/available_now/{sink}"] = stream_case
            cases[f"{reader}/batch/{sink}"] = batch_case
    before = load()
    seconds = interleaved(cases, repeats)
    result = {"rows": rows, "batch_rows": batch_rows, "stream_rows": stream_rows, "repeats": repeats,
              "load_before": before, "load_after": load(), "cases": {}}
    for case, durations in seconds.items():
        reader, mode, _sink = case.split("/")
        case_rows = stream_rows if mode == "available_now" and reader in paimon_readers else (
            batch_rows if reader in paimon_readers else rows)
        result["cases"][case] = {"seconds": durations, "median_s": statistics.median(durations),
                                 "rows_per_s": case_rows / statistics.median(durations)}
    result["stream_options"] = stream_options
    result["reads_compared"] = compare_reads(readers, name, workdir, stream_options)
    return result


def compare_reads(readers: Readers, name: str, workdir: str, stream_options: dict[str, dict]) -> dict:
    """Untimed: the :data:`DIGEST_SQL` fingerprint of the batch read and of the ``AvailableNow``
    stream of this source and of the Java connector, and whether they agree."""
    digests = {}
    for reader in [r for r in ("source", "java_connector") if r in readers.names()]:
        for kind in ("batch", "stream"):
            where = os.path.join(workdir, f"digest-{name}-{reader}-{kind}")
            digests[f"{reader}/{kind}"] = readers.digest(
                reader, name, stream=kind == "stream", checkpoint=where + "-checkpoint", out_dir=where,
                **(stream_options.get(reader, {}) if kind == "stream" else {}))
            shutil.rmtree(where, ignore_errors=True)
    compared = {"digests": digests}
    if "java_connector/batch" in digests:
        for kind in ("batch", "stream"):
            compared[f"{kind}_equal"] = digests[f"source/{kind}"] == digests[f"java_connector/{kind}"]
    return compared


def measure_pypaimon(table, rows: int, repeats: int) -> dict:
    """pypaimon's own ``to_arrow`` of a full scan (no Spark): the reference the issue started from."""
    from paimon_feed.spark.driver import READ_BATCH_ROWS

    def read(batch_rows):
        def run():
            source = table if batch_rows is None else table.copy({"read.batch-size": str(batch_rows)})
            builder = source.new_read_builder()
            assert builder.new_read().to_arrow(builder.new_scan().plan().splits()).num_rows == rows

        return run

    seconds = interleaved({"default": read(None), "batch_65536": read(READ_BATCH_ROWS)}, repeats)
    return {name: rows / statistics.median(values) for name, values in seconds.items()}


# --- 2. start-up ----------------------------------------------------------------------------------


def measure_startup(readers: Readers, repeats: int, workdir: str) -> dict:
    """An ``AvailableNow`` query of each reader on a 10-row table into ``noop``, in a session
    that is already up: from the stream DataFrame's creation (``load()``) through ``start()``
    to termination, with a fresh checkpoint each time. For the Java connector the clock runs in
    this process around the request to its worker (one round trip, ``ipc_round_trip_ms`` in
    the results, is included)."""
    runs = iter(range(1_000_000))

    def case(reader):
        def run():
            n = next(runs)
            read = readers.available_now(reader, "tiny", SMALL_DDL, "noop", "", os.path.join(workdir, f"startup-{n}"))
            assert read == 10, (reader, read)

        return run

    before = load()
    seconds = interleaved({reader: case(reader) for reader in readers.names()}, repeats, warm_ups=2)  # local[2]: two executor workers to warm
    return {"table_rows": 10, "repeats": repeats, "load_before": before, "load_after": load(),
            "cases": {reader: {"seconds": s, "median_s": statistics.median(s)} for reader, s in seconds.items()}}


IMPORT_PROBE = """
import sys, time
started = time.perf_counter()
import paimon_feed.spark.source
imported = time.perf_counter()
from paimon_feed.spark.driver import load_table
from paimon_feed.spark.options import parse_options
load_table(parse_options({"warehouse": sys.argv[1], "table": "db.tiny"}))
print(imported - started, time.perf_counter() - imported)
"""
#: What a planning process would still import if it left split planning to the executors and only
#: read snapshot, schema and consumer files with pypaimon's classes for them (the floor of that
#: design while it keeps pypaimon), after what every Python source and this source's module cost.
METADATA_PROBE = """
import sys, time
import pyspark.sql.datasource
import paimon_feed.spark.source
started = time.perf_counter()
from pypaimon.common.file_io import FileIO
from pypaimon.common.options import Options
from pypaimon.consumer.consumer_manager import ConsumerManager
from pypaimon.schema.schema_manager import SchemaManager
from pypaimon.snapshot.snapshot_manager import SnapshotManager
FileIO.get(sys.argv[1], Options({"warehouse": sys.argv[1]}))
print(time.perf_counter() - started)
"""
#: Modules whose import the probe reports (cumulative, as ``-X importtime`` gives it): what
#: every Python data source pays, what this source adds, and what pypaimon's table brings along.
PROBED_MODULES = ("pyspark.sql.datasource", "paimon_feed.spark.source", "pyarrow.dataset",
                  "pandas", "polars", "requests")


def measure_imports(warehouse: str, repeats: int) -> dict:
    """What one Python process of this source pays before it can read: importing the source
    and opening the table, with ``python -X importtime`` (a fresh interpreter each time; Spark
    starts one for ``load()``'s schema, one for the query's offsets, and the executors' workers)."""
    runs = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORT_PROBE, warehouse],
                              capture_output=True, text=True, check=True)
        imported_s, table_s = (float(x) for x in done.stdout.split())
        cumulative = {}
        for line in done.stderr.splitlines():
            parts = [part.strip() for part in line.split("|")]
            if len(parts) == 3 and parts[2] in PROBED_MODULES and parts[2] not in cumulative:
                cumulative[parts[2]] = int(parts[1]) / 1e6
        metadata = subprocess.run([sys.executable, "-c", METADATA_PROBE, warehouse],
                                  capture_output=True, text=True, check=True)
        runs.append({"import_source_s": imported_s, "open_table_s": table_s, "modules_s": cumulative,
                     "metadata_only_s": float(metadata.stdout)})
    return {
        "repeats": repeats,
        "metadata_only_s": statistics.median(r["metadata_only_s"] for r in runs),
        "import_source_s": statistics.median(r["import_source_s"] for r in runs),
        "open_table_s": statistics.median(r["open_table_s"] for r in runs),
        "modules_s": {m: statistics.median(r["modules_s"].get(m, 0.0) for r in runs) for m in PROBED_MODULES},
    }


# --- 3. latency -----------------------------------------------------------------------------------


def start_follow_query(readers: Readers, name: str, mode: str, trigger: str, sink, workdir: str, tag: str,
                       extra: dict | None = None):
    stats = driver_stats(local_url(os.path.join(readers.warehouse, "db.db", name)))
    stream = readers.stream("source", name, SMALL_DDL, startingPosition="latest",
                            **MODES.get(mode, {}), **(extra or {}))
    query = (
        stream.writeStream.foreachBatch(sink)
        .option("checkpointLocation", os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
        .trigger(processingTime=trigger)
        .start()
    )
    # Started means: the source answered its first offsets (it writes stats from then on).
    wait_for(lambda: bool(stats()), 120, f"the {mode} query to start")
    return query, stats


class SourceFollow:
    """This source following ``name`` from its latest snapshot in the benchmark's session."""

    def __init__(self, readers: Readers, name: str, mode: str, trigger: str, workdir: str, tag: str) -> None:
        self.sink = ArrivalSink()
        self.query, stats = start_follow_query(readers, name, mode, trigger, self.sink, workdir, tag)
        wait_for(lambda: stats()["latest_calls"] >= 3, 120, f"{mode} triggers")

    def arrivals(self) -> dict:
        return self.sink.snapshot()

    def stop(self) -> None:
        self.query.stop()


#: What a streaming query's status says once it has answered a first trigger.
STARTED_MESSAGES = ("Waiting for data to arrive", "Waiting for next trigger")


class StreamFollow:
    """A stream DataFrame of the benchmark's session following a table into an
    :class:`ArrivalSink`. Started means its query answered a first trigger."""

    def __init__(self, stream, trigger: str, checkpoint: str) -> None:
        self.sink = ArrivalSink()
        self.query = (stream.writeStream.foreachBatch(self.sink).option("checkpointLocation", checkpoint)
                      .trigger(processingTime=trigger).start())
        wait_for(lambda: self.query.status["message"] in STARTED_MESSAGES,
                 120, "the query to start")

    def arrivals(self) -> dict:
        return self.sink.snapshot()

    def stop(self) -> None:
        self.query.stop()


class JavaFollow:
    """Paimon's Java connector following ``path`` from its latest snapshot (``scan.mode=latest``),
    an :class:`ArrivalSink` in its worker. Started means its query answered a first trigger."""

    def __init__(self, java: JavaConnector, path: str, trigger: str, checkpoint: str, tag: str) -> None:
        self.java, self.name = java, tag
        java.call("follow", name=tag, path=path, trigger=trigger, checkpoint=checkpoint,
                  options={"scan.mode": "latest"})
        wait_for(lambda: self.started(), 120, "the Java connector's query to start")

    def started(self) -> bool:
        state = self.arrivals()
        return state["progress"] > 0 or state["message"] in STARTED_MESSAGES

    def arrivals(self) -> dict:
        state = self.java.call("arrivals", name=self.name)
        if state["exception"] or not state["active"]:
            raise RuntimeError(f"the Java connector's query {self.name} stopped: {state['exception']}")
        for key in ("entered", "ended"):  # JSON keys are strings
            state[key] = {int(n): at for n, at in state[key].items()}
        return state

    def stop(self) -> None:
        self.java.call("stop", name=self.name)


def commit_delay(rng: random.Random, trigger_s: float) -> float:
    """Seconds to wait before the next commit: 0.2-0.6 s with a 0 s trigger; with a longer one,
    to a random phase of the next trigger interval at least 0.2 s away (Spark fires
    ``processingTime`` triggers on multiples of the interval since the epoch)."""
    if trigger_s <= 0:
        return rng.uniform(0.2, 0.6)
    now = time.time()
    at = (now // trigger_s + 1) * trigger_s + rng.uniform(0, trigger_s)
    return at - now if at - now >= 0.2 else at - now + trigger_s


def measure_latency(readers, table, mode: str, trigger: str, numbers: list[int], workdir: str, tag: str,
                    seed: int) -> dict:
    """End and entry latencies (ms) of the commits ``numbers``, after ``WARM_UP_COMMITS``
    unmeasured ones (the first micro-batches also start the executors' Python workers).
    ``mode`` is one of :data:`MODES` for this source, :data:`PYTHON_CEILING`,
    ``spark_parquet`` or ``java_connector``."""
    snapshot_dir = os.path.join(readers.warehouse, "db.db", "small", "snapshot")
    if mode == "java_connector":
        follow = JavaFollow(readers.java, readers.table_uri("small"), trigger,
                            os.path.join(workdir, f"checkpoint-{mode}-{tag}"), tag=f"latency-{tag}")
    elif mode == PYTHON_CEILING:  # its rows carry snapshot ids, not commit numbers
        stream = readers.spark.readStream.format("snapshot_ids").option("snapshotDir", snapshot_dir).load()
        follow = StreamFollow(stream, trigger, os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
    elif mode == "spark_parquet":
        follow = StreamFollow(readers.stream(mode, "small", SMALL_DDL), trigger,
                              os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
    else:
        follow = SourceFollow(readers, "small", mode, trigger, workdir, tag)
    rng = random.Random(seed)
    warm_up = [-(n + 1) - 1000 * seed for n in range(WARM_UP_COMMITS)]
    snapshot_of = {}
    trigger_s = float(trigger.split()[0])

    def key(n):  # what the sink saw of commit n: its number, or its snapshot id (the ceiling)
        return snapshot_of[n] if mode == PYTHON_CEILING else n

    try:
        for n in warm_up + numbers:
            time.sleep(commit_delay(rng, trigger_s))
            commit_small(table, n)
            snapshot_of[n] = table.snapshot_manager().get_latest_snapshot().id
            if n in warm_up:
                wait_for(lambda n=n: key(n) in follow.arrivals()["ended"], 300, f"{mode}: warm-up commit")
        wait_for(lambda: all(key(n) in follow.arrivals()["ended"] for n in numbers), 300, f"{mode}: every commit")
        arrived = follow.arrivals()
    finally:
        follow.stop()
    committed = {n: os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_of[n]}")).st_mtime_ns / 1e9 for n in numbers}
    ended, entered = arrived["ended"], arrived["entered"]
    measured = {
        "end_ms": [(ended[key(n)] - committed[n]) * 1000 for n in numbers],
        "entry_ms": [(entered[key(n)] - committed[n]) * 1000 for n in numbers],
        "micro_batches": len({ended[key(n)] for n in numbers}),
    }
    if trigger_s > 0:  # from the first trigger after the commit (Spark fires on multiples of it)
        measured["tick_to_end_ms"] = [(ended[key(n)] - math.ceil(committed[n] / trigger_s) * trigger_s) * 1000
                                      for n in numbers]
    return measured


def measure_latencies(readers, table, commits: int, rounds: int, workdir: str) -> dict:
    """Every (trigger, mode) in alternating rounds, so drift in the machine's load hits all alike;
    the readers of a round share a seed (the same commit intervals and phases)."""
    modes = list(MODES) + [PYTHON_CEILING, "spark_parquet"] + (["java_connector"] if readers.java else [])
    keys = [(trigger, mode) for trigger in TRIGGERS for mode in modes]
    measured: dict[tuple[str, str], list[dict]] = {key: [] for key in keys}
    per_round, next_number = max(1, commits // rounds), 1
    before = load()
    for round_index in range(rounds):
        for trigger, mode in keys:
            numbers = list(range(next_number, next_number + per_round))
            next_number += per_round
            print(f"latency: {mode}, trigger {trigger}, round {round_index + 1}/{rounds} ...", flush=True)
            measured[trigger, mode].append(measure_latency(
                readers, table, mode, TRIGGERS[trigger], numbers, workdir,
                tag=f"{trigger.replace(' ', '')}-{round_index}", seed=7 + 10 * round_index))
    result: dict = {"load_before": before, "load_after": load()}
    for (trigger, mode), runs in measured.items():
        result.setdefault(trigger, {})[mode] = latency_summary(mode, runs)
    return result


def latency_summary(mode: str, runs: list[dict]) -> dict:
    """The latencies of ``runs`` of :func:`measure_latency` for ``mode`` pooled: percentiles,
    raw lists kept."""
    end_ms = [ms for run in runs for ms in run["end_ms"]]
    entry_ms = [ms for run in runs for ms in run["entry_ms"]]
    summary = {
        "label": LABELS[mode], "commits": len(end_ms), "micro_batches": sum(run["micro_batches"] for run in runs),
        "end_ms": end_ms, "entry_ms": entry_ms,
        "p50_ms": percentile(end_ms, 0.5), "p95_ms": percentile(end_ms, 0.95),
        "max_ms": max(end_ms), "entry_p50_ms": percentile(entry_ms, 0.5),
    }
    if all("tick_to_end_ms" in run for run in runs):
        tick_ms = [ms for run in runs for ms in run["tick_to_end_ms"]]
        summary.update(tick_to_end_ms=tick_ms, tick_to_end_p50_ms=percentile(tick_ms, 0.5))
    return summary


SOCKET_PROBE_MODES = ("auto", PYTHON_CEILING)


def socket_probe(sockets: str, commits: int, out: str, order: int) -> None:
    """``--socket-probe``: a session of its own whose Python workers reach the JVM over
    ``sockets`` (a key of :data:`SOCKETS`; Spark reads the setting once, when the session
    starts); this source (``notifier=auto``) and the do-nothing source each follow a fresh table at a
    0 s trigger, in :data:`SOCKET_PROBE_MODES` order or (``order`` 1) the reverse. Writes their
    latencies to ``out``."""
    from pypaimon import CatalogFactory

    workdir = scratch_dir("paimon-feed-socket-probe-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    small = create_table(catalog, "db.small", SMALL)
    commit_small(small, 0)
    spark = new_session("paimon-feed-socket-probe", sockets)
    readers = Readers(spark, warehouse, java=None)
    # A fresh session's first streaming queries run slower (JIT, Python workers): one
    # unmeasured follow first, then the readers in an order that alternates between probes.
    measure_latency(readers, small, PYTHON_CEILING, TRIGGERS["0 seconds"], [], workdir, tag="probe-warm-up", seed=99)
    modes = SOCKET_PROBE_MODES if order == 0 else tuple(reversed(SOCKET_PROBE_MODES))
    result = {}
    for index, mode in enumerate(modes):
        numbers = list(range(1 + index * commits, 1 + (index + 1) * commits))
        result[mode] = measure_latency(readers, small, mode, TRIGGERS["0 seconds"], numbers, workdir,
                                       tag=f"probe-{mode}", seed=100 + index)
    spark.stop()
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def measure_python_sockets(commits: int, rounds: int, workdir: str) -> dict:
    """:func:`socket_probe` for each of :data:`SOCKETS` in its own process, ``rounds`` times,
    alternating which goes first; ``commits`` per socket kind and reader in all."""
    per_round = max(1, commits // rounds)
    measured: dict[str, dict[str, list[dict]]] = {sockets: {mode: [] for mode in SOCKET_PROBE_MODES} for sockets in SOCKETS}
    before = load()
    for round_index in range(rounds):
        order = list(SOCKETS) if round_index % 2 == 0 else list(reversed(SOCKETS))
        for sockets in order:
            print(f"Python worker sockets: {sockets}, round {round_index + 1}/{rounds} ...", flush=True)
            out = os.path.join(workdir, f"socket-probe-{sockets}-{round_index}.json")
            log_path = os.path.join(workdir, f"socket-probe-{sockets}-{round_index}.log")
            with open(log_path, "w", encoding="utf-8") as log:
                done = subprocess.run([sys.executable, "-m", __spec__.name, "--socket-probe", sockets,
                                       "--probe-order", str(round_index % 2),
                                       "--latency-commits", str(per_round), "--out", out],
                                      stdout=log, stderr=subprocess.STDOUT, check=False)
            if done.returncode:
                with open(log_path, encoding="utf-8") as log:
                    raise RuntimeError(f"the {sockets} socket probe failed:\n{log.read()[-3000:]}")
            with open(out, encoding="utf-8") as handle:
                for mode, one in json.load(handle).items():
                    measured[sockets][mode].append(one)
    result: dict = {"conf": paimon_feed.spark.UNIX_SOCKETS_CONF, "rounds": rounds, "trigger": "0 seconds",
                    "load_before": before, "load_after": load()}
    for sockets, modes in measured.items():
        result[sockets] = {mode: latency_summary(mode, runs) for mode, runs in modes.items()}
    return result


# --- 4. idle storage requests, counted at the server ----------------------------------------------


def start_moto():
    """A ``moto_server`` process, and its endpoint and fake credentials in this process's
    environment, so the Python workers of a Spark session started after it reach it."""
    from s3_support import start_moto_server

    server = start_moto_server()
    os.environ.update({**server.credentials_env, "AWS_ENDPOINT_URL_SQS": server.endpoint_url})
    return server


def s3a_conf(server) -> dict[str, str]:
    """Hadoop S3A settings (as Spark conf) that point the Java connector's session at moto."""
    return {
        "spark.hadoop.fs.s3a.endpoint": server.endpoint_url,
        "spark.hadoop.fs.s3a.endpoint.region": server.region,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": server.access_key,
        "spark.hadoop.fs.s3a.secret.key": server.secret_key,
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }


def measure_idle_s3(spark, server, workdir: str, idle_seconds: float, java: JavaConnector | None) -> dict:
    """Queries following idle tables on moto, all at once, with ``processingTime="0 seconds"``:
    this source on ``s3://`` (push and a storage check per trigger) and the Java connector on
    ``s3a://`` (Hadoop's S3A, hadoop-aws). Requests naming each table are counted in moto's log,
    URL-decoded (S3A names its table in LIST requests' ``prefix=`` query)."""
    from pypaimon import CatalogFactory
    from s3_support import s3_catalog_options

    from paimon_feed.spark.options import FORMAT_NAME

    try:
        server.create_bucket(BUCKET)
        queue = server.create_queue("spark-bench")
        options = s3_catalog_options(server, BUCKET)
        catalog = CatalogFactory.create(options)
        catalog.create_database("db", True)
        tables = {"push": "idle_push", "storage-per-trigger": "idle_poll"}
        if java:
            tables["java_connector"] = "idle_java"
        for name in tables.values():
            commit_small(create_table(catalog, f"db.{name}", SMALL), 0)
        server.notify_queue(BUCKET, queue.queue_arn, prefix="wh/db.db/idle_push/snapshot/")
        queue.purge()
        mode_options = {"push": {"notifier": "sqs", "queueUrl": queue.queue_url},
                        "storage-per-trigger": {"notifier": "storage-per-trigger"}}
        catalog_options = {f"catalog.{k}": v for k, v in options.items() if k != "warehouse"}
        queries = {}
        for mode, name in tables.items():
            if mode == "java_connector":
                continue
            stats = driver_stats(f"{options['warehouse']}/db.db/{name}")
            query = (
                spark.readStream.format(FORMAT_NAME).option("warehouse", options["warehouse"])
                .option("table", f"db.{name}").option("startingPosition", "latest")
                .options(**catalog_options, **mode_options[mode]).load()
                .writeStream.foreachBatch(ArrivalSink())
                .option("checkpointLocation", os.path.join(workdir, f"idle-checkpoint-{mode}"))
                .trigger(processingTime="0 seconds").start()
            )
            queries[mode] = (query, stats)
        for mode, (_, stats) in queries.items():
            wait_for(lambda stats=stats: bool(stats()), 120, f"the idle {mode} query to start")
        java_follow = None
        if java:
            java_follow = JavaFollow(java, f"s3a://{BUCKET}/wh/db.db/idle_java", "0 seconds",
                                     os.path.join(workdir, "idle-checkpoint-java"), tag="idle-java")
        time.sleep(5.0)  # start-up reads (catalog, schema, LATEST) fall out of the window
        before = load()
        offset = server.log_path.stat().st_size
        started = time.time()
        time.sleep(idle_seconds)
        window = time.time() - started
        with open(server.log_path, "rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode(errors="replace").splitlines()
        for query, _ in queries.values():
            query.stop()
        if java_follow:
            java_follow.arrivals()  # raises if its query failed during the window
            java_follow.stop()
        decoded = [urllib.parse.unquote(line) for line in lines]
        result: dict = {"window_s": window, "load_before": before, "load_after": load(), "modes": {}}
        for mode, name in tables.items():
            names_table = re.compile(rf"db\.db/{name}\b")
            mine = [line for line in decoded if names_table.search(line)]
            kinds = collections.Counter(s3_request_kind(line) or "other" for line in mine)
            result["modes"][mode] = {"table": name, "s3_requests": len(mine),
                                     "s3_requests_per_minute": len(mine) * 60 / window,
                                     "s3_requests_by_kind": dict(kinds),
                                     "usd_per_month": usd_per_month(kinds, window)}
        sqs = sum(1 for line in lines if _SQS_REQUEST.search(line))
        result["sqs_requests_per_minute"] = sqs * 60 / window
        return result
    finally:
        server.close()


# --- report ---------------------------------------------------------------------------------------


def targets(results: dict) -> dict:
    """The issue's four targets as ratios of this run's figures; None where a side is missing."""
    largest = results["throughput"][max(results["throughput"], key=int)]["cases"]
    java = bool(results["java_connector"].get("jars"))

    def rate(case):
        return largest[case]["rows_per_s"] if case in largest else None

    startup = results["startup"]["cases"]
    lat = results["latency"]
    idle = results["idle_s3"]["modes"]

    def per_request_ratio(mode):
        """``mode``'s idle requests over push's; None when push made none in the window (the
        ratio is unbounded then)."""
        return idle[mode]["s3_requests_per_minute"] / idle["push"]["s3_requests_per_minute"] if idle["push"]["s3_requests"] else None

    return {
        "parquet_sink_vs_java": rate("source/available_now/parquet") / rate("java_connector/available_now/parquet") if java else None,
        "parquet_sink_batch_vs_java": rate("source/batch/parquet") / rate("java_connector/batch/parquet") if java else None,
        "noop_vs_python_ceiling": rate("source/batch/noop") / rate("python_ceiling/batch/noop"),
        "noop_available_now_vs_python_ceiling": rate("source/available_now/noop") / rate("python_ceiling/available_now/noop"),
        "startup_minus_python_ceiling_s": startup["source"]["median_s"] - startup["python_ceiling"]["median_s"],
        # The default's commit -> end of micro-batch p50 over the Java connector's, per trigger.
        "latency_p50_vs_java": {trigger: lat[trigger]["auto"]["p50_ms"] / lat[trigger]["java_connector"]["p50_ms"]
                                for trigger in TRIGGERS} if java else None,
        # inotify push over the default's check on every trigger, on the local table.
        "latency_p50_push_vs_auto": {trigger: lat[trigger]["push"]["p50_ms"] / lat[trigger]["auto"]["p50_ms"]
                                     for trigger in TRIGGERS},
        # The floor: a do-nothing Python stream source's p50 over the Java connector's.
        "latency_p50_python_ceiling_vs_java": {trigger: lat[trigger][PYTHON_CEILING]["p50_ms"] / lat[trigger]["java_connector"]["p50_ms"]
                                               for trigger in TRIGGERS} if java else None,
        "latency_p50_vs_python_ceiling": {trigger: lat[trigger]["auto"]["p50_ms"] / lat[trigger][PYTHON_CEILING]["p50_ms"]
                                          for trigger in TRIGGERS},
        # With a trigger interval, from the first trigger after the commit to the end: the part
        # of the latency a reader controls (the wait for the trigger depends on the commit's phase).
        "tick_to_end_p50_vs_java": {trigger: lat[trigger]["auto"]["tick_to_end_p50_ms"] / lat[trigger]["java_connector"]["tick_to_end_p50_ms"]
                                    for trigger in TRIGGERS if "tick_to_end_p50_ms" in lat[trigger]["auto"]} if java else None,
        # Unix domain sockets over TCP for the Python workers, per reader (probe processes).
        "latency_p50_unix_over_tcp": {mode: results["python_sockets"]["unix"][mode]["p50_ms"] / results["python_sockets"]["tcp"][mode]["p50_ms"]
                                      for mode in SOCKET_PROBE_MODES},
        "idle_requests_poll_over_push": per_request_ratio("storage-per-trigger"),
        "idle_requests_java_over_push": per_request_ratio("java_connector") if java else None,
    }


def print_report(results: dict) -> None:
    for size, t in results["throughput"].items():
        print(f"\nThroughput, {t['table']} table, {int(size):,} rows (median of {t['repeats']}, M rows/s)")
        for case, c in t["cases"].items():
            print(f"  {case:<40}{c['rows_per_s'] / 1e6:>8.2f}   {c['median_s']:.2f} s")
    print("\nThroughput, primary-key table (changelog-producer=input), M rows/s")
    for case, c in results["throughput_pk"]["cases"].items():
        print(f"  {case:<40}{c['rows_per_s'] / 1e6:>8.2f}   {c['median_s']:.2f} s")
    print("\nAvailableNow on a 10-row table, start() to termination")
    for reader, c in results["startup"]["cases"].items():
        print(f"  {reader:<40}{c['median_s']:>8.2f} s")
    print(f"  one process of this source: {json.dumps(results['startup']['one_process'])}")
    print("\nCommit -> end of micro-batch (ms)")
    for trigger in TRIGGERS:
        for mode, m in results["latency"][trigger].items():
            print(f"  {trigger:<10} {mode:<22} p50 {m['p50_ms']:>6.0f}  p95 {m['p95_ms']:>6.0f}  (entry p50 {m['entry_p50_ms']:.0f})")
    sockets = results["python_sockets"]
    print(f"\nCommit -> end of micro-batch (ms) by Python worker sockets ({sockets['conf']}), 0 s trigger, own sessions")
    for kind in SOCKETS:
        for mode, m in sockets[kind].items():
            print(f"  {kind:<10} {mode:<22} p50 {m['p50_ms']:>6.0f}  p95 {m['p95_ms']:>6.0f}  (entry p50 {m['entry_p50_ms']:.0f})")
    print("\nS3 requests per idle minute (moto)")
    for mode, m in results["idle_s3"]["modes"].items():
        print(f"  {mode:<22}{m['s3_requests_per_minute']:>8.1f}   {m['s3_requests_by_kind']}   "
              f"${m['usd_per_month']:,.2f} per idle table-month")
    print("\nWhat this source and the Java connector read, compared (untimed)")
    for table, compared in [(size, t["reads_compared"]) for size, t in results["throughput"].items()] + [
            ("pk", results["throughput_pk"]["reads_compared"])]:
        print(f"  {table}: " + ", ".join(f"{k} {v}" for k, v in compared.items() if k.endswith("_equal")))
        for reader, digest in compared["digests"].items():
            print(f"    {reader:<24}{digest}")
    print(f"\ntargets: {json.dumps(results['targets'], indent=1)}")
    print(f"Java connector: {results['java_connector']}")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4000000,32000000", help="append table sizes, comma-separated")
    parser.add_argument("--pk-rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--startup-repeats", type=int, default=5)
    parser.add_argument("--latency-commits", type=int, default=20, help="per trigger and mode")
    parser.add_argument("--latency-rounds", type=int, default=2)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--smoke", action="store_true", help="every part at toy size, in seconds")
    parser.add_argument("--out", default=os.path.join(RESULTS, "spark.json"))
    parser.add_argument("--socket-probe", choices=sorted(SOCKETS), help=argparse.SUPPRESS)  # measure_python_sockets
    parser.add_argument("--probe-order", type=int, choices=(0, 1), default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.pk_rows, args.repeats, args.startup_repeats = "20000", 8000, 1, 1
        args.latency_commits, args.latency_rounds, args.idle_seconds = 2, 1, 3.0

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if args.socket_probe:
        socket_probe(args.socket_probe, args.latency_commits, args.out, args.probe_order)
        return
    from pypaimon import CatalogFactory

    run_started = time.monotonic()
    java = fetch_java_connector()
    print(f"Java connector: {java}", flush=True)
    workdir = scratch_dir("paimon-feed-spark-bench-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    sizes = [int(size) for size in args.sizes.split(",")]
    wide = {}
    for rows in sizes:
        commits = max(16, rows // 1_000_000)
        print(f"writing {rows:,} rows in {commits} commits ...", flush=True)
        wide[rows] = create_table(catalog, f"db.wide_{rows}", WIDE)
        fill_wide_table(wide[rows], rows, commits)
    pk = create_table(catalog, "db.pk", WIDE, primary_keys=["id"], options=PK_OPTIONS)
    fill_pk_table(pk, args.pk_rows, 8)
    tiny = create_table(catalog, "db.tiny", SMALL)
    commit_small(tiny, 0)
    small = create_table(catalog, "db.small", SMALL)
    commit_small(small, 0)

    server = start_moto()  # before the sessions: Python workers inherit the environment
    java_connector = None
    try:
        if java.get("jars"):
            print(f"starting the Java connector's process (PySpark {CONNECTOR_PYSPARK}) ...", flush=True)
            java_connector = JavaConnector(java["jars"], {"spark.sql.session.timeZone": "UTC", **s3a_conf(server)},
                                           os.path.join(workdir, "java-connector.log"))
            java.update(process=java_connector.ready)
        java["jars"] = [os.path.basename(jar) for jar in java.get("jars", [])] or None
        spark = new_session("paimon-feed-spark-bench", SESSION_SOCKETS)
        readers = Readers(spark, warehouse, java=java_connector)

        results: dict = {
            "environment": {
                "python": platform.python_version(), "pyspark": importlib.metadata.version("pyspark"),
                "pypaimon": importlib.metadata.version("pypaimon"), "cpus": os.cpu_count(),
                "spark_master": "local[2]", "load_at_start": load(),
                "python_worker_sockets": SESSION_SOCKETS,
            },
            "java_connector": java,
            "throughput": {},
        }
        print("throughput: primary-key table ...", flush=True)
        results["throughput_pk"] = measure_throughput(
            readers, "pk", args.pk_rows, args.repeats, workdir,
            batch_rows=args.pk_rows // 2, stream_rows=args.pk_rows, with_ceilings=False,
            stream_options={"source": {"startingPosition": "earliest"}, "java_connector": JAVA_CHANGELOG_OPTIONS})
        results["throughput_pk"]["table"] = "primary key, changelog-producer=input"
        print("start-up ...", flush=True)
        results["startup"] = measure_startup(readers, args.startup_repeats, workdir)
        results["startup"]["one_process"] = measure_imports(warehouse, args.startup_repeats)
        results["latency"] = measure_latencies(readers, small, args.latency_commits, args.latency_rounds, workdir)
        results["python_sockets"] = measure_python_sockets(args.latency_commits, args.latency_rounds, workdir)
        print(f"idle on moto: {args.idle_seconds:.0f} s ...", flush=True)
        results["idle_s3"] = measure_idle_s3(spark, server, workdir, args.idle_seconds, java_connector)
        for rows in sizes:
            print(f"throughput: {rows:,} rows ...", flush=True)
            t = measure_throughput(readers, f"wide_{rows}", rows, args.repeats, workdir,
                                   batch_rows=rows, stream_rows=rows, with_ceilings=True)
            t["table"] = "append"
            t["commits"] = max(16, rows // 1_000_000)
            t["pypaimon_to_arrow_rows_per_s"] = measure_pypaimon(wide[rows], rows, args.repeats)
            results["throughput"][str(rows)] = t
        results["environment"]["load_at_end"] = load()
        results["environment"]["run_s"] = time.monotonic() - run_started
        spark.stop()
    finally:
        if java_connector:
            java_connector.close()
        server.close()
    results["targets"] = targets(results)

    print_report(results)
    write_results(results, args.out)


def write_results(results: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
