"""Write the measured figures of the docs from ``benchmarks/results/*.json``, so each is written once.

Every figure a benchmark measured stands in the docs between marker comments::

    <!-- bench:core -->
    ...a table rendered from core.json...
    <!-- /bench:core -->

and inline, for a figure in a sentence: ``<!-- bench:idle-pypaimon-s3 -->67,440<!-- /bench:idle-pypaimon-s3 -->``.
This script renders what belongs between each pair from the JSON the benchmarks wrote and puts it
there; ``tests/test_readme_figures.py`` fails when a doc differs from what it would write. After
re-running a benchmark, run ``python benchmarks/render_readme.py`` (``--check`` only reports).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ("README.md", "docs/s3.md", "infra/terraform/examples/complete/README.md")
MARKER = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->(?P<body>.*?)<!-- /bench:(?P=name) -->", re.DOTALL)


def load_results(results: Path = RESULTS) -> dict[str, Any]:
    """``{"core": ..., "s3": ..., "spark": ..., "reliability": ..., "catchup": ...}`` from the
    result files."""
    names = ("core", "s3", "spark", "reliability", "catchup")
    return {name: json.loads((results / f"{name}.json").read_text()) for name in names}


# formatting ---------------------------------------------------------------------------------------

def ms(value: float) -> str:
    """Milliseconds as the docs write them: one decimal under 100, whole and grouped above."""
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def count(value: float) -> str:
    return f"{round(value):,}"


def table(header: list[str], align: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# blocks: one function per marker name ---------------------------------------------------------------

def core_table(r: dict) -> str:
    """The benchmark's own latency table (core_bench.py renders it into its JSON); catch-up
    figures come from catchup.json, measured against pypaimon in one run (see ``catchup``)."""
    table = r["core"]["table"].strip()
    return table.split("\n\n| catch-up", 1)[0].strip()


def wrap(text: str) -> str:
    """Prose at the docs' line width, each paragraph line of ``text`` wrapped on its own."""
    return "\n".join(textwrap.fill(line, width=100, break_on_hyphens=False) for line in text.split("\n"))


def core_summary(r: dict) -> str:
    lat = r["core"]["latency"]
    pypaimon, local, poll = lat["pypaimon"], lat["local"], lat["poll"]
    return wrap(
        f"Local push delivers a commit in {local['p50_ms']:.0f} ms at the median and "
        f"{local['p99_ms']:.0f} ms at p99, {pypaimon['p50_ms'] / local['p50_ms']:.0f}× faster than "
        f"pypaimon's poll, and an idle table costs one storage call per 60 s safety check "
        f"({local['idle_calls_per_hour']:.0f} an hour as measured over the "
        f"{local['idle_seconds']:.0f} s window, 60 in steady state) instead of "
        f"{count(pypaimon['idle_calls_per_hour'])} local storage calls (on S3 a check of a missing "
        f"file is two requests: see below).\n"
        f"`PollingNotifier` matches pypaimon's latency at "
        f"1/{pypaimon['idle_calls_per_hour'] / poll['idle_calls_per_hour']:.0f} of its idle cost "
        f"(it checks only the next snapshot and backs off to 5 s). Catch-up is measured below."
    )


def _s3_modes(r: dict) -> tuple[dict, dict, dict]:
    latency = r["s3"]["latency"]
    return latency["modes"]["pypaimon"], latency["modes"]["sqs"], latency["idle_tables"]


def s3_readme(r: dict) -> str:
    pypaimon, sqs, idle = _s3_modes(r)
    busiest = max(r["s3"]["wake"], key=lambda run: run["tables"])
    rows = [
        ["pypaimon `AsyncStreamingTableScan` (poll 1 s)", ms(pypaimon["p50_ms"]), ms(pypaimon["p99_ms"]),
         count(idle["idle_pypaimon"]["s3_requests_per_hour"])],
        ["`ChangeFeed` + `SqsNotifier`", ms(sqs["p50_ms"]), ms(sqs["p99_ms"]),
         f"{count(idle['idle_push60']['s3_requests_per_hour'])} (plus "
         f"{count(r['s3']['latency']['sqs_requests_per_hour'])} SQS long polls an hour per queue)"],
    ]
    return (
        table(["consumer", "p50 ms", "p99 ms", "idle S3 requests / table-hour"], ["---", "---:", "---:", "---:"], rows)
        + f"\n\nOne `SqsNotifier` serving {count(busiest['tables'])} tables wakes the right feed in "
        f"{ms(busiest['p50_ms'])} ms p50, {busiest['p99_ms']:.0f} ms p99."
    )


