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
import asyncio
import copy
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from urllib.parse import quote_plus, unquote

import pyarrow as pa

from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
PAYLOADS = os.path.join(ROOT, "tests", "notifiers", "payloads", "s3_direct_commits.json")

from benchmarks._common.counting import CountingFileIO
from benchmarks._common.s3_costs import SQS_REQUEST, s3_request_kind, usd_per_month  # (S3 request kinds and prices)
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.stats import arrivals, percentile
from tests.s3_support import MotoServer, s3_catalog_options, start_moto_server

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
BUCKET = "bench-lake"
LATENCY_TABLE = "bench"
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


# --- tables and writes ----------------------------------------------------------------------------


def commit(table, n: int, rows: int = 10) -> None:
    data = pa.table(
        {"id": [n * rows + i for i in range(rows)], "payload": [f"r{n}"] * rows}, schema=SCHEMA
    )
    commit_arrow(table, data)


def open_catalog(options: dict):
    from pypaimon import CatalogFactory

    return CatalogFactory.create(options)


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


# --- consumer processes ---------------------------------------------------------------------------


async def _wait_for_file(path: str) -> None:
    while not os.path.exists(path):
        await asyncio.sleep(0.1)


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


# --- 1 and 2: latency and idle requests -----------------------------------------------------------


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


def _drain(server: MotoServer, queue_url: str) -> list[dict]:
    sqs = server.client("sqs")
    bodies = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            return bodies
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


def _event_times(bodies: list[dict]) -> dict[str, dict[int, float]]:
    """table -> snapshot id -> epoch seconds of its ObjectCreated event (moto's clock, ms
    precision)."""
    times: dict[str, dict[int, float]] = {}
    for body in bodies:
        for record in body.get("Records", []):
            key = record["s3"]["object"]["key"].replace("%2F", "/")
            match = re.search(r"db\.db/([^/]+)/snapshot/snapshot-([0-9]+)$", key)
            if match and record["eventName"].startswith("ObjectCreated"):
                stamp = datetime.strptime(record["eventTime"], "%Y-%m-%dT%H:%M:%S.%fZ")
                stamp = stamp.replace(tzinfo=timezone.utc).timestamp()
                times.setdefault(match.group(1), {})[int(match.group(2))] = stamp
    return times


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
            "latency_ms_from_visible": from_visible,
            "latency_ms_from_commit": from_commit,
            "p50_ms": statistics.median(from_visible),
            "p99_ms": percentile(from_visible, 0.99),
            "p50_ms_from_commit": statistics.median(from_commit),
            "p99_ms_from_commit": percentile(from_commit, 0.99),
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


# --- 3: wake latency with many tables on one queue -----------------------------------------------


def _template() -> dict:
    with open(PAYLOADS) as handle:
        bodies = json.load(handle)["bodies"]
    for body in bodies:
        if "ObjectCreated:Copy" in body and "snapshot%2Fsnapshot-" in body:
            return json.loads(body)
    raise RuntimeError(f"no snapshot ObjectCreated:Copy event in {PAYLOADS}")


def snapshot_event(template: dict, table_index: int, snapshot_id: int) -> str:
    """The S3 event moto sends for pypaimon's snapshot rename, for table ``w<i>``."""
    event = copy.deepcopy(template)
    record = event["Records"][0]
    record["eventTime"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    record["s3"]["bucket"] = {"name": BUCKET, "arn": f"arn:aws:s3:::{BUCKET}"}
    key = f"wh/db.db/w{table_index}/snapshot/snapshot-{snapshot_id}"
    record["s3"]["object"]["key"] = quote_plus(key)
    return json.dumps(event)


def table_url(table_index: int) -> str:
    return f"s3://{BUCKET}/wh/db.db/w{table_index}"


async def _listen(config: dict) -> dict:
    from paimon_feed.notifiers.sqs import SqsNotifier

    wakes: list[tuple[int, int, float]] = []
    notifier = SqsNotifier(config["queue_url"], endpoint_url=config["endpoint_url"])

    async def wait_on(index: int, subscription) -> None:
        while True:
            wake = await subscription.wait(None)
            if wake.max_snapshot_id is not None:
                wakes.append((index, wake.max_snapshot_id, time.time()))

    async with notifier:
        tasks = [
            asyncio.create_task(wait_on(i, notifier.subscribe(table_url(i))))
            for i in range(config["tables"])
        ]
        await asyncio.sleep(2)
        open(config["ready"], "w").close()
        await _wait_for_file(config["sent"])
        with open(config["sent"]) as handle:
            expected = json.load(handle)["messages"]
        deadline = time.time() + 60
        while len(wakes) < expected and time.time() < deadline:
            await asyncio.sleep(0.1)
        metrics = notifier.metrics()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"wakes": wakes, "notifier": metrics}


