"""Write the measured figures of the docs from ``benchmarks/results/*.json``, so each is written once.

Every figure a benchmark measured stands in the docs between marker comments::

    <!-- bench:core -->
    ...a table rendered from core.json...
    <!-- /bench:core -->

and inline, for a figure in a sentence: ``<!-- bench:idle-pypaimon-s3 -->67,440<!-- /bench:idle-pypaimon-s3 -->``.
This script renders what belongs between each pair from the JSON the benchmarks wrote and puts it
there; ``tests/test_readme_figures.py`` fails when a doc differs from what it would write. After
re-running a benchmark, run ``python -m benchmarks.render_readme`` (``--check`` only reports).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# The README keeps one headline figure; the measured tables live on the docs site's pages.
DOCS = ("README.md", "docs/benchmarks.md", "docs/concepts.md", "docs/spark.md", "docs/s3.md",
        "docs/warehouse.md",
        "infra/terraform/examples/complete/README.md")
from benchmarks._common.runner_figures import spark_runner  # (the foreach_batch runner's table)
from benchmarks._common.s3_costs import MONTH_S, S3_USD_PER_1000, usd_per_month  # (the prices the benchmarks use)

MARKER = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->(?P<body>.*?)<!-- /bench:(?P=name) -->", re.DOTALL)


def load_results(results: Path = RESULTS) -> dict[str, Any]:
    """``{"core": ..., "s3": ..., "spark": ..., "spark_long_running": ..., "reliability": ...,
    "catchup": ..., "consumer_commit": ..., "native": ..., "integrity": ..., "warehouse": ...,
    "spark_merged": ..., "spark_runner": ...}`` from the result files."""
    names = (
        "core", "s3", "spark", "spark_long_running", "reliability", "catchup", "consumer_commit",
        "native", "integrity", "warehouse", "spark_merged", "spark_runner",
    )
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
    pypaimon, local, poll, coarse = lat["pypaimon"], lat["local"], lat["poll"], lat["local-20ms"]
    return wrap(
        f"Local push delivers a commit in {local['p50_ms']:.0f} ms at the median and "
        f"{local['p99_ms']:.0f} ms at p99, {pypaimon['p50_ms'] / local['p50_ms']:.0f}× faster than "
        f"pypaimon's poll, and an idle table costs one storage call per 60 s safety check "
        f"({local['idle_calls_per_hour']:.0f} an hour as measured over the "
        f"{local['idle_seconds']:.0f} s window, 60 in steady state) instead of "
        f"{count(pypaimon['idle_calls_per_hour'])} local storage calls (on S3 a check of a missing "
        f"file is two requests: see below).\n"
        f"`PollingNotifier` matches pypaimon's median latency at "
        f"1/{pypaimon['idle_calls_per_hour'] / poll['idle_calls_per_hour']:.0f} of its idle cost "
        f"(it checks only the next snapshot and backs off to 5 s). Catch-up is measured below.\n"
        f"Push is not free while idle, though: the inotify watcher (watchfiles) looks for events every "
        f"2 ms, and its process spent {local['idle_cpu_percent']:.1f}% of a core on an idle table, "
        f"against {pypaimon['idle_cpu_percent']:.2f}% for pypaimon's poll. A process that follows many "
        f"tables, or a laptop, can trade latency for it: `ChangeFeed(table, "
        f"notifier=LocalNotifier(step_ms=20))` spent {coarse['idle_cpu_percent']:.1f}% and delivered in "
        f"{coarse['p50_ms']:.0f} ms at the median, still {pypaimon['p50_ms'] / coarse['p50_ms']:.0f}× "
        f"faster than the poll."
    )


def headline(r: dict) -> str:
    """The README's one figure: commit-to-delivery latency and idle cost, against pypaimon's poll."""
    lat = r["core"]["latency"]
    pypaimon, local = lat["pypaimon"], lat["local"]
    _p, sqs, idle = _s3_modes(r)
    return wrap(
        f"A local commit reaches the consumer in {local['p50_ms']:.0f} ms at the median "
        f"(pypaimon's poll: {pypaimon['p50_ms']:.0f} ms), a commit on S3 in {sqs['p50_ms']:.0f} ms "
        f"through SQS, and an idle table on S3 costs "
        f"{count(idle['idle_push60']['s3_requests_per_hour'])} requests an hour instead of "
        f"{count(idle['idle_pypaimon']['s3_requests_per_hour'])}."
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


def s3_idle_cost(r: dict) -> str:
    """What the idle tables of s3_bench.py cost a month, priced by request kind (s3_costs.py)."""
    _pypaimon, _sqs, idle = _s3_modes(r)
    poller, push = idle["idle_pypaimon"], idle["idle_push60"]
    kinds = poller["s3_requests_by_kind"]
    list_share = usd_per_month({"LIST": kinds.get("LIST", 0)}, 1) / usd_per_month(kinds, 1)
    sqs_per_hour = r["s3"]["latency"]["sqs_requests_per_hour"]
    hours_a_month = MONTH_S / 3600
    return wrap(
        f"At S3 Standard list prices in us-east-1 at the time of writing "
        f"(${S3_USD_PER_1000['LIST']} per 1,000 LIST, ${S3_USD_PER_1000['GET']} per 1,000 HEAD/GET; "
        f"check the current price list), an idle table followed by "
        f"pypaimon's scan costs about ${poller['usd_per_month'] / hours_a_month:.2f} an hour, some "
        f"${poller['usd_per_month']:,.0f} a month, {list_share:.0%} of it in LIST requests. The same "
        f"table behind `ChangeFeed` + `SqsNotifier` costs about ${push['usd_per_month']:.2f} a month at "
        f"the default `reconcile_interval`, plus the queue: "
        f"{count(sqs_per_hour)} long polls an hour (about "
        f"{round(sqs_per_hour * hours_a_month, -4):,.0f} SQS requests a month, within SQS's monthly free tier) and, per "
        f"commit, one message sent by S3, received and deleted (receives and deletes are batched by ten)."
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


def s3_stages(r: dict) -> str:
    stages = _s3_modes(r)[1]["stages_ms_p50"]
    return wrap(
        f"Where the push path's {ms(_s3_modes(r)[1]['p50_ms'])} ms go (p50): the snapshot's event "
        f"is parsed {stages['visible_to_detected']:.1f} ms after the file became visible, planning "
        f"the batch from S3 takes {stages['detected_to_planned']:.1f} ms (three sequential GETs on "
        f"moto: the snapshot file, the manifest list and the manifest), handing it to the consumer "
        f"{stages['planned_to_received']:.1f} ms."
    )


def s3_targets(r: dict) -> str:
    _pypaimon, sqs, idle = _s3_modes(r)
    busiest = max(r["s3"]["wake"], key=lambda run: run["tables"])
    push60 = idle["idle_push60"]["s3_requests_per_hour"]
    rows = [
        ["SQS push p50 <= 50 ms on moto", f"{ms(sqs['p50_ms'])} ms (p99 {sqs['p99_ms']:.0f} ms)",
         _met(sqs["p50_ms"] <= 50)],
        ["idle S3 requests <= 60 per table-hour", f"{count(push60)} at the default `reconcile_interval=60`",
         _met(push60 <= 60)],
        [f"{count(busiest['tables'])} tables on one queue, p99 wake <= 250 ms", f"{busiest['p99_ms']:.0f} ms",
         _met(busiest["p99_ms"] <= 250)],
    ]
    return table(["target", "measured", ""], ["---", "---", "---"], rows)


def idle_pypaimon_s3(r: dict) -> str:
    """The one idle-cost figure: S3 requests per idle table-hour of pypaimon's poll, counted by
    the server (moto) in s3_bench.py."""
    return count(r["s3"]["latency"]["idle_tables"]["idle_pypaimon"]["s3_requests_per_hour"])


READERS = (
    ("source", "this source (`paimon_feed`)"),
    ("java_connector", "Paimon's Java connector"),
    ("python_ceiling", "do-nothing Python source"),
    ("spark_parquet", "Spark's Parquet reader"),
)


def _java_ran(r: dict) -> bool:
    return bool(r["spark"]["java_connector"].get("jars"))


def _java_versions(r: dict) -> str:
    """``0.9.0 on Spark 3.5.9``: the connector's version and the Spark its process ran."""
    java = r["spark"]["java_connector"]
    return f"{java['artifact'].rsplit(':', 1)[1]} on Spark {java['process']['spark']}"


