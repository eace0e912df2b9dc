"""Scenarios 1 and 3 (append): append tables written and compacted by Java Paimon."""

from __future__ import annotations

import asyncio

import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, py_table
from scenarios import APPEND_TABLES, COLUMNS, append_rows, check_append_table

from paimon_feed import ChangeFeed


@pytest.mark.parametrize("options", APPEND_TABLES.values(), ids=APPEND_TABLES.keys())
def test_append_table_compacted_by_java_is_delivered_exactly(java, warehouse, options):
    check_append_table(java.table(warehouse, "db.events").create(COLUMNS, options=options))


@pytest.mark.parametrize("bucket", ["2", "-1"], ids=["fixed-buckets", "bucket-unaware"])
def test_catch_up_over_java_appends_without_compaction_is_exact(java, warehouse, bucket):
    """Only APPEND snapshots in the range: the feed catches up by set-diff of two snapshots'
    files (the path the compaction scenarios never take), here over Java's files."""
    options = {"bucket": bucket, "write-only": "true"}  # no compaction, no expiry
    if bucket != "-1":
        options["bucket-key"] = "id"
    table = java.table(warehouse, "db.events").create(COLUMNS, options=options)
    for n in range(1, 9):
        table.write(append_rows(n))

    async def run():
        async with ChangeFeed(py_table(table), start="snapshot:2", catch_up_threshold=3, **FEED_OPTIONS) as feed:
            return await follow(feed, lambda: [table.write(append_rows(n)) for n in (9, 10)], lambda: 10)

    delivered = asyncio.run(run())
    assert delivered.batches[0].kind == "catch-up", delivered.batches
    assert_same_rows(feed_changes(delivered), table.changes(after=1, to=10)["rows"])
