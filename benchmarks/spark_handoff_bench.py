"""``foreach_batch``'s ``reader`` choice on merged primary-key tables, against Paimon's connector.

    <python of a PySpark 3.5 venv with paimon-feed[native]> -m benchmarks.spark_handoff_bench \\
        [--keys 1000000] [--commits 4] [--repeats 3] [--smoke]

The connector Maven serves (``paimon-spark-3.5`` 0.9.0) runs on Spark 3.5 only, and a hand-off
needs it in the runner's own session, so this benchmark runs on PySpark 3.5 (not the project's
newest line): make a venv with ``pyspark==3.5.9`` and ``pypaimon``/``pypaimon-rust`` as
``pyproject.toml`` pins them, and run it with ``PYTHONPATH`` at this checkout.

The partial-update and aggregation tables of ``spark_merged_bench`` (``--keys`` keys in
``--commits`` uncompacted commits: a backlog, merged on read), each read in full once per case,
from a fresh consumer (``start="latest-full"``), in one ``local[2]`` session with the connector
on its classpath:

- ``runner/feed``: ``foreach_batch(..., available_now=True, reader="feed")``, pypaimon merging
  in the executors (``PAIMON_FEED_NATIVE_READ=0`` in the session's Python workers);
- ``runner/feed-native``: the same with ``[native]`` (pypaimon-rust merges);
- ``runner/connector``: ``reader="connector"``, the batch handed to the connector;
- ``connector/readStream``: the connector's own ``readStream`` with ``Trigger.AvailableNow``.

Each into Parquet (``fn`` writes the batch) and into Spark's ``noop`` sink. The Parquet each case
wrote is fingerprinted (``java_connector_worker.DIGEST_SQL``) and the fingerprints must be equal
before a figure counts. A warm-up round, then ``--repeats`` rounds, each in a shuffled order
(``interleaved``); medians. The runner's cases also record their phases (call to ``fn``
entered: start-up and planning; ``fn``: the read and the write). Writes
``benchmarks/results/spark_handoff.json``; a measurement, nothing here fails on time.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import shutil
import statistics
import sys
import time

from benchmarks._common.java_connector import (
    CONNECTOR_PYSPARK,
    JAVA_PAIMON_VERSION,
    JAVA_SPARK_LINE,
    fetch_java_connector,
)
from benchmarks._common.scratch import scratch_dir
from benchmarks._common.spark_setup import (
    MERGED,
    RESULTS,
    interleaved,
    load,
    write_merged_tables,
    write_results,
)
from benchmarks.java_connector_worker import DIGEST_SQL, Worker

OUT = os.path.join(RESULTS, "spark_handoff.json")
#: Case -> (reader option, [native] on); ``None``: the connector's own readStream.
CASES = {
    "runner/feed": ("feed", False),
    "runner/feed-native": ("feed", True),
    "runner/connector": ("connector", False),
    "connector/readStream": None,
}
SINKS = ("parquet", "noop")
CONNECTOR = f"paimon-spark-{JAVA_SPARK_LINE} {JAVA_PAIMON_VERSION}"


def new_session(jar: str):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("paimon-feed-handoff-bench")
        .config("spark.jars", jar).config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Bench:
    """The cases of one table, each a function of ``(sink, out)``; phases of the runner's."""

    def __init__(self, spark, warehouse: str, name: str, workdir: str) -> None:
        self.spark, self.warehouse, self.name, self.workdir = spark, warehouse, name, workdir
        self.path = os.path.join(warehouse, "db.db", name)
        self.runs = iter(range(1_000_000))
        self.phases: dict[str, list[dict]] = {}

    def run(self, case: str, sink: str, out: str) -> None:
        spec = CASES[case]
        if spec is None:
            checkpoint = os.path.join(self.workdir, f"checkpoint-{next(self.runs)}")
            Worker(self.spark).available_now(self.path, sink, out, checkpoint, {})
            shutil.rmtree(checkpoint, ignore_errors=True)
            return
        from paimon_feed.spark import foreach_batch

        reader, native = spec
        # Spark's Python workers take this environment when the batch's mapInArrow is made.
        self.spark.sparkContext.environment["PAIMON_FEED_NATIVE_READ"] = "1" if native else "0"
        called: list[float] = []

        def fn(df, batch_id: int) -> None:
            called.append(time.perf_counter())
            if sink == "noop":
                df.write.format("noop").mode("overwrite").save()
            else:
                df.write.mode("overwrite").parquet(out)
            called.append(time.perf_counter())

        started = time.perf_counter()
        foreach_batch(self.spark, fn, warehouse=self.warehouse, table=f"db.{self.name}",
                      consumer_id=f"bench-{next(self.runs)}", available_now=True, reader=reader)
        ended = time.perf_counter()
        assert len(called) == 2, f"{case}: fn called {len(called) // 2} times, one batch expected"
        self.phases.setdefault(f"{case}/{sink}", []).append({
            "to_fn_s": called[0] - started, "fn_s": called[1] - called[0], "after_fn_s": ended - called[1]})

    def digest(self, case: str) -> dict:
        out = os.path.join(self.workdir, f"digest-{self.name}-{case.replace('/', '-')}")
        self.run(case, "parquet", out)
        row = self.spark.read.parquet(out).selectExpr(*DIGEST_SQL).collect()[0]
        shutil.rmtree(out, ignore_errors=True)
        return {key: (None if value is None else int(value)) for key, value in row.asDict().items()}


