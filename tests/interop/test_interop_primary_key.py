"""Scenarios 2, 3 and 5: primary-key tables written by Java Paimon, with its changelog
producers, compaction, deletion vectors and dynamic buckets.

Each run: Java commits, a feed starts (``latest-full``, with row kinds), Java goes on
committing and compacting; the feed's full batch must equal Java's batch read at that
snapshot, its changes what Java's streaming read delivers, and replaying them onto the full
batch must rebuild Java's table exactly.
"""

from __future__ import annotations

import asyncio

import pytest
from interop_support import (
    FEED_OPTIONS,
    assert_same_rows,
    feed_changes,
    follow,
    last_changed_snapshot,
    py_table,
    replay,
)
from scenarios import COLUMNS, PRIMARY_KEY_TABLES, check_primary_key_table, pk_rows

from paimon_feed import ChangeFeed


@pytest.mark.parametrize("options", PRIMARY_KEY_TABLES.values(), ids=PRIMARY_KEY_TABLES.keys())
def test_primary_key_changes_equal_java_streaming_read_and_replay_to_java_state(java, warehouse, options):
    check_primary_key_table(java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options))


@pytest.mark.parametrize(
    "options, batch_read_hides_level0",
    [
        ({"bucket": "2", "changelog-producer": "lookup"}, False),
        ({"bucket": "2", "deletion-vectors.enabled": "true"}, True),
    ],
    ids=["lookup", "deletion-vectors"],
)
def test_uncompacted_level0_at_feed_start_still_replays_to_java_state(java, warehouse, options, batch_read_hides_level0):
    """A writer that did not wait for compaction (``write-only`` here; Flink with
    ``changelog-producer.lookup-wait=false`` or asynchronous compaction) leaves level-0 files.
    With ``lookup`` they have no changelog yet: Java's stream starts from the levels above 0 and
    gets those rows from the compaction's changelog later, while the feed's full batch holds the
    whole state, so some changes repeat what it holds. With deletion vectors, Java's batch read
    hides level 0 until it is compacted, and the feed's full batch shows it. Either way,
    replaying the feed must give Java's table."""
    table = java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options)
    table.write(pk_rows(1))
    table.write(pk_rows(2), options={"write-only": "true"})

    async def run():
        async with ChangeFeed(py_table(table), start="latest-full", include_row_kind=True, **FEED_OPTIONS) as feed:
            return await follow(feed, lambda: [table.write(pk_rows(n)) for n in (3, 4)], lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run())
    full = delivered.batches[0]
    full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
    assert any(row["commit"] == 2 for row in full_rows), "the feed's full batch lacks the level-0 commit"
    java_at_full = table.read(full.snapshot_id)
    if batch_read_hides_level0:
        assert {row["commit"] for row in java_at_full} == {1}
    else:
        assert_same_rows(full_rows, java_at_full)
    last = delivered.batches[-1].snapshot_id
    changes = feed_changes(delivered)
    assert_same_rows(changes, table.changes(after=full.snapshot_id, to=last)["rows"], with_kind=True)
    assert_same_rows(replay(full_rows, changes, ("id",)), table.read())
