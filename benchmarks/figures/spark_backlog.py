"""Figure blocks of the append backlog into Parquet (``benchmarks/spark_backlog_bench.py``,
``benchmarks/results/spark_backlog.json``) and of where the runner's time goes
(``benchmarks/spark_backlog_profile.py``, ``benchmarks/results/spark_backlog_profile.json``)."""

from __future__ import annotations

from typing import Any

from benchmarks._common.figures import count, table, wrap

__all__ = ["spark_backlog", "spark_backlog_profile"]

_CASES = {
    "runner_spark35": "`foreach_batch(available_now=True)`, `fn` appends to Parquet",
    "runner": "`foreach_batch(available_now=True)`, `fn` appends to Parquet",
    "source": "`readStream.format(\"paimon_feed\")`, `AvailableNow` → Parquet",
    "java_connector": "`readStream.format(\"paimon\")`, `AvailableNow` → Parquet",
}


def _spark(case: str, env: dict[str, Any]) -> str:
    if case == "java_connector":
        return env["java_connector"]
    if case == "runner_spark35":
        return f"PySpark {env['runner_spark35_pyspark']}"
    return f"PySpark {env['pyspark']}"


def spark_backlog(r: dict[str, Any]) -> str:
    """One row per reader: Spark, median seconds, rows/s, throughput over the connector's."""
    s = r["spark_backlog"]
    env, b = s["environment"], s["backlog"]
    cases = b["cases"]
    java = cases.get("java_connector")
    rows = []
    for case in [c for c in _CASES if c in cases]:
        entry = cases[case]
        ratio = f"{entry['rows_per_s'] / java['rows_per_s']:.2f}×" if java and case != "java_connector" else "—"
        runs = " / ".join(f"{x:.0f}" for x in entry["seconds"])
        rows.append([_CASES[case], _spark(case, env), f"{entry['median_s']:.1f} s", f"{runs} s",
                     count(entry["rows_per_s"]), ratio])
    header = ["reader", "Spark", "median", "each round", "rows/s (median)", "vs the connector (target ≥ 1.0×)"]
    same = "hold the same rows" if b["outputs_equal"] else "**differ**"
    loads = (b["load_before"][0], b["load_after"][0])
    spread = max(max(c["seconds"]) / min(c["seconds"]) for c in cases.values())
    return table(header, ["---", "---", "---:", "---:", "---:", "---:"], rows) + "\n\n" + wrap(
        f"{b['rows']:,} rows in {env['commits']} commits, read from the first snapshot "
        f"({b['start']}); medians of {b['repeats']} interleaved rounds; {env['cpus']} cores, local[2]; "
        f"the run took {env['run_s'] / 60:.0f} minutes, 1-minute load {min(loads):.1f} to {max(loads):.1f} "
        f"({'the machine was shared by other jobs; ' if max(loads) > env['cpus'] + 1 else ''}"
        f"one reader's rounds differ by up to {spread:.1f}×). Read back with pyarrow.dataset, the outputs {same}: "
        f"{cases[next(iter(cases))]['output']['rows']:,} rows each, every id once, every row the "
        f"generator's, one order-free hash."
    )


def spark_backlog_profile(r: dict[str, Any]) -> str:
    """The runner's stages on the backlog: driver, Python read, Spark sinks against Spark's own
    Parquet read."""
    p = r["spark_backlog_profile"]
    d, py, sp = p["driver"], p["python_read"], p["spark"]
    rows = [
        ["driver: plan the batch, pickle its split groups",
         f"{d['plan_s'] * 1000:.0f} ms + {d['pickle_s'] * 1000:.1f} ms ({d['groups']} groups, "
         f"{d['pickled_bytes']:,} bytes)", ""],
        ["one Python process: read every group with pyarrow (no Spark)", f"{py['seconds']:.1f} s",
         f"{count(py['rows_per_s_one_core'])} on one core; {py['batches_conform_converted']} of "
         f"{py['arrow_batches']} batches converted by `conform`"],
    ]
    labels = {"runner_noop": "runner's DataFrame → `noop` (Python read + Arrow → JVM)",
              "runner_parquet": "runner's DataFrame → Parquet",
              "spark_files_noop": "Spark reads the table's Parquet files → `noop`",
              "spark_files_parquet": "Spark reads the table's Parquet files → Parquet"}
    rows += [[label, f"{sp[name]['median_s']:.1f} s", count(sp[name]["rows_per_s"])] for name, label in labels.items()]
    env = p["environment"]
    return table(["stage", "time", "rows/s"], ["---", "---:", "---:"], rows) + "\n\n" + wrap(
        f"{p['rows']:,} rows of the same table ({p['commits']} commits), PySpark {env['pyspark']}, "
        f"local[2] on {env['cpus']} cores; Spark stages: medians of interleaved rounds; 1-minute load "
        f"{env['load_before'][0]:.1f} to {env['load_after'][0]:.1f}."
    )
