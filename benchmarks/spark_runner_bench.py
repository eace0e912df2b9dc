"""``paimon_feed.spark.foreach_batch`` against Paimon's Java connector, on this machine.

The connector is ``paimon-spark-3.5`` 0.9.0 (the only Paimon Spark connector Maven serves here)
on PySpark 3.5.9 in a process of its own (``benchmarks/spark_bench.py``'s
:class:`~benchmarks.spark_bench.JavaConnector`); the runner runs in this process's ``local[2]``
session (the main venv's PySpark). Measured, interleaved where both run the same case:

1. ``available_now``: a 10-row table, from the call to its return (``fn`` writes the batch to
   Spark's ``noop`` sink), a fresh consumer each time; the connector: a ``Trigger.AvailableNow``
   query into ``noop`` with a fresh checkpoint (its clock includes one request to its process).
2. Commit -> ``fn`` called (entry) and -> the batch's rows collected in ``fn`` (end), on a
   local table (inotify push) and on S3 (moto, SQS push); the connector with Spark's default
   trigger (``0 seconds``) beside each: when its ``foreachBatch`` was entered and ended
   (:mod:`benchmarks.spark_runner_latency`).
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
import statistics
import sys
import time

from benchmarks import spark_runner_latency as latency
from benchmarks._common.java_connector import (
    CONNECTOR_PYSPARK,
    JAVA_PAIMON_VERSION,
    JAVA_SPARK_LINE,
    fetch_java_connector,
)
from benchmarks._common.scratch import scratch_dir
from benchmarks._common.spark_readers import SESSION_SOCKETS, Readers, new_session
from benchmarks._common.spark_setup import (
    RESULTS,
    SMALL,
    SMALL_DDL,
    commit_small,
    create_table,
    interleaved,
    load,
    write_results,
)
from benchmarks.spark_idle_s3 import BUCKET, idle_window, moto_and_connector
from paimon_feed.spark import foreach_batch

OUT = os.path.join(RESULTS, "spark_runner.json")
TARGETS = {"latency_p50_s": 1.0, "latency_p99_s": 2.0, "latency_s3_p50_s": 1.0, "latency_s3_p99_s": 2.0,
           "idle_requests_java_over_runner": 100.0, "available_now_vs_java": 1.5}


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


def measure_idle_s3(spark, server, java, idle_seconds: float, workdir: str) -> dict:
    """The runner (SQS push) and the connector (``s3a://``) following idle tables on moto."""
    from pypaimon import CatalogFactory

    from tests.s3_support import s3_catalog_options

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

    def stop() -> None:
        runner.stop()
        runner.await_termination(0)

    return idle_window(server, idle_seconds, java, workdir, stop, tables, "hour")


def targets(results: dict) -> dict:
    """Each issue target with the measured value and whether it was reached."""
    out: dict = {}
    for part, prefix in (("latency", "latency"), ("latency_s3", "latency_s3")):
        runner = results[part]["runner"]
        for p in ("p50", "p99"):
            out[f"{prefix}_{p}_s"] = {"value": runner[f"entry_ms_{p}"] / 1000, "target": TARGETS[f"{prefix}_{p}_s"]}
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
    with moto_and_connector(java.get("jars"), workdir) as (server, connector):
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
        print("latency, local ...", flush=True)
        results["latency"] = latency.measure_local(spark, readers, warehouse, small, args.latency_commits,
                                                   args.latency_rounds, workdir)
        print("latency, S3 ...", flush=True)
        results["latency_s3"] = latency.measure_s3(spark, server, connector, args.latency_commits,
                                                   args.latency_rounds, workdir)
        print(f"idle on moto: {args.idle_seconds:.0f} s ...", flush=True)
        results["idle_s3"] = measure_idle_s3(spark, server, connector, args.idle_seconds, workdir)
        results["environment"]["load_at_end"] = load()
        results["environment"]["run_s"] = time.monotonic() - run_started
        spark.stop()
    results["targets"] = targets(results)
    for name, entry in results["targets"].items():
        print(f"{name}: {entry['value']:.3g} (target {entry['target']}) {'reached' if entry['reached'] else 'NOT reached'}")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
