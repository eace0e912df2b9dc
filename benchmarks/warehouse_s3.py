"""Warehouse benchmark, S3 part (``--s3``): many tables in one warehouse on a local ``moto_server``,
one SQS queue, one consumer process holding one ``SqsNotifier``; its consumer and writer
processes (run by :mod:`benchmarks.warehouse_bench`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import threading
import time
from urllib.parse import unquote

from benchmarks._common.stats import percentile
from benchmarks._common.warehouse_setup import SCHEMA, commit, create_tables_at

HERE = os.path.dirname(os.path.abspath(__file__))


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


COLUMNS = (
    ("tables", "tables"), ("mode", "mode"), ("wiring", "wiring"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"),
    ("p50 ms from commit", "p50_from_commit_ms"), ("idle CPU %", "idle_cpu_pct"), ("threads", "threads"),
    ("fds", "fds"), ("peak RSS MB", "peak_rss_mb"), ("S3 req / idle table-h", "s3_requests_per_table_hour"),
    ("listing req / h", "s3_warehouse_level_per_hour"), ("SQS req / idle table-h", "sqs_requests_per_table_hour"),
    ("new table ms", "new_table_first_batch_ms"), ("start-up s", "startup_s"),
    ("idle req / table-h at proven 30 min", "idle_requests_per_table_hour_at_default"), ("check s", "check_s"),
)
"""The columns of the S3 run's printed table (:func:`benchmarks._common.warehouse_setup.markdown`)."""


def main() -> None:
    """The consumer (``--consume-s3``) and writer (``--write-s3``) processes."""
    if sys.argv[1:2] == ["--consume-s3"]:
        print(json.dumps(asyncio.run(consume_s3(json.loads(sys.argv[2])))), flush=True)
        return
    if sys.argv[1:2] == ["--write-s3"]:
        write_s3(json.loads(sys.argv[2]))
        return


if __name__ == "__main__":
    main()
