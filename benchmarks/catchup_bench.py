"""Catch-up benchmark: a consumer with a backlog, paimon-feed vs pypaimon's
``AsyncStreamingTableScan``, same run, same tables, interleaved.

    python -m benchmarks.catchup_bench [--snapshots 1000] [--s3-snapshots 1000]
                                       [--memory-snapshots 3000] [--repeats 3]
                                       [--local-repeats 11]
                                       [--delay-ms 20] [--sqs-tables 10] [--sqs-commits 100]

1. Catch-up of ``--snapshots`` local snapshots (5 rows each): time until every row is planned
   and read; pypaimon and paimon-feed alternate run by run (median of ``--local-repeats``).
   Then planning alone (no data read), both ways: what bounds the local ratio from below.
2. Catch-up on S3 (``moto_server``), every request delayed ``--delay-ms`` by the fault proxy
   (``tests/reliability/fault_proxy.py``) so the figures reflect round trips; requests counted
   at the proxy. The table is written locally and uploaded as it is (a Paimon table is its
   files; their paths are relative). At 20 ms a request pypaimon needs about 40 s per run for
   1,000 snapshots here (``--s3-snapshots``), the feed about 14 s.
3. ``to_arrow`` rows/s on the catch-up batch's splits: ``batch.to_arrow()`` vs pypaimon's
   ``TableRead.to_arrow`` on the same splits, alternating.
4. Commit → batch through SQS on moto with ``--sqs-tables`` tables on one queue: the machinery
   of ``s3_bench.py`` (its consumer and writer processes), with the writer committing to every
   table in turn.
5. A primary-key table (``changelog-producer=input``, 2 buckets) ``--pk-snapshots`` commits of
   ``--pk-rows`` rows behind, every commit after the first half rewriting earlier keys: the
   changes with row kinds (pypaimon's scan vs a ``ChangeFeed``, one batch per snapshot: a
   primary-key table has no set-diff catch-up), and the merged state at the last snapshot
   (pypaimon's batch read vs the feed's full batch). Both sides' rows are compared before
   anything is timed.
6. Memory while catching up ``--memory-snapshots`` local snapshots: RSS of a fresh process
   sampled every 50 ms, for pypaimon and for the feed (catch-up batches and one batch per
   snapshot), with the feed's cache sizes at the end. The table is written once and kept under
   ``$PAIMON_FEED_BENCH_DATA`` (default ``~/.cache/paimon-feed-bench``) for later runs.

Prints a table and writes ``benchmarks/results/catchup.json``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from benchmarks._common.catchup_setup import ROWS_PER_COMMIT as ROWS_PER_COMMIT  # (re-exported: the tests)
from benchmarks._common.catchup_setup import kept_warehouse, open_bench_table
from benchmarks.catchup_local import measure_catch_up, measure_phases, measure_planning, measure_to_arrow
from benchmarks.catchup_memory import MEMORY_MODES as MEMORY_MODES
from benchmarks.catchup_memory import measure_memory, memory_child
from benchmarks.catchup_primary_key import measure_primary_key
from benchmarks.catchup_s3 import measure_s3, measure_sqs

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def report(r: dict) -> str:
    local, s3, arrow, sqs, memory = r["local"], r["s3"], r["to_arrow"], r["sqs"], r["memory"]
    lines = [
        "| figure | pypaimon | paimon-feed | ratio | target |",
        "|---|---:|---:|---:|---|",
        f"| catch-up of {r['args']['snapshots']:,} snapshots, local (median s) | "
        f"{local['pypaimon']['median_s']:.2f} | {local['paimon-feed']['median_s']:.2f} | "
        f"{local['ratio']:.2f}× | ≤ 0.5× |",
        f"| the same on S3 (moto), {s3['delay_ms']:.0f} ms per request (median s) | "
        f"{s3['pypaimon']['median_s']:.1f} | {s3['paimon-feed']['median_s']:.1f} | "
        f"{s3['ratio']:.2f}× | ≤ 0.5× |",
        f"| S3 requests per catch-up | {s3['pypaimon']['requests']:,.0f} | "
        f"{s3['paimon-feed']['requests']:,.0f} | | |",
        f"| `to_arrow` on the catch-up batch ({arrow['files']:,} files, rows/s) | "
        f"{arrow['pypaimon']['rows_per_s']:,.0f} | {arrow['paimon-feed']['rows_per_s']:,.0f} | "
        f"{arrow['ratio']:.2f}× | ≥ 1.0× |",
        f"| planning the catch-up alone (median s) | {r['planning']['pypaimon']['median_s']:.2f} | "
        f"{r['planning']['paimon-feed']['median_s']:.2f} | {r['planning']['ratio']:.2f}× | |",
        f"| commit → batch via SQS, {sqs['tables']} tables on one queue, p50 / p99 ms | | "
        f"{sqs['p50_ms']:.1f} / {sqs['p99_ms']:.1f} | | ≤ 50 / ≤ 150 |",
    ]
    pk = r["primary_key"]
    for part, label in (("changes", "changes with row kinds"), ("state", "merged state")):
        lines.append(
            f"| primary key, {pk['snapshots']:,} commits of {pk['rows_per_commit']:,} rows: {label} (rows/s) | "
            f"{pk[part]['pypaimon']['rows_per_s']:,.0f} | {pk[part]['paimon-feed']['rows_per_s']:,.0f} | "
            f"{pk[part]['ratio']:.1f}× | |"
        )
    lines += [
        "",
        f"Memory catching up {r['args']['memory_snapshots']:,} snapshots (RSS of a fresh process, MiB):",
        "",
        "| consumer | s | start | peak | at 25 / 50 / 75 / 100 % of the run | growth over the 2nd half |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for result in memory.values():
        q = result["quarters_mib"]
        lines.append(
            f"| {result['label']} | {result['seconds']:.1f} | {result['start_mib']:.0f} | "
            f"{result['peak_mib']:.0f} | {q[1]:.0f} / {q[2]:.0f} / {q[3]:.0f} / {q[4]:.0f} | "
            f"{result['second_half_growth_mib']:+.0f} |"
        )
    feed = memory.get("per-snapshot", {})
    if "manifest_cache_entries" in feed:
        lines += [
            "",
            f"Caches at the end (one batch per snapshot): snapshots {feed['snapshot_cache_entries']:,} "
            f"of {feed['snapshot_cache_limit']:,}; manifests {feed['manifest_cache_entries']:,} of "
            f"{feed['manifest_cache_limits'][0]:,} entries, {feed['manifest_cache_bytes'] / 2**20:.1f} "
            f"of {feed['manifest_cache_limits'][1] / 2**20:.0f} MiB.",
        ]
    return "\n".join(lines)


def run(args) -> dict:
    """Every case at the sizes of ``args``; the results as the JSON holds them."""
    results: dict = {"args": vars(args)}
    local = kept_warehouse(args.snapshots)
    table = open_bench_table({"warehouse": local})
    print("local catch-up ...", file=sys.stderr, flush=True)
    results["local"] = measure_catch_up(table, args.snapshots, args.local_repeats)
    print("to_arrow ...", file=sys.stderr, flush=True)
    results["to_arrow"] = measure_to_arrow(table, args.snapshots, args.local_repeats)
    results["planning"] = measure_planning(table, args.snapshots, args.local_repeats)
    results["phases_s"] = measure_phases(table, args.snapshots, args.local_repeats)
    print("S3 catch-up ...", file=sys.stderr, flush=True)
    results["s3"] = measure_s3(kept_warehouse(args.s3_snapshots), args.s3_snapshots, args.repeats, args.delay_ms)
    print("SQS ...", file=sys.stderr, flush=True)
    results["sqs"] = measure_sqs(args.sqs_tables, args.sqs_commits)
    print("primary key ...", file=sys.stderr, flush=True)
    results["primary_key"] = measure_primary_key(args.pk_snapshots, args.pk_rows, args.repeats)
    print("memory ...", file=sys.stderr, flush=True)
    results["memory"] = measure_memory(kept_warehouse(args.memory_snapshots), args.memory_snapshots)
    results["table"] = report(results)
    return results


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=1000)
    # pypaimon takes ~40 s per run for 1,000 snapshots at 20 ms per request on moto here
    parser.add_argument("--s3-snapshots", type=int, default=1000)
    # The kept table is written once, by pypaimon's commits one after another, each slower than
    # the one before: here the first 1,000 took 25 s, the third 145 s (3,000 in about 4 minutes).
    parser.add_argument("--memory-snapshots", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    # local runs take about a second each and move by +-20% on a shared machine: more of them
    parser.add_argument("--local-repeats", type=int, default=11)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--sqs-tables", type=int, default=10)
    parser.add_argument("--sqs-commits", type=int, default=100)
    parser.add_argument("--pk-snapshots", type=int, default=40)
    parser.add_argument("--pk-rows", type=int, default=10_000)
    parser.add_argument("--out", default=os.path.join(RESULTS, "catchup.json"))
    return parser.parse_args(argv)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_build":
        print(kept_warehouse(int(sys.argv[2])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "_memory":
        return memory_child(sys.argv[2:])
    args = parse_args()
    results = run(args)
    print(results["table"])
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