def _reader_label(r: dict, key: str, label: str) -> str:
    if key == "source":
        return f"{label}, PySpark {r['spark']['environment']['pyspark']}"
    if key == "java_connector":
        return f"{label} {_java_versions(r)}, own process"
    return label


def _mrows(cases: dict, case: str) -> str:
    return f"{cases[case]['rows_per_s'] / 1e6:.1f}" if case in cases else "–"


def _millions(rows: int) -> str:
    return f"{rows / 1e6:g}M"


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def spark_vs_java(r: dict) -> str:
    """The side-by-side table: one column per reader, one row per figure the source is measured by."""
    s = r["spark"]
    readers = [(key, label) for key, label in READERS if key != "java_connector" or _java_ran(r)]
    rows = []
    for size, t in sorted(s["throughput"].items(), key=lambda item: int(item[0])):
        for mode, mode_label in (("available_now", "`AvailableNow`"), ("batch", "batch read")):
            for sink in ("noop", "parquet"):
                rows.append([f"M rows/s, append {_millions(int(size))}, {mode_label} → `{sink}`"]
                            + [_mrows(t["cases"], f"{key}/{mode}/{sink}") for key, _ in readers])
    pk = s["throughput_pk"]
    for mode, mode_label, rows_read in (("available_now", "`AvailableNow` (changelog)", pk["stream_rows"]),
                                        ("batch", "batch read (merged state)", pk["batch_rows"])):
        for sink in ("noop", "parquet"):
            rows.append([f"M rows/s, primary key {_millions(rows_read)} rows, {mode_label} → `{sink}`"]
                        + [_mrows(pk["cases"], f"{key}/{mode}/{sink}") for key, _ in readers])
    long = r["spark_long_running"]["long_running"]
    for sink in ("noop", "parquet"):
        rows.append([f"M rows/s, append {_millions(long['rows'])}, long-running, one commit per micro-batch → `{sink}`"]
                    + [_mrows(long["cases"], f"{key}/{sink}") for key, _ in readers])
    rows.append(["… its micro-batch p50, ms (→ `noop`)"]
                + [f"{long['cases'][f'{key}/noop']['batch_ms_p50']:,.0f}" if f"{key}/noop" in long["cases"] else "–"
                   for key, _ in readers])
    startup = s["startup"]["cases"]
    rows.append(["`AvailableNow` on a 10-row table, start to termination, s"]
                + [f"{startup[key]['median_s']:.2f}" if key in startup else "–" for key, _ in readers])
    # Commit -> end on a local table: this source as it comes (a storage check on every trigger
    # there), the connector (a storage check on every trigger), the do-nothing Python source (a
    # listing of the snapshot directory on every trigger, nothing read) and Spark's file source
    # (a listing of the bucket directories on every trigger). Idle requests on S3: this source
    # with push through SQS.
    followers = {"java_connector": "java_connector", "python_ceiling": "python_ceiling",
                 "spark_parquet": "spark_parquet"}
    for trigger in ("0 seconds", "1 second"):
        latency = s["latency"][trigger]
        rows.append([f"commit → end of micro-batch on a local table, p50 / p95 ms, `processingTime=\"{trigger}\"`"]
                    + [f"{latency[mode]['p50_ms']:.0f} / {latency[mode]['p95_ms']:.0f}" if mode in latency else "–"
                       for mode in (followers.get(key, "auto") for key, _ in readers)])
    idle = s["idle_s3"]["modes"]
    rows.append(["S3 requests per idle minute (moto, counted at the server; this source: push through SQS)"]
                + [f"{idle[mode]['s3_requests_per_minute']:,.1f}" if mode in idle else "–"
                   for mode in (followers.get(key, "push") for key, _ in readers)])
    return table(["figure"] + [_reader_label(r, key, label) for key, label in readers],
                 ["---"] + ["---:"] * len(readers), rows)


