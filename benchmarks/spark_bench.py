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
import importlib.metadata
import json
import os
import platform
import sys
import time

from benchmarks._common import spark_setup as setup
from benchmarks._common.java_connector import (
    JAVA_CHANGELOG_OPTIONS,
    fetch_java_connector,
)
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.spark_readers import SESSION_SOCKETS, SOCKETS, Readers, new_session
from benchmarks.spark_idle_s3 import measure_idle_s3, moto_and_connector
from benchmarks.spark_latency import PYTHON_CEILING, TRIGGERS, measure_latencies
from benchmarks.spark_sockets import SOCKET_PROBE_MODES, measure_python_sockets, socket_probe
from benchmarks.spark_startup import measure_imports, measure_startup
from benchmarks.spark_throughput import measure_pypaimon, measure_throughput


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
    parser.add_argument("--out", default=os.path.join(setup.RESULTS, "spark.json"))
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
        wide[rows] = setup.create_table(catalog, f"db.wide_{rows}", setup.WIDE)
        setup.fill_wide_table(wide[rows], rows, commits)
    pk = setup.create_table(catalog, "db.pk", setup.WIDE, primary_keys=["id"], options=setup.PK_OPTIONS)
    setup.fill_pk_table(pk, args.pk_rows, 8)
    tiny = setup.create_table(catalog, "db.tiny", setup.SMALL)
    setup.commit_small(tiny, 0)
    small = setup.create_table(catalog, "db.small", setup.SMALL)
    setup.commit_small(small, 0)

    # moto before the sessions: their Python workers inherit its environment
    with moto_and_connector(java.get("jars"), workdir) as (server, java_connector):
        if java_connector:
            java.update(process=java_connector.ready)
        java["jars"] = [os.path.basename(jar) for jar in java.get("jars", [])] or None
        spark = new_session("paimon-feed-spark-bench", SESSION_SOCKETS)
        readers = Readers(spark, warehouse, java=java_connector)

        results: dict = {
            "environment": {
                "python": platform.python_version(), "pyspark": importlib.metadata.version("pyspark"),
                "pypaimon": importlib.metadata.version("pypaimon"), "cpus": os.cpu_count(),
                "spark_master": "local[2]", "load_at_start": setup.load(),
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
        results["environment"]["load_at_end"] = setup.load()
        results["environment"]["run_s"] = time.monotonic() - run_started
        spark.stop()
    results["targets"] = targets(results)

    print_report(results)
    setup.write_results(results, args.out)

if __name__ == "__main__":
    main()