def s3_latency(r: dict) -> str:
    pypaimon, sqs, _idle = _s3_modes(r)
    rows = [
        [label, ms(mode["p50_ms"]), ms(mode["p99_ms"]), ms(mode["p50_ms_from_commit"]), ms(mode["p99_ms_from_commit"])]
        for label, mode in (("pypaimon `AsyncStreamingTableScan` (poll 1 s)", pypaimon), ("`ChangeFeed` + `SqsNotifier`", sqs))
    ]
    return table(
        ["consumer", "p50 ms", "p99 ms", "p50 ms from commit start", "p99 ms from commit start"],
        ["---", "---:", "---:", "---:", "---:"], rows,
    )


def s3_idle(r: dict) -> str:
    _pypaimon, _sqs, idle = _s3_modes(r)
    rows = [
        [label, count(idle[key]["s3_requests_per_hour"]), count(idle[key]["fileio_calls_per_hour"])]
        for label, key in (
            ("pypaimon `AsyncStreamingTableScan` (poll 1 s)", "idle_pypaimon"),
            ("`ChangeFeed` + `SqsNotifier`, `reconcile_interval=60` (default)", "idle_push60"),
            ("`ChangeFeed` + `SqsNotifier`, `reconcile_interval=120`", "idle_push120"),
        )
    ]
    rows.append([
        "(`SqsNotifier` long polls, per queue, shared by all its tables)",
        f"{count(r['s3']['latency']['sqs_requests_per_hour'])} SQS requests / hour", "",
    ])
    return table(
        ["an idle table followed by", "S3 requests / table-hour (server)", "FileIO calls / table-hour"],
        ["---", "---:", "---:"], rows,
    )


def s3_wake(r: dict) -> str:
    rows = [
        [count(run["tables"]), count(run["messages_per_second"]), count(run["commit_interval_s"]),
         count(run["messages"]), f"{run['p50_ms']:.1f}", f"{run['p99_ms']:.1f}", f"{run['max_ms']:.1f}"]
        for run in r["s3"]["wake"]
    ]
    return table(
        ["tables", "events/s", "s between events of one table", "events", "p50 ms", "p99 ms", "max ms"],
        ["---:"] * 7, rows,
    )


def idle_pypaimon_s3(r: dict) -> str:
    """The one idle-cost figure: S3 requests per idle table-hour of pypaimon's poll, counted by
    the server (moto) in s3_bench.py."""
    return count(r["s3"]["latency"]["idle_tables"]["idle_pypaimon"]["s3_requests_per_hour"])


def spark_throughput(r: dict) -> str:
    t = r["spark"]["throughput"]
    best = t["pypaimon_to_arrow_batch_65536_rows_per_s"]
    readers = (
        ("pypaimon `to_arrow`, `read.batch-size=65536`", "pypaimon_to_arrow_batch_65536_rows_per_s"),
        ("pypaimon `to_arrow`, default batch size", "pypaimon_to_arrow_default_rows_per_s"),
        ("this source, `Trigger.AvailableNow`, query start-up included", "source_available_now_rows_per_s"),
        ("the same, inside micro-batches only", "source_micro_batches_only_rows_per_s"),
        ("this source, batch read (`spark.read`)", "source_batch_read_rows_per_s"),
        ("ceiling: a do-nothing Python data source yielding the same files' Arrow batches",
         "python_data_source_ceiling_rows_per_s"),
        ("ceiling: Spark's own Parquet reader on the same files", "spark_native_parquet_rows_per_s"),
    )
    rows = [[label, count(t[key]), f"{t[key] / best:.2f}"] for label, key in readers]
    return table(["reader", "rows/s", "× best pypaimon"], ["---", "---:", "---:"], rows)