def spark_java_status(r: dict) -> str:
    java = r["spark"]["java_connector"]
    if not java.get("jars"):
        return wrap(
            f"Paimon's Java connector is not in this table: Maven could not supply `{java['artifact']}` "
            f"on this machine (its answer, recorded in `benchmarks/results/spark.json`: \"{java['error']}\"). "
            f"The benchmark fetches it with `benchmarks/java/pom.xml` and runs it in the same run once "
            f"Maven can."
        )
    s = r["spark"]
    process = java["process"]
    tables = [(f"append {_millions(int(size))}", t["reads_compared"]) for size, t in sorted(
        s["throughput"].items(), key=lambda item: int(item[0]))] + [("primary key", s["throughput_pk"]["reads_compared"])]
    differ = [f"{name} ({kind})" for name, compared in tables for kind in ("batch", "stream")
              if not compared[f"{kind}_equal"]]
    reads = ("Both read the same rows from every table, batch and stream (row count, sum of keys and of "
             "a hash of every row, compared in the same run)." if not differ else
             f"Their reads differ on: {', '.join(differ)} (fingerprints in `benchmarks/results/spark.json`).")
    return wrap(
        f"The Java connector is `{java['artifact']}`, the newest Paimon Spark connector Maven serves "
        f"here: no 1.x release of any `paimon-spark-*` artifact and none for Spark 4, so none runs on "
        f"this project's PySpark {s['environment']['pyspark']}. So it runs on "
        f"the newest Spark it supports, PySpark {process['spark']}, in a process of its own on the same "
        f"machine (`benchmarks/java_connector_worker.py`: one long-lived `local[2]` session taking "
        f"JSON-line commands), its cases interleaved round by round with the others'; its times are "
        f"taken in the benchmark's process around each request (a round trip costs "
        f"{process['ipc_round_trip_ms']:.2f} ms). {reads} {_spark_load(s)}"
    )


