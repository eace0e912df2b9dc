"""Scenario 4: partitioned tables whose partitions Java drops and expires while a feed reads
(and overwrites one, and tags a snapshot).

Dropping or expiring a partition is an OVERWRITE snapshot, as is an INSERT OVERWRITE. Java's streaming read skips it by
default (``streaming-read-overwrite=false``), and so does the feed: the feed's changes must
equal Java's, and a feed starting afterwards must see the table without those partitions.
"""

from __future__ import annotations

import asyncio

import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, last_changed_snapshot, py_table

from paimon_feed import ChangeFeed

COLUMNS = [("dt", "STRING NOT NULL"), ("id", "BIGINT NOT NULL"), ("commit", "INT"), ("payload", "STRING")]
OLD, DROPPED, KEPT = "20200101", "20991230", "20991231"
# Given to one commit only, so the old partition expires at that commit.
EXPIRE_OLD_PARTITIONS = {
    "partition.expiration-time": "7 d",
    "partition.timestamp-formatter": "yyyyMMdd",
    "partition.expiration-check-interval": "0 s",
}


def rows(n: int, partitions: tuple[str, ...]) -> list[dict]:
    return [
        {"dt": dt, "id": n * 10 + i, "commit": n, "payload": f"{dt}-{n}-{i}"}
        for dt in partitions
        for i in range(2)
    ]


@pytest.mark.parametrize(
    "kind",
    [
        dict(primary_keys=["dt", "id"], options={"bucket": "1", "changelog-producer": "input"}),
        dict(options={"bucket": "-1"}),
    ],
    ids=["primary-key", "append"],
)
def test_partitions_dropped_and_expired_by_java_are_skipped_as_java_skips_them(java, warehouse, kind):
    table = java.table(warehouse, "db.daily").create(COLUMNS, partition_keys=["dt"], **kind)
    table.write(rows(1, (OLD, DROPPED, KEPT)))
    table.write(rows(2, (OLD, DROPPED, KEPT)))

    def during() -> None:
        table.write(rows(3, (DROPPED, KEPT)))
        table.drop_partitions({"dt": DROPPED})
        table.create_tag("after-drop", table.write(rows(4, (KEPT,))))
        table.write(rows(5, (KEPT,)), options=EXPIRE_OLD_PARTITIONS)
        table.overwrite(rows(6, (KEPT,)), partition={"dt": KEPT})  # INSERT OVERWRITE, skipped too
        table.write(rows(7, (DROPPED, KEPT)))

    async def run(java_writes):
        async with ChangeFeed(py_table(table), start="latest-full", include_row_kind=True, **FEED_OPTIONS) as feed:
            return await follow(feed, java_writes, lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run(during))
    state = {row["dt"] for row in table.read()}
    assert state == {DROPPED, KEPT}, "Java did not drop and expire the partitions as planned"
    assert {row["commit"] for row in table.read() if row["dt"] == KEPT} == {6, 7}, "no overwrite"

    full = delivered.batches[0]
    full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
    assert_same_rows(full_rows, table.read(full.snapshot_id))
    last = delivered.batches[-1].snapshot_id
    changes = feed_changes(delivered)
    assert_same_rows(changes, table.changes(after=full.snapshot_id, to=last)["rows"], with_kind=True)
    assert {row["commit"] for row in changes} == {3, 4, 5, 7}

    # A consumer starting now sees the table as Java does: no dropped or expired rows.
    after = asyncio.run(run(None))
    assert after.batches[0].kind == "full"
    assert_same_rows([{k: v for k, v in row.items() if k != "_row_kind"} for _, row in after.rows], table.read())
