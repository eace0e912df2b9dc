"""What the history-integrity checks cost in S3 requests: before and after, in the same run.

    python -m benchmarks.integrity_cost [--before REF] [--commits 40] [--idle-seconds 60]
                                        [--reconcile-interval 5]

On one ``moto_server`` (S3 and SQS over real HTTP), two consumer processes follow two tables
of their own through one ``SqsNotifier`` each, committing every batch as consumer ``bench``:
one runs the package as of ``--before`` (default: the commit before the checks landed, taken
with ``git archive`` into a temp dir), the other the working tree. One writer commits to both
tables (and to a third that nobody follows, to subtract the writer's own requests) in turns.

Requests are counted at the server (moto's request log: the S3 bill), per table prefix:

- per committed snapshot: the consumer's requests while the writer commits, minus the writer's
  (the unfollowed table's count), over the commits;
- per safety check while idle: with ``--reconcile-interval`` seconds between safety checks,
  the requests over ``--idle-seconds``, over the checks made (two: the next snapshot's file,
  and the anchor read again, which shows a table re-created with a single commit).

Prints a markdown table and writes ``benchmarks/results/integrity.json``. A measurement, not a
test: nothing passes or fails on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tarfile
import time
from collections import Counter
from urllib.parse import unquote

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")

from benchmarks._common.s3_costs import s3_request_kind
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks.s3_bench import BUCKET, SCHEMA, _drain, commit, open_catalog
from tests.s3_support import s3_catalog_options, start_moto_server

BEFORE_REF = "1326266"  # main before the progress protocol and its checks
VARIANTS = ("before", "after")
WRITER_ONLY = "cost_writer"


def _export(ref: str, into: str) -> str:
    """The package as of git ``ref``, unpacked under ``into``; returns the folder to import from."""
    os.makedirs(into, exist_ok=True)
    archive = os.path.join(into, "src.tar")
    with open(archive, "wb") as handle:
        subprocess.run(["git", "-C", ROOT, "archive", ref, "paimon_feed"], stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


async def _follow(config: dict) -> None:
    from paimon_feed import ChangeFeed
    from paimon_feed.notifiers.sqs import SqsNotifier

    catalog = open_catalog(config["catalog"])
    table = catalog.get_table(f"db.{config['table']}")
    signals = config["signals"]
    notifier = SqsNotifier(config["queue_url"], endpoint_url=config["endpoint_url"])
    try:
        async with ChangeFeed(
            table, consumer_id="bench", start="latest", notifier=notifier,
            reconcile_interval=config["reconcile_interval"],
        ) as feed:
            open(os.path.join(signals, f"ready-{config['variant']}"), "w").close()
            async for batch in feed:
                batch.to_arrow()
                await feed.commit(batch)
                if batch.snapshot_id >= config["last_snapshot"]:
                    break
            open(os.path.join(signals, f"caught-up-{config['variant']}"), "w").close()
            while not os.path.exists(os.path.join(signals, "idle-end")):  # idle, following
                await asyncio.sleep(0.2)
            reconciles = feed.metrics().reconciles
    finally:
        await notifier.close()
    with open(config["out"], "w") as handle:
        json.dump({"reconciles": reconciles}, handle)


def _count(lines: list[str], tables: list[str]) -> dict[str, Counter]:
    counts = {name: Counter() for name in tables}
    for line in lines:
        line = unquote(line)
        for name in tables:
            if f"db.db/{name}/" in line:
                counts[name][s3_request_kind(line) or "other"] += 1
    return counts


def _window(log_path, offset: int) -> tuple[list[str], int]:
    with open(log_path, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    return data.decode(errors="replace").splitlines(), offset + len(data)


def measure(before_ref: str, commits: int, idle_seconds: float, reconcile_interval: float) -> dict:
    server = start_moto_server()
    try:
        return _measure(server, before_ref, commits, idle_seconds, reconcile_interval)
    finally:
        server.stop()


def _measure(server, before_ref: str, commits: int, idle_seconds: float, reconcile_interval: float) -> dict:
    from pypaimon import Schema

    server.create_bucket(BUCKET)
    options = s3_catalog_options(server, BUCKET)
    catalog = open_catalog(options)
    catalog.create_database("db", True)
    names = {variant: f"cost_{variant}" for variant in VARIANTS}
    tables = {}
    for name in [*names.values(), WRITER_ONLY]:
        catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA), True)
        tables[name] = catalog.get_table(f"db.{name}")
        commit(tables[name], 0)
    signals = scratch_dir("paimon-feed-integrity-")
    sources = {"before": _export(before_ref, os.path.join(signals, "before")), "after": ROOT}
    queues, procs, outs = {}, {}, {}
    configs = []
    for variant in VARIANTS:
        queues[variant] = server.create_queue(f"cost-{variant}")
        configs.append({
            "QueueArn": queues[variant].queue_arn, "Events": ["s3:ObjectCreated:*"],
            "Filter": {"Key": {"FilterRules": [
                {"Name": "prefix", "Value": f"wh/db.db/{names[variant]}/snapshot/snapshot-"}
            ]}},
        })
    server.client("s3").put_bucket_notification_configuration(
        Bucket=BUCKET, NotificationConfiguration={"QueueConfigurations": configs}
    )
    for variant in VARIANTS:
        _drain(server, queues[variant].queue_url)
        outs[variant] = os.path.join(signals, f"out-{variant}.json")
        config = {
            "variant": variant, "catalog": options, "table": names[variant],
            "queue_url": queues[variant].queue_url, "endpoint_url": server.endpoint_url,
            "reconcile_interval": reconcile_interval, "last_snapshot": commits + 1,
            "signals": signals, "out": outs[variant],
        }
        env = {**os.environ, **server.credentials_env, "PYTHONPATH": os.pathsep.join([sources[variant], ROOT])}
        procs[variant] = subprocess.Popen(
            [sys.executable, "-m", __spec__.name, "_follow", json.dumps(config)], env=env, cwd=signals
        )
    for variant in VARIANTS:
        while not os.path.exists(os.path.join(signals, f"ready-{variant}")):
            if procs[variant].poll() is not None:
                raise RuntimeError(f"consumer {variant} exited with {procs[variant].returncode}")
            time.sleep(0.1)
    time.sleep(1.0)
    _, offset = _window(server.log_path, 0)
    for n in range(1, commits + 1):  # in turns: every table sees the same writes
        for name in [*names.values(), WRITER_ONLY]:
            commit(tables[name], n)
    for variant in VARIANTS:
        while not os.path.exists(os.path.join(signals, f"caught-up-{variant}")):
            if procs[variant].poll() is not None:
                raise RuntimeError(f"consumer {variant} exited with {procs[variant].returncode}")
            time.sleep(0.1)
    time.sleep(2.0)  # the last commits' checkpoint writes land
    lines, offset = _window(server.log_path, offset)
    busy = _count(lines, [*names.values(), WRITER_ONLY])
    print(f"idle phase: {idle_seconds:.0f} s ...", file=sys.stderr, flush=True)
    time.sleep(idle_seconds)
    lines, offset = _window(server.log_path, offset)
    open(os.path.join(signals, "idle-end"), "w").close()
    for proc in procs.values():
        proc.wait(timeout=120)
    idle = _count(lines, list(names.values()))
    writer = sum(busy[WRITER_ONLY].values())
    results: dict = {
        "before_ref": before_ref, "commits": commits, "idle_seconds": idle_seconds,
        "reconcile_interval_s": reconcile_interval,
        "writer_requests_per_commit": writer / commits, "variants": {},
    }
    for variant in VARIANTS:
        with open(outs[variant]) as handle:
            reconciles = json.load(handle)["reconciles"]
        consumer = sum(busy[names[variant]].values()) - writer
        checks = max(1, round(idle_seconds / reconcile_interval))
        results["variants"][variant] = {
            "requests_per_snapshot": consumer / commits,
            "requests_by_kind_busy": dict(busy[names[variant]] - busy[WRITER_ONLY]),
            "idle_requests": sum(idle[names[variant]].values()),
            "idle_requests_by_kind": dict(idle[names[variant]]),
            "safety_checks": checks,
            "safety_checks_counted": reconciles,
            "idle_requests_per_check": sum(idle[names[variant]].values()) / checks,
            # at ChangeFeed's default reconcile_interval of 60 s
            "idle_requests_per_hour_default": sum(idle[names[variant]].values()) / checks * 60,
        }
    return results


def report(results: dict) -> str:
    before, after = results["variants"]["before"], results["variants"]["after"]
    rows = [
        f"S3 requests at the server (moto), {results['commits']} commits, same run; the "
        f"consumer commits each batch:",
        "",
        "| consumer | requests / committed snapshot | idle requests / safety check | idle requests / hour (60 s checks) |",
        "|---|---:|---:|---:|",
        f"| before the checks ({results['before_ref']}) | {before['requests_per_snapshot']:.1f} | "
        f"{before['idle_requests_per_check']:.2f} | {before['idle_requests_per_hour_default']:.0f} |",
        f"| with the checks | {after['requests_per_snapshot']:.1f} | "
        f"{after['idle_requests_per_check']:.2f} | {after['idle_requests_per_hour_default']:.0f} |",
        "",
        f"Per committed snapshot, by kind: before {before['requests_by_kind_busy']}, "
        f"after {after['requests_by_kind_busy']}. Idle ({results['idle_seconds']:.0f} s, a "
        f"safety check every {results['reconcile_interval_s']:g} s): before "
        f"{before['idle_requests_by_kind']}, after {after['idle_requests_by_kind']}.",
    ]
    return "\n".join(rows)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_follow":
        asyncio.run(_follow(json.loads(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE_REF, help="git ref of the package to compare with")
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--reconcile-interval", type=float, default=5.0)
    args = parser.parse_args()
    results = measure(args.before, args.commits, args.idle_seconds, args.reconcile_interval)
    results["table"] = report(results)
    print(results["table"])
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "integrity.json"), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
