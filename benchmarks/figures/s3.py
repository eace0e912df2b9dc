"""Figure blocks of the S3 benchmark (s3_bench.py, on moto_server)."""

from __future__ import annotations

from benchmarks._common.figures import count, met, ms, table, wrap
from benchmarks._common.s3_costs import MONTH_S, S3_USD_PER_1000, usd_per_month  # (the prices the benchmarks use)


def s3_modes(r: dict) -> tuple[dict, dict, dict]:
    latency = r["s3"]["latency"]
    return latency["modes"]["pypaimon"], latency["modes"]["sqs"], latency["idle_tables"]


def s3_readme(r: dict) -> str:
    pypaimon, sqs, idle = s3_modes(r)
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
    pypaimon, sqs, _idle = s3_modes(r)
    rows = [
        [label, ms(mode["p50_ms"]), ms(mode["p99_ms"]), ms(mode["p50_ms_from_commit"]), ms(mode["p99_ms_from_commit"])]
        for label, mode in (("pypaimon `AsyncStreamingTableScan` (poll 1 s)", pypaimon), ("`ChangeFeed` + `SqsNotifier`", sqs))
    ]
    return table(
        ["consumer", "p50 ms", "p99 ms", "p50 ms from commit start", "p99 ms from commit start"],
        ["---", "---:", "---:", "---:", "---:"], rows,
    )


def s3_idle(r: dict) -> str:
    _pypaimon, _sqs, idle = s3_modes(r)
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
    _pypaimon, _sqs, idle = s3_modes(r)
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
    stages = s3_modes(r)[1]["stages_ms_p50"]
    return wrap(
        f"Where the push path's {ms(s3_modes(r)[1]['p50_ms'])} ms go (p50): the snapshot's event "
        f"is parsed {stages['visible_to_detected']:.1f} ms after the file became visible, planning "
        f"the batch from S3 takes {stages['detected_to_planned']:.1f} ms (three sequential GETs on "
        f"moto: the snapshot file, the manifest list and the manifest), handing it to the consumer "
        f"{stages['planned_to_received']:.1f} ms."
    )


def s3_targets(r: dict) -> str:
    _pypaimon, sqs, idle = s3_modes(r)
    busiest = max(r["s3"]["wake"], key=lambda run: run["tables"])
    push60 = idle["idle_push60"]["s3_requests_per_hour"]
    rows = [
        ["SQS push p50 <= 50 ms on moto", f"{ms(sqs['p50_ms'])} ms (p99 {sqs['p99_ms']:.0f} ms)",
         met(sqs["p50_ms"] <= 50)],
        ["idle S3 requests <= 60 per table-hour", f"{count(push60)} at the default `reconcile_interval=60`",
         met(push60 <= 60)],
        [f"{count(busiest['tables'])} tables on one queue, p99 wake <= 250 ms", f"{busiest['p99_ms']:.0f} ms",
         met(busiest["p99_ms"] <= 250)],
    ]
    return table(["target", "measured", ""], ["---", "---", "---"], rows)


def idle_pypaimon_s3(r: dict) -> str:
    """The one idle-cost figure: S3 requests per idle table-hour of pypaimon's poll, counted by
    the server (moto) in s3_bench.py."""
    return count(r["s3"]["latency"]["idle_tables"]["idle_pypaimon"]["s3_requests_per_hour"])
