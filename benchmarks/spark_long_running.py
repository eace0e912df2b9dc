"""Spark benchmark, long-running queries: rows/s once a query is up, one commit per micro-batch.

    python -m benchmarks.spark_long_running [--rows 32000000] [--commits 32] [--repeats 3] [--smoke]

``spark_bench.py`` times ``Trigger.AvailableNow`` queries, which pay Spark's start-up every time.
A long-running query pays it once; from then on every micro-batch pays Spark's per-batch work
(offset and commit logs, task scheduling) and the reader's own (planning, opening files). Here
each reader streams the same append table (``--commits`` commits) from its first commit with
``processingTime="0 seconds"`` and a read limit of one commit per micro-batch, into ``noop`` and
into a Parquet file sink, until it has read every row:

- this source: ``startingPosition=earliest``, ``maxSnapshotsPerTrigger=1``;
- Paimon's Java connector (in its own process on PySpark 3.5, as in ``spark_bench.py``):
  ``scan.mode=from-snapshot``, ``scan.snapshot-id=1``, ``read.stream.maxRowsPerTrigger`` = one
  commit's rows;
- the do-nothing Python stream source (``_common.spark_sources.ArrowFilesSource``): one commit's files per
  micro-batch;
- Spark's file source on the table's Parquet files: ``maxFilesPerTrigger`` = one commit's files.

Rows/s is the steady state, from Spark's own progress reports: the rows of every micro-batch
after the first, over the time from the end of the first micro-batch to the end of the last
(a report's ``timestamp`` plus its ``triggerExecution``). Cases are interleaved round by round
after a warm-up round; medians of ``--repeats``. Writes
``benchmarks/results/spark_long_running.json``. A measurement, not a test: nothing fails on time.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import sys
import time

from benchmarks._common.java_connector import JavaConnector, fetch_java_connector
from benchmarks._common.scratch import scratch_dir
from benchmarks._common.spark_readers import SESSION_SOCKETS, Readers, new_session
from benchmarks._common.spark_setup import (
    RESULTS,
    WIDE,
    WIDE_DDL,
    create_table,
    data_files,
    fill_wide_table,
    interleaved,
    load,
    write_results,
)
from benchmarks.java_connector_worker import into_sink, run_until_rows

__all__ = ["steady_state", "main"]

READERS = ("source", "java_connector", "python_ceiling", "spark_parquet")


def steady_state(progress: list[dict], rows: int) -> dict:
    """Steady-state figures of one query from its progress reports (dicts, as Spark's JSON has
    them): micro-batches that read rows, in batch order; rows/s from the end of the first to the
    end of the last. Raises if the reports do not hold ``rows`` rows in at least two batches."""
    batches = sorted((p for p in progress if p["numInputRows"] > 0), key=lambda p: p["batchId"])
    read = sum(p["numInputRows"] for p in batches)
    if read != rows or len(batches) < 2:
        raise ValueError(f"expected {rows} rows in two or more micro-batches, the reports hold "
                         f"{read} rows in {len(batches)}")

    def end(report: dict) -> float:
        started = datetime.datetime.fromisoformat(report["timestamp"].replace("Z", "+00:00"))
        return started.timestamp() + report["durationMs"]["triggerExecution"] / 1000

    seconds = end(batches[-1]) - end(batches[0])
    later = batches[1:]
    return {
        "batches": len(batches),
        "rows_per_s": sum(p["numInputRows"] for p in later) / seconds,
        "steady_s": seconds,
        "first_batch_s": batches[0]["durationMs"]["triggerExecution"] / 1000,
        "batch_ms_p50": statistics.median(p["durationMs"]["triggerExecution"] for p in later),
    }


def stream_options(reader: str, files: list[str], commits: int, rows: int) -> dict:
    per_commit_files = len(files) // commits
    if per_commit_files * commits != len(files):
        raise ValueError(f"{len(files)} data files for {commits} commits: not one commit's files a batch")
    if reader == "source":
        return {"startingPosition": "earliest", "maxSnapshotsPerTrigger": "1"}
    if reader == "java_connector":
        return {"scan.mode": "from-snapshot", "scan.snapshot-id": "1",
                "read.stream.maxRowsPerTrigger": str(rows // commits)}
    return {("filesPerTrigger" if reader == "python_ceiling" else "maxFilesPerTrigger"): str(per_commit_files)}


def run_case(readers: Readers, reader: str, name: str, sink: str, rows: int, options: dict, workdir: str,
             n: int) -> list[dict]:
    """One long-running query of ``reader`` until it read ``rows`` rows; its progress reports."""
    out, checkpoint = os.path.join(workdir, f"out-{n}"), os.path.join(workdir, f"checkpoint-{n}")
    try:
        if reader == "java_connector":
            return readers.java.call("long_running", path=readers.table_uri(name), sink=sink, out=out,
                                     checkpoint=checkpoint, options=options, rows=rows)["progress"]
        writer = readers.stream(reader, name, WIDE_DDL, **options).writeStream
        writer = writer.option("checkpointLocation", checkpoint).trigger(processingTime="0 seconds")
        return run_until_rows(into_sink(writer, sink, out).start(), rows)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(checkpoint, ignore_errors=True)


def measure(readers: Readers, name: str, rows: int, commits: int, repeats: int, workdir: str) -> dict:
    files = data_files(readers.warehouse, name)
    runs = iter(range(1_000_000))
    options_of = {r: stream_options(r, files, commits, rows) for r in READERS if r in readers.names()}
    figures: dict[str, list[dict]] = {}
    cases = {}
    for reader, options in options_of.items():
        for sink in ("noop", "parquet"):
            case = f"{reader}/{sink}"
            figures[case] = []

            def run(reader=reader, sink=sink, options=options, case=case):
                progress = run_case(readers, reader, name, sink, rows, options, workdir, next(runs))
                figures[case].append(steady_state(progress, rows))

            cases[case] = run
    before = load()
    interleaved(cases, repeats)
    result = {"rows": rows, "commits": commits, "repeats": repeats, "load_before": before, "load_after": load(),
              "options": options_of,
              "cases": {}}
    for case, runs_of_case in figures.items():
        timed = runs_of_case[-repeats:]  # the warm-up round's figures are left out
        result["cases"][case] = {
            "runs": timed,
            "rows_per_s": statistics.median(f["rows_per_s"] for f in timed),
            "batch_ms_p50": statistics.median(f["batch_ms_p50"] for f in timed),
            "batches": timed[0]["batches"],
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=32_000_000)
    parser.add_argument("--commits", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="toy size, in a minute or two")
    parser.add_argument("--out", default=os.path.join(RESULTS, "spark_long_running.json"))
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.commits, args.repeats = 40_000, 4, 1
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pypaimon import CatalogFactory

    started = time.monotonic()
    java = fetch_java_connector()
    workdir = scratch_dir("paimon-feed-spark-long-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    print(f"writing {args.rows:,} rows in {args.commits} commits ...", flush=True)
    fill_wide_table(create_table(catalog, "db.wide", WIDE), args.rows, args.commits)
    java_connector = None
    try:
        if java.get("jars"):
            java_connector = JavaConnector(java["jars"], {"spark.sql.session.timeZone": "UTC"},
                                           os.path.join(workdir, "java-connector.log"))
            java.update(process=java_connector.ready)
        java["jars"] = [os.path.basename(jar) for jar in java.get("jars", [])] or None
        spark = new_session("paimon-feed-spark-long-running", SESSION_SOCKETS)
        readers = Readers(spark, warehouse, java=java_connector)
        results = {
            "environment": {"cpus": os.cpu_count(), "spark_master": "local[2]", "load_at_start": load(),
                            "python_worker_sockets": SESSION_SOCKETS},
            "java_connector": java,
            "long_running": measure(readers, "wide", args.rows, args.commits, args.repeats, workdir),
        }
        results["environment"]["load_at_end"] = load()
        results["environment"]["run_s"] = time.monotonic() - started
        spark.stop()
    finally:
        if java_connector:
            java_connector.close()
    print(f"\nlong-running, {args.rows:,} rows, one commit per micro-batch (steady state, medians):")
    print(f"  {'case':<28} {'M rows/s':>9} {'batch p50 ms':>13}")
    for case, c in results["long_running"]["cases"].items():
        print(f"  {case:<28} {c['rows_per_s'] / 1e6:>9.2f} {c['batch_ms_p50']:>13.0f}")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
