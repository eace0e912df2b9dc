"""Core benchmark: push (paimon-feed) vs poll (pypaimon's AsyncStreamingTableScan), same run.

    python -m benchmarks.core_bench [--commits 150] [--idle-seconds 150] [--catch-up 1000]

1. Commit-to-batch latency. One writer process commits to a local append table at random
   intervals; four consumer processes follow it at once: (a) pypaimon's
   ``AsyncStreamingTableScan`` at its default 1 s poll, (b) ``ChangeFeed`` with
   ``LocalNotifier`` (inotify), (c) the same with ``LocalNotifier(step_ms=20)``, whose watcher
   wakes 50 times a second instead of 500, (d) ``ChangeFeed`` with ``PollingNotifier``. Latency is measured
   from the moment the snapshot file became visible (its mtime) and, separately, from the
   writer's commit timestamp (``timeMillis``, taken when the commit starts).
2. Storage operations while idle: after the last commit every consumer keeps following the
   table for ``--idle-seconds``; every FileIO call (existence checks, reads, listings) is counted
   and scaled to one hour, and the CPU time each consumer process spends (all its threads) is
   taken as a share of one core.
3. Catch-up: a consumer 1,000 snapshots behind; time until it has planned and read every row,
   for pypaimon's scan and for ChangeFeed (median of 3).

Prints a table, writes ``benchmarks/results/core.json`` and ``benchmarks/results/latency.png``.
This is a measurement, not a test: nothing here passes or fails on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time

import pyarrow as pa

from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

from benchmarks._common.counting import CountingFileIO
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.stats import arrivals, latencies

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
MODES = ("pypaimon", "local", "local-20ms", "poll")
LABELS = {
    "pypaimon": "pypaimon AsyncStreamingTableScan (poll 1 s)",
    "local": "paimon-feed LocalNotifier (inotify)",
    "local-20ms": "paimon-feed LocalNotifier(step_ms=20)",
    "poll": "paimon-feed PollingNotifier",
}
#: How long ``LocalNotifier``'s watcher sleeps between looks at its events, for the modes that
#: set it (the default is 2 ms).
STEP_MS = {"local-20ms": 20}


# --- tables and writes ----------------------------------------------------------------------------


def open_table(warehouse: str):
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    catalog.create_table("db.bench", Schema.from_pyarrow_schema(SCHEMA), True)
    return catalog.get_table("db.bench")


def commit(table, n: int, rows: int = 10) -> None:
    data = pa.table({"id": [n * rows + i for i in range(rows)], "payload": [f"r{n}"] * rows}, schema=SCHEMA)
    commit_arrow(table, data)


# --- consumer processes ---------------------------------------------------------------------------


async def _consume(mode: str, warehouse: str, last_snapshot: int, idle_seconds: float, ready: str) -> dict:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.bench")
    counter = CountingFileIO(table.file_io)
    table.file_io = counter
    received: dict[int, float] = {}
    done = asyncio.Event()

    async def follow_pypaimon() -> None:
        builder = table.new_stream_read_builder()
        scan = builder.new_streaming_scan()
        scan.next_snapshot_id = table.snapshot_manager().get_latest_snapshot().id + 1
        reader = builder.new_read()
        open(ready, "w").close()
        async for plan in scan.stream():
            received[plan.snapshot_id] = time.time()
            reader.to_arrow(plan.splits())
            if plan.snapshot_id >= last_snapshot:
                done.set()

    async def follow_feed() -> None:
        from paimon_feed import ChangeFeed
        from paimon_feed.notifiers.local import LocalNotifier

        notifier = LocalNotifier(step_ms=STEP_MS[mode]) if mode in STEP_MS else mode
        async with ChangeFeed(table, start="latest", notifier=notifier) as feed:
            open(ready, "w").close()
            async for batch in feed:
                received[batch.snapshot_id] = time.time()
                batch.to_arrow()
                await feed.commit(batch)
                if batch.snapshot_id >= last_snapshot:
                    done.set()

    task = asyncio.create_task(follow_pypaimon() if mode == "pypaimon" else follow_feed())
    await done.wait()
    await asyncio.sleep(2)  # let in-flight work settle before counting
    calls_before, cpu_before = counter.calls, time.process_time()
    await asyncio.sleep(idle_seconds)
    idle_calls, idle_cpu_s = counter.calls - calls_before, time.process_time() - cpu_before
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return {"mode": mode, "received": received, "idle_calls": idle_calls, "idle_cpu_s": idle_cpu_s,
            "idle_seconds": idle_seconds}


def consumer_main(argv: list[str]) -> None:
    mode, warehouse, last, idle, ready, out = argv
    result = asyncio.run(_consume(mode, warehouse, int(last), float(idle), ready))
    with open(out, "w") as handle:
        json.dump(result, handle)


def writer_main(argv: list[str]) -> None:
    warehouse, first, last, seed = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.bench")
    rng = random.Random(seed)
    for n in range(first, last + 1):
        time.sleep(rng.uniform(0.03, 0.17))
        commit(table, n)


# --- measurements ---------------------------------------------------------------------------------


def measure_latency_and_idle(commits: int, idle_seconds: float) -> dict:
    warehouse = scratch_dir("paimon-feed-bench-")
    table = open_table(warehouse)
    commit(table, 0)
    first, last = 2, commits + 1  # snapshot ids the writer will create
    procs, outs = {}, {}
    for mode in MODES:
        ready = os.path.join(warehouse, f"ready-{mode}")
        outs[mode] = os.path.join(warehouse, f"result-{mode}.json")
        procs[mode] = subprocess.Popen(
            [sys.executable, "-m", __spec__.name, "_consume", mode, warehouse, str(last), str(idle_seconds), ready, outs[mode]]
        )
        while not os.path.exists(ready):
            time.sleep(0.05)
    time.sleep(1.5)
    writer = subprocess.Popen([sys.executable, "-m", __spec__.name, "_write", warehouse, "1", str(commits), "7"])
    writer.wait()
    for proc in procs.values():
        proc.wait()

    snapshot_dir = os.path.join(warehouse, "db.db", "bench", "snapshot")
    visible, committed = {}, {}
    for snapshot_id in range(first, last + 1):
        path = os.path.join(snapshot_dir, f"snapshot-{snapshot_id}")
        visible[snapshot_id] = os.stat(path).st_mtime_ns / 1e9
        with open(path) as handle:
            committed[snapshot_id] = json.load(handle)["timeMillis"] / 1000

    results = {}
    for mode in MODES:
        with open(outs[mode]) as handle:
            raw = json.load(handle)
        received = {int(k): v for k, v in raw["received"].items()}
        arrival, missing = arrivals(received, first, last)
        from_visible = [1000 * (arrival[s] - visible[s]) for s in arrival]
        from_commit = [1000 * (arrival[s] - committed[s]) for s in arrival]
        results[mode] = {
            "label": LABELS[mode],
            "snapshots": len(arrival),
            "missing": missing,
            **latencies(from_visible, from_commit),
            "idle_calls": raw["idle_calls"],
            "idle_seconds": raw["idle_seconds"],
            "idle_calls_per_hour": raw["idle_calls"] * 3600 / raw["idle_seconds"],
            "idle_cpu_percent": 100 * raw["idle_cpu_s"] / raw["idle_seconds"],
        }
    return results


def _read_all(reader, plans) -> int:
    return sum(reader.to_arrow(plan.splits()).num_rows for plan in plans)


async def pypaimon_catch_up(table, last_snapshot: int, expected_rows: int, *, include_row_kind: bool = False,
                            diff_catch_up: bool = True, on_rows=None) -> tuple[float, int]:
    """pypaimon's ``AsyncStreamingTableScan`` from snapshot 1 until ``last_snapshot`` (or every
    expected row) is planned and read: (seconds, rows). More than 10 snapshots behind, its
    diff catch-up plans the state at the latest snapshot in one batch; ``diff_catch_up=False``
    switches that off (every snapshot's changes). ``on_rows`` sees every plan's rows."""
    started = time.perf_counter()
    builder = table.new_stream_read_builder().with_include_row_kind(include_row_kind)
    scan = builder.new_streaming_scan()
    if not diff_catch_up:
        scan._diff_threshold = last_snapshot + 1
    scan.next_snapshot_id = 1
    reader = builder.new_read()
    rows = 0
    async for plan in scan.stream():
        data = reader.to_arrow(plan.splits())
        rows += data.num_rows
        if on_rows is not None:
            on_rows(data)
        if plan.snapshot_id is None or plan.snapshot_id >= last_snapshot or rows >= expected_rows:
            break
    return time.perf_counter() - started, rows


async def feed_catch_up(
    table, last_snapshot: int, threshold: int, on_batch=None, **options
) -> tuple[float, int]:
    """A ``ChangeFeed`` from the earliest snapshot until ``last_snapshot`` is read: (seconds,
    rows). ``on_batch`` sees every batch after it is read."""
    from paimon_feed import ChangeFeed

    started = time.perf_counter()
    rows = 0
    options = {"max_pending": 16, **options}
    async with ChangeFeed(table, start="earliest", catch_up_threshold=threshold, **options) as feed:
        async for batch in feed:
            rows += batch.to_arrow().num_rows
            if on_batch is not None:
                on_batch(feed, batch)
            if batch.snapshot_id >= last_snapshot:
                break
    return time.perf_counter() - started, rows


def measure_catch_up(behind: int, repeats: int = 3) -> dict:
    warehouse = scratch_dir("paimon-feed-catchup-")
    table = open_table(warehouse)
    for n in range(behind):
        commit(table, n, rows=5)
    expected_rows = behind * 5
    runs = {
        "pypaimon": lambda: pypaimon_catch_up(table, behind, expected_rows),
        "paimon-feed catch-up batch": lambda: feed_catch_up(table, behind, 10),
        "paimon-feed one batch per snapshot": lambda: feed_catch_up(table, behind, 10**9),
    }
    results = {}
    for name, make in runs.items():
        times, rows = [], None
        for _ in range(repeats):
            elapsed, rows = asyncio.run(make())
            times.append(elapsed)
        results[name] = {"median_s": statistics.median(times), "runs_s": times, "rows": rows, "expected_rows": expected_rows}
    return results


# --- report ---------------------------------------------------------------------------------------


def draw(latency: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(MODES), figsize=(4.4 * len(MODES), 3.8), sharey=False)
    for axis, mode in zip(axes, MODES):
        values = latency[mode]["latency_ms_from_visible"]
        axis.hist(values, bins=40, color={"pypaimon": "#999999", "local": "#1f77b4", "local-20ms": "#2ca02c", "poll": "#ff7f0e"}[mode])
        axis.axvline(latency[mode]["p50_ms"], color="black", linestyle="--", linewidth=1)
        axis.set_title(f"{LABELS[mode]}\np50 {latency[mode]['p50_ms']:.1f} ms, p99 {latency[mode]['p99_ms']:.1f} ms", fontsize=9)
        axis.set_xlabel("snapshot visible → batch delivered (ms)")
        axis.set_ylabel("snapshots")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def report(latency: dict, catch_up: dict) -> str:
    lines = [
        "| consumer | snapshots | p50 ms | p99 ms | p50 ms from commit start | storage ops / idle hour | idle CPU, % of a core |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        r = latency[mode]
        lines.append(
            f"| {r['label']} | {r['snapshots']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
            f"{r['p50_ms_from_commit']:.1f} | {r['idle_calls_per_hour']:,.0f} | {r['idle_cpu_percent']:.2f} |"
        )
    base = latency["pypaimon"]
    lines.append("")
    lines.append(
        f"p50 ratio pypaimon/inotify: {base['p50_ms'] / latency['local']['p50_ms']:.0f}x; "
        f"idle storage ops ratio pypaimon/push: "
        f"{base['idle_calls_per_hour'] / max(latency['local']['idle_calls_per_hour'], 1):.0f}x"
    )
    lines.append("")
    lines.append("| catch-up, 1 consumer behind | median s | rows read | expected |")
    lines.append("|---|---:|---:|---:|")
    for name, r in catch_up.items():
        lines.append(f"| {name} | {r['median_s']:.2f} | {r['rows']} | {r['expected_rows']} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_consume":
        return consumer_main(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "_write":
        return writer_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--idle-seconds", type=float, default=150)
    parser.add_argument("--catch-up", type=int, default=1000)
    args = parser.parse_args()
    os.makedirs(RESULTS, exist_ok=True)
    latency = measure_latency_and_idle(args.commits, args.idle_seconds)
    catch_up = measure_catch_up(args.catch_up)
    table = report(latency, catch_up)
    print(table)
    draw(latency, os.path.join(RESULTS, "latency.png"))
    with open(os.path.join(RESULTS, "core.json"), "w") as handle:
        json.dump({"commits": args.commits, "latency": latency, "catch_up": catch_up, "table": table}, handle, indent=1)


if __name__ == "__main__":
    main()
