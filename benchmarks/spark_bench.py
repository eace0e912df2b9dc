"""Spark benchmark: the ``paimon_feed`` source against pypaimon and against polling, same run.

    python benchmarks/spark_bench.py [--rows 4000000] [--commits 16] [--latency-commits 30]
                                     [--idle-seconds 60]

1. Throughput. A local append table of ``--rows`` rows (``--commits`` commits) is read
   (a) by pypaimon directly (``to_arrow`` of a full scan, its default batch size and the batch
   size the source uses), (b) by a ``Trigger.AvailableNow`` query through the source into
   Spark's ``noop`` sink, from ``start()`` to termination (query start-up included; the time
   inside micro-batches, from Spark's progress reports, is given separately), (c) by a batch
   read through the source (``spark.read``), and, for context, the two ceilings a Spark read
   of these rows can reach here: (d) a do-nothing Python data source that yields the same
   files' Arrow batches straight from pyarrow (the cost of Spark's Python data source path
   itself) and (e) Spark's own Parquet reader over the same data files. Every Spark read ends
   in the ``noop`` sink. Median of ``--repeats`` runs after one warm-up run each; Spark runs
   ``local[2]``.
2. Commit-to-micro-batch latency. A query with ``processingTime="0 seconds"`` follows a second
   table while a writer commits at random intervals (0.2-0.6 s); latency runs from the moment
   a snapshot file became visible (its mtime) to the moment the foreachBatch sink is called
   with the micro-batch holding it. With push (``notifier=auto``, which is inotify for a local
   table) and with the baseline ``notifier=storage-per-trigger``, which checks storage on every
   ``latestOffset`` call; ``--latency-commits`` per mode, in ``--latency-rounds`` alternating
   rounds, each query warmed up with a few unmeasured commits.
3. Storage requests while idle. Both queries then follow the idle table at once for
   ``--idle-seconds``; the driver's storage calls (every pypaimon FileIO call the source makes,
   counted in the source process and read through ``statsPath``) are scaled to one minute.

Prints a table and writes ``benchmarks/results/spark.json``. This is a measurement, not a test:
nothing here passes or fails on time. The machine's load average is recorded with the results,
because Spark's numbers on a shared 2-core box move with it.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import json
import os
import platform
import random
import statistics
import sys
import threading
import time

import pyarrow as pa
import pyarrow.compute as pc

from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, HERE)

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
WARM_UP_COMMITS = 3
MODES = {
    "push": {"notifier": "auto"},
    "storage-per-trigger": {"notifier": "storage-per-trigger"},
}
LABELS = {
    "push": "push (notifier=auto: inotify)",
    "storage-per-trigger": "poll storage on every latestOffset",
}


# --- tables ---------------------------------------------------------------------------------------


def create_table(catalog, name: str, schema: pa.Schema):
    from pypaimon import Schema

    catalog.create_table(name, Schema.from_pyarrow_schema(schema), False)
    return catalog.get_table(name)


def fill_wide_table(table, rows: int, commits: int) -> None:
    per_commit = rows // commits
    for n in range(commits):
        ids = range(n * per_commit, (n + 1) * per_commit)
        id_array = pa.array(ids, pa.int64())
        data = pa.table(
            {
                "id": id_array,
                "commit": pa.array([n] * per_commit, pa.int64()),
                "payload": pa.array([f"payload-{i:012d}" for i in ids]),
                "value": pc.multiply(id_array, 0.5),
                "ts": pc.multiply(id_array, 1000).cast(pa.timestamp("us")),
            },
            schema=WIDE,
        )
        commit_arrow(table, data)


def commit_small(table, n: int) -> None:
    commit_arrow(table, pa.table({"id": [n * 10 + i for i in range(10)], "commit": [n] * 10}, schema=SMALL))


# --- helpers --------------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def timed(function, repeats: int) -> list[float]:
    function()  # warm-up: imports, Python workers, file caches
    durations = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        durations.append(time.perf_counter() - started)
    return durations


def read_stats(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


class ArrowFilesSource:
    """The ceiling of Spark's Python data source path: a source that does nothing but yield
    the Arrow batches pyarrow reads from the table's Parquet files (no Paimon planning,
    merging or schema work), registered as ``arrow_files``. Built lazily so the module imports
    without PySpark."""

    @staticmethod
    def register(spark, schema_ddl: str) -> None:
        from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

        class Reader(DataSourceReader):
            def __init__(self, options):
                self.files = options["files"].split(",")
                self.partitions_count = int(options["partitions"])
                self.batch_rows = int(options["batchRows"])

            def partitions(self):
                count = self.partitions_count
                return [InputPartition(self.files[i::count]) for i in range(count)]

            def read(self, partition):
                import pyarrow.parquet as pq

                for path in partition.value:
                    yield from pq.ParquetFile(path).iter_batches(batch_size=self.batch_rows)

        class Source(DataSource):
            @classmethod
            def name(cls):
                return "arrow_files"

            def schema(self):
                return schema_ddl

            def reader(self, schema):
                return Reader(self.options)

        spark.dataSource.register(Source)


# --- 1. throughput --------------------------------------------------------------------------------


def measure_throughput(spark, warehouse: str, table, rows: int, repeats: int, workdir: str) -> dict:
    split_count = {}

    def pypaimon_read(batch_rows: int | None):
        def run():
            source = table if batch_rows is None else table.copy({"read.batch-size": str(batch_rows)})
            builder = source.new_read_builder()
            splits = builder.new_scan().plan().splits()
            split_count["pypaimon"] = len(splits)
            result = builder.new_read().to_arrow(splits)
            assert result.num_rows == rows, result.num_rows

        return run

    from paimon_feed.spark.driver import READ_BATCH_ROWS

    pypaimon_default = timed(pypaimon_read(None), repeats)
    pypaimon_batched = timed(pypaimon_read(READ_BATCH_ROWS), repeats)

    runs = iter(range(1000))

    def spark_available_now():
        checkpoint = os.path.join(workdir, f"throughput-{next(runs)}")
        query = (
            spark.readStream.format("paimon_feed")
            .option("warehouse", warehouse)
            .option("table", "db.wide")
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        read = sum(progress.numInputRows for progress in query.recentProgress)
        assert read == rows, read
        trigger_seconds.append(
            sum(progress.durationMs["triggerExecution"] for progress in query.recentProgress) / 1000
        )

    trigger_seconds: list[float] = []
    source_runs = timed(spark_available_now, repeats)
    trigger_seconds = trigger_seconds[1:]  # drop the warm-up run

    def source_batch():
        reader = spark.read.format("paimon_feed").option("warehouse", warehouse)
        reader.option("table", "db.wide").load().write.format("noop").mode("overwrite").save()

    batch_runs = timed(source_batch, repeats)

    files = glob.glob(os.path.join(warehouse, "db.db", "wide", "bucket-*", "*.parquet"))
    ArrowFilesSource.register(spark, WIDE_DDL)

    def arrow_files():
        reader = spark.read.format("arrow_files").option("files", ",".join(files))
        reader = reader.option("partitions", "2").option("batchRows", str(READ_BATCH_ROWS))
        reader.load().write.format("noop").mode("overwrite").save()

    ceiling_runs = timed(arrow_files, repeats)

    def spark_parquet():
        spark.read.parquet(*files).write.format("noop").mode("overwrite").save()

    parquet_runs = timed(spark_parquet, repeats)

    def rate(durations: list[float]) -> float:
        return rows / statistics.median(durations)

    best_pypaimon = max(rate(pypaimon_default), rate(pypaimon_batched))
    return {
        "rows": rows,
        "repeats": repeats,
        "pypaimon_splits": split_count.get("pypaimon"),
        "pypaimon_to_arrow_default_rows_per_s": rate(pypaimon_default),
        "pypaimon_to_arrow_batch_65536_rows_per_s": rate(pypaimon_batched),
        "source_available_now_rows_per_s": rate(source_runs),
        "source_micro_batches_only_rows_per_s": rate(trigger_seconds),
        "source_batch_read_rows_per_s": rate(batch_runs),
        "python_data_source_ceiling_rows_per_s": rate(ceiling_runs),
        "spark_native_parquet_rows_per_s": rate(parquet_runs),
        "source_vs_best_pypaimon": rate(source_runs) / best_pypaimon,
        "source_micro_batches_vs_best_pypaimon": rate(trigger_seconds) / best_pypaimon,
        "source_batch_vs_python_data_source_ceiling": rate(batch_runs) / rate(ceiling_runs),
        "python_data_source_ceiling_vs_best_pypaimon": rate(ceiling_runs) / best_pypaimon,
        "spark_native_parquet_vs_best_pypaimon": rate(parquet_runs) / best_pypaimon,
        "source_vs_spark_native_parquet": rate(source_runs) / rate(parquet_runs),
        "seconds": {
            "pypaimon_default": pypaimon_default,
            "pypaimon_batch_65536": pypaimon_batched,
            "source_available_now": source_runs,
            "source_micro_batches_only": trigger_seconds,
            "source_batch_read": batch_runs,
            "python_data_source_ceiling": ceiling_runs,
            "spark_native_parquet": parquet_runs,
        },
    }


# --- 2 and 3. latency and idle storage calls -----------------------------------------------------


class ArrivalSink:
    """foreachBatch sink: when each commit number first reached the sink (epoch seconds)."""

    def __init__(self) -> None:
        self.arrived: dict[int, float] = {}
        self.batches = 0
        self._lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        arrived = time.time()  # before any work on the batch: the micro-batch is here
        commits = {row["commit"] for row in df.select("commit").distinct().collect()}
        with self._lock:
            self.batches += 1
            for n in commits:
                self.arrived.setdefault(n, arrived)


def start_follow_query(spark, warehouse: str, mode: str, sink, workdir: str, tag: str):
    stats_path = os.path.join(workdir, f"stats-{mode}-{tag}.json")
    query = (
        spark.readStream.format("paimon_feed")
        .option("warehouse", warehouse)
        .option("table", "db.small")
        .option("startingPosition", "latest")
        .option("statsPath", stats_path)
        .options(**MODES[mode])
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
        .trigger(processingTime="0 seconds")
        .start()
    )
    # Started means: the source answered its first offsets (it writes stats from then on).
    wait_for(lambda: os.path.exists(stats_path), 120, f"the {mode} query to start")
    wait_for(lambda: read_stats(stats_path)["latest_calls"] >= 20, 120, f"{mode} triggers")
    return query, stats_path


def measure_latency(
    spark, warehouse: str, table, mode: str, numbers: list[int], workdir: str, tag: str, seed: int
) -> tuple[list[float], int]:
    """Latencies (ms) of the commits ``numbers``, after ``WARM_UP_COMMITS`` unmeasured ones
    (the first micro-batches of a query also start its executors' Python workers)."""
    sink = ArrivalSink()
    query, _ = start_follow_query(spark, warehouse, mode, sink, workdir, tag)
    rng = random.Random(seed)
    warm_up = [-(n + 1) - 1000 * seed for n in range(WARM_UP_COMMITS)]
    snapshot_of = {}
    try:
        for n in warm_up + numbers:
            time.sleep(rng.uniform(0.2, 0.6))
            commit_small(table, n)
            snapshot_of[n] = table.snapshot_manager().get_latest_snapshot().id
            if n in warm_up:
                wait_for(lambda n=n: n in sink.arrived, 300, f"{mode}: warm-up commit")
        wait_for(lambda: all(n in sink.arrived for n in numbers), 300, f"{mode}: every commit")
    finally:
        query.stop()
    snapshot_dir = os.path.join(warehouse, "db.db", "small", "snapshot")
    latencies = []
    for n in numbers:
        path = os.path.join(snapshot_dir, f"snapshot-{snapshot_of[n]}")
        latencies.append((sink.arrived[n] - os.stat(path).st_mtime_ns / 1e9) * 1000)
    batches = len({sink.arrived[n] for n in numbers})
    return latencies, batches


def measure_latencies(spark, warehouse: str, table, commits: int, rounds: int, workdir: str) -> dict:
    """Both modes in alternating rounds, so drift in the machine's load hits both alike."""
    latencies = {mode: [] for mode in MODES}
    batches = {mode: 0 for mode in MODES}
    per_round = max(1, commits // rounds)
    next_number = 1
    for round_index in range(rounds):
        for mode_index, mode in enumerate(MODES):
            numbers = list(range(next_number, next_number + per_round))
            next_number += per_round
            print(f"latency: {mode}, round {round_index + 1}/{rounds} ...", flush=True)
            measured, batch_count = measure_latency(
                spark, warehouse, table, mode, numbers, workdir,
                tag=f"latency-{round_index}", seed=7 + 10 * round_index + mode_index,
            )
            latencies[mode].extend(measured)
            batches[mode] += batch_count
    return {
        mode: {
            "label": LABELS[mode],
            "commits": len(latencies[mode]),
            "micro_batches": batches[mode],
            "latency_ms": latencies[mode],
            "p50_ms": percentile(latencies[mode], 0.5),
            "p95_ms": percentile(latencies[mode], 0.95),
            "max_ms": max(latencies[mode]),
        }
        for mode in MODES
    }


def measure_idle(spark, warehouse: str, idle_seconds: float, workdir: str) -> dict:
    queries = {}
    for mode in MODES:
        queries[mode] = start_follow_query(spark, warehouse, mode, ArrivalSink(), workdir, "idle")
    time.sleep(2.0)  # let start-up reads (catalog, LATEST) fall out of the window
    before = {mode: read_stats(path) for mode, (_, path) in queries.items()}
    time.sleep(idle_seconds)
    time.sleep(0.6)  # stats are written at most every 0.5 s
    after = {mode: read_stats(path) for mode, (_, path) in queries.items()}
    for query, _ in queries.values():
        query.stop()
    results = {}
    for mode in MODES:
        window = after[mode]["written_at"] - before[mode]["written_at"]
        per_minute = 60.0 / window
        results[mode] = {
            "label": LABELS[mode],
            "window_s": window,
            "storage_calls": after[mode]["storage_calls"] - before[mode]["storage_calls"],
            "storage_calls_per_minute": (after[mode]["storage_calls"] - before[mode]["storage_calls"]) * per_minute,
            "latest_offset_calls_per_minute": (after[mode]["latest_calls"] - before[mode]["latest_calls"]) * per_minute,
            "storage_calls_by_method": {
                method: count - before[mode]["storage_calls_by_method"].get(method, 0)
                for method, count in after[mode]["storage_calls_by_method"].items()
                if count - before[mode]["storage_calls_by_method"].get(method, 0)
            },
            "notifier": after[mode]["notifier"],
        }
    return results


# --- report ---------------------------------------------------------------------------------------


def print_report(results: dict) -> None:
    t = results["throughput"]
    print()
    print(f"Throughput: {t['rows']:,} rows, median of {t['repeats']} runs (Spark local[2])")
    print(f"  {'reader':<56}{'rows/s':>14}")
    for label, key in (
        ("pypaimon to_arrow (default batch size)", "pypaimon_to_arrow_default_rows_per_s"),
        ("pypaimon to_arrow (read.batch-size=65536)", "pypaimon_to_arrow_batch_65536_rows_per_s"),
        ("paimon_feed source, AvailableNow -> noop (incl. start-up)", "source_available_now_rows_per_s"),
        ("  the same, micro-batch execution only", "source_micro_batches_only_rows_per_s"),
        ("paimon_feed source, batch read (spark.read) -> noop", "source_batch_read_rows_per_s"),
        ("ceiling: do-nothing Python source, same Arrow -> noop", "python_data_source_ceiling_rows_per_s"),
        ("ceiling: Spark's own Parquet reader, same files -> noop", "spark_native_parquet_rows_per_s"),
    ):
        print(f"  {label:<56}{t[key]:>14,.0f}")
    print(
        f"  vs best pypaimon: source AvailableNow {t['source_vs_best_pypaimon']:.2f}x, "
        f"its micro-batches {t['source_micro_batches_vs_best_pypaimon']:.2f}x, "
        f"do-nothing Python source {t['python_data_source_ceiling_vs_best_pypaimon']:.2f}x, "
        f"Spark Parquet {t['spark_native_parquet_vs_best_pypaimon']:.2f}x"
    )
    print(f"  source batch read / do-nothing Python source: "
          f"{t['source_batch_vs_python_data_source_ceiling']:.2f}x")
    print()
    print("Commit-to-micro-batch latency (processingTime='0 seconds') and idle storage calls")
    print(f"  {'source mode':<40}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'storage/idle min':>18}{'triggers/min':>14}")
    for mode in MODES:
        lat, idle = results["latency"][mode], results["idle"][mode]
        print(
            f"  {LABELS[mode]:<40}{lat['p50_ms']:>9.0f}{lat['p95_ms']:>9.0f}{lat['max_ms']:>9.0f}"
            f"{idle['storage_calls_per_minute']:>18.1f}{idle['latest_offset_calls_per_minute']:>14.0f}"
        )
    print()
    print(f"  load average during the run: {results['environment']['load_average']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-commits", type=int, default=30, help="per mode")
    parser.add_argument("--latency-rounds", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--out", default=os.path.join(RESULTS, "spark.json"))
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pypaimon import CatalogFactory
    from pyspark.sql import SparkSession

    import paimon_feed.spark

    workdir = scratch_dir("paimon-feed-spark-bench-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    wide = create_table(catalog, "db.wide", WIDE)
    small = create_table(catalog, "db.small", SMALL)
    print(f"writing {args.rows:,} rows in {args.commits} commits ...", flush=True)
    fill_wide_table(wide, args.rows, args.commits)
    commit_small(small, 0)

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-feed-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    paimon_feed.spark.register(spark)

    results: dict = {
        "environment": {
            "python": platform.python_version(),
            "pyspark": importlib.metadata.version("pyspark"),
            "pypaimon": importlib.metadata.version("pypaimon"),
            "cpus": os.cpu_count(),
            "spark_master": "local[2]",
        }
    }
    print("throughput ...", flush=True)
    results["throughput"] = measure_throughput(spark, warehouse, wide, args.rows, args.repeats, workdir)
    results["latency"] = measure_latencies(
        spark, warehouse, small, args.latency_commits, args.latency_rounds, workdir
    )
    print(f"idle: {args.idle_seconds:.0f} s ...", flush=True)
    results["idle"] = measure_idle(spark, warehouse, args.idle_seconds, workdir)
    results["environment"]["load_average"] = [round(x, 2) for x in os.getloadavg()]
    spark.stop()

    print_report(results)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
