"""Warehouse benchmark: many local tables followed by one process, and the same on S3 (moto).

    python -m benchmarks.warehouse_bench [--sizes 10 100 1000] [--commits 200] [--idle-seconds 20]
    python -m benchmarks.warehouse_bench --s3 [--sizes 10 100] [--commits 100] [--idle-seconds 120]
                                         [--discovery-interval 5] [--wiring prefix|eventbridge]

For each size, a warehouse of that many append tables, and two ways to follow them, each in
its own consumer process:

- ``warehouse``: one ``WarehouseFeed`` over the warehouse;
- ``changefeeds``: a ``ChangeFeed`` per table, all on one shared ``LocalNotifier``.

The consumer starts, settles, then idles for ``--idle-seconds`` (its CPU time over that window as
a share of one core; the window is shorter than ``reconcile_interval``, 60 s, so it shows the
notifier's own cost, not the safety checks, which are one read per table per interval). Then a
writer process commits ``--commits`` times to random tables at random intervals; commit → batch
latency runs from the moment the snapshot file appeared (its mtime) to the batch's delivery, and
separately from the writer's commit timestamp (``timeMillis``). Last, a new table is created and
committed to: the time from its first snapshot file to its first batch (``warehouse`` only).
Threads, file descriptors and inotify instances are counted while idle; peak RSS at the end.

With ``--s3`` the same shape runs on a local ``moto_server`` (S3 and SQS over real HTTP, as
``s3_bench.py``): N tables in one warehouse on one bucket, one SQS queue fed by the bucket's
notification configuration (``--wiring prefix``: S3 → SQS, one prefix rule per table on
``.../<table>/snapshot/snapshot-``, the wiring ``s3_bench.py`` measures; ``eventbridge``: the
bucket sends to EventBridge and one wildcard rule ``wh/*/snapshot/snapshot-*`` targets the queue,
which moto implements). The consumer process holds one ``SqsNotifier``; ``warehouse`` is one
``WarehouseFeed`` on it, ``changefeeds`` a ``ChangeFeed`` per table on it. Both commit every batch
(the consumer file is an S3 PUT). Latency runs from the snapshot's visibility (the ``eventTime``
moto stamps on its ``ObjectCreated`` event, read from a second, observing queue with the same
prefix rules) to the batch's delivery, and from the writer's commit timestamp. The idle window
should be at least ``reconcile_interval`` (60 s, the default) so it includes the per-table safety
checks; S3 and SQS requests are counted at the server over that window (moto's request log, one
line per HTTP request, as ``s3_bench.py`` counts them), per table and hour. A new table has no
prefix rule (and the notifier drops events of tables nobody follows), so it is found by the
listing every ``--discovery-interval`` seconds (short here; the default is 60 s); its figure
is from its snapshot's visibility to its first batch.

Prints a markdown table and writes ``benchmarks/results/warehouse.json``; a local run keeps the
file's S3 rows and an ``--s3`` run keeps its local rows. A measurement, not a test: nothing here
passes or fails on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import threading
import time
from urllib.parse import unquote

import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

from benchmarks._common.scratch import scratch_dir  # (removed at exit)

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
MODES = ("warehouse", "changefeeds")
NEW_TABLE = "db.new_table"


def catalog(warehouse: str):
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": warehouse})


def create_tables(warehouse: str, count: int) -> list[str]:
    from pypaimon import Schema

    cat = catalog(warehouse)
    cat.create_database("db", True)
    names = [f"db.t{i:04d}" for i in range(count)]
    for name in names:
        cat.create_table(name, Schema.from_pyarrow_schema(SCHEMA), False)
    return names


def commit(table, n: int) -> None:
    from paimon_feed.tables import commit_arrow

    commit_arrow(table, pa.Table.from_pylist([{"id": n, "payload": f"c{n}"}], schema=SCHEMA))


def snapshot_mtime(table_path: str, snapshot_id: int) -> float:
    return os.stat(os.path.join(table_path, "snapshot", f"snapshot-{snapshot_id}")).st_mtime


def inotify_instances() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return count


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


# --- the consumer process -------------------------------------------------------------------------


async def consume(mode: str, warehouse: str, commits: int, idle_seconds: float) -> dict:
    from paimon_feed import ChangeFeed, LocalNotifier, WarehouseFeed

    started = time.monotonic()
    cat = catalog(warehouse)
    notifier = LocalNotifier()
    merged: asyncio.Queue = asyncio.Queue(maxsize=8)
    paths: dict[str, str] = {}
    feeds = []
    if mode == "warehouse":
        source = WarehouseFeed(cat, notifier=notifier, start="latest")
        await source.start()
        feeds.append(source)
        for name, feed in source.table_feeds().items():
            paths[name] = str(feed.table.table_path)
    else:
        names = [f"db.{t}" for t in cat.list_tables("db")]
        for name in names:
            table = cat.get_table(name)
            paths[name] = str(table.table_path)
            feed = ChangeFeed(table, notifier=notifier, start="latest")
            await feed.start()
            feeds.append(feed)

        async def pump(feed):
            async for batch in feed:
                await merged.put(batch)

        pumps = [asyncio.create_task(pump(feed)) for feed in feeds]  # noqa: F841 - kept alive
    startup_s = time.monotonic() - started

    async def next_batch():
        return await (feeds[0].__anext__() if mode == "warehouse" else merged.get())

    await asyncio.sleep(3)  # settle: the first short waits after start-up
    cpu0, wall0 = time.process_time(), time.monotonic()
    await asyncio.sleep(idle_seconds)
    idle_cpu = (time.process_time() - cpu0) / (time.monotonic() - wall0) * 100
    idle = {
        "threads": threading.active_count(),
        "fds": len(os.listdir("/proc/self/fd")),
        "inotify_instances": inotify_instances(),
    }
    print("IDLE_DONE", flush=True)

    from_file, from_commit = [], []
    seen = 0
    while seen < commits:
        batch = await next_batch()
        now = time.time()
        if batch.table == NEW_TABLE:
            continue
        seen += batch.snapshot_count
        from_file.append((now - snapshot_mtime(paths[batch.table], batch.snapshot_id)) * 1000)
        from_commit.append(now * 1000 - batch.commit_time_ms)
        if mode == "warehouse":
            await feeds[0].commit(batch)
    print("COMMITS_DONE", flush=True)

    new_table_ms = None
    if mode == "warehouse":
        line = await asyncio.to_thread(sys.stdin.readline)
        path = line.strip()
        while True:
            batch = await next_batch()
            if batch.table == NEW_TABLE:
                new_table_ms = (time.time() - snapshot_mtime(path, batch.first_snapshot_id)) * 1000
                break
    for feed in feeds:
        await feed.close()
    await notifier.close()
    return {
        "mode": mode,
        "tables": len(paths),
        "startup_s": round(startup_s, 2),
        "commits": seen,
        "batches": len(from_file),
        "p50_ms": round(statistics.median(from_file), 1),
        "p99_ms": round(percentile(from_file, 0.99), 1),
        "max_ms": round(max(from_file), 1),
        "p50_from_commit_ms": round(statistics.median(from_commit), 1),
        "idle_cpu_pct": round(idle_cpu, 2),
        **idle,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "new_table_first_batch_ms": None if new_table_ms is None else round(new_table_ms, 1),
    }


# --- the writer process ---------------------------------------------------------------------------


def write(warehouse: str, commits: int, seed: int) -> None:
    cat = catalog(warehouse)
    names = [f"db.{t}" for t in cat.list_tables("db")]
    handles = {}
    rng = random.Random(seed)
    for n in range(commits):
        name = rng.choice(names)
        table = handles.get(name) or handles.setdefault(name, cat.get_table(name))
        commit(table, n)
        time.sleep(rng.uniform(0.0, 0.03))
    print("done", flush=True)


# --- orchestration --------------------------------------------------------------------------------


def run_one(mode: str, size: int, commits: int, idle_seconds: float) -> dict:
    warehouse = os.path.join(scratch_dir("paimon-feed-warehouse-bench-"), "wh")
    create_tables(warehouse, size)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")])}
    consumer = subprocess.Popen(
        [sys.executable, "-m", __spec__.name, "--consume", mode, warehouse, str(commits), str(idle_seconds)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert consumer.stdout.readline().strip() == "IDLE_DONE"
        writer = subprocess.run(
            [sys.executable, "-m", __spec__.name, "--write", warehouse, str(commits), str(size)],
            capture_output=True, text=True, env=env, timeout=1800,
        )
        assert writer.returncode == 0, writer.stderr[-2000:]
        assert consumer.stdout.readline().strip() == "COMMITS_DONE"
        if mode == "warehouse":
            cat = catalog(warehouse)
            from pypaimon import Schema

            cat.create_table(NEW_TABLE, Schema.from_pyarrow_schema(SCHEMA), False)
            table = cat.get_table(NEW_TABLE)
            commit(table, 0)
            consumer.stdin.write(str(table.table_path) + "\n")
            consumer.stdin.flush()
        consumer.stdin.close()
        # Not communicate(): it reads the raw pipe, and readline() above may have buffered
        # the result line already.
        out = consumer.stdout.read()
        consumer.wait(timeout=600)
    finally:
        if consumer.poll() is None:
            consumer.kill()
    return json.loads(out.strip().splitlines()[-1])


def markdown(rows: list[dict]) -> str:
    header = (
        "| tables | mode | p50 ms | p99 ms | max ms | idle CPU % | threads | fds | inotify | "
        "peak RSS MB | new table ms | start-up s |"
    )
    lines = [header, "|" + "---|" * 12]
    for r in rows:
        new = "-" if r["new_table_first_batch_ms"] is None else r["new_table_first_batch_ms"]
        lines.append(
            f"| {r['tables']} | {r['mode']} | {r['p50_ms']} | {r['p99_ms']} | {r['max_ms']} | "
            f"{r['idle_cpu_pct']} | {r['threads']} | {r['fds']} | {r['inotify_instances']} | "
            f"{r['peak_rss_mb']} | {new} | {r['startup_s']} |"
        )
    return "\n".join(lines)


# --- S3 (moto): the consumer process --------------------------------------------------------------

S3_BUCKET = "wh-bench"
DEFAULT_PROVEN_INTERVAL = 1800.0  # SqsNotifier's proven_interval
_HTTP_REQUEST = re.compile(r'"(?:GET|PUT|POST|HEAD|DELETE) ')
_SQS_REQUEST = re.compile(r'"POST /(?:[0-9]{12}/\S*)? HTTP')
_TABLE_KEY = re.compile(r"db\.db/t[0-9]{4}/")


async def consume_s3(config: dict) -> dict:
    from paimon_feed import ChangeFeed, WarehouseFeed
    from paimon_feed.notifiers.sqs import SqsNotifier
    from paimon_feed.tables import open_catalog

    mode, url, options = config["mode"], config["warehouse"], config["catalog"]
    started = time.monotonic()
    notifier = SqsNotifier(config["queue_url"], endpoint_url=config["endpoint_url"],
                           s3_endpoint_url=config["endpoint_url"], proven_interval=config["proven_interval"])
    merged: asyncio.Queue = asyncio.Queue(maxsize=8)
    if mode == "warehouse":
        source = WarehouseFeed(url, catalog_options=options, notifier=notifier, start="latest",
                               discovery_interval=config["discovery_interval"])
        await source.start()
        feeds = {"*": source}
        tables = len(source.tables())
    else:
        cat = open_catalog(url, options)
        names = config["names"]
        opening = asyncio.Semaphore(8)  # as WarehouseFeed opens them

        async def open_one(name: str):
            async with opening:
                feed = ChangeFeed(await asyncio.to_thread(cat.get_table, name), notifier=notifier,
                                  start="latest")
                await feed.start()
                return name, feed

        feeds = dict(await asyncio.gather(*(open_one(name) for name in names)))
        tables = len(feeds)

        async def pump(feed):
            async for batch in feed:
                await merged.put(batch)

        pumps = [asyncio.create_task(pump(feed)) for feed in feeds.values()]  # noqa: F841
    startup_s = time.monotonic() - started

    async def next_batch():
        return await (feeds["*"].__anext__() if mode == "warehouse" else merged.get())

    async def commit(batch) -> None:
        await (feeds["*"] if mode == "warehouse" else feeds[batch.table]).commit(batch)

    await asyncio.sleep(5)  # settle: the first reads and long polls after start-up
    print("IDLE_START", flush=True)

    def safety_checks() -> int:
        per_table = (feeds["*"].metrics().tables.values() if mode == "warehouse" else [f.metrics() for f in feeds.values()])
        return sum(m.reconciles for m in per_table)

    checks0 = safety_checks()
    cpu0, wall0 = time.process_time(), time.monotonic()
    await asyncio.sleep(config["idle_seconds"])
    idle_checks = safety_checks() - checks0
    idle_wall = time.monotonic() - wall0
    idle_cpu = (time.process_time() - cpu0) / idle_wall * 100
    idle = {"threads": threading.active_count(), "fds": len(os.listdir("/proc/self/fd"))}
    print("IDLE_DONE", flush=True)

    delivered = []  # [table, first snapshot, last snapshot, arrival (epoch s), commit time ms]
    seen = 0
    while seen < config["commits"]:
        batch = await next_batch()
        now = time.time()
        delivered.append([batch.table, batch.first_snapshot_id, batch.snapshot_id, now,
                          batch.commit_time_ms])
        seen += batch.snapshot_count
        await commit(batch)
    print("COMMITS_DONE", flush=True)

    new_table = None
    if mode == "warehouse":
        await asyncio.to_thread(sys.stdin.readline)  # the new table is committed to
        while True:
            batch = await next_batch()
            if batch.table == config["new_table"]:
                new_table = [batch.first_snapshot_id, time.time(), batch.commit_time_ms]
                break
    for feed in feeds.values():
        await feed.close()
    sqs_metrics = notifier.metrics()
    await notifier.close()
    return {
        "tables": tables, "startup_s": startup_s, "idle_cpu_pct": idle_cpu, "idle_wall_s": idle_wall,
        **idle, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "idle_safety_checks": idle_checks,
        "delivered": delivered, "new_table": new_table, "notifier": sqs_metrics,
    }


# --- S3 (moto): the writer process ----------------------------------------------------------------


def write_s3(config: dict) -> None:
    from paimon_feed.tables import open_catalog

    cat = open_catalog(config["warehouse"], config["catalog"])
    names = config["names"]
    handles = {}
    rng = random.Random(config["seed"])
    for n in range(config["commits"]):
        name = rng.choice(names)
        table = handles.get(name) or handles.setdefault(name, cat.get_table(name))
        commit(table, n)
        time.sleep(rng.uniform(0.0, 0.03))


# --- S3 (moto): orchestration ---------------------------------------------------------------------


def _snapshot_prefix(name: str) -> str:
    return f"wh/db.db/{name.split('.', 1)[1]}/snapshot/snapshot-"


def _wire(server, bucket: str, feed_arn: str, observer_arn: str, names: list[str], new_table: str,
          wiring: str, rule: str) -> None:
    """The feed queue's wiring, and an observing queue with a prefix rule per table (the new one
    included) whose events carry each snapshot's visibility time."""

    def prefix_rule(arn: str, name: str) -> dict:
        return {"QueueArn": arn, "Events": ["s3:ObjectCreated:*"],
                "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": _snapshot_prefix(name)}]}}}

    configs = [prefix_rule(observer_arn, name) for name in [*names, new_table]]
    notification: dict = {"QueueConfigurations": configs}
    if wiring == "prefix":
        configs += [prefix_rule(feed_arn, name) for name in names]
    else:
        events = server.client("events")
        events.put_rule(Name=rule, EventPattern=json.dumps({
            "source": ["aws.s3"], "detail-type": ["Object Created"],
            "detail": {"bucket": {"name": [bucket]},
                       "object": {"key": [{"wildcard": "wh/*/snapshot/snapshot-*"}]}},
        }))
        events.put_targets(Rule=rule, Targets=[{"Id": "feed", "Arn": feed_arn}])
        notification["EventBridgeConfiguration"] = {}
    server.client("s3").put_bucket_notification_configuration(
        Bucket=bucket, NotificationConfiguration=notification
    )


