"""HDFS benchmark: what following a table costs the NameNode, and how late a commit arrives.

    PYTHONPATH=tests:tests/interop:tests/hdfs python -m benchmarks.hdfs_bench [--commits 20] [--idle-seconds 120]

Runs against a real HDFS, Hadoop 3.4.1's MiniDFSCluster (``tests/hdfs/hdfs_cluster.py``; fetch it
with ``python tests/interop/fetch_java.py``), and counts NameNode calls from the NameNode's own
per-method RPC metrics (``/jmx``), the DataNode's calls apart. Three ways to follow one idle
table, each alone on the cluster for ``--idle-seconds`` (default reconcile interval, 60 s):

- ``push``: ``HdfsNotifier``, the inotify stream (its ``GetEditsFromTxid`` polls counted apart);
- ``hdfs-poll``: ``HdfsPollingNotifier``, a look at ``snapshot/`` every 10 s (the default);
- ``poll``: the generic ``PollingNotifier`` (``notifier="poll"``, 1 s backing off to 5 s).

Then ``--commits`` commits to a pushed table, one at a time: latency from the NameNode's
modification time of ``snapshot-N`` to the batch's delivery (same machine, same clock).

Prints a markdown table and writes ``benchmarks/results/hdfs.json``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
try:  # the test helpers, from PYTHONPATH (no sys.path edits)
    from hdfs_cluster import HdfsCluster, calls_between, classpath
    from hdfs_native import Client
    from support.tables import catalog, commit, create_append_table
except ImportError as exc:  # run without the test helpers on the path
    raise SystemExit(f"{exc}: run PYTHONPATH=tests:tests/interop:tests/hdfs python -m benchmarks.hdfs_bench") from exc

from benchmarks._common.stats import percentile
from paimon_feed import ChangeFeed
from paimon_feed.notifiers import HdfsNotifier, HdfsPollingNotifier, PollingNotifier

RESULTS = ROOT / "benchmarks" / "results" / "hdfs.json"
DATANODE = {"SendHeartbeat", "BlockReport", "BlockReceivedAndDeleted", "RegisterDatanode",
            "VersionRequest", "CacheReport", "ErrorReport", "SendLifeline"}
STREAM = {"GetEditsFromTxid", "GetCurrentEditLogTxid"}


def client_calls(cluster: HdfsCluster) -> dict[str, int]:
    return {name: n for name, n in cluster.rpc_calls().items() if name not in DATANODE}


async def idle_cost(cluster: HdfsCluster, table: Any, notifier: Any, seconds: float) -> dict[str, Any]:
    """NameNode calls over ``seconds`` of an idle feed, per hour: the feed's and the stream's."""
    async with notifier, ChangeFeed(table, consumer_id="bench", start="latest", notifier=notifier):
        await asyncio.sleep(2.0)  # past the start-up's first short wait
        before = await asyncio.to_thread(client_calls, cluster)
        started = time.monotonic()
        await asyncio.sleep(seconds)
        after = await asyncio.to_thread(client_calls, cluster)
        elapsed = time.monotonic() - started
    calls = calls_between(before, after)
    per_hour = 3600 / elapsed
    stream = sum(n for name, n in calls.items() if name in STREAM)
    return {
        "calls": calls,
        "seconds": round(elapsed, 1),
        "table_calls_per_hour": round(sum(n for name, n in calls.items() if name not in STREAM) * per_hour),
        "stream_calls_per_hour": round(stream * per_hour),
    }


async def push_latency(cluster: HdfsCluster, table: Any, commits: int) -> list[float]:
    """Milliseconds from the NameNode's mtime of each snapshot-N to its batch."""
    client = Client(cluster.url)
    root = "/" + str(table.table_path).split("/", 3)[3]
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())
    latencies = []
    async with notifier, ChangeFeed(table, consumer_id="latency", start="latest", notifier=notifier) as feed:
        for n in range(commits):
            # The batch may come before pypaimon's commit call returns (it writes LATEST after
            # the rename): wait for both at once.
            committing = asyncio.ensure_future(asyncio.to_thread(commit, table, 1000 + n))
            batch = await asyncio.wait_for(feed.__anext__(), 60)
            delivered = time.time()
            await committing
            status = client.get_file_info(f"{root}/snapshot/snapshot-{batch.snapshot_id}")
            latencies.append(delivered * 1000 - status.modification_time)
            await feed.commit(batch)
    return latencies


async def main_async(args: argparse.Namespace, cluster: HdfsCluster) -> dict[str, Any]:
    warehouse = f"{cluster.url}/shared/bench-{os.getpid()}"
    cat = catalog(warehouse)
    table = create_append_table(cat)
    commit(table, 0)
    idle = {
        "push": await idle_cost(cluster, table, HdfsNotifier(required=True, hadoop_classpath=classpath()),
                                args.idle_seconds),
        "hdfs-poll": await idle_cost(cluster, table, HdfsPollingNotifier(), args.idle_seconds),
        "poll": await idle_cost(cluster, table, PollingNotifier(), args.idle_seconds),
    }
    latencies = await push_latency(cluster, table, args.commits)
    return {
        "idle": idle,
        "latency_ms": {"p50": round(statistics.median(latencies), 1), "p99": round(percentile(latencies, 0.99), 1),
                       "max": round(max(latencies), 1), "n": len(latencies)},
        "idle_seconds": args.idle_seconds,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "hadoop": "3.4.1 MiniDFSCluster",
    }


def on_cluster(run: Callable[[argparse.Namespace, HdfsCluster], Awaitable[dict[str, Any]]],
               args: argparse.Namespace) -> dict[str, Any]:
    """``run(args, cluster)`` on a MiniDFSCluster of its own, stopped afterwards."""
    cluster = HdfsCluster()
    try:
        return asyncio.run(run(args, cluster))
    finally:
        cluster.close()


def store_key(key: str, result: dict[str, Any], figure: Callable[[dict], str]) -> None:
    """Write ``result`` as ``key`` of the HDFS results file, the other keys kept; print its figure."""
    results = json.loads(RESULTS.read_text())
    results[key] = result
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(figure({"hdfs": results}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--idle-seconds", type=float, default=120.0)
    result = on_cluster(main_async, parser.parse_args(argv))
    if RESULTS.exists():  # hdfs_warehouse_bench.py's figures stay
        kept = json.loads(RESULTS.read_text())  # and hdfs_python_rpc.py's
        for key in ("warehouse", "python_rpc"):
            result.setdefault(key, kept.get(key))
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    from benchmarks.figures.hdfs import hdfs_table

    print(hdfs_table({"hdfs": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
