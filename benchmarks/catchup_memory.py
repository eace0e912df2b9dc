"""Catch-up benchmark, part 6: RSS of a fresh process catching up a kept local backlog, for
pypaimon and the feed; its measured process (run by :mod:`benchmarks.catchup_bench`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

from benchmarks._common.catchup_setup import ROWS_PER_COMMIT, open_bench_table
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks.core_bench import feed_catch_up, pypaimon_catch_up  # (shared catch-up runs)

MEMORY_MODES = {
    "pypaimon": "pypaimon AsyncStreamingTableScan",
    "catch-up": "paimon-feed, catch-up batches",
    "per-snapshot": "paimon-feed, one batch per snapshot (max_pending=8)",
}


def _rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except FileNotFoundError:
        return None
    return None


def memory_child(argv: list[str]) -> None:
    """Runs in its own process: one catch-up of ``mode``, then its figures as JSON."""
    mode, warehouse, snapshots, ready, out = argv[0], argv[1], int(argv[2]), argv[3], argv[4]
    table = open_bench_table({"warehouse": warehouse})
    caches: dict = {}

    def on_batch(feed, batch):
        planner = feed._planner
        caches.update(
            snapshot_cache_entries=len(planner.timeline._cache),
            snapshot_cache_limit=planner.timeline._cache.maxsize,
            manifest_cache_entries=len(planner.manifests),
            manifest_cache_bytes=planner.manifests.bytes,
            manifest_cache_limits=[planner.manifests.max_entries, planner.manifests.max_bytes],
            batches=caches.get("batches", 0) + 1,
        )

    open(ready, "w").close()
    expected = snapshots * ROWS_PER_COMMIT
    if mode == "pypaimon":
        seconds, rows = asyncio.run(pypaimon_catch_up(table, snapshots, expected))
    else:
        threshold = 10 if mode == "catch-up" else 10**9
        seconds, rows = asyncio.run(
            feed_catch_up(table, snapshots, threshold, on_batch=on_batch, max_pending=8)
        )
    with open(out, "w") as handle:
        json.dump({"seconds": seconds, "rows": rows, "expected_rows": expected, **caches}, handle)


def measure_memory(warehouse: str, snapshots: int, interval_s: float = 0.05) -> dict:
    """RSS of a fresh process catching up ``snapshots`` snapshots, per mode: sampled every
    ``interval_s`` from the moment its imports are done."""
    results = {}
    workdir = scratch_dir("paimon-feed-memory-")
    for mode in MEMORY_MODES:
        ready, out = os.path.join(workdir, f"ready-{mode}"), os.path.join(workdir, f"{mode}.json")
        child = subprocess.Popen(
            [sys.executable, "-m", __spec__.name, "_memory", mode, warehouse, str(snapshots), ready, out]
        )
        samples: list[tuple[float, int]] = []
        while not os.path.exists(ready) and child.poll() is None:
            time.sleep(0.01)
        started = time.monotonic()
        while child.poll() is None:
            rss = _rss_bytes(child.pid)
            if rss is not None:
                samples.append((time.monotonic() - started, rss))
            time.sleep(interval_s)
        if child.returncode != 0:
            raise RuntimeError(f"memory run {mode} exited with {child.returncode}")
        with open(out) as handle:
            result = json.load(handle)
        values = [rss for _, rss in samples]
        quarters = [values[min(len(values) - 1, int(q * (len(values) - 1)))] for q in (0, 0.25, 0.5, 0.75, 1)]
        result.update(
            label=MEMORY_MODES[mode],
            start_mib=values[0] / 2**20,
            peak_mib=max(values) / 2**20,
            quarters_mib=[v / 2**20 for v in quarters],
            samples=len(samples),
            # growth over the second half of the run: flat if memory is bounded
            second_half_growth_mib=(values[-1] - values[len(values) // 2]) / 2**20,
        )
        results[mode] = result
    return results


if __name__ == "__main__":  # its measured process
    memory_child(sys.argv[2:])
