"""Figure block of the ``foreach_batch`` runner against the Java connector
(``benchmarks/spark_runner_bench.py``, ``benchmarks/results/spark_runner.json``)."""

from __future__ import annotations

from typing import Any

from benchmarks._common.figures import table, wrap

__all__ = ["spark_runner"]


def spark_runner(r: dict[str, Any]) -> str:
    """One row per issue target: the runner, the Java connector, the target, reached or not."""
    s = r["spark_runner"]
    env, t = s["environment"], s["targets"]
    java = env["java_connector"] or "not run"
    lat, idle, now = s["latency"], s["idle_s3"]["modes"], s["available_now"]["cases"]
    s3 = s.get("latency_s3")
    runner = lat["runner"]
    parts = (s["available_now"], lat, s["idle_s3"]) + ((s3,) if s3 else ())
    loads = [x for part in parts for x in (part["load_before"][0], part["load_after"][0])]

    def reached(name: str) -> str:
        return ("reached" if t[name]["reached"] else "**not reached**") if name in t else "—"

    def per_hour(mode: str) -> str:
        return f"{idle[mode]['s3_requests_per_hour']:,.0f}" if mode in idle else "—"

    def p50_p99(part: dict | None, key: str) -> str:
        if part is None:
            return "—"
        return f"{part[f'{key}_ms_p50'] / 1000:.2f} s / {part[f'{key}_ms_p99'] / 1000:.2f} s"

    rows = []
    for where, part, target in (("local, inotify push", lat, "latency"), ("S3 on moto, SQS push", s3, "latency_s3")):
        if part is None:
            continue
        rows += [
            [f"commit → `fn` called, p50 / p99 ({where})", p50_p99(part["runner"], "entry"),
             p50_p99(part.get("java_connector"), "entry"),
             "≤ 1 s / ≤ 2 s", f"{reached(f'{target}_p50_s')} / {reached(f'{target}_p99_s')}"],
            [f"commit → rows collected in `fn`, p50 / p99 ({where})", p50_p99(part["runner"], "end"),
             p50_p99(part.get("java_connector"), "end"), "", ""],
        ]
    rows += [
        ["S3 requests per idle hour (moto)", per_hour("runner"), per_hour("java_connector"),
         "≥ 100× fewer", reached("idle_requests_java_over_runner")
         + (f" ({t['idle_requests_java_over_runner']['value']:,.0f}×)" if "idle_requests_java_over_runner" in t else "")],
        ["`available_now`, 10-row table (median)", f"{now['runner']['median_s']:.2f} s",
         f"{now['java_connector']['median_s']:.2f} s" if "java_connector" in now else "—",
         "≤ 1.5× the connector", reached("available_now_vs_java")
         + (f" ({t['available_now_vs_java']['value']:.2f}×)" if "available_now_vs_java" in t else "")],
    ]
    header = ["measure", f"`foreach_batch`, PySpark {env['pyspark']}", f"Java connector ({java})", "target", ""]
    return table(header, ["---", "---:", "---:", "---", "---"], rows) + "\n\n" + wrap(
        f"Medians of {s['available_now']['repeats']} interleaved rounds (`available_now`), "
        f"{runner['commits']} commits (latency), a {s['idle_s3']['window_s']:.0f} s idle window (requests); "
        f"{env['cpus']} cores, local[2]; the run took {env['run_s'] / 60:.0f} minutes; "
        f"1-minute load {min(loads):.1f} to {max(loads):.1f} (the machine was shared)."
    )
