"""``paimon_feed.spark.foreach_batch`` against Paimon's Java connector, on this machine.

The connector is ``paimon-spark-3.5`` 0.9.0 (the only Paimon Spark connector Maven serves here)
on PySpark 3.5.9 in a process of its own (``benchmarks/spark_bench.py``'s
:class:`~benchmarks.spark_bench.JavaConnector`); the runner runs in this process's ``local[2]``
session (the main venv's PySpark). Measured, interleaved where both run the same case:

1. ``available_now``: a 10-row table, from the call to its return (``fn`` writes the batch to
   Spark's ``noop`` sink), a fresh consumer each time; the connector: a ``Trigger.AvailableNow``
   query into ``noop`` with a fresh checkpoint (its clock includes one request to its process).
2. Commit -> ``fn`` called (entry) and -> the batch's rows collected in ``fn`` (end), local
   table, inotify push; the connector with Spark's default trigger (``0 seconds``): when its
   ``foreachBatch`` was entered and ended. From the snapshot file's mtime.
3. Storage requests of an idle table on S3 (moto), counted in moto's log: the runner pushed by
   SQS (its safety check every ``reconcileInterval``, 60 s) and the connector on ``s3a://``
   with its default trigger; per hour = the window's count scaled.

``--smoke`` runs every part at toy size. Results: ``benchmarks/results/spark_runner.json``,
rendered into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import random
import statistics
import sys
import threading
import time

from benchmarks._common.java_connector import (
    CONNECTOR_PYSPARK,
    JAVA_PAIMON_VERSION,
    JAVA_SPARK_LINE,
    JavaConnector,
    JavaFollow,
    fetch_java_connector,
)
from benchmarks._common.s3_costs import SQS_REQUEST, idle_log_window, requests_of_table
from benchmarks._common.scratch import scratch_dir
from benchmarks._common.spark_readers import (
    SESSION_SOCKETS,
    Readers,
    new_session,
)
from benchmarks._common.spark_setup import (
    RESULTS,
    SMALL,
    SMALL_DDL,
    WARM_UP_COMMITS,
    commit_small,
    create_table,
    interleaved,
    load,
    wait_for,
    write_results,
)
from benchmarks._common.stats import percentile
from benchmarks.spark_idle_s3 import (
    BUCKET,
    s3a_conf,
    start_moto,
)
from benchmarks.spark_latency import (
    commit_delay,
    measure_latency,
)
from paimon_feed.spark import foreach_batch

OUT = os.path.join(RESULTS, "spark_runner.json")
TARGETS = {"latency_p50_s": 1.0, "latency_p99_s": 2.0, "idle_requests_java_over_runner": 100.0,
           "available_now_vs_java": 1.5}


class LatencySink:
    """``fn`` of the latency case: when it was entered per batch id, and when each commit's rows
    were in hand (collected)."""

    def __init__(self) -> None:
        self.entered: dict[int, float] = {}
        self.ended: dict[int, float] = {}
        self._lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        entered = time.time()
        commits = {row["commit"] for row in df.select("commit").collect()}
        ended = time.time()
        with self._lock:
            self.entered[batch_id] = entered
            self.ended.update({n: ended for n in commits})


def measure_available_now(spark, readers, warehouse: str, repeats: int, workdir: str) -> dict:
    runs = iter(range(1_000_000))

    def runner() -> None:
        n = next(runs)
        foreach_batch(spark, lambda df, _: df.write.format("noop").mode("overwrite").save(),
                      warehouse=warehouse, table="db.tiny", consumer_id=f"available-now-{n}", available_now=True)

    def java() -> None:
        read = readers.available_now("java_connector", "tiny", SMALL_DDL, "noop", "",
                                     os.path.join(workdir, f"java-available-now-{next(runs)}"))
        assert read == 10, read

    cases = {"runner": runner, **({"java_connector": java} if readers.java else {})}
    before = load()
    seconds = interleaved(cases, repeats, warm_ups=2)
    return {"table_rows": 10, "repeats": repeats, "load_before": before, "load_after": load(),
            "cases": {name: {"seconds": s, "median_s": statistics.median(s)} for name, s in seconds.items()}}


def measure_runner_latency(spark, warehouse: str, table, commits: int, seed: int) -> dict:
    """The runner following ``db.small`` (inotify), ``commits`` commits after warm-up ones."""
    sink = LatencySink()
    runner = foreach_batch(spark, sink, warehouse=warehouse, table="db.small", consumer_id=f"latency-{seed}",
                           start="latest")
    snapshot_dir = os.path.join(warehouse, "db.db", "small", "snapshot")
    rng = random.Random(seed)
    warm_up = [-(n + 1) - 1000 * seed for n in range(WARM_UP_COMMITS)]
    numbers = [seed * 1000 + n for n in range(commits)]
    snapshot_of = {}
    try:
        for n in warm_up + numbers:
            time.sleep(commit_delay(rng, 0))
            commit_small(table, n)
            snapshot_of[n] = table.snapshot_manager().get_latest_snapshot().id
            if n in warm_up:
                wait_for(lambda n=n: n in sink.ended, 300, "runner: warm-up commit")
        wait_for(lambda: all(n in sink.ended for n in numbers), 300, "runner: every commit")
    finally:
        runner.stop()
    runner.await_termination(0)
    committed = {n: os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_of[n]}")).st_mtime_ns / 1e9
                 for n in numbers}
    entry = {n: sink.entered[min(b for b in sink.entered if b >= snapshot_of[n])] for n in numbers}
    return {"entry_ms": [(entry[n] - committed[n]) * 1000 for n in numbers],
            "end_ms": [(sink.ended[n] - committed[n]) * 1000 for n in numbers],
            "batches": len(set(entry.values()))}


def summary(runs: list[dict], label: str) -> dict:
    entry = [v for run in runs for v in run["entry_ms"]]
    end = [v for run in runs for v in run["end_ms"]]
    return {"label": label, "commits": len(end),
            "entry_ms_p50": statistics.median(entry), "entry_ms_p99": percentile(entry, 0.99),
            "end_ms_p50": statistics.median(end), "end_ms_p99": percentile(end, 0.99), "runs": runs}


def measure_latencies(spark, readers, warehouse: str, table, commits: int, rounds: int, workdir: str) -> dict:
    before = load()
    runner_runs, java_runs = [], []
    for seed in range(rounds):
        print(f"  latency round {seed + 1}/{rounds}, load {load()}", flush=True)
        runner_runs.append(measure_runner_latency(spark, warehouse, table, commits, seed))
        if readers.java:
            numbers = [50_000 + seed * 1000 + n for n in range(commits)]
            java_runs.append(measure_latency(readers, table, "java_connector", "0 seconds", numbers,
                                                workdir, f"runner-bench-{seed}", seed + 100))
    result = {"load_before": before, "load_after": load(),
              "runner": summary(runner_runs, "foreach_batch, inotify push")}
    if java_runs:
        result["java_connector"] = summary(java_runs, "Paimon's Java connector, default trigger (0 seconds)")
    return result


def measure_idle_s3(spark, server, java, idle_seconds: float, workdir: str) -> dict:
    """The runner (SQS push) and the connector (``s3a://``) following idle tables on moto."""
    from pypaimon import CatalogFactory
    from s3_support import s3_catalog_options

    server.create_bucket(BUCKET)
    queue = server.create_queue("runner-bench")
    options = s3_catalog_options(server, BUCKET)
    catalog = CatalogFactory.create(options)
    catalog.create_database("db", True)
    tables = {"runner": "idle_runner", **({"java_connector": "idle_java"} if java else {})}
    for name in tables.values():
        commit_small(create_table(catalog, f"db.{name}", SMALL), 0)
    server.notify_queue(BUCKET, queue.queue_arn, prefix="wh/db.db/idle_runner/snapshot/")
    queue.purge()
    catalog_options = {f"catalog.{k}": v for k, v in options.items() if k != "warehouse"}
    runner = foreach_batch(spark, lambda df, _: None, warehouse=options["warehouse"], table="db.idle_runner",
                           consumer_id="idle", start="latest", notifier="sqs", queueUrl=queue.queue_url,
                           **catalog_options)
    follow = None
    if java:
        follow = JavaFollow(java, f"s3a://{BUCKET}/wh/db.db/idle_java", "0 seconds",
                               os.path.join(workdir, "idle-checkpoint-java"), tag="runner-idle-java")
    time.sleep(5.0)  # start-up reads fall out of the window
    before = load()
    window, lines = idle_log_window(server, idle_seconds)
    runner.stop()
    runner.await_termination(0)
    if follow:
        follow.arrivals()  # raises if its query failed during the window
        follow.stop()
    result: dict = {"window_s": window, "load_before": before, "load_after": load(), "modes": {}}
    for mode, name in tables.items():
        counts = requests_of_table(lines, name, window, 3600)
        counts["s3_requests_per_hour"] = counts.pop("s3_requests_per_window")
        result["modes"][mode] = counts
    sqs = sum(1 for line in lines if SQS_REQUEST.search(line))
    result["sqs_requests_per_hour"] = sqs * 3600 / window
    return result


def targets(results: dict) -> dict:
    """Each issue target with the measured value and whether it was reached."""
    out: dict = {}
    runner = results["latency"]["runner"]
    out["latency_p50_s"] = {"value": runner["entry_ms_p50"] / 1000, "target": TARGETS["latency_p50_s"]}
    out["latency_p99_s"] = {"value": runner["entry_ms_p99"] / 1000, "target": TARGETS["latency_p99_s"]}
    modes = results["idle_s3"]["modes"]
    if "java_connector" in modes:
        ratio = modes["java_connector"]["s3_requests"] / max(1, modes["runner"]["s3_requests"])
        out["idle_requests_java_over_runner"] = {"value": ratio, "target": TARGETS["idle_requests_java_over_runner"]}
    cases = results["available_now"]["cases"]
    if "java_connector" in cases:
        ratio = cases["runner"]["median_s"] / cases["java_connector"]["median_s"]
        out["available_now_vs_java"] = {"value": ratio, "target": TARGETS["available_now_vs_java"]}
    for name, entry in out.items():
        higher_is_better = name.startswith("idle")
        entry["reached"] = entry["value"] >= entry["target"] if higher_is_better else entry["value"] <= entry["target"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--latency-commits", type=int, default=20)
    parser.add_argument("--latency-rounds", type=int, default=2)
    parser.add_argument("--idle-seconds", type=float, default=120.0)
    parser.add_argument("--no-java", action="store_true", help="the runner only")
    parser.add_argument("--smoke", action="store_true", help="every part at toy size")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.latency_commits, args.latency_rounds, args.idle_seconds = 1, 2, 1, 3.0
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pypaimon import CatalogFactory

    run_started = time.monotonic()
    java = {"jars": None} if args.no_java else fetch_java_connector()
    workdir = scratch_dir("paimon-feed-runner-bench-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    commit_small(create_table(catalog, "db.tiny", SMALL), 0)
    small = create_table(catalog, "db.small", SMALL)
    commit_small(small, 0)
    server = start_moto()
    connector = None
    try:
        if java.get("jars"):
            print(f"starting the Java connector's process (PySpark {CONNECTOR_PYSPARK}) ...", flush=True)
            connector = JavaConnector(java["jars"], {"spark.sql.session.timeZone": "UTC", **s3a_conf(server)},
                                         os.path.join(workdir, "java-connector.log"))
        spark = new_session("paimon-feed-runner-bench", SESSION_SOCKETS)
        readers = Readers(spark, warehouse, java=connector)
        results: dict = {"environment": {
            "python": platform.python_version(), "pyspark": importlib.metadata.version("pyspark"),
            "pypaimon": importlib.metadata.version("pypaimon"), "cpus": os.cpu_count(), "spark_master": "local[2]",
            "java_connector": f"paimon-spark-{JAVA_SPARK_LINE} {JAVA_PAIMON_VERSION} on PySpark "
                              f"{CONNECTOR_PYSPARK}" if connector else None,
            "load_at_start": load()}}
        print("available_now ...", flush=True)
        results["available_now"] = measure_available_now(spark, readers, warehouse, args.repeats, workdir)
        print("latency ...", flush=True)
        results["latency"] = measure_latencies(spark, readers, warehouse, small, args.latency_commits,
                                               args.latency_rounds, workdir)
        print(f"idle on moto: {args.idle_seconds:.0f} s ...", flush=True)
        results["idle_s3"] = measure_idle_s3(spark, server, connector, args.idle_seconds, workdir)
        results["environment"]["load_at_end"] = load()
        results["environment"]["run_s"] = time.monotonic() - run_started
        spark.stop()
    finally:
        if connector:
            connector.close()
        server.close()
    results["targets"] = targets(results)
    for name, entry in results["targets"].items():
        print(f"{name}: {entry['value']:.3g} (target {entry['target']}) {'reached' if entry['reached'] else 'NOT reached'}")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
