"""Warehouse benchmark, local part: many local tables followed by one consumer process
(``WarehouseFeed``, or a ``ChangeFeed`` per table on one ``LocalNotifier``) while a writer process
commits; its consumer and writer processes (run by :mod:`benchmarks.warehouse_bench`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import threading
import time

from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.stats import percentile
from benchmarks._common.warehouse_setup import (
    NEW_TABLE,
    SCHEMA,
    catalog,
    commit,
    create_tables,
    inotify_instances,
    snapshot_mtime,
)

HERE = os.path.dirname(os.path.abspath(__file__))


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


COLUMNS = (
    ("tables", "tables"), ("mode", "mode"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"), ("max ms", "max_ms"),
    ("idle CPU %", "idle_cpu_pct"), ("threads", "threads"), ("fds", "fds"), ("inotify", "inotify_instances"),
    ("peak RSS MB", "peak_rss_mb"), ("new table ms", "new_table_first_batch_ms"), ("start-up s", "startup_s"),
)
"""The columns of the local run's printed table (:func:`benchmarks._common.warehouse_setup.markdown`)."""


def main() -> None:
    """The consumer (``--consume``) and writer (``--write``) processes."""
    if sys.argv[1:2] == ["--consume"]:
        mode, warehouse, commits, idle = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
        print(json.dumps(asyncio.run(consume(mode, warehouse, commits, idle))), flush=True)
        return
    if sys.argv[1:2] == ["--write"]:
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return


if __name__ == "__main__":
    main()
