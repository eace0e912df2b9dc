"""The scenarios shared by several interop tests: Java writes, a feed follows, Java judges.

Each ``check_*`` function has Java commit before the feed starts (``latest-full``) and while
it reads, compacting on the way, then asserts that the feed's full batch equals Java's batch
read at that snapshot and its changes equal what Java's streaming read delivers.
"""

from __future__ import annotations

import asyncio

from interop_support import (
    FEED_OPTIONS,
    assert_same_rows,
    feed_changes,
    follow,
    last_changed_snapshot,
    py_table,
    replay,
)
from java_paimon import JavaTable

from paimon_feed import ChangeFeed

__all__ = [
    "COLUMNS",
    "APPEND_TABLES",
    "PRIMARY_KEY_TABLES",
    "append_rows",
    "pk_rows",
    "check_append_table",
    "check_primary_key_table",
]

COLUMNS = [("id", "BIGINT NOT NULL"), ("commit", "INT"), ("payload", "STRING")]

# Table options by name: scenario 1, and 3 for append tables.
APPEND_TABLES = {
    "fixed-buckets": {"bucket": "2", "bucket-key": "id"},
    "bucket-unaware": {"bucket": "-1", "compaction.min.file-num": "2"},
    "fixed-buckets-deletion-vectors": {"bucket": "2", "bucket-key": "id", "deletion-vectors.enabled": "true"},
    "bucket-unaware-deletion-vectors": {
        "bucket": "-1", "compaction.min.file-num": "2", "deletion-vectors.enabled": "true",
    },
}
# Scenarios 2, 3 (primary key) and 5.
PRIMARY_KEY_TABLES = {
    "input": {"bucket": "2", "changelog-producer": "input"},
    "lookup": {"bucket": "2", "changelog-producer": "lookup"},
    "full-compaction": {"bucket": "2", "changelog-producer": "full-compaction"},
    "no-changelog": {"bucket": "2"},
    "deletion-vectors": {"bucket": "2", "deletion-vectors.enabled": "true"},
    "deletion-vectors-lookup": {"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    # dynamic buckets, small enough that the keys spread over several
    "dynamic-bucket-input": {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "changelog-producer": "input"},
    "dynamic-bucket-lookup": {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "changelog-producer": "lookup"},
}


def append_rows(n: int, count: int = 4) -> list[dict]:
    return [{"id": n * 100 + i, "commit": n, "payload": f"c{n}-{i}"} for i in range(count)]


def pk_rows(n: int) -> list[dict]:
    """Commit n inserts keys n*10..n*10+2, updates key (n-1)*10 and deletes key (n-2)*10+1."""
    rows = [{"id": n * 10 + i, "commit": n, "payload": f"new-{n}-{i}", "_kind": "+I"} for i in range(3)]
    if n >= 2:
        rows.append({"id": (n - 1) * 10, "commit": n, "payload": f"upd-{n}", "_kind": "+U"})
    if n >= 3:
        rows.append({"id": (n - 2) * 10 + 1, "commit": n, "payload": f"del-{n}", "_kind": "-D"})
    return rows


def _follow_java_commits(table: JavaTable, make_rows, before: range, during: range, compact_after: set[int]):
    def commit(n: int) -> None:
        table.write(make_rows(n))
        if n in compact_after:
            table.compact()

    for n in before:
        commit(n)

    async def run():
        async with ChangeFeed(py_table(table), start="latest-full", include_row_kind=True, **FEED_OPTIONS) as feed:
            return await follow(feed, lambda: [commit(n) for n in during], lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run())
    full = delivered.batches[0]
    assert full.kind == "full"
    full_rows = [{k: v for k, v in row.items() if k != "_row_kind"} for i, row in delivered.rows if i == 0]
    assert_same_rows(full_rows, table.read(full.snapshot_id))
    last = delivered.batches[-1].snapshot_id
    changes = feed_changes(delivered)
    expected = table.changes(after=full.snapshot_id, to=last)["rows"]
    # (-U and -D rows carry the values, so the commit, they replace)
    assert set(during) <= {row["commit"] for row in expected}, ("Java missed commits", expected)
    assert_same_rows(changes, expected, with_kind=True)
    return full_rows, changes, last


def check_append_table(table: JavaTable, *, before=range(1, 4), during=range(4, 9), compact_after=frozenset({2, 6})) -> None:
    """Also a second consumer from the earliest snapshot: compactions lie in its range, so a
    catch-up batch must not take a compaction's rewritten files for new rows."""
    _, _, last = _follow_java_commits(table, append_rows, before, during, set(compact_after))

    async def from_earliest():
        async with ChangeFeed(py_table(table), start="earliest", catch_up_threshold=3, **FEED_OPTIONS) as feed:
            return await follow(feed, None, lambda: last)

    replayed = feed_changes(asyncio.run(from_earliest()))
    assert_same_rows(replayed, table.changes(after=0, to=last)["rows"])
    assert_same_rows(replayed, table.read())


def check_primary_key_table(table: JavaTable) -> None:
    """Also: replaying the changes onto the full batch rebuilds Java's table exactly."""
    full_rows, changes, _ = _follow_java_commits(table, pk_rows, range(1, 3), range(3, 8), {2, 5, 7})
    # At the latest snapshot, not the last one with changes: with deletion vectors, a batch
    # read hides a commit's level-0 files until the compaction snapshot after it.
    assert_same_rows(replay(full_rows, changes, ("id",)), table.read())
