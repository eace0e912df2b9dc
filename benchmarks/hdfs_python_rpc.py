"""The HDFS notifier's time-boxed experiment: the inotify call spoken from Python, beside the JVM helper.

    PYTHONPATH=tests:tests/interop:tests/hdfs python -m benchmarks.hdfs_python_rpc [--repeats 5]

The notifier reads HDFS's inotify stream through a small JVM helper (``HdfsInotify.java`` on the
cluster's Hadoop client), because no Python client makes the ``getEditsFromTxid`` call. This
measures what a Python-only client would win: ``benchmarks/_common/hadoop_ipc.py`` speaks Hadoop
IPC 9 with simple authentication (no SASL, so no Kerberos; one NameNode, so no HA failover) and
reads the renames from the same edit log, on the same MiniDFSCluster:

- start to first call answered (the helper: JVM start, Hadoop client, stream open);
- the resident memory each adds (the helper's process; the Python client's is a socket);
- one idle call's round trip, and a rename's delay at the helper's cadence (0.2 s).

Writes the ``python_rpc`` key of ``benchmarks/results/hdfs.json``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import threading
import time
from typing import Any
from urllib.parse import urlparse

from benchmarks._common.hadoop_ipc import InotifyClient
from benchmarks._common.stats import percentile
from benchmarks.hdfs_bench import on_cluster, store_key

try:  # the test helpers, from PYTHONPATH (no sys.path edits)
    from hdfs_cluster import HdfsCluster, classpath
    from hdfs_native import Client
except ImportError as exc:
    raise SystemExit(f"{exc}: run PYTHONPATH=tests:tests/interop:tests/hdfs python -m benchmarks.hdfs_python_rpc") from exc

from paimon_feed.notifiers import _hdfs_stream
from paimon_feed.notifiers.hdfs import STREAM_POLL_INTERVAL


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def rename_snapshot(fs: Client, root: str, n: int) -> None:
    """A commit's last step as HDFS sees it: ``.snapshot-N.tmp`` renamed to ``snapshot-N``."""
    with fs.create(f"{root}/snapshot/.snapshot-{n}.tmp") as handle:
        handle.write(b"{}")
    fs.rename(f"{root}/snapshot/.snapshot-{n}.tmp", f"{root}/snapshot/snapshot-{n}")


async def helper_run(cluster: HdfsCluster, fs: Client, root: str, n: int) -> dict[str, float]:
    seen: asyncio.Queue[str] = asyncio.Queue()
    started = time.perf_counter()
    stream = _hdfs_stream.acquire(cluster.url, classpath(), int(STREAM_POLL_INTERVAL * 1000))
    try:
        await asyncio.wait_for(stream.ready, 120)
        ready_s = time.perf_counter() - started
        assert stream.process is not None
        memory = rss_mb(stream.process.pid)
        stream.listeners.add(lambda kind, path, txid: seen.put_nowait(path) if kind == "snapshot" else None)
        await asyncio.to_thread(rename_snapshot, fs, root, n)
        renamed = time.perf_counter()
        path = await asyncio.wait_for(seen.get(), 30)
        assert path.endswith(f"snapshot-{n}"), path
        return {"ready_s": ready_s, "rss_mb": memory, "rename_ms": (time.perf_counter() - renamed) * 1000}
    finally:
        await _hdfs_stream.release(stream)


def python_run(cluster: HdfsCluster, fs: Client, root: str, n: int, calls: int) -> dict[str, Any]:
    url = urlparse(cluster.url)
    started = time.perf_counter()
    client = InotifyClient(url.hostname or "localhost", url.port or 8020, cluster.superuser)
    try:
        txid = client.current_txid() + 1
        ready_s = time.perf_counter() - started
        round_trips = []
        for _ in range(calls):
            before = time.perf_counter()
            txid, _renames = client.edits_from(txid)
            round_trips.append((time.perf_counter() - before) * 1000)
        seen = threading.Event()

        def poll(txid: int) -> None:  # the helper's loop: one call, then a pause while nothing came
            while not seen.is_set():
                txid, renames = client.edits_from(txid)
                if any(r.dst.endswith(f"snapshot-{n}") for r in renames):
                    seen.set()
                    return
                time.sleep(STREAM_POLL_INTERVAL)

        poller = threading.Thread(target=poll, args=(txid,))
        poller.start()
        time.sleep(random.uniform(0, STREAM_POLL_INTERVAL))  # a commit comes at any phase of the loop
        rename_snapshot(fs, root, n)
        renamed = time.perf_counter()
        seen.wait(30)
        rename_ms = (time.perf_counter() - renamed) * 1000
        poller.join()
        return {"ready_s": ready_s, "rename_ms": rename_ms, "call_ms": statistics.median(round_trips)}
    finally:
        client.close()


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {key: round(statistics.median(run[key] for run in runs), 4) for key in runs[0]}


async def main_async(args: argparse.Namespace, cluster: HdfsCluster) -> dict[str, Any]:
    fs = Client(cluster.url)
    root = f"/bench-rpc-{os.getpid()}"
    fs.mkdirs(f"{root}/snapshot", create_parent=True)
    load_before = os.getloadavg()
    helper, python = [], []
    for repeat in range(args.repeats):
        helper.append(await helper_run(cluster, fs, root, 2 * repeat + 1))
        python.append(await asyncio.to_thread(python_run, cluster, fs, root, 2 * repeat + 2, args.calls))
    load_after = os.getloadavg()
    return {
        "helper": summary(helper),
        "python": summary(python),
        "python_rename_ms_p99": round(percentile([run["rename_ms"] for run in python], 0.99), 1),
        "repeats": args.repeats,
        "poll_interval_s": STREAM_POLL_INTERVAL,
        "cpus": os.cpu_count(),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50, help="idle calls timed per Python run")
    result = on_cluster(main_async, parser.parse_args(argv))
    from benchmarks.figures.hdfs import hdfs_python_rpc

    store_key("python_rpc", result, hdfs_python_rpc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
