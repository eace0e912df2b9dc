"""Scenario 10: a feed starting from a tag Java created (``start="tag:NAME"``), before and after
Java expired the tagged snapshot's file.

The full batch must equal Java's batch read of the tag (``scan.tag-name``), and the changes
after it what Java's streaming read delivers from the tag's snapshot on, while Java commits.
A tag keeps its snapshot's data when the snapshot expires, so the same must hold afterwards.
"""

from __future__ import annotations

import asyncio

import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, last_changed_snapshot, py_table
from scenarios import COLUMNS, append_rows, pk_rows

from paimon_feed import ChangeFeed, SnapshotExpiredError

TABLES = {
    "primary-key-input": (pk_rows, dict(primary_keys=["id"], options={"bucket": "2", "changelog-producer": "input"})),
    "append": (append_rows, dict(options={"bucket": "2", "bucket-key": "id"})),
}
TAG = "nightly"


@pytest.mark.parametrize("make_rows, kind", TABLES.values(), ids=TABLES.keys())
def test_feed_from_a_java_tag_equals_java_reading_the_tag_then_streaming_after_it(java, warehouse, make_rows, kind):
    table = java.table(warehouse, "db.tagged").create(COLUMNS, **kind)
    table.write(make_rows(1))
    tagged = table.write(make_rows(2))
    table.create_tag(TAG, tagged)
    table.write(make_rows(3))
    table.write(make_rows(4))
    commits = iter(range(5, 11))

    def check(java_writes) -> None:
        async def run():
            async with ChangeFeed(py_table(table), start=f"tag:{TAG}", include_row_kind=True, **FEED_OPTIONS) as feed:
                return await follow(feed, java_writes, lambda: last_changed_snapshot(table))

        delivered = asyncio.run(run())
        full = delivered.batches[0]
        assert (full.kind, full.snapshot_id) == ("full", tagged)
        java_tag = table.read(options={"scan.tag-name": TAG})
        assert {row["commit"] for row in java_tag} == {1, 2}
        full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
        assert_same_rows(full_rows, java_tag)
        java_changes = table.changes(after=tagged, to=delivered.batches[-1].snapshot_id)["rows"]
        assert {3, 4} <= {row["commit"] for row in java_changes}
        assert_same_rows(feed_changes(delivered), java_changes, with_kind=True)

    check(lambda: [table.write(make_rows(next(commits))) for _ in range(2)])

    # Java expires the tagged snapshot (and those before it); the tag keeps its data.
    latest = table.snapshot_info()["snapshot"]
    assert table.expire_snapshots(latest - tagged)["earliest"] == tagged + 1
    check(lambda: [table.write(make_rows(next(commits))) for _ in range(2)])


def test_a_tag_whose_following_snapshots_java_expired_is_refused_naming_the_gap(java, warehouse):
    """The tag still has its data, but the changes right after it are gone: never a silent
    skip from the tag to the earliest snapshot left."""
    table = java.table(warehouse, "db.tagged").create(COLUMNS, options={"bucket": "2", "bucket-key": "id"})
    tagged = table.write(append_rows(1))
    table.create_tag(TAG, tagged)
    for n in range(2, 5):
        table.write(append_rows(n))
    earliest = table.expire_snapshots(1)["earliest"]
    assert earliest > tagged + 1

    async def run():
        async with ChangeFeed(py_table(table), start=f"tag:{TAG}", **FEED_OPTIONS) as feed:
            return await follow(feed, None, lambda: table.snapshot_info()["snapshot"], timeout=20)

    with pytest.raises(SnapshotExpiredError) as raised:
        asyncio.run(run())
    assert (raised.value.snapshot_id, raised.value.earliest_snapshot_id) == (tagged + 1, earliest)