def _spark_load(s: dict) -> str:
    """The range of 1-minute load averages spark_bench.py recorded, and the run's length."""
    parts = [s["throughput_pk"], s["startup"], s["latency"], s["idle_s3"], *s["throughput"].values()]
    loads = [part[key][0] for part in parts for key in ("load_before", "load_after")]
    loads += [s["environment"]["load_at_start"][0], s["environment"]["load_at_end"][0]]
    run = f" The run took {s['environment']['run_s'] / 60:.0f} minutes." if "run_s" in s["environment"] else ""
    return (f"The machine ({s['environment']['cpus']} cores) was shared: 1-minute load averages from "
            f"{min(loads):.1f} to {max(loads):.1f} during the run, so compare readers within a row, not "
            f"with other runs.{run}")


def spark_targets(r: dict) -> str:
    """Issue 13's four targets, each as the ratio measured in this run."""
    s, t = r["spark"], r["spark"]["targets"]
    size = _millions(max(int(k) for k in s["throughput"]))
    rows = []
    java_missing = "not measured (no Java connector)"
    for key, label in (("parquet_sink_vs_java", "`AvailableNow`"), ("parquet_sink_batch_vs_java", "batch read")):
        ratio = t.get(key)
        rows.append([f"{size} rows into a Parquet sink ≥ 0.85× Paimon's Java connector ({label})",
                     java_missing if ratio is None else f"{ratio:.2f}×", "–" if ratio is None else _met(ratio >= 0.85)])
    for key, label in (("noop_vs_python_ceiling", "batch read"), ("noop_available_now_vs_python_ceiling", "`AvailableNow`")):
        rows.append([f"{size} rows into `noop` ≥ 0.75× the do-nothing Python source ({label})",
                     f"{t[key]:.2f}×", _met(t[key] >= 0.75)])
    extra = t["startup_minus_python_ceiling_s"]
    rows.append(["`AvailableNow` start-up ≤ do-nothing Python source + 0.25 s", f"{extra:+.2f} s", _met(extra <= 0.25)])
    latency = t["latency_p50_vs_java"]
    for trigger in ("0 seconds", "1 second"):
        ratio = None if latency is None else latency[trigger]
        rows.append([f"commit → end of micro-batch p50 ≤ the Java connector's (local table, `notifier=auto`), `processingTime=\"{trigger}\"`",
                     java_missing if ratio is None else f"{ratio:.2f}×", "–" if ratio is None else _met(ratio <= 1)])
    idle = t.get("idle_requests_java_over_push")
    idle_label = "… with ≥ 100× fewer idle storage requests than the Java connector (`s3://` on moto; this source: push through SQS)"
    if not _java_ran(r):
        rows.append([idle_label, java_missing, "–"])
    elif idle is None:
        rows.append([idle_label,
                     "push made no request in the window", "met"])
    else:
        rows.append([idle_label,
                     f"{idle:,.0f}× fewer", _met(idle >= 100)])
    return table(["target", "this run", ""], ["---", "---:", "---"], rows)


