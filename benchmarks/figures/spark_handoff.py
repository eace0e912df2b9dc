"""Figure block of ``foreach_batch``'s readers against Paimon's connector on merged tables
(``benchmarks/spark_handoff_bench.py``, ``benchmarks/results/spark_handoff.json``)."""

from __future__ import annotations

from typing import Any

from benchmarks._common.figures import table, wrap

__all__ = ["spark_handoff", "spark_handoff_phases"]

#: Row labels of the bench's cases, in the order the table shows them.
LABELS = {
    "runner/feed": "`foreach_batch`, `reader=\"feed\"` (pypaimon merges)",
    "runner/feed-native": "`foreach_batch`, `reader=\"feed\"` with `[native]` (pypaimon-rust merges)",
    "runner/connector": "`foreach_batch`, `reader=\"connector\"` (hand-off)",
    "connector/readStream": "the connector's own `readStream`, `AvailableNow`",
}


def spark_handoff(r: dict[str, Any]) -> str:
    """One row per reader and table: seconds into Parquet and ``noop``, and the ratio of each
    to the connector's own ``readStream``."""
    s = r["spark_handoff"]
    env, tables = s["environment"], s["tables"]
    rows = []
    for name, measured in tables.items():
        cases = measured["cases"]
        for case, label in LABELS.items():
            cells = [f"{name}: {label}", cases[f"{case}/parquet"]["connector"]]
            for sink in ("parquet", "noop"):
                seconds = cases[f"{case}/{sink}"]["median_s"]
                base = cases[f"connector/readStream/{sink}"]["median_s"]
                cells.append(f"{seconds:.2f} s ({base / seconds:.2f}×)")
            rows.append(cells)
    first = next(iter(tables.values()))
    loads = [x for m in tables.values() for x in (m["load_before"][0], m["load_after"][0])]
    loads += [env["load_at_start"][0], env["load_at_end"][0]]
    header = ["1,000,000 keys, merged, `available_now` / `AvailableNow` (median)" if first["keys"] == 1_000_000
              else f"{first['keys']:,} keys, merged (median)", "connector", "→ Parquet", "→ `noop`"]
    return table(header, ["---", "---", "---:", "---:"], rows) + "\n\n" + wrap(
        f"Ratios are the connector's own `readStream` time over the row's (above 1× is faster). "
        f"Every reader wrote the same rows (fingerprints equal: "
        f"{'yes' if all(m['digests_equal'] for m in tables.values()) else 'NO'}). "
        f"{first['keys']:,} keys in {s['commits']} uncompacted commits per table; medians of "
        f"{first['repeats']} interleaved rounds in one PySpark {env['pyspark']} `local[2]` session "
        f"(pypaimon {env['pypaimon']}, pypaimon-rust {env['pypaimon_rust']}); {env['cpus']} cores; "
        f"1-minute load {min(loads):.1f} to {max(loads):.1f} (the machine was shared); the run took "
        f"{env['run_s'] / 60:.0f} minutes."
    )


def spark_handoff_phases(r: dict[str, Any]) -> str:
    """Where a runner case's time goes (medians): from the call to ``fn`` entered (start-up,
    planning, the DataFrame built) and inside ``fn`` (Spark reading the batch and writing it)."""
    s = r["spark_handoff"]
    rows = []
    for name, measured in s["tables"].items():
        for case, label in LABELS.items():
            phases = measured["cases"][f"{case}/parquet"].get("phases_median_s")
            if phases:
                rows.append([f"{name}: {label}", f"{phases['to_fn_s']:.2f} s", f"{phases['fn_s']:.2f} s"])
    return table(["→ Parquet (median)", "call → `fn` entered", "`fn` (read + write)"], ["---", "---:", "---:"], rows)
