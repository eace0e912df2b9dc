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

from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, last_changed_snapshot, py_table, replay
from paimon_feed import ChangeFeed
from scenarios import COLUMNS, PRIMARY_KEY_TABLES, check_primary_key_table, pk_rows

@pytest.mark.parametrize("options", PRIMARY_KEY_TABLES.values(), ids=PRIMARY_KEY_TABLES.keys())
def test_primary_key_changes_equal_java_streaming_read_and_replay_to_java_state(java, warehouse, options):
    check_primary_key_table(java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options))


def test_lookup_table_with_uncompacted_level0_at_start_replays_to_java_state(java, warehouse):
    """A lookup writer that did not wait for compaction (``write-only`` here, Flink with
    ``changelog-producer.lookup-wait=false``) leaves level-0 files without changelog. Java's
    stream starts from the levels above 0 and gets those rows later from the compaction's
    changelog; the feed's full batch holds the whole state (as Java's batch read does), so
    some changes repeat what it already holds, and replaying must still give Java's table."""
    options = {"bucket": "2", "changelog-producer": "lookup"}
    table = java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options)
    table.write(pk_rows(1))
    table.write(pk_rows(2), options={"write-only": "true"})

    async def run():
        async with ChangeFeed(py_table(table), start="latest-full", include_row_kind=True, **FEED_OPTIONS) as feed:
            return await follow(feed, lambda: [table.write(pk_rows(n)) for n in (3, 4)], lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run())
    full = delivered.batches[0]
    full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
    assert_same_rows(full_rows, table.read(full.snapshot_id))
    assert any(row["commit"] == 2 for row in full_rows), "commit 2 was compacted: the scenario tests nothing"
    last = delivered.batches[-1].snapshot_id
    changes = feed_changes(delivered)
    assert_same_rows(changes, table.changes(after=full.snapshot_id, to=last)["rows"], with_kind=True)
    assert any(row["commit"] == 2 for row in changes), "the compaction's changelog repeats commit 2"
    assert_same_rows(replay(full_rows, changes, ("id",)), table.read(last))