def spark_long_running(r: dict) -> str:
    """What a query that is already up sustains, against the connector and the do-nothing source."""
    long = r["spark_long_running"]["long_running"]
    c = long["cases"]

    def ratio(reader: str, sink: str) -> str:
        return f"{c[f'source/{sink}']['rows_per_s'] / c[f'{reader}/{sink}']['rows_per_s']:.2f}×"

    against_java = (f"{ratio('java_connector', 'noop')} the Java connector's rows/s into `noop` and "
                    f"{ratio('java_connector', 'parquet')} into Parquet, " if "java_connector/noop" in c else "")
    return wrap(
        f"Once a query is up (the long-running rows: {long['commits']} micro-batches of one commit, "
        f"{long['rows'] / long['commits'] / 1e6:g}M rows each), this source sustains {against_java}"
        f"and {ratio('python_ceiling', 'noop')} the do-nothing Python source's into `noop`; its "
        f"micro-batch takes {c['source/noop']['batch_ms_p50']:,.0f} ms at the median"
        + (f" against the connector's {c['java_connector/noop']['batch_ms_p50']:,.0f} ms." if against_java else ".")
    )


def spark_startup_parts(r: dict) -> str:
    """Where a Python process of the source that opens the table spends its start-up
    (``python -X importtime``)."""
    one = r["spark"]["startup"]["one_process"]
    m = one["modules_s"]
    return wrap(
        f"A Python process of this source that plans or reads spends {one['import_source_s']:.2f} s importing it "
        f"(PySpark's data source module alone: {m['pyspark.sql.datasource']:.2f} s) and "
        f"{one['open_table_s']:.2f} s opening the table, of which pypaimon's table module brings in "
        f"pandas ({m['pandas']:.2f} s), polars ({m['polars']:.2f} s) and requests "
        f"({m['requests']:.2f} s), none of which this source uses (medians of {one['repeats']} fresh "
        f"interpreters, `python -X importtime`, same run). Without those three, opening the table "
        f"would still take {one['open_table_s'] - m['pandas'] - m['polars'] - m['requests']:.2f} s "
        f"(pyarrow and pypaimon's own modules); a process that read only snapshot, schema and consumer "
        f"files with pypaimon's classes for them, leaving split planning to the executors, would "
        f"still import for {one['metadata_only_s']:.2f} s after this source's module."
    )


def spark_latency(r: dict) -> str:
    s = r["spark"]
    followers = [("auto", "this source, `notifier=auto` (the default; on a local table, a storage check on every trigger)"),
                 ("push", "this source, inotify push (`notifier=local`)"),
                 ("python_ceiling", "do-nothing Python source (lists the snapshot directory on every trigger, reads nothing)"),
                 ("spark_parquet", "Spark's file source on the table's Parquet files (lists the bucket directories on every trigger)")]
    if _java_ran(r):
        followers.append(("java_connector", f"Paimon's Java connector ({_java_versions(r)}; it checks storage on every trigger)"))
    rows = []
    for trigger in ("0 seconds", "1 second"):
        for key, label in followers:
            m = s["latency"][trigger][key]
            tick = f"{m['tick_to_end_p50_ms']:.0f}" if "tick_to_end_p50_ms" in m else "–"
            rows.append([f"`{trigger}`", label, f"{m['p50_ms']:.0f}", f"{m['p95_ms']:.0f}", f"{m['entry_p50_ms']:.0f}", tick])
    commits = s["latency"]["0 seconds"]["auto"]["commits"]
    return table(
        ["trigger", f"reader, {commits} commits each", "p50 ms to the end", "p95 ms to the end",
         "p50 ms to the start of `foreachBatch`", "p50 ms from the first trigger after the commit to the end"],
        ["---", "---", "---:", "---:", "---:", "---:"], rows,
    )


def spark_sockets(r: dict) -> str:
    """Commit -> end of micro-batch with the Python workers on TCP and on Unix domain sockets
    (spark_bench.py's probe processes, each with a session of its own)."""
    sockets = r["spark"]["python_sockets"]
    labels = {"tcp": "TCP (Spark's default)", "unix": f"Unix domain sockets (`{sockets['conf']}=true`)"}
    readers = (("auto", "this source"), ("python_ceiling", "do-nothing Python source"))
    rows = [[labels[kind]] + [f"{sockets[kind][mode]['p50_ms']:.0f} / {sockets[kind][mode]['p95_ms']:.0f}"
                              for mode, _ in readers] for kind in ("tcp", "unix")]
    commits = sockets["tcp"]["auto"]["commits"]
    return table([f"Python workers reach the JVM over ({commits} commits per cell, `processingTime=\"0 seconds\"`)"]
                 + [f"{label}, p50 / p95 ms to the end" for _, label in readers],
                 ["---", "---:", "---:"], rows)