def spark_latency(r: dict) -> str:
    s = r["spark"]
    rows = []
    for label, key in (("push (local notifier)", "push"), ("checking storage on every `latestOffset`", "storage-per-trigger")):
        latency, idle = s["latency"][key], s["idle"][key]
        per_minute = idle["storage_calls_per_minute"]
        idle_cell = f"{per_minute:.1f} (the 60 s safety check)" if key == "push" else count(per_minute)
        rows.append([label, f"{latency['p50_ms']:.0f}", f"{latency['p95_ms']:.0f}", f"{latency['max_ms']:.0f}", idle_cell])
    commits = s["latency"]["push"]["commits"]
    return table(
        [f'`processingTime="0 seconds"`, {commits} commits', "p50 ms", "p95 ms", "max ms", "storage calls per idle minute"],
        ["---", "---:", "---:", "---:", "---:"], rows,
    )


def catchup(r: dict) -> str:
    """catchup_bench.py: each figure against the issue's target, then memory."""
    c = r["catchup"]
    local, s3, arrow, plan, sqs = c["local"], c["s3"], c["to_arrow"], c["planning"], c["sqs"]
    n, s3_n = c["args"]["snapshots"], c["args"]["s3_snapshots"]
    rows = [
        [f"catch-up of {n:,} snapshots, local (s)", f"{local['pypaimon']['median_s']:.2f}",
         f"{local['paimon-feed']['median_s']:.2f}", f"{local['ratio']:.2f}×", "≤ 0.5×"],
        [f"catch-up of {s3_n:,} snapshots, S3 on moto, {s3['delay_ms']:.0f} ms per request (s)",
         f"{s3['pypaimon']['median_s']:.1f}", f"{s3['paimon-feed']['median_s']:.1f}",
         f"{s3['ratio']:.2f}×", "≤ 0.5×"],
        ["S3 requests in that catch-up", count(s3["pypaimon"]["requests"]),
         count(s3["paimon-feed"]["requests"]), "", ""],
        [f"`to_arrow` of the catch-up batch ({count(arrow['files'])} files, rows/s)",
         count(arrow["pypaimon"]["rows_per_s"]), count(arrow["paimon-feed"]["rows_per_s"]),
         f"{arrow['ratio']:.2f}×", "≥ 1.0×"],
        ["planning the local catch-up alone (s)", f"{plan['pypaimon']['median_s']:.2f}",
         f"{plan['paimon-feed']['median_s']:.2f}", f"{plan['ratio']:.2f}×", ""],
        ["ceiling of the local ratio: pypaimon's planning + the feed's read", "", "",
         f"{c['ceiling']['ratio']:.2f}×", ""],
        [f"commit → batch via SQS, {sqs['tables']} tables on one queue, p50 / p99 ms", "",
         f"{ms(sqs['p50_ms'])} / {ms(sqs['p99_ms'])}", "", "≤ 50 / ≤ 150"],
    ]
    memory_rows = []
    for result in c["memory"].values():
        q = result["quarters_mib"]
        memory_rows.append([
            result["label"], f"{result['seconds']:.1f}", f"{result['start_mib']:.0f}",
            f"{result['peak_mib']:.0f}", " / ".join(f"{v:.0f}" for v in q[1:]),
            f"{result['second_half_growth_mib']:+.0f}",
        ])
    feed = c["memory"]["per-snapshot"]
    return (
        table(["figure", "pypaimon", "paimon-feed", "ratio", "target"],
              ["---", "---:", "---:", "---:", "---"], rows)
        + f"\n\nMemory catching up {count(c['args']['memory_snapshots'])} snapshots (RSS of a "
        f"fresh process, MiB; the feed with `max_pending=8`):\n\n"
        + table(["consumer", "s", "start", "peak", "at 25 / 50 / 75 / 100 % of the run",
                 "growth over the 2nd half"], ["---", "---:", "---:", "---:", "---", "---:"],
                memory_rows)
        + f"\n\nCaches at the end of the batch-per-snapshot run: "
        f"{count(feed['snapshot_cache_entries'])} of {count(feed['snapshot_cache_limit'])} "
        f"snapshots; {count(feed['manifest_cache_entries'])} of "
        f"{count(feed['manifest_cache_limits'][0])} manifest entries, "
        f"{feed['manifest_cache_bytes'] / 2**20:.1f} of "
        f"{feed['manifest_cache_limits'][1] / 2**20:.0f} MiB."
    )


