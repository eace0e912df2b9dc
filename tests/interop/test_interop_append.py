"""Scenarios 1 and 3 (append): append tables written and compacted by Java Paimon."""

from __future__ import annotations

import asyncio

import pytest

from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, last_changed_snapshot, py_table
from paimon_feed import ChangeFeed

COLUMNS = [("id", "BIGINT NOT NULL"), ("commit", "INT"), ("payload", "STRING")]


def append_rows(commit: int, count: int = 4) -> list[dict]:
    return [{"id": commit * 100 + i, "commit": commit, "payload": f"c{commit}-{i}"} for i in range(count)]


def follow_java_appends(java_table, before: range, during: range, compact_after: set[int]):
    """Java commits ``before``, the feed starts (latest-full), Java commits ``during``; Java
    compacts after each commit in ``compact_after``. Returns the feed's batches and rows."""

    def commit(n: int) -> None:
        java_table.write(append_rows(n))
        if n in compact_after:
            java_table.compact()

    for n in before:
        commit(n)

    async def run():
        async with ChangeFeed(py_table(java_table), start="latest-full", **FEED_OPTIONS) as feed:
            return await follow(
                feed, lambda: [commit(n) for n in during], lambda: last_changed_snapshot(java_table)
            )

    return asyncio.run(run())


@pytest.mark.parametrize(
    "options",
    [{"bucket": "2", "bucket-key": "id"}, {"bucket": "-1", "compaction.min.file-num": "2"}],
    ids=["fixed-buckets", "bucket-unaware"],
)
def test_append_table_compacted_by_java_is_delivered_exactly(java, warehouse, options):
    table = java.table(warehouse, "db.events").create(COLUMNS, options=options)
    delivered = follow_java_appends(table, range(1, 4), range(4, 9), compact_after={2, 6})

    full = delivered.batches[0]
    assert full.kind == "full"
    assert_same_rows([row for i, row in delivered.rows if i == 0], table.read(full.snapshot_id))
    last = delivered.batches[-1].snapshot_id
    expected = table.changes(after=full.snapshot_id, to=last)
    assert {row["commit"] for row in expected["rows"]} == set(range(4, 9))
    assert_same_rows(feed_changes(delivered), expected["rows"])

    # A new consumer from the earliest snapshot: compactions in the range, so a catch-up batch
    # must not take a compaction's rewritten files for new rows.
    async def from_earliest():
        async with ChangeFeed(py_table(table), start="earliest", catch_up_threshold=3, **FEED_OPTIONS) as feed:
            return await follow(feed, None, lambda: last)

    replayed = asyncio.run(from_earliest())
    assert_same_rows(feed_changes(replayed), table.changes(after=0, to=last)["rows"])
    assert_same_rows(feed_changes(replayed), table.read(last))


@pytest.mark.parametrize("bucket", ["2", "-1"], ids=["fixed-buckets", "bucket-unaware"])
def test_append_table_with_deletion_vectors_is_delivered_exactly(java, warehouse, bucket):
    options = {"bucket": bucket, "deletion-vectors.enabled": "true", "compaction.min.file-num": "2"}
    if bucket != "-1":
        options["bucket-key"] = "id"
    table = java.table(warehouse, "db.events_dv").create(COLUMNS, options=options)
    delivered = follow_java_appends(table, range(1, 3), range(3, 7), compact_after={4})

    full = delivered.batches[0]
    assert_same_rows([row for i, row in delivered.rows if i == 0], table.read(full.snapshot_id))
    last = delivered.batches[-1].snapshot_id
    assert_same_rows(feed_changes(delivered), table.changes(after=full.snapshot_id, to=last)["rows"])
    assert_same_rows([row for _, row in delivered.rows], table.read(last))
