"""Spark, primary-key tables: this source (with the ``[native]`` extra when installed) against
Paimon's Java connector, same run, same tables, interleaved.

    python -m benchmarks.spark_merged_bench [--keys 1000000] [--commits 4] [--pk-rows 1000000]
                                            [--repeats 3] [--smoke]

1. **Merged batch reads**: a partial-update and an aggregation table (Parquet, 2 buckets, no
   compaction) get ``--commits`` uncompacted commits from pypaimon's writer, each a window of 60%
   of the ``--keys`` keys, so every key has one to three versions (with null columns for
   partial-update to fill in). Each reader's batch read into ``noop`` and into a Parquet file
   sink. The executors of this source merge with pypaimon-rust where exact
   (``paimon_feed.planner._native_read``), else in Python.
2. **Primary-key ``AvailableNow``**: the ``changelog-producer=input`` table of ``spark_bench.py``
   (``--pk-rows`` changes in 8 commits), streamed from its first snapshot into ``noop`` and into
   Parquet, and its merged batch read.
3. **Start-up**: an ``AvailableNow`` query of a 10-row table (``spark_startup.measure_startup``),
   the fixed cost every ``AvailableNow`` query pays before its first row.

Every case runs once as a warm-up, then ``--repeats`` rounds in a shuffled order; medians. What
the two readers read is compared (an order-free fingerprint) before the figures count. Writes
``benchmarks/results/spark_merged.json``; a measurement, nothing here fails on time.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import sys
import time

from benchmarks._common.java_connector import JAVA_CHANGELOG_OPTIONS, JavaConnector, fetch_java_connector
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.spark_readers import SESSION_SOCKETS, Readers, new_session
from benchmarks._common.spark_setup import (
    MERGED,
    PK_OPTIONS,
    RESULTS,
    SMALL,
    WIDE,
    commit_small,
    create_table,
    fill_pk_table,
    interleaved,
    load,
    write_merged_tables,
)
from benchmarks.spark_startup import measure_startup
from benchmarks.spark_throughput import measure_throughput
from paimon_feed.planner import _native_read

READERS = ("source", "java_connector")


def measure_merged(readers: Readers, name: str, keys: int, repeats: int, workdir: str) -> dict:
    """Both readers' batch read of table ``name`` into ``noop`` and Parquet, interleaved, then
    their fingerprints compared."""
    runs = iter(range(1_000_000))
    cases = {}
    for reader in READERS:
        for sink in ("noop", "parquet"):
            def case(reader=reader, sink=sink):
                out = os.path.join(workdir, f"out-{name}-{next(runs)}")
                readers.run_batch(reader, name, "", sink, out)
                shutil.rmtree(out, ignore_errors=True)

            cases[f"{reader}/batch/{sink}"] = case
    digests = {
        reader: readers.digest(reader, name, stream=False, checkpoint="", out_dir="") for reader in READERS
    }
    assert digests["source"]["row_count"] == keys, digests
    before = load()
    seconds = interleaved(cases, repeats)
    return {
        "keys": keys, "repeats": repeats, "load_before": before, "load_after": load(),
        "digests": digests, "reads_equal": digests["source"] == digests["java_connector"],
        "cases": {case: {"seconds": s, "median_s": statistics.median(s), "rows_per_s": keys / statistics.median(s)}
                  for case, s in seconds.items()},
    }


def ratios(results: dict) -> dict:
    """This source's rows/s over the connector's, per table, mode and sink."""
    out = {}
    for table, measured in {**results["merged"], "pk (changelog-producer=input)": results["pk"]}.items():
        cases = measured["cases"]
        for case in cases:
            if case.startswith("source/"):
                other = "java_connector/" + case.split("/", 1)[1]
                if other in cases:
                    out[f"{table}: {case.split('/', 1)[1]}"] = round(
                        cases[case]["rows_per_s"] / cases[other]["rows_per_s"], 2)
    return out


def print_report(results: dict) -> None:
    print(f"\n[native]: {results['environment']['native']}")
    for table, measured in {**results["merged"], "pk (changelog-producer=input)": results["pk"]}.items():
        print(f"\n{table} (M rows/s, median of {measured['repeats']})")
        for case, c in sorted(measured["cases"].items()):
            print(f"  {case:<40}{c['rows_per_s'] / 1e6:>8.2f}   {c['median_s']:.2f} s")
    print("\nAvailableNow on a 10-row table, start() to termination")
    for reader, c in results["startup"]["cases"].items():
        print(f"  {reader:<40}{c['median_s']:>8.2f} s")
    print(f"\nsource over connector: {json.dumps(results['ratios'], indent=1)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--pk-rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="every part at toy size")
    parser.add_argument("--out", default=os.path.join(RESULTS, "spark_merged.json"))
    args = parser.parse_args()
    if args.smoke:
        args.keys, args.pk_rows, args.repeats = 10_000, 8_000, 1
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pypaimon import CatalogFactory

    started = time.monotonic()
    java = fetch_java_connector()
    if not java.get("jars"):
        raise SystemExit(f"the Java connector is not available here: {java}")
    workdir = scratch_dir("paimon-feed-spark-merged-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    write_merged_tables(catalog, args.keys, args.commits)
    fill_pk_table(create_table(catalog, "db.pk", WIDE, primary_keys=["id"], options=PK_OPTIONS), args.pk_rows, 8)
    commit_small(create_table(catalog, "db.tiny", SMALL), 0)

    connector = JavaConnector(java["jars"], {"spark.sql.session.timeZone": "UTC"},
                              os.path.join(workdir, "java-connector.log"))
    try:
        spark = new_session("paimon-feed-spark-merged-bench", SESSION_SOCKETS)
        readers = Readers(spark, warehouse, java=connector)
        results: dict = {"environment": {
            "python": platform.python_version(), "pyspark": importlib.metadata.version("pyspark"),
            "pypaimon": importlib.metadata.version("pypaimon"), "cpus": os.cpu_count(),
            "spark_master": "local[2]", "load_at_start": load(),
            "native": _native_read.native_available(),
            "java_connector": f"{java['artifact'].rsplit(':', 1)[1]} on Spark {connector.ready['spark']}",
        }, "merged": {}}
        for name in MERGED:
            print(f"merged batch read: {name} ...", flush=True)
            results["merged"][name] = measure_merged(readers, name.replace("-", "_"), args.keys, args.repeats, workdir)
        print("primary key, AvailableNow ...", flush=True)
        results["pk"] = measure_throughput(
            readers, "pk", args.pk_rows, args.repeats, workdir,
            batch_rows=args.pk_rows // 2, stream_rows=args.pk_rows, with_ceilings=False,
            stream_options={"source": {"startingPosition": "earliest"}, "java_connector": JAVA_CHANGELOG_OPTIONS})
        print("start-up ...", flush=True)
        results["startup"] = measure_startup(readers, args.repeats + 2, workdir)
        results["environment"]["load_at_end"] = load()
        results["environment"]["run_s"] = round(time.monotonic() - started, 1)
        spark.stop()
    finally:
        connector.close()
    results["ratios"] = ratios(results)
    print_report(results)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