def _scenario(outcome: dict) -> str:
    notes = outcome["notes"]
    name = outcome["scenario"]
    if name == "crash":
        return f"crash: consumer SIGKILLed {notes['kills']} times at random while a writer commits"
    if name == "chaos":
        c = notes["chaos"]
        # The 200 ms bound is the ChaosNotifier's max_delay setting in reliability.py.
        return (f"chaos: of {c['received']} hints {c['dropped']} dropped, {c['duplicated']} duplicated, "
                f"{c['held_back']} reordered, all delayed ≤ 200 ms")
    if name == "faults":
        return f"faults: {notes['rate']:.0%} of storage calls fail ({notes['injected_faults']} injected)"
    if name == "soak":
        return f"soak: {count(notes['snapshots'])} snapshots through one feed"
    return {
        "fault-permanent": "fault-permanent: storage breaks for good",
        "expiry": "expiry: snapshots expired under a lagging consumer",
    }.get(name, name)


def reliability(r: dict) -> str:
    rows = []
    for o in r["reliability"]["outcomes"]:
        duplicated = f"{o['duplicated']} ({'yes' if o['duplicates_allowed'] else 'no'})" if o["duplicated"] else "0"
        delay = f"{o['max_delay_ms']:.0f}" if o["max_delay_ms"] is not None else "–"
        rows.append([_scenario(o), o["runs"], o["committed_batches"], o["expected_rows"], o["lost"],
                     duplicated, o["out_of_order"], delay])
    return table(
        ["scenario", "runs", "committed batches", "expected rows", "lost", "duplicated (allowed?)", "out-of-order", "max delay ms"],
        ["---", "---:", "---:", "---:", "---:", "---", "---:", "---:"], rows,
    )


BLOCKS: dict[str, Callable[[dict], str]] = {
    "core": core_table,
    "core-summary": core_summary,
    "s3": s3_readme,
    "s3-latency": s3_latency,
    "s3-idle": s3_idle,
    "s3-wake": s3_wake,
    "idle-pypaimon-s3": idle_pypaimon_s3,
    "spark-throughput": spark_throughput,
    "spark-latency": spark_latency,
    "reliability": reliability,
    "catchup": catchup,
}


# rendering ----------------------------------------------------------------------------------------

def render(text: str, results: dict, *, source: str = "<text>") -> str:
    """``text`` with every marked block rendered from ``results``; an unknown name is an error."""

    def replace(match: re.Match) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise KeyError(f"{source}: unknown figure block {name!r}; known: {', '.join(BLOCKS)}")
        body = BLOCKS[name](results)
        if match["body"].startswith("\n"):  # a block on lines of its own
            body = f"\n{body}\n"
        return f"<!-- bench:{name} -->{body}<!-- /bench:{name} -->"

    return MARKER.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only report docs that differ; exit 1 if any")
    args = parser.parse_args(argv)
    results = load_results()
    stale = []
    for doc in DOCS:
        path = ROOT / doc
        text = path.read_text()
        rendered = render(text, results, source=doc)
        if rendered != text:
            stale.append(doc)
            if not args.check:
                path.write_text(rendered)
    verb = "differ from benchmarks/results" if args.check else "rewritten"
    print(f"{verb}: {', '.join(stale)}" if stale else "every figure matches benchmarks/results")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