def listener_main(argv: list[str]) -> None:
    config = json.loads(argv[0])
    result = asyncio.run(_listen(config))
    with open(config["out"], "w") as handle:
        json.dump(result, handle)


def sender_main(argv: list[str]) -> None:
    config = json.loads(argv[0])
    server = MotoServer(port=config["port"])
    template = _template()
    tables, interval, seconds = config["tables"], config["commit_interval"], config["seconds"]
    rng = random.Random(11)
    rounds = max(1, int(seconds // interval))
    phases = [rng.uniform(0, interval) for _ in range(tables)]
    schedule = sorted(
        (phases[i] + r * interval, i, r + 1) for i in range(tables) for r in range(rounds)
    )
    sent: list[tuple[int, int, float, float]] = []
    lock = threading.Lock()
    position = iter(schedule)
    started = time.time() + 0.5

    def worker() -> None:
        client = server.client("sqs")
        while True:
            with lock:
                item = next(position, None)
            if item is None:
                return
            offset, index, snapshot_id = item
            delay = started + offset - time.time()
            if delay > 0:
                time.sleep(delay)
            body = snapshot_event(template, index, snapshot_id)
            at = time.time()
            client.send_message(QueueUrl=config["queue_url"], MessageBody=body)
            with lock:
                sent.append((index, snapshot_id, at, at - (started + offset)))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    behind = max((late for *_, late in sent), default=0.0)
    with open(config["out"], "w") as handle:
        json.dump({"sent": [s[:3] for s in sent], "max_behind_schedule_s": behind}, handle)
    with open(config["sent"], "w") as handle:
        json.dump({"messages": len(sent)}, handle)


def measure_wake(server: MotoServer, tables: int, rate: float, seconds: float) -> dict:
    commit_interval = tables / rate
    queue = server.create_queue(f"bench-wake-{tables}")
    workdir = scratch_dir(f"paimon-feed-wake-{tables}-")
    names = ("ready", "sent", "listen.json", "send.json")
    paths = {name: os.path.join(workdir, name) for name in names}
    listener = subprocess.Popen(
        [
            sys.executable, "-m", __spec__.name, "_listen",
            json.dumps({
                "queue_url": queue.queue_url, "endpoint_url": server.endpoint_url,
                "tables": tables, "ready": paths["ready"], "sent": paths["sent"],
                "out": paths["listen.json"],
            }),
        ]
    )
    while not os.path.exists(paths["ready"]):
        if listener.poll() is not None:
            raise RuntimeError(f"wake listener exited with {listener.returncode}")
        time.sleep(0.1)
    sender = subprocess.Popen(
        [
            sys.executable, "-m", __spec__.name, "_send",
            json.dumps({
                "port": server.port, "queue_url": queue.queue_url, "tables": tables,
                "commit_interval": commit_interval, "seconds": seconds, "sent": paths["sent"],
                "out": paths["send.json"],
            }),
        ]
    )
    sender.wait()
    listener.wait(timeout=180)
    with open(paths["send.json"]) as handle:
        sent = json.load(handle)
    with open(paths["listen.json"]) as handle:
        heard = json.load(handle)
    send_times = {(i, s): at for i, s, at in sent["sent"]}
    woke = {}
    for index, snapshot_id, at in heard["wakes"]:
        woke.setdefault((index, snapshot_id), at)
    latencies = [1000 * (woke[k] - send_times[k]) for k in send_times if k in woke]
    return {
        "tables": tables,
        "commit_interval_s": commit_interval,
        "messages_per_second": rate,
        "messages": len(send_times),
        "woken": len(latencies),
        "missing": len(send_times) - len(latencies),
        "p50_ms": statistics.median(latencies) if latencies else None,
        "p99_ms": percentile(latencies, 0.99) if latencies else None,
        "max_ms": max(latencies) if latencies else None,
        "sender_max_behind_schedule_s": sent["max_behind_schedule_s"],
        "notifier": heard["notifier"],
        "latency_ms": latencies,
    }


# --- report ---------------------------------------------------------------------------------------


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
