"""Where the ``foreach_batch`` runner's time goes on the append backlog of
``spark_backlog_bench.py`` (the same cached table), stage by stage, on this venv's PySpark:

    python -m benchmarks.spark_backlog_profile [--rows 8000000] [--commits 8] [--repeats 2]

1. the driver: planning the batch (:class:`~paimon_feed.spark.planning.RunnerPlanner`) and
   pickling its split groups;
2. one Python process, no Spark: reading every group with
   :func:`~paimon_feed.spark.partitions.read_splits` (pyarrow reads the Parquet files), and the
   share of batches :func:`~paimon_feed.spark.schema.conform` had to convert;
3. ``local[2]``: the runner's DataFrame into Spark's ``noop`` sink (the Python read, the Arrow
   hand-off to the JVM, its rows) and into Parquet, against Spark reading the table's own Parquet
   files into the same sinks (Spark's ceiling: no Paimon, no Python).

Medians of ``--repeats`` interleaved rounds. Writes ``benchmarks/results/spark_backlog_profile.json``.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import os
import pickle
import shutil
import statistics
import sys
import time

from benchmarks._common.backlog_table import TABLE, cached_backlog
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.spark_setup import RESULTS, interleaved, load, write_results

OUT = os.path.join(RESULTS, "spark_backlog_profile.json")


def planned_batch(spark, warehouse: str):
    """The runner's planner for the whole table from its first snapshot, and the batch planned."""
    from paimon_feed.spark.options import parse_options
    from paimon_feed.spark.planning import RunnerPlanner
    from paimon_feed.spark.runner import session_parallelism

    options = parse_options({"warehouse": warehouse, "table": TABLE, "consumerId": "profile",
                             "startingPosition": "earliest",
                             "minPartitions": str(session_parallelism(spark) or 2)})
    planner = RunnerPlanner(spark, options, follow=False)
    position = planner.initial_position()
    planner.target()
    return planner, planner.plan(position, planner.next_end(position))


def python_read(planner, planned) -> dict:
    """Every group read in this process, batches conformed to Spark's Arrow schema."""
    from paimon_feed.planner.schemas import schema_fields
    from paimon_feed.spark.partitions import read_splits
    from paimon_feed.spark.schema import arrow_schema, conform, spark_schema

    fields = schema_fields(planner.driver.table, planned.schema_id)
    target = arrow_schema(spark_schema(TABLE, fields, include_row_kind=False))
    rows = batches = converted = 0
    started = time.perf_counter()
    for group in planned.groups:
        for batch in read_splits(planner.options, group):
            rows, batches = rows + batch.num_rows, batches + 1
            converted += not batch.schema.equals(target)
            conform(batch, target)
    seconds = time.perf_counter() - started
    return {"rows": rows, "seconds": seconds, "rows_per_s_one_core": rows / seconds, "arrow_batches": batches,
            "batches_conform_converted": converted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=8_000_000)
    parser.add_argument("--commits", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from benchmarks.spark_backlog_bench import plain_session

    warehouse = cached_backlog(args.rows, args.commits)
    workdir = scratch_dir("paimon-feed-backlog-profile-")
    spark = plain_session("paimon-feed-backlog-profile")
    before = load()
    started = time.perf_counter()
    planner, planned = planned_batch(spark, warehouse)
    plan_s = time.perf_counter() - started
    started = time.perf_counter()
    payloads = [pickle.dumps(group) for group in planned.groups]
    pickle_s = time.perf_counter() - started
    driver = {"plan_s": plan_s, "pickle_s": pickle_s, "groups": len(payloads),
              "pickled_bytes": sum(map(len, payloads)), "files_per_group": [len(g.splits) for g in planned.groups]}
    python = python_read(planner, planned)
    frame = planner.frame(planned)
    files = sorted(glob.glob(os.path.join(warehouse, "db.db", TABLE.split(".")[1], "bucket-*", "*.parquet")))
    out = os.path.join(workdir, "out")

    def into(df, sink: str):
        def run() -> None:
            if sink == "noop":
                df.write.format("noop").mode("overwrite").save()
            else:
                df.write.mode("overwrite").parquet(out)
                shutil.rmtree(out, ignore_errors=True)
        return run

    cases = {"runner_noop": into(frame, "noop"), "runner_parquet": into(frame, "parquet"),
             "spark_files_noop": into(spark.read.parquet(*files), "noop"),
             "spark_files_parquet": into(spark.read.parquet(*files), "parquet")}
    seconds = interleaved(cases, args.repeats)
    planner.close()
    spark_cases = {name: {"seconds": s, "median_s": statistics.median(s), "rows_per_s": args.rows / statistics.median(s)}
                   for name, s in seconds.items()}
    results = {"environment": {"pyspark": importlib.metadata.version("pyspark"), "cpus": os.cpu_count(),
                               "spark_master": "local[2]", "load_before": before, "load_after": load()},
               "rows": args.rows, "commits": args.commits, "driver": driver, "python_read": python,
               "spark": spark_cases}
    spark.stop()
    for name, entry in spark_cases.items():
        print(f"{name}: {entry['median_s']:.1f} s, {entry['rows_per_s']:,.0f} rows/s")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