def spark_consumer_commit(r: dict) -> str:
    """consumer_commit_bench.py: a consumer-file write on moto against the source's commit."""
    c = r["consumer_commit"]
    stored = ("held the last committed position" if c["stored_after_close"] == c["expected_after_close"]
              else f"held {c['stored_after_close']}, not the last committed {c['expected_after_close']},")
    return wrap(
        f"On an `s3://` table on moto one write of the consumer file took {c['write']['median_ms']:.0f} ms "
        f"(median; p95 {c['write']['p95_ms']:.0f} ms; {c['write']['s3_requests']:g} S3 request"
        f"{'' if c['write']['s3_requests'] == 1 else 's'}), which every micro-batch would wait for; the "
        f"source's `commit` returns in {c['commit']['median_ms']:.2f} ms, and the file {stored} once the "
        f"query stopped (`python -m benchmarks.consumer_commit_bench`)."
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
        [f"commit → batch via SQS, {sqs['tables']} tables on one queue, p50 / p99 ms", "",
         f"{ms(sqs['p50_ms'])} / {ms(sqs['p99_ms'])}", "", "≤ 50 / ≤ 150"],
    ]
    pk = c["primary_key"]
    size = f"{count(pk['snapshots'])} commits of {count(pk['rows_per_commit'])} rows"
    for part, label in (("changes", "changes with row kinds"), ("state", "merged state")):
        rows.append([f"primary key, {size}: {label} (rows/s)", count(pk[part]["pypaimon"]["rows_per_s"]),
                     count(pk[part]["paimon-feed"]["rows_per_s"]), f"{pk[part]['ratio']:.1f}×", ""])
    scan = pk["pypaimon_default_scan"]
    kinds = ", ".join(f"{count(n)} `{kind}`" for kind, n in sorted(scan["row_kinds"].items()))
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
        + f"\n\nThe primary-key rows: both sides delivered the same rows, checked before timing; "
        f"pypaimon's scan with its diff catch-up switched off (as it comes, {count(pk['snapshots'])} "
        f"snapshots behind, it planned {scan['plans']} batch of the merged state, {kinds} rows, "
        f"instead of the {count(scan['changes'])} changes).\n\nMemory catching up {count(c['args']['memory_snapshots'])} snapshots (RSS of a "
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


def catchup_phases(r: dict) -> str:
    """Where one local catch-up's time goes (catchup_bench.py's phase timings)."""
    c = r["catchup"]
    phases, arrow = c["phases_s"], c["to_arrow"]
    n = c["args"]["snapshots"]
    return wrap(
        f"Where the time goes (one local catch-up of {n:,} snapshots, phase by phase, medians): "
        f"resolving `earliest` {phases['resolve_start']:.3f} s (it looks for `snapshot-1` before "
        f"listing the snapshot directory, whose listing stats every file); reading the range's "
        f"{n:,} snapshot files for the safety check (is every one an append of one schema?) "
        f"{phases['snapshot_reads']:.3f} s; the set-diff plan {phases['plan']:.3f} s, pypaimon's "
        f"own scanners reading the last snapshot's manifests (one per commit here) through the "
        f"manifest cache, each decoded on the planning thread where pypaimon hands every manifest "
        f"to a pool of one thread per core; reading the rows with pyarrow directly "
        f"{phases['read']:.3f} s, against {arrow['pypaimon']['median_s']:.3f} s for pypaimon's "
        f"reader on the same splits."
    )


def spark_idle(r: dict) -> str:
    idle = r["spark"]["idle_s3"]
    followers = [("push", "this source, push (`notifier=sqs`)"),
                 ("storage-per-trigger", "this source, checking storage on every trigger")]
    if "java_connector" in idle["modes"]:
        followers.append(("java_connector", f"Paimon's Java connector ({_java_versions(r)}, `s3a://`)"))
    def cost(mode: dict) -> str:
        return f"${mode['usd_per_month']:,.2f}" if "usd_per_month" in mode else "–"

    def kinds(mode: dict) -> str:
        by_kind = mode.get("s3_requests_by_kind", {})
        return ", ".join(f"{kind} {n:,}" for kind, n in sorted(by_kind.items(), key=lambda kv: -kv[1])) or "–"

    rows = [[label, f"{idle['modes'][key]['s3_requests_per_minute']:,.1f}", kinds(idle["modes"][key]),
             cost(idle["modes"][key])] for key, label in followers]
    rows.append(["(the SQS queue's long polls, per queue)", f"{idle['sqs_requests_per_minute']:.1f} SQS requests", "", ""])
    return table([f"an idle table on moto followed by ({idle['window_s']:.0f} s window, `processingTime=\"0 seconds\"`)",
                  "S3 requests / minute", "in the window, by kind", "USD per idle table-month"],
                 ["---", "---:", "---", "---:"], rows)


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


