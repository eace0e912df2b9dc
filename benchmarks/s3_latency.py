"""S3 benchmark, parts 1 and 2: commit-to-batch latency of pypaimon's poll and of push
(``ChangeFeed`` + ``SqsNotifier``), then storage requests per idle table-hour, counted at the
server and in the consumer; its consumer and writer processes (run by :mod:`benchmarks.s3_bench`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from urllib.parse import unquote

from benchmarks._common.counting import CountingFileIO
from benchmarks._common.s3_costs import SQS_REQUEST, s3_request_kind, usd_per_month  # (S3 request kinds and prices)
from benchmarks._common.s3_setup import (
    BUCKET,
    LATENCY_TABLE,
    SCHEMA,
    _drain,
    _event_times,
    _wait_for_file,
    commit,
    open_catalog,
)
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.stats import arrivals, latencies
from tests.s3_support import MotoServer, s3_catalog_options

IDLE_TABLES = {  # table -> (consumer mode, ChangeFeed reconcile_interval)
    "idle_pypaimon": ("pypaimon", None),
    "idle_push60": ("sqs", 60.0),
    "idle_push120": ("sqs", 120.0),
}
MODES = ("pypaimon", "sqs")
LABELS = {
    "pypaimon": "pypaimon AsyncStreamingTableScan (poll 1 s)",
    "sqs": "paimon-feed ChangeFeed + SqsNotifier",
}


def writer_main(argv: list[str]) -> None:
    """Commit ``first..last`` at random intervals, to the latency tables in turn."""
    options, first, last, seed = json.loads(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    names = json.loads(argv[4]) if len(argv) > 4 else [LATENCY_TABLE]
    catalog = open_catalog(options)
    tables = [catalog.get_table(f"db.{name}") for name in names]
    rng = random.Random(seed)
    for n in range(first, last + 1):
        time.sleep(rng.uniform(0.2, 1.0) / len(tables) ** 0.5)
        commit(tables[(n - first) % len(tables)], n)


def latency_tables(count: int) -> list[str]:
    """Names of the tables the writer commits to: ``bench``, ``bench1``, ``bench2``, ..."""
    return [LATENCY_TABLE] + [f"{LATENCY_TABLE}{i}" for i in range(1, count)]


async def _consume(config: dict) -> dict:
    mode, signals = config["mode"], config["signals"]
    catalog = open_catalog(config["catalog"])
    followed = config["latency_tables"]
    names = followed + [name for name, (m, _) in IDLE_TABLES.items() if m == mode]
    tables, counters = {}, {}
    for name in names:
        table = catalog.get_table(f"db.{name}")
        counters[name] = table.file_io = CountingFileIO(table.file_io)
        tables[name] = table
    # per table: snapshot id -> arrival; ChangeFeed: (detected_at, planned_at)
    received: dict[str, dict[int, float]] = {name: {} for name in followed}
    stages: dict[str, dict[int, tuple[float, float]]] = {name: {} for name in followed}
    caught_up = asyncio.Event()
    waiting = set(followed)

    def on_batch(name: str, snapshot_id: int, batch=None) -> None:
        if name in received:
            received[name][snapshot_id] = time.time()
            if batch is not None:
                stages[name][snapshot_id] = (batch.detected_at, batch.planned_at)
            if snapshot_id >= config["last_snapshot"][name]:
                waiting.discard(name)
                if not waiting:
                    caught_up.set()

    async def follow_pypaimon(name: str) -> None:
        table = tables[name]
        builder = table.new_stream_read_builder()
        scan = builder.new_streaming_scan()  # poll_interval_ms=1000, pypaimon's default
        scan.next_snapshot_id = table.snapshot_manager().get_latest_snapshot().id + 1
        reader = builder.new_read()
        async for plan in scan.stream():
            on_batch(name, plan.snapshot_id)
            reader.to_arrow(plan.splits())

    async def follow_feed(name: str, notifier, reconcile_interval: float) -> None:
        from paimon_feed import ChangeFeed

        async with ChangeFeed(
            tables[name], start="latest", notifier=notifier, reconcile_interval=reconcile_interval
        ) as feed:
            files = feed._planner.files  # whole metadata files in one GET, past the FileIO
            if files.one_request:
                files.read = counters[name].counted(files.read)
            async for batch in feed:
                on_batch(name, batch.snapshot_id, batch)
                batch.to_arrow()
                await feed.commit(batch)

    notifier = None
    if mode == "pypaimon":
        tasks = [asyncio.create_task(follow_pypaimon(name)) for name in names]
    else:
        from paimon_feed.notifiers.sqs import SqsNotifier

        notifier = SqsNotifier(config["queue_url"], endpoint_url=config["endpoint_url"])
        intervals = {n: r for n, (m, r) in IDLE_TABLES.items() if m == mode}
        intervals.update({name: 60.0 for name in followed})  # ChangeFeed's default
        tasks = [
            asyncio.create_task(follow_feed(name, notifier, intervals[name])) for name in names
        ]
    await asyncio.sleep(3)  # let every follower start before the writer does
    open(os.path.join(signals, f"ready-{mode}"), "w").close()
    await caught_up.wait()
    open(os.path.join(signals, f"caught-up-{mode}"), "w").close()

    await _wait_for_file(os.path.join(signals, "idle-start"))
    before = {name: counter.calls for name, counter in counters.items()}
    started = time.time()
    await _wait_for_file(os.path.join(signals, "idle-end"))
    idle_seconds = time.time() - started
    idle_calls = {name: counters[name].calls - before[name] for name in counters}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    notifier_metrics = None
    if notifier is not None:
        notifier_metrics = notifier.metrics()
        await notifier.close()
    return {
        "mode": mode,
        "received": received,
        "stages": stages,
        "idle_fileio_calls": idle_calls,
        "idle_seconds": idle_seconds,
        "notifier": notifier_metrics,
    }


def consumer_main(argv: list[str]) -> None:
    config = json.loads(argv[0])
    result = asyncio.run(_consume(config))
    with open(config["out"], "w") as handle:
        json.dump(result, handle)


def _snapshot_prefix(table: str) -> str:
    return f"wh/db.db/{table}/snapshot/snapshot-"


def _notify(
    server: MotoServer, feed_arn: str, observer_arn: str, followed: list[str], observed: list[str]
) -> None:
    """One prefix rule per table for the feed's queue (the recommended wiring), and one for the
    observer. AWS rejects overlapping rules of two queues (it wants SNS fan-out); moto does not."""
    configs = [
        {
            "QueueArn": feed_arn,
            "Events": ["s3:ObjectCreated:*"],
            "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": _snapshot_prefix(t)}]}},
        }
        for t in followed
    ]
    configs += [
        {
            "QueueArn": observer_arn,
            "Events": ["s3:ObjectCreated:*"],
            "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": _snapshot_prefix(t)}]}},
        }
        for t in observed
    ]
    server.client("s3").put_bucket_notification_configuration(
        Bucket=BUCKET, NotificationConfiguration={"QueueConfigurations": configs}
    )


def _stages(stages: dict, received: dict, visible: dict) -> dict:
    """Where a pushed snapshot's latency goes: visible -> hint parsed (SQS), hint -> batch
    planned (reading the snapshot and manifests from S3), planned -> in the consumer's hands.
    Each argument is keyed by table, then by snapshot id."""
    parts = {"visible_to_detected": [], "detected_to_planned": [], "planned_to_received": []}
    for table, by_snapshot in stages.items():
        seen, got = visible.get(table, {}), received.get(table, {})
        for key, (detected, planned) in by_snapshot.items():
            snapshot_id = int(key)
            if snapshot_id not in seen or key not in got:
                continue
            parts["visible_to_detected"].append(1000 * (detected - seen[snapshot_id]))
            parts["detected_to_planned"].append(1000 * (planned - detected))
            parts["planned_to_received"].append(1000 * (got[key] - planned))
    return {name: statistics.median(values) for name, values in parts.items() if values}


def _count_requests(log_lines: list[str]) -> dict:
    counts = {name: 0 for name in IDLE_TABLES}
    kinds: dict[str, Counter] = {name: Counter() for name in IDLE_TABLES}
    sqs = 0
    for line in log_lines:
        if SQS_REQUEST.search(line):
            sqs += 1
            continue
        line = unquote(line)  # a LIST names its table in the (escaped) prefix of its query
        for name in IDLE_TABLES:
            if f"db.db/{name}/" in line:
                counts[name] += 1
                kinds[name][s3_request_kind(line) or "other"] += 1
    return {"s3_by_table": counts, "s3_kinds_by_table": kinds, "sqs": sqs}


def measure_latency_and_idle(
    server: MotoServer,
    commits: int,
    idle_seconds: float,
    *,
    tables: int = 1,
    modes: tuple[str, ...] = MODES,
) -> dict:
    """Latency of ``commits`` commits spread over ``tables`` tables followed through one
    queue, then requests while idle, for each consumer of ``modes``."""
    names = latency_tables(tables)
    server.create_bucket(BUCKET)
    feed_queue = server.create_queue("bench-feed")
    observer = server.create_queue("bench-observer")
    options = s3_catalog_options(server, BUCKET)
    catalog = open_catalog(options)
    catalog.create_database("db", True)
    from pypaimon import Schema

    for name in [*names, *IDLE_TABLES]:
        catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA), True)
        commit(catalog.get_table(f"db.{name}"), 0)
    followed = names + [n for n, (m, _) in IDLE_TABLES.items() if m == "sqs"]
    _notify(server, feed_queue.queue_arn, observer.queue_arn, followed, names)
    _drain(server, feed_queue.queue_url)  # moto's s3:TestEvent
    _drain(server, observer.queue_url)
    # snapshot ids the writer will create: commit i goes to table i % tables
    last = {name: 1 + len(range(i, commits, tables)) for i, name in enumerate(names)}

    signals = scratch_dir("paimon-feed-s3-bench-")
    procs, outs = {}, {}
    for mode in modes:
        outs[mode] = os.path.join(signals, f"result-{mode}.json")
        config = {
            "mode": mode, "catalog": options, "queue_url": feed_queue.queue_url,
            "endpoint_url": server.endpoint_url, "last_snapshot": last, "signals": signals,
            "out": outs[mode], "latency_tables": names,
        }
        procs[mode] = subprocess.Popen([sys.executable, "-m", __spec__.name, "_consume", json.dumps(config)])
    for mode in modes:
        while not os.path.exists(os.path.join(signals, f"ready-{mode}")):
            _check_alive(procs)
            time.sleep(0.1)
    time.sleep(1.5)
    writer = subprocess.Popen(
        [sys.executable, "-m", __spec__.name, "_write", json.dumps(options), "1", str(commits), "7",
         json.dumps(names)]
    )
    writer.wait()
    for mode in modes:
        while not os.path.exists(os.path.join(signals, f"caught-up-{mode}")):
            _check_alive(procs)
            time.sleep(0.1)
    time.sleep(5)  # in-flight work settles, the last events are consumed
    observed = _drain(server, observer.queue_url)

    log_offset = server.log_path.stat().st_size
    open(os.path.join(signals, "idle-start"), "w").close()
    idle_started = time.time()
    print(f"idle phase: {idle_seconds:.0f} s ...", file=sys.stderr, flush=True)
    time.sleep(idle_seconds)
    open(os.path.join(signals, "idle-end"), "w").close()
    server_idle_seconds = time.time() - idle_started
    with open(server.log_path, "rb") as handle:
        handle.seek(log_offset)
        window = handle.read().decode(errors="replace").splitlines()
    for proc in procs.values():
        proc.wait(timeout=120)
    server_counts = _count_requests(window)

    committed = {}
    for name in names:
        manager = catalog.get_table(f"db.{name}").snapshot_manager()
        committed[name] = {
            i: manager.get_snapshot_by_id(i).time_millis / 1000 for i in range(2, last[name] + 1)
        }
    visible = _event_times(observed)

    results: dict = {
        "modes": {}, "idle_tables": {}, "idle_seconds": server_idle_seconds, "tables": tables,
    }
    raw = {}
    for mode in modes:
        with open(outs[mode]) as handle:
            raw[mode] = json.load(handle)
        from_visible, from_commit, delivered, missing_total = [], [], 0, 0
        for name in names:
            received = {int(k): v for k, v in raw[mode]["received"][name].items()}
            arrival, missing = arrivals(received, 2, last[name])
            seen = visible.get(name, {})
            from_visible += [1000 * (arrival[s] - seen[s]) for s in arrival if s in seen]
            from_commit += [1000 * (arrival[s] - committed[name][s]) for s in arrival]
            delivered += len(arrival)
            missing_total += missing
        results["modes"][mode] = {
            "label": LABELS[mode],
            "snapshots": delivered,
            "missing": missing_total,
            "visible_times_known": len(from_visible),
            **latencies(from_visible, from_commit),
            "notifier": raw[mode]["notifier"],
        }
        if any(raw[mode]["stages"].values()):
            stages = _stages(raw[mode]["stages"], raw[mode]["received"], visible)
            results["modes"][mode]["stages_ms_p50"] = stages
    for name, (mode, reconcile_interval) in IDLE_TABLES.items():
        if mode not in raw or idle_seconds <= 0:
            continue
        consumer_seconds = raw[mode]["idle_seconds"]
        results["idle_tables"][name] = {
            "consumer": mode,
            "reconcile_interval_s": reconcile_interval,
            "s3_requests": server_counts["s3_by_table"][name],
            "s3_requests_per_hour": server_counts["s3_by_table"][name] * 3600 / server_idle_seconds,
            "s3_requests_by_kind": dict(server_counts["s3_kinds_by_table"][name]),
            "usd_per_month": usd_per_month(server_counts["s3_kinds_by_table"][name], server_idle_seconds),
            "fileio_calls": raw[mode]["idle_fileio_calls"][name],
            "fileio_calls_per_hour": raw[mode]["idle_fileio_calls"][name] * 3600 / consumer_seconds,
        }
    results["sqs_requests_idle"] = server_counts["sqs"]
    results["sqs_requests_per_hour"] = server_counts["sqs"] * 3600 / server_idle_seconds
    return results


def _check_alive(procs: dict) -> None:
    for mode, proc in procs.items():
        if proc.poll() is not None:
            raise RuntimeError(f"consumer {mode} exited with {proc.returncode}")


if __name__ == "__main__":  # its consumer and writer processes
    {"_consume": consumer_main, "_write": writer_main}[sys.argv[1]](sys.argv[2:])
