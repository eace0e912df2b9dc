"""An append-only backlog into Parquet: ``paimon_feed.spark.foreach_batch`` against Paimon's Java
connector, same table, same run, interleaved.

    python -m benchmarks.spark_backlog_bench [--rows 32000000] [--commits 32] [--repeats 2]
                                             [--start earliest|latest-full] [--no-java] [--smoke]

The table (``benchmarks/_common/backlog_table.py``): ``--rows`` rows of 7 columns (longs, ints, a
string, a double, a timestamp) in ``--commits`` pypaimon commits, cached under
``~/.cache/paimon-feed/bench`` between runs. Each case reads it from its first snapshot
(``--start earliest``: every commit's changes, the connector with ``scan.mode=from-snapshot``) and
writes it to a Parquet directory, on ``local[2]``:

- ``java_connector``: ``readStream.format("paimon")``, ``Trigger.AvailableNow`` into
  ``writeStream.format("parquet")``, ``paimon-spark-3.5`` 0.9.0 on PySpark 3.5.9 in a process of
  its own (:class:`~benchmarks._common.java_connector.JavaConnector`);
- ``runner_spark35``: ``foreach_batch(..., available_now=True)`` with ``fn`` appending the batch
  to Parquet, on PySpark 3.5.9 in a process of its own (the connector's Spark line);
- ``runner``: the same in this process, on this venv's PySpark;
- ``source``: ``readStream.format("paimon_feed")``, ``AvailableNow`` into Parquet, this PySpark.

Each case's clock runs from the call to its return (the connector's and the 3.5 runner's include
one request to their process, well under a millisecond). Every output is read back with
``pyarrow.dataset`` (not through paimon-feed or Spark): its row count, each id once, rows equal
to the generator's, and an order-free hash, which must agree across readers. A warm-up round on
a small table first (imports, Python workers); then ``--repeats`` rounds in shuffled orders;
medians. Writes ``benchmarks/results/spark_backlog.json``; nothing here fails on time.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

from benchmarks._common.backlog_table import TABLE, cached_backlog, parquet_digest
from benchmarks._common.java_connector import (
    CONNECTOR_PYSPARK,
    JAVA_CHANGELOG_OPTIONS,
    JAVA_PAIMON_VERSION,
    JAVA_SPARK_LINE,
    JavaConnector,
    fetch_java_connector,
)
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.spark_setup import HERE, RESULTS, interleaved, load, write_results

OUT = os.path.join(RESULTS, "spark_backlog.json")
TARGET = 1.0  # the runner's throughput over the connector's, at least
ROOT = os.path.dirname(HERE)
_RUNS = itertools.count()  # numbers each run's output, checkpoint and consumer apart


def table_uri(warehouse: str) -> str:
    database, name = TABLE.split(".")
    return "file:" + os.path.join(warehouse, f"{database}.db", name)


def run_runner(spark, warehouse: str, out: str, consumer: str, start: str) -> int:
    """``foreach_batch`` from ``start`` to the latest snapshot, each batch appended to ``out``;
    the batches it called ``fn`` with."""
    from paimon_feed.spark import foreach_batch

    calls = []

    def to_parquet(df, batch_id: int) -> None:
        df.write.mode("append").parquet(out)
        calls.append(batch_id)

    foreach_batch(spark, to_parquet, warehouse=warehouse, table=TABLE, consumer_id=consumer, start=start,
                  available_now=True)
    return len(calls)


def plain_session(app_name: str):
    """A ``local[2]`` session as the benchmarks' (UI off, UTC, Unix domain sockets where the line
    has them), without registering any source: the runner needs none."""
    from pyspark.sql import SparkSession

    from paimon_feed.spark import UNIX_SOCKETS_CONF

    builder = (SparkSession.builder.master("local[2]").appName(app_name)
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
               .config(UNIX_SOCKETS_CONF, "true"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def serve_runner() -> None:
    """``--serve-runner``: a runner in this process's PySpark, answering JSON lines on stdin
    (``{"warehouse", "out", "consumer", "start"}`` -> ``{"seconds", "batches"}``); the session is
    made before ``{"ready"}`` (its start-up is not timed)."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the JVM and any print go to stderr
    import pyspark

    spark = plain_session("paimon-feed-backlog-runner")
    answers.write(json.dumps({"ready": True, "pyspark": pyspark.__version__}) + "\n")
    for line in sys.stdin:
        command = json.loads(line)
        if command.get("op") == "quit":
            break
        started = time.perf_counter()
        batches = run_runner(spark, command["warehouse"], command["out"], command["consumer"], command["start"])
        answers.write(json.dumps({"seconds": time.perf_counter() - started, "batches": batches}) + "\n")
    spark.stop()