def native_table(r: dict) -> str:
    """Merged full-state reads with and without ``[native]`` (``benchmarks/native_bench.py``)."""
    n = r["native"]
    rows = []
    for engine, t in n["tables"].items():
        m = t["median_s"]
        rows.append([
            f"{engine} ({t['rows']:,} keys, {n['commits']} commits, {t['splits']} splits)",
            f"{m['feed [native]']:.2f}", f"{m['feed without [native]']:.2f}",
            f"{m['pypaimon batch read']:.2f}", f"{t['speedup_vs_pypaimon']}x",
        ])
    return (
        table(["table", "feed [native] s", "feed without [native] s", "pypaimon batch read s",
               "[native] vs pypaimon"], ["---", "---:", "---:", "---:", "---:"], rows)
        + f"\n\nMedians of {n['repeats']} runs each, interleaved ({n['machine']}); the three reads' "
        f"rows were compared (equal) before timing."
    )


def spark_merged(r: dict) -> str:
    """Primary-key reads in Spark against the Java connector (``benchmarks/spark_merged_bench.py``)."""
    m = r["spark_merged"]
    env = m["environment"]
    rows = []

    def add(label: str, cases: dict, case: str) -> None:
        ours, theirs = cases[f"source/{case}"]["rows_per_s"], cases[f"java_connector/{case}"]["rows_per_s"]
        rows.append([label, f"{ours / 1e6:.2f}", f"{theirs / 1e6:.2f}", f"{ours / theirs:.2f}×"])

    for engine, t in m["merged"].items():
        for sink in ("noop", "parquet"):
            add(f"{engine}, {t['keys']:,} keys, batch read (merged) → `{sink}`", t["cases"], f"batch/{sink}")
    pk = m["pk"]
    for mode, label, n in (("available_now", "`AvailableNow` (changelog)", pk["stream_rows"]),
                           ("batch", "batch read (merged)", pk["batch_rows"])):
        for sink in ("noop", "parquet"):
            add(f"primary key `input`, {n:,} rows, {label} → `{sink}`", pk["cases"], f"{mode}/{sink}")
    start = m["startup"]["cases"]
    stream = pk["cases"]["source/available_now/noop"]["median_s"]
    share = start["source"]["median_s"] / stream
    loads = [x for part in [*m["merged"].values(), pk] for x in (part["load_before"][0], part["load_after"][0])]
    equal = all(t["reads_equal"] for t in m["merged"].values()) and pk["reads_compared"].get("batch_equal") \
        and pk["reads_compared"].get("stream_equal")
    return (
        table(["M rows/s (median)", "this source" + (" with `[native]`" if env["native"] else ""),
               f"Java connector {env['java_connector']}", "ratio"], ["---", "---:", "---:", "---:"], rows)
        + "\n\n" + wrap(f"`AvailableNow` on a 10-row table, start to termination: this source "
        f"{start['source']['median_s']:.2f} s, the do-nothing Python source {start['python_ceiling']['median_s']:.2f} s, "
        f"the Java connector {start['java_connector']['median_s']:.2f} s. That fixed cost is "
        f"{share:.0%} of this source's {stream:.2f} s `AvailableNow` query of the primary-key table "
        f"into `noop`: start-up, not reading, decides that case. "
        f"Both readers read the same rows in every case ({'checked, equal' if equal else 'they DIFFER'}). "
        f"Medians of {pk['repeats']} interleaved rounds; 1-minute load {min(loads):.1f} to {max(loads):.1f} "
        f"on {env['cpus']} cores (the machine was shared); the run took {env['run_s'] / 60:.0f} minutes.")
    )


def integrity_table(r: dict) -> str:
    """S3 requests of the history checks, before and after (``benchmarks/integrity_cost.py``)."""
    n = r["integrity"]
    rows = [
        [label, f"{v['requests_per_snapshot']:.1f}", f"{v['idle_requests_per_check']:.2f}",
         f"{v['idle_requests_per_hour_default']:.0f}"]
        for label, v in (
            (f"before the checks ({n['before_ref']})", n["variants"]["before"]),
            ("with the checks", n["variants"]["after"]),
        )
    ]
    return (
        table(["consumer", "S3 requests / committed snapshot", "idle requests / safety check",
               "idle requests / hour (60 s checks)"], ["---", "---:", "---:", "---:"], rows)
        + f"\n\n{n['commits']} commits and {n['idle_seconds']:.0f} s idle on moto, both consumers in "
        f"the same run, counted at the server; the writer's own requests are subtracted."
    )


