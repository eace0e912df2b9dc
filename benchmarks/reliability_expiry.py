"""Reliability scenario expiry: snapshots expired under a lagging consumer, with and without its
consumer file (run by :mod:`benchmarks.reliability`)."""

from __future__ import annotations

import asyncio
import os

from benchmarks._common.reliability_setup import (
    Outcome,
    _score,
    commit,
    committed_table,
)
from benchmarks._common.scratch import removes_scratch

# --- expiry: a consumer file protects unread snapshots --------------------------------------------


def expire_like_paimon(table, retain_last: int) -> int:
    """Expire snapshots as Java Paimon's ExpireSnapshotsImpl does, consumers included.

    Java keeps the newest ``snapshot.num-retained`` snapshots and never expires a snapshot at or
    after ``ConsumerManager.minNextSnapshot()``; it deletes the files of the older ones and
    writes ``EARLIEST``. pypaimon 2.1 has no expiration, so this follows the Java rule, reading
    consumers with pypaimon's port of ConsumerManager. Returns the new earliest snapshot id.
    """
    latest = table.snapshot_manager().get_latest_snapshot().id
    boundary = latest - retain_last + 1
    protected = table.consumer_manager().min_next_snapshot()
    if protected is not None:
        boundary = min(boundary, protected)
    snapshot_dir = os.path.join(str(table.table_path), "snapshot")
    for name in os.listdir(snapshot_dir):
        if name.startswith("snapshot-") and int(name.split("-")[1]) < boundary:
            os.remove(os.path.join(snapshot_dir, name))
    with open(os.path.join(snapshot_dir, "EARLIEST"), "w") as handle:
        handle.write(str(boundary))
    return boundary


@removes_scratch
def run_expiry() -> Outcome:
    from paimon_feed import ChangeFeed, SnapshotExpiredError

    _, table = committed_table("paimon-feed-expiry-", 4)

    async def read_some(consumer_id, count):
        async with ChangeFeed(table, consumer_id=consumer_id, start="earliest", catch_up_threshold=10**6) as feed:
            rows = []
            async for batch in feed:
                rows.extend((r["commit"], r["id"]) for r in batch.to_arrow().to_pylist())
                await feed.commit(batch)
                if batch.snapshot_id >= count:
                    return rows

    protected_rows = asyncio.run(read_some("protected", 2))  # next snapshot 3, then lags
    for n in range(4, 30):
        commit(table, n)
    earliest = expire_like_paimon(table, retain_last=5)
    protected_rows += asyncio.run(read_some("protected", 30))

    # Without a consumer file nothing protects the reader: expiry raises, never skips silently.
    async def unprotected():
        try:
            async with ChangeFeed(table, start="snapshot:3") as feed:
                await feed.__anext__()
        except SnapshotExpiredError as exc:
            return exc
        return None

    expire_like_paimon(table, retain_last=5)  # the consumer has moved on: expiry proceeds
    os.remove(os.path.join(str(table.table_path), "consumer", "consumer-protected"))
    error = asyncio.run(unprotected())
    outcome = _score("expiry", protected_rows, range(30), 0, 0)
    outcome.notes = {
        "earliest_after_expiry_with_consumer": earliest,
        "unprotected_error": str(error) if error else None,
    }
    if error is None:
        outcome.lost += 1
    return outcome