class RunnerProcess:
    """The runner on another PySpark (``python``'s: a venv with PySpark 3.5 and paimon-feed's
    dependencies) in a process of its own."""

    def __init__(self, python: str, log_path: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}
        env.update(PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python, PYTHONPATH=ROOT)
        self._log = open(log_path, "wb")
        self.process = subprocess.Popen([python, "-m", "benchmarks.spark_backlog_bench", "--serve-runner"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                        text=True, env=env, cwd=ROOT)
        self.log_path = log_path
        self.ready = self._answer()

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            with open(self.log_path, encoding="utf-8", errors="replace") as handle:
                tail = "".join(handle.readlines()[-30:])
            raise RuntimeError(f"the runner's process on another PySpark failed; its log:\n{tail}")
        return json.loads(line)

    def run(self, **command) -> dict:
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.close()
            self.process.wait(timeout=120)
        self._log.close()


def make_cases(spark, java, runner35, warehouse: str, workdir: str, rows: int, start: str, outputs: dict) -> dict:
    """``{case: run}``: each run reads the whole table into a new Parquet directory, checks its row
    count, and leaves the directory in ``outputs[case]`` (the last run's)."""
    runs = _RUNS
    java_options = JAVA_CHANGELOG_OPTIONS if start == "earliest" else {}

    def target(case: str) -> tuple[int, str]:
        n = next(runs)
        old = outputs.pop(case, None)
        if old:
            shutil.rmtree(old, ignore_errors=True)
        outputs[case] = os.path.join(workdir, f"out-{case}-{n}")
        return n, outputs[case]


    def runner() -> None:
        n, out = target("runner")
        run_runner(spark, warehouse, out, f"backlog-{os.getpid()}-{n}", start)

    def source() -> None:
        n, out = target("source")
        query = (spark.readStream.format("paimon_feed").option("warehouse", warehouse).option("table", TABLE)
                 .option("startingPosition", start).load().writeStream.format("parquet").option("path", out)
                 .option("checkpointLocation", os.path.join(workdir, f"checkpoint-{n}"))
                 .trigger(availableNow=True).start())
        query.awaitTermination()

    def connector() -> None:
        n, out = target("java_connector")
        read = java.call("available_now", path=table_uri(warehouse), sink="parquet", out=out,
                         checkpoint=os.path.join(workdir, f"checkpoint-{n}"), options=java_options)["rows"]
        assert read == rows, ("java_connector", read, rows)

    def runner_spark35() -> None:
        n, out = target("runner_spark35")
        runner35.run(warehouse=warehouse, out=out, consumer=f"backlog-{os.getpid()}-{n}", start=start)

    cases = {"runner": runner, "source": source}
    if java is not None:
        cases["java_connector"] = connector
    if runner35 is not None:
        cases["runner_spark35"] = runner_spark35
    return {case: _reported(case, run) for case, run in cases.items()}


def _reported(case: str, run):
    def reported() -> None:
        started = time.perf_counter()
        run()
        print(f"    {case}: {time.perf_counter() - started:.1f} s", flush=True)

    return reported


def measure(spark, java, runner35, warehouse: str, warm_up_warehouse: str, rows: int, warm_up_rows: int,
            repeats: int, start: str, workdir: str) -> dict:
    outputs: dict[str, str] = {}
    warm_up = make_cases(spark, java, runner35, warm_up_warehouse, workdir, warm_up_rows, start, {})
    for run in warm_up.values():
        run()
    before = load()
    cases = make_cases(spark, java, runner35, warehouse, workdir, rows, start, outputs)
    seconds = interleaved(cases, repeats, warm_ups=0)
    after = load()
    result: dict = {"rows": rows, "repeats": repeats, "start": start, "load_before": before, "load_after": after,
                    "cases": {}}
    for case, durations in seconds.items():
        median = statistics.median(durations)
        print(f"  {case}: checking its output", flush=True)
        result["cases"][case] = {"seconds": durations, "median_s": median, "rows_per_s": rows / median,
                                 "output": parquet_digest(outputs[case], rows)}
    digests = {case: entry["output"] for case, entry in result["cases"].items()}
    first = next(iter(digests.values()))
    result["outputs_equal"] = all(d == first for d in digests.values()) and first["ids_each_once"] \
        and first["mismatches"] == 0
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=32_000_000)
    parser.add_argument("--commits", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--start", choices=("earliest", "latest-full"), default="earliest")
    parser.add_argument("--no-java", action="store_true", help="this process's runner and source only")
    parser.add_argument("--spark35-python", default=os.environ.get("PAIMON_FEED_SPARK35_PYTHON"),
                        help="a Python with PySpark 3.5 and paimon-feed's dependencies: runs the "
                             "runner_spark35 case (default: $PAIMON_FEED_SPARK35_PYTHON; not run without)")
    parser.add_argument("--smoke", action="store_true", help="a 20,000-row table, one round, no Java")
    parser.add_argument("--serve-runner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    if args.serve_runner:
        return serve_runner()
    if args.smoke:
        args.rows, args.commits, args.repeats, args.no_java = 20_000, 4, 1, True
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from benchmarks._common.spark_readers import SESSION_SOCKETS, new_session

    run_started = time.monotonic()
    warehouse = cached_backlog(args.rows, args.commits)
    warm_up_rows = min(args.rows, 100_000)
    warm_up_warehouse = cached_backlog(warm_up_rows, 2)
    workdir = scratch_dir("paimon-feed-backlog-bench-")
    jars = None if args.no_java else fetch_java_connector().get("jars")
    java = runner35 = None
    try:
        if jars:
            print(f"starting the Java connector's process (PySpark {CONNECTOR_PYSPARK}) ...", flush=True)
            java = JavaConnector(jars, {"spark.sql.session.timeZone": "UTC"}, os.path.join(workdir, "java.log"))
        if args.spark35_python and not args.smoke:
            print(f"starting the runner's process on {args.spark35_python} ...", flush=True)
            runner35 = RunnerProcess(args.spark35_python, os.path.join(workdir, "runner35.log"))
        spark = new_session("paimon-feed-backlog-bench", SESSION_SOCKETS)
        environment = {
            "python": platform.python_version(), "pyspark": importlib.metadata.version("pyspark"),
            "pypaimon": importlib.metadata.version("pypaimon"), "cpus": os.cpu_count(), "spark_master": "local[2]",
            "java_connector": f"paimon-spark-{JAVA_SPARK_LINE} {JAVA_PAIMON_VERSION} on PySpark "
                              f"{CONNECTOR_PYSPARK}" if java else None,
            "runner_spark35_pyspark": runner35.ready["pyspark"] if runner35 else None,
            "commits": args.commits, "load_at_start": load()}
        print(f"{args.rows:,} rows, {args.repeats} rounds ...", flush=True)
        results = {"environment": environment,
                   "backlog": measure(spark, java, runner35, warehouse, warm_up_warehouse, args.rows, warm_up_rows,
                                      args.repeats, args.start, workdir)}
        spark.stop()
    finally:
        for process in (java, runner35):
            if process is not None:
                process.close()
    cases = results["backlog"]["cases"]
    if "java_connector" in cases:
        java_rate = cases["java_connector"]["rows_per_s"]
        results["targets"] = {f"{case}_vs_java": {"value": cases[case]["rows_per_s"] / java_rate, "target": TARGET,
                                                  "reached": cases[case]["rows_per_s"] / java_rate >= TARGET}
                              for case in cases if case != "java_connector"}
    results["environment"].update(load_at_end=load(), run_s=time.monotonic() - run_started)
    for case, entry in cases.items():
        print(f"{case}: {entry['median_s']:.1f} s, {entry['rows_per_s']:,.0f} rows/s")
    print(f"outputs equal: {results['backlog']['outputs_equal']}")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
