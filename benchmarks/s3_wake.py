"""S3 benchmark, part 3: wake latency of one ``SqsNotifier`` subscribing many tables on one
queue, real-shaped S3 events sent straight to it; its listener and sender processes (run by
:mod:`benchmarks.s3_bench`)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from urllib.parse import quote_plus

from benchmarks._common.s3_setup import BUCKET, _wait_for_file
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.stats import percentile
from tests.s3_support import MotoServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PAYLOADS = os.path.join(ROOT, "tests", "notifiers", "payloads", "s3_direct_commits.json")


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


if __name__ == "__main__":  # its listener and sender processes
    {"_listen": listener_main, "_send": sender_main}[sys.argv[1]](sys.argv[2:])
