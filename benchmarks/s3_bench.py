"""S3 benchmark: push (ChangeFeed + SqsNotifier) vs poll (pypaimon's AsyncStreamingTableScan),
on a local ``moto_server`` (S3 and SQS over real HTTP), same run.

    python -m benchmarks.s3_bench [--commits 60] [--idle-seconds 600] [--tables 200 1000]
                                  [--wake-rate 20] [--wake-seconds 100]

1. Commit-to-batch latency. A writer process commits to an ``s3://`` append table at random
   intervals; two consumer processes follow it at once: (a) pypaimon's
   ``AsyncStreamingTableScan`` at its default 1 s poll, (b) ``ChangeFeed`` woken by
   ``SqsNotifier`` (S3 event notification → SQS, one prefix filter per table; default
   ``reconcile_interval`` of 60 s). Latency is measured from the moment the snapshot file became
   visible (the ``eventTime`` of its ``ObjectCreated:Copy`` event, which moto stamps when it
   performs the copy; read from a second, observing queue) and from the writer's commit
   timestamp (``timeMillis`` in the snapshot, taken when the commit starts).
2. Storage requests per idle table-hour. Each consumer also follows tables of its own that
   nobody writes to; over ``--idle-seconds`` their requests are counted twice: at the server
   (moto's request log, one line per HTTP request: the S3 bill) and in the consumer (a counting
   wrapper around the table's pypaimon FileIO, as ``core_bench.py`` does). SQS requests of the
   push consumer are counted at the server too; they are per queue, shared by every table.
3. Wake latency with many tables on one queue. One ``SqsNotifier`` in one process subscribes
   200 and 1,000 table URLs; a sender process puts S3 event messages straight into the queue
   (the ``ObjectCreated:Copy`` shape moto produces for ``.../snapshot/snapshot-N``, from a
   captured payload) at ``--wake-rate`` events per second in total, each table "committing"
   every ``tables / rate`` seconds at a random phase. Latency is send → the subscription's
   waiter running. Creating 1,000 real pypaimon tables on moto would take too long; the events
   are real-shaped, the tables are not. The rate is the same for every table count, so the
   table count is the only variable: moto's SQS costs O(queue depth) per request (it counts the
   queue's messages on every send), and above ~50 events/s on a small machine it falls behind
   and the backlog feeds on itself, which would measure moto, not the notifier.

Prints a markdown table and writes ``benchmarks/results/s3.json``. This is a measurement, not a
test: nothing here passes or fails on time. All processes share one machine (and its clock).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from benchmarks._common.s3_setup import BUCKET as BUCKET  # (re-exported: integrity_cost, warehouse_s3)
from benchmarks._common.s3_setup import SCHEMA as SCHEMA
from benchmarks._common.s3_setup import _drain as _drain
from benchmarks._common.s3_setup import _event_times as _event_times
from benchmarks._common.s3_setup import commit as commit
from benchmarks._common.s3_setup import open_catalog as open_catalog
from benchmarks.s3_latency import LABELS, MODES, consumer_main, measure_latency_and_idle, writer_main
from benchmarks.s3_wake import listener_main, measure_wake, sender_main  # (part 3)
from tests.s3_support import start_moto_server

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def report(latency: dict, wake: list[dict], commits: int) -> str:
    modes = latency["modes"]
    lines = [
        f"Commit-to-batch latency on moto_server, {commits} commits, same run:",
        "",
        "| consumer | snapshots | p50 ms | p99 ms | p50 ms from commit start | p99 ms from commit start |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        r = modes[mode]
        lines.append(
            f"| {r['label']} | {r['snapshots']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
            f"{r['p50_ms_from_commit']:.1f} | {r['p99_ms_from_commit']:.1f} |"
        )
    lines += [
        "",
        f"Requests while idle ({latency['idle_seconds']:.0f} s, scaled to one hour, per table):",
        "",
        "| idle table followed by | S3 requests / table-hour (server) | FileIO calls / table-hour (client) |",
        "|---|---:|---:|",
    ]
    for r in latency["idle_tables"].values():
        who = LABELS[r["consumer"]]
        if r["reconcile_interval_s"]:
            who += f", reconcile_interval={r['reconcile_interval_s']:.0f} s"
        lines.append(
            f"| {who} | {r['s3_requests_per_hour']:,.0f} | {r['fileio_calls_per_hour']:,.0f} |"
        )
    lines.append(
        f"| SqsNotifier long polls (per queue, shared by all its tables) | "
        f"{latency['sqs_requests_per_hour']:,.0f} SQS | |"
    )
    lines += [
        "",
        "Wake latency, one SqsNotifier and one queue for many tables (real-shaped S3 events sent "
        "straight to the queue; send → subscription wakes):",
        "",
        "| tables | events/s | s between events of a table | events | woken | p50 ms | p99 ms | max ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in wake:
        lines.append(
            f"| {r['tables']:,} | {r['messages_per_second']:.0f} | {r['commit_interval_s']:.0f} | "
            f"{r['messages']} | {r['woken']} | "
            f"{r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['max_ms']:.1f} |"
        )
    push, poll = modes["sqs"], modes["pypaimon"]
    idle = latency["idle_tables"]
    stages = push.get("stages_ms_p50")
    if stages:
        lines += [
            "",
            "Push latency, where it goes (p50 ms): visible → SQS event parsed "
            f"{stages['visible_to_detected']:.1f}; parsed → batch planned from S3 "
            f"{stages['detected_to_planned']:.1f}; planned → consumer "
            f"{stages['planned_to_received']:.1f}",
        ]
    idle_ratio = idle["idle_pypaimon"]["s3_requests_per_hour"] / max(
        idle["idle_push60"]["s3_requests_per_hour"], 1
    )
    lines += [
        "",
        f"p50 ratio pypaimon/push: {poll['p50_ms'] / push['p50_ms']:.0f}x; idle S3 requests ratio "
        f"pypaimon/push (reconcile 60 s): {idle_ratio:,.0f}x",
    ]
    return "\n".join(lines)


def main() -> None:
    commands = {
        "_consume": consumer_main, "_write": writer_main, "_listen": listener_main,
        "_send": sender_main,
    }
    if len(sys.argv) > 1 and sys.argv[1] in commands:
        return commands[sys.argv[1]](sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--idle-seconds", type=float, default=600)
    parser.add_argument("--tables", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--wake-rate", type=float, default=20.0,
                        help="events per second, all tables together, in the wake benchmark")
    parser.add_argument("--wake-seconds", type=float, default=100.0)
    args = parser.parse_args()
    os.makedirs(RESULTS, exist_ok=True)
    server = start_moto_server()
    os.environ.update(server.credentials_env)  # fake credentials for this server only
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS"):
        os.environ.pop(name, None)
    try:
        latency = measure_latency_and_idle(server, args.commits, args.idle_seconds)
        wake = [
            measure_wake(server, tables, args.wake_rate, args.wake_seconds)
            for tables in args.tables
        ]
    finally:
        server.close()
    table = report(latency, wake, args.commits)
    print(table)
    with open(os.path.join(RESULTS, "s3.json"), "w") as handle:
        json.dump(
            {"args": vars(args), "latency": latency, "wake": wake, "table": table}, handle, indent=1
        )


if __name__ == "__main__":
    main()
