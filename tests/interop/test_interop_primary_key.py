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
from paimon_feed import ChangeFeed

COLUMNS = [("id", "BIGINT NOT NULL"), ("commit", "INT"), ("payload", "STRING")]


def pk_rows(n: int) -> list[dict]:
    """Commit n inserts keys n*10..n*10+2, updates key (n-1)*10 and deletes key (n-2)*10+1."""
    rows = [{"id": n * 10 + i, "commit": n, "payload": f"new-{n}-{i}", "_kind": "+I"} for i in range(3)]
    if n >= 2:
        rows.append({"id": (n - 1) * 10, "commit": n, "payload": f"upd-{n}", "_kind": "+U"})
    if n >= 3:
        rows.append({"id": (n - 2) * 10 + 1, "commit": n, "payload": f"del-{n}", "_kind": "-D"})
    return rows


TABLES = {
    "input": {"bucket": "2", "changelog-producer": "input"},
    "lookup": {"bucket": "2", "changelog-producer": "lookup"},
    "full-compaction": {"bucket": "2", "changelog-producer": "full-compaction"},
    "no-changelog": {"bucket": "2"},
    # scenario 3: deletion vectors
    "deletion-vectors": {"bucket": "2", "deletion-vectors.enabled": "true"},
    "deletion-vectors-lookup": {"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    # scenario 5: dynamic buckets, small enough that the keys spread over several
    "dynamic-bucket-input": {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "changelog-producer": "input"},
    "dynamic-bucket-lookup": {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "changelog-producer": "lookup"},
}


@pytest.mark.parametrize("options", TABLES.values(), ids=TABLES.keys())
def test_primary_key_changes_equal_java_streaming_read_and_replay_to_java_state(java, warehouse, options):
    table = java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options)

    def commit(n: int) -> None:
        table.write(pk_rows(n))
        if n in (2, 5, 7):
            table.compact()  # full compaction: the full-compaction producer's changelog

    for n in (1, 2):
        commit(n)

    async def run():
        async with ChangeFeed(py_table(table), start="latest-full", include_row_kind=True, **FEED_OPTIONS) as feed:
            return await follow(feed, lambda: [commit(n) for n in range(3, 8)], lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run())
    full = delivered.batches[0]
    assert full.kind == "full"
    full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
    assert_same_rows(full_rows, table.read(full.snapshot_id))

    last = delivered.batches[-1].snapshot_id
    changes = feed_changes(delivered)
    expected = table.changes(after=full.snapshot_id, to=last)["rows"]
    assert expected, "Java saw no change: the scenario tests nothing"
    assert_same_rows(changes, expected, with_kind=True)
    assert_same_rows(replay(full_rows, changes, ("id",)), table.read(last))
