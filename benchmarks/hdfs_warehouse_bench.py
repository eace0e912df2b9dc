"""HDFS benchmark, many tables: one ``WarehouseFeed`` over 100 tables against 100 pypaimon readers.

    PYTHONPATH=tests:tests/interop:tests/hdfs python -m benchmarks.hdfs_warehouse_bench [--tables 100] [--idle-seconds 120] [--commits 20]
                                              [--readers 100] [--reader-seconds 30]

On Hadoop 3.4.1's MiniDFSCluster (``tests/hdfs/hdfs_cluster.py``), a warehouse of ``--tables``
append tables, one commit each. Three ways to follow all of them, NameNode calls counted from the
NameNode's per-method RPC metrics (the DataNode's apart):

- ``warehouse``: one ``WarehouseFeed`` with ``HdfsNotifier`` (push, the inotify stream), the
  defaults otherwise (``reconcile_interval`` 60 s, ``discovery_interval`` 60 s), idle for
  ``--idle-seconds``; then ``--commits`` commits to tables in turn, one at a time: latency from
  the NameNode's modification time of ``snapshot-N`` to the batch;
- ``pypaimon``: ``--readers`` pypaimon streaming scans (``new_streaming_scan().stream()``, its
  1 s poll), one per table, in one event loop, idle for ``--reader-seconds``;
- ``java``: Paimon Java's discovery, one look per table every 10 s, computed (not run).

Writes the ``warehouse`` key of ``benchmarks/results/hdfs.json`` (the single-table figures of
``hdfs_bench.py`` are kept), with the machine's load average: a measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from typing import Any

from benchmarks._common.stats import percentile
from benchmarks.hdfs_bench import STREAM, client_calls, on_cluster, store_key

try:  # the test helpers, from PYTHONPATH (no sys.path edits)
    from hdfs_cluster import HdfsCluster, calls_between, classpath
    from hdfs_native import Client
    from support.tables import catalog, commit, create_append_table
except ImportError as exc:  # run without the test helpers on the path
    raise SystemExit(f"{exc}: run PYTHONPATH=tests:tests/interop:tests/hdfs python -m benchmarks.hdfs_warehouse_bench") from exc

from paimon_feed import WarehouseFeed
from paimon_feed.notifiers import HdfsNotifier

JAVA_DISCOVERY_S = 10.0  # Paimon Java's continuous.discovery-interval default


def per_hour(calls: dict[str, int], seconds: float) -> dict[str, int]:
    stream = sum(n for name, n in calls.items() if name in STREAM)
    tables = sum(n for name, n in calls.items() if name not in STREAM)
    return {"tables_calls_per_hour": round(tables * 3600 / seconds),
            "stream_calls_per_hour": round(stream * 3600 / seconds),
            "calls_per_hour": round((tables + stream) * 3600 / seconds)}


async def window(cluster: HdfsCluster, seconds: float) -> tuple[dict[str, int], float]:
    before = await asyncio.to_thread(client_calls, cluster)
    started = time.monotonic()
    await asyncio.sleep(seconds)
    after = await asyncio.to_thread(client_calls, cluster)
    return calls_between(before, after), time.monotonic() - started


async def warehouse_feed(cluster: HdfsCluster, warehouse: str, tables: list[Any],
                         idle_seconds: float, commits: int) -> dict[str, Any]:
    client = Client(cluster.url)
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())
    latencies = []
    async with notifier, WarehouseFeed(warehouse, consumer_id="bench", start="latest", notifier=notifier) as feed:
        followed = len(feed.tables())
        await asyncio.sleep(2.0)  # past the start-up's first short waits
        calls, elapsed = await window(cluster, idle_seconds)
        for n in range(commits):
            table = tables[n % len(tables)]
            committing = asyncio.ensure_future(asyncio.to_thread(commit, table, 1000 + n))
            batch = await asyncio.wait_for(feed.__anext__(), 60)
            delivered = time.time()
            await committing
            root = "/" + str(table.table_path).split("/", 3)[3]
            status = client.get_file_info(f"{root}/snapshot/snapshot-{batch.snapshot_id}")
            latencies.append(delivered * 1000 - status.modification_time)
            await feed.commit(batch)
    return {
        "tables_followed": followed, "calls": calls, "seconds": round(elapsed, 1), **per_hour(calls, elapsed),
        "latency_ms": {"p50": round(statistics.median(latencies), 1), "p99": round(percentile(latencies, 0.99), 1),
                       "n": len(latencies)},
    }


async def pypaimon_readers(cluster: HdfsCluster, tables: list[Any], seconds: float) -> dict[str, Any]:
    """``len(tables)`` pypaimon streaming scans, idle, in one loop."""
    polls = [0] * len(tables)

    async def follow(index: int, table: Any) -> None:
        builder = table.new_stream_read_builder()
        scan = builder.new_streaming_scan()  # poll_interval_ms=1000, pypaimon's default
        scan.next_snapshot_id = table.snapshot_manager().get_latest_snapshot().id + 1
        async for _plan in scan.stream():
            polls[index] += 1

    tasks = [asyncio.create_task(follow(i, table)) for i, table in enumerate(tables)]
    try:
        await asyncio.sleep(3.0)  # every reader past its first plan
        calls, elapsed = await window(cluster, seconds)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"readers": len(tables), "calls": calls, "seconds": round(elapsed, 1), **per_hour(calls, elapsed)}


async def main_async(args: argparse.Namespace, cluster: HdfsCluster) -> dict[str, Any]:
    warehouse = f"{cluster.url}/shared/bench-warehouse-{os.getpid()}"
    cat = catalog(warehouse)
    tables = []
    for n in range(args.tables):
        table = create_append_table(cat, f"db.t{n:03d}")
        commit(table, 0)
        tables.append(table)
    load_before = os.getloadavg()
    feed = await warehouse_feed(cluster, warehouse, tables, args.idle_seconds, args.commits)
    readers = await pypaimon_readers(cluster, tables[: args.readers], args.reader_seconds)
    load_after = os.getloadavg()
    return {
        "tables": args.tables,
        "warehouse_feed": feed,
        "pypaimon": readers,
        "java_computed_calls_per_hour": round(args.tables * 3600 / JAVA_DISCOVERY_S),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--idle-seconds", type=float, default=120.0)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--reader-seconds", type=float, default=30.0)
    result = on_cluster(main_async, parser.parse_args(argv))
    from benchmarks.figures.hdfs import hdfs_warehouse_table

    store_key("warehouse", result, hdfs_warehouse_table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
