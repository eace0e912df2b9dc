"""Follow a Java-written table with a ChangeFeed and compare what it delivers with Java's oracle."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from java_paimon import JavaTable
from pypaimon import CatalogFactory
from support.feeds import Delivered

__all__ = [
    "FEED_OPTIONS",
    "py_table",
    "follow",
    "feed_changes",
    "assert_same_rows",
    "replay",
    "last_changed_snapshot",
]

# Poll fast: the tables are local and small, and CI time matters.
FEED_OPTIONS = {"notifier": "poll", "poll_interval": 0.05, "reconcile_interval": 1.0}


def py_table(java_table: JavaTable) -> Any:
    """The same table, loaded by pypaimon's filesystem catalog."""
    catalog = CatalogFactory.create({"warehouse": java_table.warehouse, **java_table.catalog_options})
    return catalog.get_table(java_table.name)


def last_changed_snapshot(java_table: JavaTable, after: int = 0) -> int:
    """The last snapshot after ``after`` (or the earliest retained) in which Java's streaming
    read sees a change."""
    info = java_table.snapshot_info()
    latest, after = info["snapshot"], max(after, info["earliest"] - 1)
    snapshots = java_table.changes(after=after, to=latest)["snapshots"]
    assert snapshots, f"Java sees no change after snapshot {after} (latest {latest})"
    return snapshots[-1]


async def follow(
    feed: Any,
    java_writes: Callable[[], Any] | None,
    until: Callable[[], int],
    *,
    commit: bool = False,
    timeout: float = 60.0,
) -> Delivered:
    """Consume ``feed`` while ``java_writes`` commits from a thread, until the batches cover
    snapshot ``until()`` (asked once the writes are done). A feed error is raised here."""
    delivered = Delivered()

    async def consume() -> None:
        async for batch in feed:
            rows = await asyncio.to_thread(lambda: batch.to_arrow().to_pylist())
            if commit:
                await feed.commit(batch)
            # Counted only now, so stopping at the target never cuts a commit short.
            delivered.rows.extend((len(delivered.batches), row) for row in rows)
            delivered.batches.append(batch)

    consumer = asyncio.create_task(consume())
    try:
        if java_writes is not None:
            await asyncio.to_thread(java_writes)
        target = await asyncio.to_thread(until)
        deadline = time.monotonic() + timeout
        while not (delivered.batches and delivered.batches[-1].snapshot_id >= target):
            if consumer.done():
                consumer.result()  # the feed's error, or it ended before the target
                raise AssertionError(f"the feed ended before snapshot {target}: {delivered.batches}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no batch reached snapshot {target} in {timeout} s: {delivered.batches}")
            await asyncio.sleep(0.02)
    finally:
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
    delivered.assert_tiled()  # compaction snapshots included: each is in exactly one batch
    return delivered


def feed_changes(delivered: Delivered, *, kinds: tuple[str, ...] = ("delta", "changelog", "catch-up")) -> list[dict]:
    """The rows of the delivered batches of ``kinds``, with ``_row_kind`` renamed ``_kind``."""
    rows = []
    for index, row in delivered.rows:
        if delivered.batches[index].kind in kinds:
            row = dict(row)
            if "_row_kind" in row:
                row["_kind"] = row.pop("_row_kind")
            rows.append(row)
    return rows


def _canonical(rows: list[dict], with_kind: bool) -> Counter:
    out = Counter()
    for row in rows:
        row = dict(row)
        if not with_kind:
            row.pop("_kind", None)
        out[json.dumps(row, sort_keys=True)] += 1
    return out


def assert_same_rows(feed_rows: list[dict], java_rows: list[dict], *, with_kind: bool = False) -> None:
    """The same rows, as multisets (order across buckets is not defined)."""
    got, want = _canonical(feed_rows, with_kind), _canonical(java_rows, with_kind)
    assert got == want, (
        f"feed and Java differ:\n only in feed: {sorted((got - want).elements())[:20]}\n"
        f" only in Java: {sorted((want - got).elements())[:20]}"
    )


def replay(state: list[dict], changes: list[dict], key: tuple[str, ...]) -> list[dict]:
    """Apply changes to a table state: +I/+U insert or replace by key, -U/-D delete by key."""
    by_key = {tuple(row[k] for k in key): row for row in state}
    for change in changes:
        row = {k: v for k, v in change.items() if k != "_kind"}
        if change["_kind"] in ("+I", "+U"):
            by_key[tuple(row[k] for k in key)] = row
        else:
            by_key.pop(tuple(row[k] for k in key), None)
    return list(by_key.values())
