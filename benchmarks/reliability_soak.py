"""Reliability scenario soak: thousands of snapshots through one feed; memory, descriptors and
tasks stay flat (run by :mod:`benchmarks.reliability`)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

from benchmarks._common.reliability_setup import Outcome, _score, committed_table, last_written, start_writer
from benchmarks._common.scratch import removes_scratch

# --- soak: many snapshots through one feed, resources flat ----------------------------------------


def _resources() -> dict:
    with open("/proc/self/status") as handle:
        rss_kb = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS"))
    return {
        "rss_mb": round(rss_kb / 1024, 1),
        "open_fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
    }


@removes_scratch
def run_soak(snapshots: int) -> Outcome:
    from paimon_feed import ChangeFeed

    warehouse, table = committed_table("paimon-feed-soak-", 1)

    async def main():
        samples = []
        async with ChangeFeed(table, consumer_id="soak", start="earliest", max_pending=8) as feed:
            writer = start_writer(warehouse, first=1, count=snapshots - 1, interval=0.0)
            rows, previous, out_of_order, batches = [], None, 0, 0
            started = time.time()
            async for batch in feed:
                batches += 1
                if previous is not None and batch.first_snapshot_id != previous + 1:
                    out_of_order += 1
                previous = batch.snapshot_id
                rows.extend((r["commit"], r["id"]) for r in batch.to_arrow().to_pylist())
                await feed.commit(batch)
                if batches % 200 == 1 or batch.snapshot_id >= snapshots:
                    samples.append(
                        {
                            "snapshot": batch.snapshot_id,
                            "seconds": round(time.time() - started, 2),
                            "tasks": len(asyncio.all_tasks()),
                            "latency_ms_p50": feed.metrics().latency_ms_p50,
                            **_resources(),
                        }
                    )
                if batch.snapshot_id >= snapshots:
                    break
            await asyncio.to_thread(last_written, writer)
            return rows, out_of_order, batches, samples

    rows, out_of_order, batches, samples = asyncio.run(main())
    outcome = _score("soak", rows, range(snapshots), out_of_order, batches)
    first, last = samples[0], samples[-1]
    outcome.notes = {
        "snapshots": snapshots,
        "start": first,
        "end": last,
        "rss_growth_mb_after_warm_up": round(last["rss_mb"] - samples[min(1, len(samples) - 1)]["rss_mb"], 1),
        "snapshots_per_s": round(snapshots / max(last["seconds"], 1e-9), 1),
        "samples": samples,
    }
    return outcome