def _count_idle_requests(lines: list[str]) -> dict:
    s3 = sqs = listing = 0
    for line in lines:
        if not _HTTP_REQUEST.search(line):
            continue
        if _SQS_REQUEST.search(line):
            sqs += 1
            continue
        s3 += 1
        listing += not _TABLE_KEY.search(unquote(line))
    return {"s3": s3, "sqs": sqs, "s3_warehouse_level": listing}


def run_one_s3(server, mode: str, size: int, args, warehouse_state: dict) -> dict:
    from benchmarks.s3_bench import _drain, _event_times
    from tests.s3_support import s3_catalog_options

    bucket = f"{S3_BUCKET}-{size}"
    options = s3_catalog_options(server, bucket)
    url = options.pop("warehouse")
    if size not in warehouse_state:  # one warehouse per size, shared by the modes
        server.create_bucket(bucket)
        began = time.monotonic()
        warehouse_state[size] = create_tables_at(url, options, size, server)
        print(f"{size} tables on S3 created in {time.monotonic() - began:.0f} s", file=sys.stderr,
              flush=True)
    names = warehouse_state[size]
    run = f"{mode}-{size}"
    new_table = f"db.new_{mode.replace('-', '_')}"
    feed_queue = server.create_queue(f"feed-{run}")
    observer = server.create_queue(f"observer-{run}")
    rule = f"snapshots-{run}"
    _wire(server, bucket, feed_queue.queue_arn, observer.queue_arn, names, new_table, args.wiring, rule)
    _drain(server, feed_queue.queue_url)  # moto's s3:TestEvent
    _drain(server, observer.queue_url)
    config = {
        "mode": mode, "warehouse": url, "catalog": options, "queue_url": feed_queue.queue_url,
        "endpoint_url": server.endpoint_url, "commits": args.commits,
        "idle_seconds": args.idle_seconds, "discovery_interval": args.discovery_interval,
        "new_table": new_table, "names": names, "proven_interval": args.proven_interval,
    }
    check_s = check_delay_s = None
    if args.wiring == "eventbridge":  # paimon-feed check on the wired warehouse, timed end to end
        from paimon_feed.aws import check

        began = time.monotonic()
        checked = check(url, queue_url=feed_queue.queue_url, endpoint_url=server.endpoint_url,
                        region_name=server.region)
        check_s, check_delay_s = time.monotonic() - began, checked.delay
        # The bench's rule sets no queue policy (moto does not enforce one): check reports it,
        # and its event still arrives; the figure is the time to check's answer.
        assert checked.delay is not None, checked.problems
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")])}
    consumer = subprocess.Popen(
        [sys.executable, "-m", __spec__.name, "--consume-s3", json.dumps(config)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert consumer.stdout.readline().strip() == "IDLE_START"
        offset = server.log_path.stat().st_size
        assert consumer.stdout.readline().strip() == "IDLE_DONE"
        end = server.log_path.stat().st_size
        with open(server.log_path, "rb") as handle:
            handle.seek(offset)
            window = handle.read(end - offset).decode(errors="replace").splitlines()
        requests = _count_idle_requests(window)
        writer = subprocess.run(
            [sys.executable, "-m", __spec__.name, "--write-s3", json.dumps(
                {"warehouse": url, "catalog": options, "names": names, "commits": args.commits,
                 "seed": size})],
            capture_output=True, text=True, env=env, timeout=1800,
        )
        assert writer.returncode == 0, writer.stderr[-2000:]
        assert consumer.stdout.readline().strip() == "COMMITS_DONE"
        if mode == "warehouse":
            from pypaimon import Schema

            from paimon_feed.tables import open_catalog

            cat = open_catalog(url, options)
            cat.create_table(new_table, Schema.from_pyarrow_schema(SCHEMA), False)
            commit(cat.get_table(new_table), 0)
            consumer.stdin.write("committed\n")
            consumer.stdin.flush()
        consumer.stdin.close()
        out = consumer.stdout.read()
        consumer.wait(timeout=600)
        if mode == "warehouse":
            cat.drop_table(new_table, False)  # the other modes follow the same warehouse
    finally:
        if consumer.poll() is None:
            consumer.kill()
        if args.wiring == "eventbridge":
            events = server.client("events")
            events.remove_targets(Rule=rule, Ids=["feed"])
            events.delete_rule(Name=rule)
    raw = json.loads(out.strip().splitlines()[-1])
    visible = _event_times(_drain(server, observer.queue_url))
    from_visible, from_commit = [], []
    for name, _first, last, arrival, commit_ms in raw["delivered"]:
        short = name.split(".", 1)[1]
        if last in visible.get(short, {}):
            from_visible.append((arrival - visible[short][last]) * 1000)
        from_commit.append(arrival * 1000 - commit_ms)
    new_ms = new_from_commit_ms = None
    if raw["new_table"] is not None:
        first, arrival, commit_ms = raw["new_table"]
        seen = visible.get(new_table.split(".", 1)[1], {})
        new_ms = (arrival - seen[first]) * 1000 if first in seen else None
        new_from_commit_ms = arrival * 1000 - commit_ms
    hours = raw["idle_wall_s"] / 3600
    per_table_hour = 1 / (raw["tables"] * hours)
    # The tables' own requests scale with the safety interval; the warehouse's (probes, listings,
    # SQS) do not: at the default proven_interval the tables' part shrinks by the ratio.
    table_part = (requests["s3"] - requests["s3_warehouse_level"]) * per_table_hour
    shared_part = (requests["s3_warehouse_level"] + requests["sqs"]) * per_table_hour
    at_default = table_part * args.proven_interval / DEFAULT_PROVEN_INTERVAL + shared_part
    return {
        "mode": mode,
        "tables": raw["tables"],
        "wiring": args.wiring,
        "discovery_interval_s": args.discovery_interval if mode == "warehouse" else None,
        "startup_s": round(raw["startup_s"], 2),
        "commits": args.commits,
        "batches": len(raw["delivered"]),
        "visible_times_known": len(from_visible),
        "p50_ms": round(statistics.median(from_visible), 1),
        "p99_ms": round(percentile(from_visible, 0.99), 1),
        "max_ms": round(max(from_visible), 1),
        "p50_from_commit_ms": round(statistics.median(from_commit), 1),
        "p99_from_commit_ms": round(percentile(from_commit, 0.99), 1),
        "idle_cpu_pct": round(raw["idle_cpu_pct"], 2),
        "threads": raw["threads"],
        "fds": raw["fds"],
        "peak_rss_mb": round(raw["peak_rss_mb"], 1),
        "idle_seconds": round(raw["idle_wall_s"], 1),
        "idle_requests": requests,
        "s3_requests_per_table_hour": round(requests["s3"] * per_table_hour, 1),
        "s3_warehouse_level_per_hour": round(requests["s3_warehouse_level"] / hours, 1),
        "sqs_requests_per_table_hour": round(requests["sqs"] * per_table_hour, 1),
        "sqs_requests_per_hour": round(requests["sqs"] / hours, 1),
        "proven_interval_s": args.proven_interval,
        "idle_safety_checks_per_table_hour": round(raw["idle_safety_checks"] * per_table_hour, 2),
        "s3_table_requests_per_table_hour": round(table_part, 2),
        "idle_requests_per_table_hour_at_default": round(at_default, 2),
        "check_s": None if check_s is None else round(check_s, 2),
        "check_event_delay_ms": None if check_delay_s is None else round(check_delay_s * 1000, 1),
        "new_table_first_batch_ms": None if new_ms is None else round(new_ms, 1),
        "new_table_first_batch_from_commit_ms": None if new_from_commit_ms is None else round(new_from_commit_ms, 1),
        "notifier": raw["notifier"],
    }


def create_tables_at(url: str, options: dict, count: int, server=None) -> list[str]:
    """``count`` empty tables ``db.t0000``...: the first made by pypaimon, the others (on S3)
    by copying its metadata server-side, which moto does in a request per file instead of the
    dozen pypaimon's create_table takes."""
    from pypaimon import Schema

    from paimon_feed.tables import open_catalog

    cat = open_catalog(url, options)
    cat.create_database("db", True)
    names = [f"db.t{i:04d}" for i in range(count)]
    for name in names[: 1 if server is not None else count]:
        cat.create_table(name, Schema.from_pyarrow_schema(SCHEMA), False)
    if server is not None and count > 1:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        s3 = server.client("s3")
        template = f"{prefix}/db.db/t0000/"
        keys = [item["Key"] for item in s3.list_objects_v2(Bucket=bucket, Prefix=template)["Contents"]]
        for name in names[1:]:
            table = f"{prefix}/db.db/{name.split('.')[1]}/"
            for key in keys:
                s3.copy_object(Bucket=bucket, Key=table + key[len(template):],
                               CopySource={"Bucket": bucket, "Key": key})
    return names


def run_s3(args) -> list[dict]:
    from tests.s3_support import start_moto_server

    server = start_moto_server()
    os.environ.update(server.credentials_env)  # fake credentials for this server only
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                 "AWS_ENDPOINT_URL_SQS"):
        os.environ.pop(name, None)
    rows, state = [], {}
    try:
        for size in args.sizes:
            for mode in args.modes:
                row = run_one_s3(server, mode, size, args, state)
                print(json.dumps({k: v for k, v in row.items() if k != "notifier"}), file=sys.stderr, flush=True)
                rows.append(row)
    finally:
        server.close()
    return rows


def markdown_s3(rows: list[dict]) -> str:
    header = (
        "| tables | mode | wiring | p50 ms | p99 ms | p50 ms from commit | idle CPU % | threads | "
        "fds | peak RSS MB | S3 req / idle table-h | listing req / h | SQS req / idle table-h | "
        "new table ms | start-up s | idle req / table-h at proven 30 min | check s |"
    )
    lines = [header, "|" + "---|" * 17]
    for r in rows:
        new = "-" if r["new_table_first_batch_ms"] is None else r["new_table_first_batch_ms"]
        lines.append(
            f"| {r['tables']} | {r['mode']} | {r['wiring']} | {r['p50_ms']} | {r['p99_ms']} | "
            f"{r['p50_from_commit_ms']} | {r['idle_cpu_pct']} | {r['threads']} | {r['fds']} | "
            f"{r['peak_rss_mb']} | {r['s3_requests_per_table_hour']} | "
            f"{r['s3_warehouse_level_per_hour']} | {r['sqs_requests_per_table_hour']} | {new} | "
            f"{r['startup_s']} | {r.get('idle_requests_per_table_hour_at_default', '-')} | "
            f"{r.get('check_s') or '-'} |"
        )
    return "\n".join(lines)

def main() -> None:
    if sys.argv[1:2] == ["--consume"]:
        mode, warehouse, commits, idle = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
        print(json.dumps(asyncio.run(consume(mode, warehouse, commits, idle))), flush=True)
        return
    if sys.argv[1:2] == ["--write"]:
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    if sys.argv[1:2] == ["--consume-s3"]:
        print(json.dumps(asyncio.run(consume_s3(json.loads(sys.argv[2])))), flush=True)
        return
    if sys.argv[1:2] == ["--write-s3"]:
        write_s3(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--s3", action="store_true",
                        help="on a local moto_server (S3 + SQS) instead of local directories")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="table counts (default 10 100 1000; with --s3, 10 100)")
    parser.add_argument("--commits", type=int, default=None, help="default 200; with --s3, 100")
    parser.add_argument("--idle-seconds", type=float, default=None, help="default 20; with --s3, 120")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--discovery-interval", type=float, default=5.0,
                        help="--s3: WarehouseFeed's discovery_interval (default 5 s; the feed's own is 60)")
    parser.add_argument("--proven-interval", type=float, default=DEFAULT_PROVEN_INTERVAL,
                        help="--s3: SqsNotifier's proven_interval (default 1800 s); the idle window "
                             "should exceed it so each table's safety checks fall in it")
    parser.add_argument("--wiring", default="prefix", choices=("prefix", "eventbridge"),
                        help="--s3: S3 -> SQS prefix rule per table, or one EventBridge wildcard rule")
    args = parser.parse_args()
    args.sizes = args.sizes or ([10, 100] if args.s3 else [10, 100, 1000])
    args.commits = args.commits or (100 if args.s3 else 200)
    args.idle_seconds = args.idle_seconds or (120.0 if args.s3 else 20.0)
    path = os.path.join(RESULTS, "warehouse.json")
    data = {}
    if os.path.exists(path):
        with open(path) as handle:
            data = json.load(handle)
    data["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "system": platform.platform()}
    if args.s3:
        new = run_s3(args)
        key = lambda r: (r["tables"], r["mode"], r["wiring"])  # noqa: E731
        measured = {key(r) for r in new}
        kept = [r for r in data.get("s3", {}).get("rows", []) if key(r) not in measured]
        rows = sorted(kept + new, key=lambda r: (r["tables"], r["wiring"] != "prefix",
                                                 MODES.index(r["mode"])))
        table = markdown_s3(rows)
        data["s3"] = {"rows": rows, "markdown": table}
    else:
        rows = []
        for size in args.sizes:
            for mode in args.modes:
                row = run_one(mode, size, args.commits, args.idle_seconds)
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
        table = markdown(rows)
        data.update({"commits": args.commits, "idle_seconds": args.idle_seconds, "rows": rows,
                     "markdown": table})
    print(table)
    os.makedirs(RESULTS, exist_ok=True)
    with open(path, "w") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")

if __name__ == "__main__":
    main()
