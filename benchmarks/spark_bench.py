"""Spark benchmark: the ``paimon_feed`` source side by side with the other ways to read a Paimon
table in Spark, same run, same tables, same sinks.

    python benchmarks/spark_bench.py [--sizes 4000000,32000000] [--pk-rows 1000000]
                                     [--latency-commits 20] [--idle-seconds 60] [--smoke]

Readers: this source (``paimon_feed``), Paimon's own Java Spark connector (``paimon-spark-*``
from Maven, fetched into the cache of ``tests/interop/fetch_java.py`` with ``benchmarks/java/
pom.xml``; where Maven cannot supply it the run records Maven's answer and goes on without it;
its cases have not run on the machine this was written on, where Maven had no ``paimon-spark``
artifact),
a do-nothing Python data source that yields the table's Parquet files' Arrow batches (batch and
stream: the ceiling of Spark's Python data source path) and, for context, Spark's own Parquet
reader on the same files. Spark runs ``local[2]``.

1. Throughput, for each append table of ``--sizes`` rows (one commit per million rows, at least
   16) and a primary-key table (``changelog-producer=input``; its second half of commits updates
   the first half's keys): each reader into ``noop`` and into a Parquet file sink, as a
   ``Trigger.AvailableNow`` query (``start()`` to termination) and as a batch read. Cases are
   interleaved: each round runs every case once, after one warm-up round; medians of
   ``--repeats`` rounds. pypaimon's own ``to_arrow`` is there as a reference (no Spark).
2. ``AvailableNow`` start-up: the same queries on a 10-row table, ``start()`` to termination.
3. Commit to the END of the micro-batch: a query follows a table while a writer commits at
   random intervals (0.2-0.6 s); latency runs from the snapshot file's mtime to the moment the
   ``foreachBatch`` function returns, after it read the micro-batch's rows (its entry is kept
   too). With ``processingTime="0 seconds"`` and with a 1 s trigger; this source with push
   (inotify) and with ``notifier=storage-per-trigger`` (a storage check on every trigger, the
   way a polling connector works).
4. Storage requests per idle minute, counted at the server: the source follows idle ``s3://``
   tables on a ``moto_server`` process (push: ``notifier=sqs``; polling:
   ``storage-per-trigger``) and every request in moto's log that names a table is counted.

Writes ``benchmarks/results/spark.json``. This is a measurement, not a test: nothing here fails
on time. Load averages are recorded before and after each part, because Spark's figures on a
shared 2-core machine move with them. ``--smoke`` runs every part at toy size in seconds.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))

from fetch_java import cache_dir  # noqa: E402  (the Java cache root shared with interop tests)
from scratch import scratch_dir  # noqa: E402  (removed at exit)

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
MODES = {
    "push": {"notifier": "auto"},
    "storage-per-trigger": {"notifier": "storage-per-trigger"},
}
LABELS = {
    "push": "push (notifier=auto: inotify)",
    "storage-per-trigger": "poll storage on every latestOffset",
}
TRIGGERS = {"0 seconds": "0 seconds", "1 second": "1 second"}
JAVA_POM = os.path.join(HERE, "java", "pom.xml")
JAVA_PAIMON_VERSION = "1.4.2"
JAVA_SPARK_LINE = "4.0"
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


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def read_stats(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def interleaved(cases: dict, repeats: int) -> dict[str, list[float]]:
    """Seconds per case: one warm-up round (imports, Python workers, file caches), then
    ``repeats`` rounds that each run every case once, so drift in load hits all alike."""
    for run in cases.values():
        run()
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for round_index in range(repeats):
        print(f"  round {round_index + 1}/{repeats}, load {load()}", flush=True)
        for name, run in cases.items():
            started = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - started)
    return seconds


class ArrowFilesSource:
    """The ceiling of Spark's Python data source path: a source that does nothing but yield the
    Arrow batches pyarrow reads from the given Parquet files (no Paimon planning, merging or
    schema work), as a batch source and as a stream source whose one offset covers every file.
    Registered as ``arrow_files``; built lazily so the module imports without PySpark."""

    @staticmethod
    def register(spark) -> None:
        from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
        from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

        def split(options) -> list:
            files, count = options["files"].split(","), int(options["partitions"])
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
                return {"files": 1}

            def prepareForTriggerAvailableNow(self):
                pass

            def partitions(self, start, end):
                return [] if start == end else split(self.options)

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


# --- Paimon's Java connector ----------------------------------------------------------------------


def fetch_java_connector() -> dict:
    """Copy ``paimon-spark-<line>`` with Maven into the shared Java cache; returns what happened
    (``jars`` when it is there, Maven's answer when not)."""
    target = cache_dir() / f"paimon-spark-{JAVA_SPARK_LINE}-{JAVA_PAIMON_VERSION}"
    artifact = f"org.apache.paimon:paimon-spark-{JAVA_SPARK_LINE}:{JAVA_PAIMON_VERSION}"
    if (target / ".complete").is_file():
        return {"artifact": artifact, "jars": sorted(str(p) for p in target.glob("*.jar"))}
    if shutil.which("mvn") is None:
        return {"artifact": artifact, "error": "mvn is not on PATH"}
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    result = subprocess.run(
        ["mvn", "--batch-mode", "--quiet", "-U", "--file", JAVA_POM, "dependency:copy-dependencies",
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
    (staging / ".complete").write_text(artifact)
    staging.rename(target)
    return {"artifact": artifact, "jars": sorted(str(p) for p in target.glob("*.jar"))}


# --- readers and sinks ----------------------------------------------------------------------------


class Readers:
    """How each reader opens a table as a batch or a stream DataFrame (same table, same rows)."""

    def __init__(self, spark, warehouse: str, java: bool) -> None:
        self.spark, self.warehouse, self.java = spark, warehouse, java

    def names(self) -> list[str]:
        return ["source", "python_ceiling", "spark_parquet"] + (["java_connector"] if self.java else [])

    def batch(self, reader: str, name: str, ddl: str):
        spark = self.spark
        if reader == "source":
            return spark.read.format("paimon_feed").option("warehouse", self.warehouse).option("table", f"db.{name}").load()
        if reader == "python_ceiling":
            return self._arrow_files(spark.read, name, ddl).load()
        if reader == "spark_parquet":
            return spark.read.parquet(*data_files(self.warehouse, name))
        return spark.read.format("paimon").load(os.path.join(self.warehouse, "db.db", name))

    def stream(self, reader: str, name: str, ddl: str, **source_options):
        spark = self.spark
        if reader == "source":
            stream = spark.readStream.format("paimon_feed").option("warehouse", self.warehouse)
            return stream.option("table", f"db.{name}").options(**source_options).load()
        if reader == "python_ceiling":
            return self._arrow_files(spark.readStream, name, ddl).load()
        if reader == "spark_parquet":
            return spark.readStream.schema(ddl.replace(" not null", "")).parquet(
                os.path.join(self.warehouse, "db.db", name, "bucket-*"))
        return spark.readStream.format("paimon").load(os.path.join(self.warehouse, "db.db", name))

    def _arrow_files(self, builder, name: str, ddl: str):
        from paimon_feed.spark.driver import READ_BATCH_ROWS

        builder = builder.format("arrow_files").option("files", ",".join(data_files(self.warehouse, name)))
        return builder.option("partitions", "2").option("batchRows", str(READ_BATCH_ROWS)).option("ddl", ddl)


def run_available_now(df, sink: str, out_dir: str, checkpoint: str) -> int:
    """Start ``df`` as an ``AvailableNow`` query into ``sink``; rows it read, after termination."""
    writer = df.writeStream.option("checkpointLocation", checkpoint).trigger(availableNow=True)
    writer = writer.format("noop") if sink == "noop" else writer.format("parquet").option("path", out_dir)
    query = writer.start()
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
                       stream_options: dict | None = None) -> dict:
    """Every reader x {noop, parquet} x {AvailableNow, batch}, interleaved. ``stream_options``
    go to this source's stream (the primary-key table is streamed from ``earliest``)."""
    runs = iter(range(1_000_000))
    ddl = WIDE_DDL
    cases = {}
    for reader in readers.names():
        if not with_ceilings and reader in ("python_ceiling", "spark_parquet"):
            continue
        for sink in ("noop", "parquet"):
            def stream_case(reader=reader, sink=sink):
                n = next(runs)
                out = os.path.join(workdir, f"out-{name}-{n}")
                options = (stream_options or {}) if reader == "source" else {}
                read = run_available_now(readers.stream(reader, name, ddl, **options), sink, out,
                                         os.path.join(workdir, f"checkpoint-{name}-{n}"))
                shutil.rmtree(out, ignore_errors=True)
                expected = stream_rows if reader in ("source", "java_connector") else rows
                assert read == expected, (reader, sink, read, expected)

            def batch_case(reader=reader, sink=sink):
                out = os.path.join(workdir, f"out-{next(runs)}")
                run_batch(readers.batch(reader, name, ddl), sink, out)
                shutil.rmtree(out, ignore_errors=True)

            cases[f"{reader}/available_now/{sink}"] = stream_case
            cases[f"{reader}/batch/{sink}"] = batch_case
    before = load()
    seconds = interleaved(cases, repeats)
    result = {"rows": rows, "batch_rows": batch_rows, "stream_rows": stream_rows, "repeats": repeats,
              "load_before": before, "load_after": load(), "cases": {}}
    for case, durations in seconds.items():
        reader, mode, _sink = case.split("/")
        case_rows = stream_rows if mode == "available_now" and reader in ("source", "java_connector") else (
            batch_rows if reader in ("source", "java_connector") else rows)
        result["cases"][case] = {"seconds": durations, "median_s": statistics.median(durations),
                                 "rows_per_s": case_rows / statistics.median(durations)}
    return result


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
    runs = iter(range(1_000_000))

    def case(reader):
        def run():
            n = next(runs)
            read = run_available_now(readers.stream(reader, "tiny", SMALL_DDL), "noop", "",
                                     os.path.join(workdir, f"startup-{n}"))
            assert read == 10, (reader, read)

        return run

    before = load()
    seconds = interleaved({reader: case(reader) for reader in readers.names()}, repeats)
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
        runs.append({"import_source_s": imported_s, "open_table_s": table_s, "modules_s": cumulative})
    return {
        "repeats": repeats,
        "import_source_s": statistics.median(r["import_source_s"] for r in runs),
        "open_table_s": statistics.median(r["open_table_s"] for r in runs),
        "modules_s": {m: statistics.median(r["modules_s"].get(m, 0.0) for r in runs) for m in PROBED_MODULES},
    }


# --- 3. latency -----------------------------------------------------------------------------------


class ArrivalSink:
    """foreachBatch sink: for each commit number, when its micro-batch reached the sink (entry)
    and when the sink returned after reading the micro-batch's rows (end), epoch seconds."""

    def __init__(self) -> None:
        self.entered: dict[int, float] = {}
        self.ended: dict[int, float] = {}
        self.batches = 0
        self._lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        entered = time.time()
        commits = {row["commit"] for row in df.select("commit").distinct().collect()}
        ended = time.time()
        with self._lock:
            self.batches += 1
            for n in commits:
                self.entered.setdefault(n, entered)
                self.ended.setdefault(n, ended)


def start_follow_query(readers: Readers, name: str, mode: str, trigger: str, sink, workdir: str, tag: str,
                       extra: dict | None = None):
    stats_path = os.path.join(workdir, f"stats-{mode}-{tag}.json")
    stream = readers.stream("source", name, SMALL_DDL, startingPosition="latest", statsPath=stats_path,
                            **MODES.get(mode, {}), **(extra or {}))
    query = (
        stream.writeStream.foreachBatch(sink)
        .option("checkpointLocation", os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
        .trigger(processingTime=trigger)
        .start()
    )
    # Started means: the source answered its first offsets (it writes stats from then on).
    wait_for(lambda: os.path.exists(stats_path), 120, f"the {mode} query to start")
    return query, stats_path


def measure_latency(readers, table, mode: str, trigger: str, numbers: list[int], workdir: str, tag: str,
                    seed: int) -> dict:
    """End and entry latencies (ms) of the commits ``numbers``, after ``WARM_UP_COMMITS``
    unmeasured ones (the first micro-batches also start the executors' Python workers)."""
    sink = ArrivalSink()
    query, stats_path = start_follow_query(readers, "small", mode, trigger, sink, workdir, tag)
    wait_for(lambda: read_stats(stats_path)["latest_calls"] >= 3, 120, f"{mode} triggers")
    rng = random.Random(seed)
    warm_up = [-(n + 1) - 1000 * seed for n in range(WARM_UP_COMMITS)]
    snapshot_of = {}
    try:
        for n in warm_up + numbers:
            time.sleep(rng.uniform(0.2, 0.6))
            commit_small(table, n)
            snapshot_of[n] = table.snapshot_manager().get_latest_snapshot().id
            if n in warm_up:
                wait_for(lambda n=n: n in sink.ended, 300, f"{mode}: warm-up commit")
        wait_for(lambda: all(n in sink.ended for n in numbers), 300, f"{mode}: every commit")
    finally:
        query.stop()
    snapshot_dir = os.path.join(readers.warehouse, "db.db", "small", "snapshot")
    committed = {n: os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_of[n]}")).st_mtime_ns / 1e9 for n in numbers}
    return {
        "end_ms": [(sink.ended[n] - committed[n]) * 1000 for n in numbers],
        "entry_ms": [(sink.entered[n] - committed[n]) * 1000 for n in numbers],
        "micro_batches": len({sink.ended[n] for n in numbers}),
    }


def measure_latencies(readers, table, commits: int, rounds: int, workdir: str) -> dict:
    """Every (trigger, mode) in alternating rounds, so drift in the machine's load hits all alike."""
    keys = [(trigger, mode) for trigger in TRIGGERS for mode in MODES]
    measured = {key: {"end_ms": [], "entry_ms": [], "micro_batches": 0} for key in keys}
    per_round, next_number = max(1, commits // rounds), 1
    before = load()
    for round_index in range(rounds):
        for index, (trigger, mode) in enumerate(keys):
            numbers = list(range(next_number, next_number + per_round))
            next_number += per_round
            print(f"latency: {mode}, trigger {trigger}, round {round_index + 1}/{rounds} ...", flush=True)
            one = measure_latency(readers, table, mode, TRIGGERS[trigger], numbers, workdir,
                                  tag=f"{trigger.replace(' ', '')}-{round_index}", seed=7 + 10 * round_index + index)
            for field in ("end_ms", "entry_ms"):
                measured[trigger, mode][field].extend(one[field])
            measured[trigger, mode]["micro_batches"] += one["micro_batches"]
    result: dict = {"load_before": before, "load_after": load()}
    for (trigger, mode), m in measured.items():
        result.setdefault(trigger, {})[mode] = {
            "label": LABELS[mode], "commits": len(m["end_ms"]), "micro_batches": m["micro_batches"],
            "end_ms": m["end_ms"], "entry_ms": m["entry_ms"],
            "p50_ms": percentile(m["end_ms"], 0.5), "p95_ms": percentile(m["end_ms"], 0.95),
            "max_ms": max(m["end_ms"]), "entry_p50_ms": percentile(m["entry_ms"], 0.5),
        }
    return result


# --- 4. idle storage requests, counted at the server ----------------------------------------------


def start_moto():
    """A ``moto_server`` process, and its endpoint and fake credentials in this process's
    environment, so the Python workers of a Spark session started after it reach it."""
    from s3_support import start_moto_server

    server = start_moto_server()
    os.environ.update({**server.credentials_env, "AWS_ENDPOINT_URL_SQS": server.endpoint_url})
    return server


def measure_idle_s3(spark, server, workdir: str, idle_seconds: float) -> dict:
    """Queries following idle ``s3://`` tables on moto; requests naming each table, from moto's log."""
    from paimon_feed.spark.options import FORMAT_NAME
    from s3_support import s3_catalog_options
    from pypaimon import CatalogFactory

    try:
        server.create_bucket(BUCKET)
        queue = server.create_queue("spark-bench")
        options = s3_catalog_options(server, BUCKET)
        catalog = CatalogFactory.create(options)
        catalog.create_database("db", True)
        tables = {"push": "idle_push", "storage-per-trigger": "idle_poll"}
        for name in tables.values():
            commit_small(create_table(catalog, f"db.{name}", SMALL), 0)
        server.notify_queue(BUCKET, queue.queue_arn, prefix="wh/db.db/idle_push/snapshot/")
        queue.purge()
        mode_options = {"push": {"notifier": "sqs", "queueUrl": queue.queue_url},
                        "storage-per-trigger": {"notifier": "storage-per-trigger"}}
        catalog_options = {f"catalog.{k}": v for k, v in options.items() if k != "warehouse"}
        queries = {}
        for mode, name in tables.items():
            stats = os.path.join(workdir, f"idle-{mode}.json")
            query = (
                spark.readStream.format(FORMAT_NAME).option("warehouse", options["warehouse"])
                .option("table", f"db.{name}").option("startingPosition", "latest").option("statsPath", stats)
                .options(**catalog_options, **mode_options[mode]).load()
                .writeStream.foreachBatch(ArrivalSink())
                .option("checkpointLocation", os.path.join(workdir, f"idle-checkpoint-{mode}"))
                .trigger(processingTime="0 seconds").start()
            )
            queries[mode] = (query, stats)
        for mode, (_, stats) in queries.items():
            wait_for(lambda stats=stats: os.path.exists(stats), 120, f"the idle {mode} query to start")
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
        result: dict = {"window_s": window, "load_before": before, "load_after": load(), "modes": {}}
        for mode, name in tables.items():
            requests = sum(1 for line in lines if f"db.db/{name}/" in line)
            result["modes"][mode] = {"table": name, "s3_requests": requests,
                                     "s3_requests_per_minute": requests * 60 / window}
        sqs = sum(1 for line in lines if _SQS_REQUEST.search(line))
        result["sqs_requests_per_minute"] = sqs * 60 / window
        return result
    finally:
        server.close()


# --- report ---------------------------------------------------------------------------------------


def targets(results: dict) -> dict:
    """The issue's four targets as ratios of this run's figures; None where a side is missing."""
    largest = results["throughput"][max(results["throughput"], key=int)]["cases"]
    java = results["java_connector"].get("jars")

    def rate(case):
        return largest[case]["rows_per_s"] if case in largest else None

    startup = results["startup"]["cases"]
    lat = results["latency"]["0 seconds"]
    idle = results["idle_s3"]["modes"]
    noop_ratio = rate("source/batch/noop") / rate("python_ceiling/batch/noop")
    return {
        "parquet_sink_vs_java": (rate("source/available_now/parquet") / rate("java_connector/available_now/parquet")) if java else None,
        "noop_vs_python_ceiling": noop_ratio,
        "noop_available_now_vs_python_ceiling": rate("source/available_now/noop") / rate("python_ceiling/available_now/noop"),
        "startup_minus_python_ceiling_s": startup["source"]["median_s"] - startup["python_ceiling"]["median_s"],
        "latency_p50_vs_java": None,  # needs the Java connector's latency, measured only with its jars
        "latency_p50_push_vs_poll": lat["push"]["p50_ms"] / lat["storage-per-trigger"]["p50_ms"],
        # None when push made no request at all in the window (the ratio is unbounded then).
        "idle_requests_poll_over_push": (
            idle["storage-per-trigger"]["s3_requests_per_minute"] / idle["push"]["s3_requests_per_minute"]
            if idle["push"]["s3_requests"] else None
        ),
    }


def print_report(results: dict) -> None:
    for size, t in results["throughput"].items():
        print(f"\nThroughput, {t['table']} table, {int(size):,} rows (median of {t['repeats']}, M rows/s)")
        for case, c in t["cases"].items():
            print(f"  {case:<40}{c['rows_per_s'] / 1e6:>8.2f}   {c['median_s']:.2f} s")
    print(f"\nThroughput, primary-key table (changelog-producer=input), M rows/s")
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
    print("\nS3 requests per idle minute (moto)")
    for mode, m in results["idle_s3"]["modes"].items():
        print(f"  {mode:<22}{m['s3_requests_per_minute']:>8.1f}")
    print(f"\ntargets: {json.dumps(results['targets'], indent=1)}")
    print(f"Java connector: {results['java_connector']}")


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
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.pk_rows, args.repeats, args.startup_repeats = "20000", 8000, 1, 1
        args.latency_commits, args.latency_rounds, args.idle_seconds = 2, 1, 3.0

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pypaimon import CatalogFactory
    from pyspark.sql import SparkSession

    import paimon_feed.spark

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

    server = start_moto()  # before the session: its Python workers inherit the environment
    try:
        builder = (
            SparkSession.builder.master("local[2]").appName("paimon-feed-spark-bench")
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
        )
        if java.get("jars"):
            builder = builder.config("spark.jars", ",".join(java["jars"]))
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        paimon_feed.spark.register(spark)
        ArrowFilesSource.register(spark)
        readers = Readers(spark, warehouse, java=bool(java.get("jars")))

        results: dict = {
            "environment": {
                "python": platform.python_version(), "pyspark": importlib.metadata.version("pyspark"),
                "pypaimon": importlib.metadata.version("pypaimon"), "cpus": os.cpu_count(),
                "spark_master": "local[2]", "load_at_start": load(),
            },
            "java_connector": java,
            "throughput": {},
        }
        print("throughput: primary-key table ...", flush=True)
        results["throughput_pk"] = measure_throughput(
            readers, "pk", args.pk_rows, args.repeats, workdir,
            batch_rows=args.pk_rows // 2, stream_rows=args.pk_rows, with_ceilings=False,
            stream_options={"startingPosition": "earliest"})
        results["throughput_pk"]["table"] = "primary key, changelog-producer=input"
        print("start-up ...", flush=True)
        results["startup"] = measure_startup(readers, args.startup_repeats, workdir)
        results["startup"]["one_process"] = measure_imports(warehouse, args.startup_repeats)
        results["latency"] = measure_latencies(readers, small, args.latency_commits, args.latency_rounds, workdir)
        print(f"idle on moto: {args.idle_seconds:.0f} s ...", flush=True)
        results["idle_s3"] = measure_idle_s3(spark, server, workdir, args.idle_seconds)
        for rows in sizes:
            print(f"throughput: {rows:,} rows ...", flush=True)
            t = measure_throughput(readers, f"wide_{rows}", rows, args.repeats, workdir,
                                   batch_rows=rows, stream_rows=rows, with_ceilings=True)
            t["table"] = "append"
            t["commits"] = max(16, rows // 1_000_000)
            t["pypaimon_to_arrow_rows_per_s"] = measure_pypaimon(wide[rows], rows, args.repeats)
            results["throughput"][str(rows)] = t
        results["environment"]["load_at_end"] = load()
        spark.stop()
    finally:
        server.close()
    results["targets"] = targets(results)

    print_report(results)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
