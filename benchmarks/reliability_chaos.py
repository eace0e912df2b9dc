"""Reliability scenarios chaos, faults and fault-permanent: in-process feeds against a writer
process, with hints dropped, duplicated, reordered and delayed, and with storage errors
injected, transient or for good (run by :mod:`benchmarks.reliability`)."""

from __future__ import annotations

import asyncio
import os
import random
import time

from benchmarks._common.reliability_setup import (
    ROWS_PER_COMMIT,
    Outcome,
    _score,
    commit,
    committed_table,
    last_written,
    open_table,
    start_writer,
)
from benchmarks._common.scratch import removes_scratch

# --- chaos and faults: in-process feeds against a writer process ----------------------------------


class FaultyFileIO:
    """pypaimon FileIO that fails a fraction of storage calls with an OSError."""

    CALLS = {"exists", "read_file_utf8", "list_status", "get_file_status", "new_input_stream"}

    def __init__(self, inner, rate: float, seed: int = 3) -> None:
        self._inner, self.rate, self._random = inner, rate, random.Random(seed)
        self.injected = 0
        self.broken = False

    def exists_batch(self, paths):
        return {path: self.exists(path) for path in paths}

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if name not in self.CALLS or not callable(attribute):
            return attribute

        def maybe_fail(*args, **kwargs):
            if self.broken or self._random.random() < self.rate:
                self.injected += 1
                raise OSError(f"injected storage fault in {name}")
            return attribute(*args, **kwargs)

        return maybe_fail


async def _follow(feed, last_snapshot: int, visible_at) -> tuple[list, float]:
    """Consume until ``last_snapshot``; return (rows, max visible→delivered delay in ms)."""
    rows, max_delay = [], 0.0
    previous = None
    out_of_order = 0
    async for batch in feed:
        if previous is not None and batch.first_snapshot_id != previous + 1:
            out_of_order += 1
        previous = batch.snapshot_id
        now = time.time()
        for snapshot_id in range(batch.first_snapshot_id, batch.snapshot_id + 1):
            visible = visible_at(snapshot_id)
            if visible is not None:
                max_delay = max(max_delay, 1000 * (now - visible))
        rows.extend((row["commit"], row["id"]) for row in batch.to_arrow().to_pylist())
        await feed.commit(batch)
        if batch.snapshot_id >= last_snapshot:
            break
    return rows, max_delay, out_of_order


def _snapshot_mtime(warehouse: str):
    snapshot_dir = os.path.join(warehouse, "db.db", "t", "snapshot")

    def visible_at(snapshot_id: int) -> float | None:
        try:
            return os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_id}")).st_mtime
        except FileNotFoundError:
            return None

    return visible_at


@removes_scratch
def run_chaos(commits: int, *, reconcile_interval: float = 0.5, seed: int = 5) -> Outcome:
    from paimon_feed import ChangeFeed, LocalNotifier
    from paimon_feed.notifiers.chaos import ChaosNotifier

    warehouse, table = committed_table("paimon-feed-chaos-", 1)

    async def main():
        chaos = ChaosNotifier(LocalNotifier(), drop=0.3, duplicate=0.2, reorder=0.2, max_delay=0.2, seed=seed)
        async with chaos, ChangeFeed(
            table, notifier=chaos, start="earliest", reconcile_interval=reconcile_interval, catch_up_threshold=10**6
        ) as feed:
            writer = start_writer(warehouse, first=1, count=commits, interval=0.03)
            rows, max_delay, out_of_order = await _follow(feed, commits + 1, _snapshot_mtime(warehouse))
            last_commit = await asyncio.to_thread(last_written, writer)
            return rows, max_delay, out_of_order, last_commit, feed.metrics(), dict(chaos.stats)

    rows, max_delay, out_of_order, last_commit, metrics, stats = asyncio.run(main())
    outcome = _score("chaos", rows, range(last_commit + 1), out_of_order, metrics.batches_delivered)
    outcome.max_delay_ms = max_delay
    outcome.notes = {"chaos": stats, "reconcile_interval_s": reconcile_interval, "reconciles": metrics.reconciles}
    return outcome


def _faulty_table(warehouse: str, rate: float):
    """The warehouse's table opened again, its storage calls through a :class:`FaultyFileIO`
    (the writer's own handle stays sound)."""
    table = open_table(warehouse, create=False)
    faulty = FaultyFileIO(table.file_io, rate)
    table.file_io = faulty
    return table, faulty


@removes_scratch
def run_faults(commits: int, *, rate: float = 0.1) -> Outcome:
    from paimon_feed import ChangeFeed

    warehouse, _ = committed_table("paimon-feed-faults-", commits)
    table, faulty = _faulty_table(warehouse, rate)

    async def main():
        async with ChangeFeed(table, start="earliest", catch_up_threshold=10**6, max_pending=4) as feed:
            rows, _, out_of_order = await _follow(feed, commits, lambda _: None)
            return rows, out_of_order, feed.metrics()

    rows, out_of_order, metrics = asyncio.run(main())
    outcome = _score("faults", rows, range(commits), out_of_order, metrics.batches_delivered)
    outcome.notes = {"injected_faults": faulty.injected, "storage_retries": metrics.storage_retries, "rate": rate}
    return outcome


@removes_scratch
def run_permanent_fault() -> Outcome:
    """Storage breaks for good mid-stream: the consumer gets a FeedError, the checkpoint stays."""
    from paimon_feed import ChangeFeed, FeedError

    warehouse, writer_table = committed_table("paimon-feed-broken-", 5)
    table, faulty = _faulty_table(warehouse, 0.0)
    consumer_file = os.path.join(warehouse, "db.db", "t", "consumer", "consumer-broken")

    async def main():
        delivered, error = 0, None
        try:
            async with ChangeFeed(table, consumer_id="broken", start="earliest", catch_up_threshold=10**6) as feed:
                async for batch in feed:
                    delivered += 1
                    await feed.commit(batch)
                    if batch.snapshot_id == 5:
                        with open(consumer_file) as handle:
                            before = handle.read()
                        faulty.broken = True
                        commit(writer_table, 5)
        except FeedError as exc:
            error = exc
        with open(consumer_file) as handle:
            after = handle.read()
        return delivered, error, before, after

    delivered, error, before, after = asyncio.run(main())
    outcome = Outcome("fault-permanent", committed_batches=delivered, expected_rows=5 * ROWS_PER_COMMIT)
    outcome.notes = {
        "error": f"{type(error).__name__}: {error}" if error else None,
        "checkpoint_untouched": before == after,
    }
    if error is None or before != after:
        outcome.lost = 1  # the failure was swallowed or progress moved: count it as a loss
    return outcome
