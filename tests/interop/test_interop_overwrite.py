"""Scenario 7: Java's INSERT OVERWRITE of a partition and of the whole table, read as changes
(``overwrite="read"``) while Java commits around them.

The oracle is Java's streaming read with the overwrite option on: ``streaming-read-overwrite``
for primary-key tables (Java reads, per bucket, the merged rows of the removed files as ``-D``
and of the added files as ``+I``: the feed's rows, in another order), and
``streaming-read-append-overwrite`` for append tables, where Java delivers only the added rows
(``+I``); the feed also delivers the removed rows as ``-D``, so those are checked against
Java's batch read of the overwritten partitions before the overwrite. Either way replaying the
feed onto its full batch must give Java's batch read of the final snapshot.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from interop_support import (
    FEED_OPTIONS,
    assert_same_rows,
    feed_changes,
    follow,
    last_changed_snapshot,
    py_table,
    replay,
)

from paimon_feed import ChangeFeed

COLUMNS = [("dt", "STRING NOT NULL"), ("id", "BIGINT NOT NULL"), ("commit", "INT"), ("payload", "STRING")]
A, B = "20260101", "20260102"
WHOLE_TABLE = {"dynamic-partition-overwrite": "false"}  # overwrite every partition, not just the ones written
KINDS = ("delta", "changelog", "catch-up", "overwrite")


def rows(n: int, partitions: tuple[str, ...], keys=range(3)) -> list[dict]:
    return [{"dt": dt, "id": k, "commit": n, "payload": f"{dt}-{n}-{k}"} for dt in partitions for k in keys]


def _write_around_overwrites(table) -> list[int]:
    """Java's commits while the feed reads; returns the two overwrite snapshots."""
    table.write(rows(3, (A, B), keys=range(2, 5)))
    partition = table.overwrite(rows(4, (A,), keys=range(1, 4)), partition={"dt": A})  # keys 0, 4 go
    table.write(rows(5, (A, B), keys=range(5, 7)))
    whole = table.overwrite(rows(6, (B,), keys=range(0, 2)), options=WHOLE_TABLE)  # partition A goes
    table.write(rows(7, (A,), keys=range(8, 10)))
    return [partition, whole]


def _follow(table, during):
    overwrites = []

    async def run():
        async with ChangeFeed(
            py_table(table), start="latest-full", include_row_kind=True, overwrite="read", **FEED_OPTIONS,
        ) as feed:
            return await follow(feed, lambda: overwrites.extend(during(table)), lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run())
    full = delivered.batches[0]
    assert full.kind == "full"
    full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
    assert_same_rows(full_rows, table.read(full.snapshot_id))
    assert [b.snapshot_id for b in delivered.batches if b.kind == "overwrite"] == overwrites
    return delivered, full_rows, overwrites


def _batch_rows(delivered, snapshot_id: int) -> list[dict]:
    (index,) = [i for i, b in enumerate(delivered.batches) if b.snapshot_id == snapshot_id]
    return [{**{k: v for k, v in row.items() if k != "_row_kind"}, "_kind": row["_row_kind"]}
            for i, row in delivered.rows if i == index]


def _assert_removed_first(batch_rows: list[dict]) -> None:
    kinds = [row["_kind"] for row in batch_rows]
    assert kinds == sorted(kinds, key=lambda kind: kind != "-D") and set(kinds) <= {"-D", "+I"}, kinds


def test_primary_key_overwrites_read_as_java_streaming_read_overwrite_reads_them(java, warehouse):
    table = java.table(warehouse, "db.daily").create(
        COLUMNS, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2", "changelog-producer": "input"},
    )
    table.write(rows(1, (A, B)))
    table.write(rows(2, (A, B), keys=range(1, 3)))  # updates
    delivered, full_rows, overwrites = _follow(table, _write_around_overwrites)
    java_reads_overwrites = {"streaming-read-overwrite": "true"}

    for snapshot in overwrites:
        batch_rows = _batch_rows(delivered, snapshot)
        _assert_removed_first(batch_rows)
        java = table.changes(after=snapshot - 1, to=snapshot, options=java_reads_overwrites)
        assert java["snapshots"] == [snapshot]
        assert_same_rows(batch_rows, java["rows"], with_kind=True)

    last = delivered.batches[-1].snapshot_id
    changes = feed_changes(delivered, kinds=KINDS)
    java_changes = table.changes(after=delivered.batches[0].snapshot_id, to=last, options=java_reads_overwrites)["rows"]
    assert_same_rows(changes, java_changes, with_kind=True)
    assert {row["commit"] for row in java_changes if row["_kind"] == "+I"} == {3, 4, 5, 6, 7}
    assert {row["commit"] for row in java_changes if row["_kind"] == "-D"} == {1, 2, 3, 4, 5}
    assert_same_rows(replay(full_rows, changes, ("dt", "id")), table.read())


def test_append_overwrites_read_add_java_streaming_read_append_overwrite_rows_and_remove_the_old(java, warehouse):
    table = java.table(warehouse, "db.daily").create(
        COLUMNS, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "id"},
    )
    table.write(rows(1, (A, B)))
    table.write(rows(2, (A, B), keys=range(1, 3)))
    delivered, full_rows, overwrites = _follow(table, _write_around_overwrites)

    for snapshot, overwritten in zip(overwrites, ({A}, {A, B})):
        batch_rows = _batch_rows(delivered, snapshot)
        _assert_removed_first(batch_rows)
        java = table.changes(after=snapshot - 1, to=snapshot, options={"streaming-read-append-overwrite": "true"})
        assert java["snapshots"] == [snapshot]
        # Java's stream: the added rows only.
        assert_same_rows([r for r in batch_rows if r["_kind"] == "+I"], java["rows"], with_kind=True)
        # The removed rows: what Java's batch read had in the overwritten partitions just before.
        removed = [{**row, "_kind": "-D"} for row in table.read(snapshot - 1) if row["dt"] in overwritten]
        assert_same_rows([r for r in batch_rows if r["_kind"] == "-D"], removed, with_kind=True)

    state = Counter(tuple(sorted(row.items())) for row in full_rows)
    for change in feed_changes(delivered, kinds=KINDS):
        row = tuple(sorted((k, v) for k, v in change.items() if k != "_kind"))
        if change["_kind"] == "-D":
            assert state[row] > 0, ("-D of a row the consumer does not hold", row)
            state[row] -= 1
        else:
            state[row] += 1
    assert_same_rows([dict(row) for row in state.elements()], table.read())