def measure_table(spark, warehouse: str, name: str, keys: int, repeats: int, workdir: str) -> dict:
    bench = Bench(spark, warehouse, name, workdir)
    digests = {case: bench.digest(case) for case in CASES}
    first = digests["connector/readStream"]
    assert first["row_count"] == keys, digests
    assert all(d == first for d in digests.values()), f"{name}: the cases read other rows: {digests}"
    bench.phases.clear()

    cases = {}
    for case in CASES:
        for sink in SINKS:
            def one(case=case, sink=sink) -> None:
                out = os.path.join(workdir, f"out-{name}-{next(bench.runs)}")
                bench.run(case, sink, out)
                shutil.rmtree(out, ignore_errors=True)

            cases[f"{case}/{sink}"] = one
    before = load()
    seconds = interleaved(cases, repeats)
    after = load()
    measured = {case: {"seconds": s, "median_s": statistics.median(s), "rows_per_s": keys / statistics.median(s),
                       "connector": CONNECTOR} for case, s in seconds.items()}
    for case, phases in bench.phases.items():
        timed = phases[-repeats:]  # the warm-up round's first
        measured[case]["phases_median_s"] = {
            phase: statistics.median(p[phase] for p in timed) for phase in timed[0]}
    return {"keys": keys, "repeats": repeats, "load_before": before, "load_after": after,
            "digests": digests, "digests_equal": True, "cases": measured}


def ratios(results: dict) -> dict:
    """Each runner case's rows/s over the connector's own readStream, per table and sink."""
    out = {}
    for table, measured in results["tables"].items():
        cases = measured["cases"]
        for sink in SINKS:
            base = cases[f"connector/readStream/{sink}"]["rows_per_s"]
            for case in CASES:
                if case.startswith("runner/"):
                    out[f"{table}: {case}/{sink}"] = round(cases[f"{case}/{sink}"]["rows_per_s"] / base, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="toy size, one round")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    if args.smoke:
        args.keys, args.repeats = 10_000, 1
    import pyspark

    if not pyspark.__version__.startswith(f"{JAVA_SPARK_LINE}."):
        raise SystemExit(f"run this benchmark on PySpark {JAVA_SPARK_LINE} (the connector's line), not "
                         f"{pyspark.__version__}: see its docstring")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pypaimon import CatalogFactory

    from paimon_feed.planner import _native_read

    if not _native_read.native_available() and not args.smoke:
        raise SystemExit("the runner/feed-native case needs the [native] extra (pypaimon-rust) in this venv")
    started = time.monotonic()
    java = fetch_java_connector()
    jars = [jar for jar in java.get("jars") or [] if os.path.basename(jar).startswith("paimon-spark-")]
    if not jars:
        raise SystemExit(f"the connector is not available here: {java}")
    workdir = scratch_dir("paimon-feed-handoff-bench-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    write_merged_tables(catalog, args.keys, args.commits)
    spark = new_session(jars[0])
    results: dict = {"environment": {
        "python": platform.python_version(), "pyspark": pyspark.__version__,
        "pypaimon": importlib.metadata.version("pypaimon"),
        "pypaimon_rust": importlib.metadata.version("pypaimon-rust") if _native_read.native_available() else None,
        "cpus": os.cpu_count(), "spark_master": "local[2]", "load_at_start": load(),
        "connector": f"{CONNECTOR} on PySpark {pyspark.__version__} (the runner's own session)",
        "connector_pyspark_pinned": CONNECTOR_PYSPARK,
    }, "commits": args.commits, "tables": {}}
    try:
        for engine in MERGED:
            print(f"{engine} ...", flush=True)
            results["tables"][engine] = measure_table(spark, warehouse, engine.replace("-", "_"), args.keys,
                                                      args.repeats, workdir)
    finally:
        spark.stop()
    results["environment"]["load_at_end"] = load()
    results["environment"]["run_s"] = round(time.monotonic() - started, 1)
    results["ratios"] = ratios(results)
    for table, measured in results["tables"].items():
        print(f"\n{table} (median of {measured['repeats']})")
        for case, c in sorted(measured["cases"].items()):
            print(f"  {case:<34}{c['rows_per_s'] / 1e6:>7.2f} M rows/s  {c['median_s']:.2f} s  {c.get('phases_median_s', '')}")
    print("\nover the connector's readStream:", results["ratios"])
    write_results(results, args.out)


if __name__ == "__main__":
    main()