def warehouse_table(r: dict) -> str:
    """Many tables in one process (``benchmarks/warehouse_bench.py``): local, then on S3 (moto)."""
    n = r["warehouse"]
    rows = [
        [f"{row['tables']:,}", row["mode"], f"{row['p50_ms']:.1f}", f"{row['p99_ms']:.1f}",
         f"{row['max_ms']:.1f}", f"{row['idle_cpu_pct']:.1f}", str(row["threads"]), str(row["fds"]),
         str(row["inotify_instances"]), f"{row['peak_rss_mb']:.0f}",
         "-" if row["new_table_first_batch_ms"] is None else f"{row['new_table_first_batch_ms']:.1f}",
         f"{row['startup_s']:.2f}"]
        for row in n["rows"]
    ]
    text = (
        table(["tables", "mode", "p50 ms", "p99 ms", "max ms", "idle CPU %", "threads", "fds",
               "inotify", "peak RSS MB", "new table ms", "start-up s"],
              ["---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"],
              rows)
        + f"\n\n{n['commits']} commits to random tables, {n['idle_seconds']:.0f} s idle, "
        f"{n['machine']['cpus']} cores."
    )
    s3 = n.get("s3", {}).get("rows", [])
    if not s3:
        return text
    rows = [
        [f"{row['tables']:,}", row["mode"], row["wiring"], ms(row["p50_ms"]), ms(row["p99_ms"]),
         ms(row["p50_from_commit_ms"]), f"{row['idle_cpu_pct']:.1f}", str(row["threads"]),
         str(row["fds"]), f"{row['peak_rss_mb']:.0f}", count(row["s3_requests_per_table_hour"]),
         count(row["s3_warehouse_level_per_hour"]), count(row["sqs_requests_per_table_hour"]),
         "-" if row["new_table_first_batch_ms"] is None else ms(row["new_table_first_batch_ms"]),
         f"{row['startup_s']:.2f}"]
        for row in s3
    ]
    first = s3[0]
    discovery = next((row["discovery_interval_s"] for row in s3 if row["discovery_interval_s"]), None)
    text += "\n\nOn S3 (`--s3`, moto_server, one bucket, one SQS queue, one `SqsNotifier`):\n\n" + table(
        ["tables", "mode", "wiring", "p50 ms", "p99 ms", "p50 ms from commit", "idle CPU %",
         "threads", "fds", "peak RSS MB", "S3 req / idle table-hour", "listing req / hour",
         "SQS req / idle table-hour", "new table ms", "start-up s"],
        ["---:", "---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:",
         "---:", "---:", "---:", "---:"],
        rows,
    )
    text += (
        f"\n\n{first['commits']} commits to random tables, {first['idle_seconds']:.0f} s idle, "
        f"`reconcile_interval` 60 s (the default)"
        + (f", `discovery_interval` {discovery:.0f} s (the default is 60)" if discovery else "")
        + "; S3 requests per table-hour include the listing's."
    )
    return text

BLOCKS: dict[str, Callable[[dict], str]] = {
    "core": core_table,
    "core-summary": core_summary,
    "headline": headline,
    "s3": s3_readme,
    "s3-latency": s3_latency,
    "s3-idle": s3_idle,
    "s3-idle-cost": s3_idle_cost,
    "s3-wake": s3_wake,
    "s3-stages": s3_stages,
    "catchup-phases": catchup_phases,
    "s3-targets": s3_targets,
    "idle-pypaimon-s3": idle_pypaimon_s3,
    "spark-vs-java": spark_vs_java,
    "spark-java-status": spark_java_status,
    "spark-targets": spark_targets,
    "spark-startup-parts": spark_startup_parts,
    "spark-long-running": spark_long_running,
    "spark-latency": spark_latency,
    "spark-sockets": spark_sockets,
    "spark-consumer-commit": spark_consumer_commit,
    "spark-idle": spark_idle,
    "reliability": reliability,
    "catchup": catchup,
    "native": native_table,
    "spark-merged": spark_merged,
    "spark-runner": spark_runner,
    "integrity": integrity_table,
    "warehouse": warehouse_table,
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
