"""Scenario 13: tables written by Paimon 0.9 (still produced by old Flink and Spark jobs).

pypaimon 2.1 cannot read their manifests: every plan fails with ``KeyError:
'_VALUE_STATS_COLS'`` (0.9's manifest entries lack the field). The feed must then refuse the
table, never deliver rows that differ from Java's; one run per table kind, checked three ways.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, last_changed_snapshot, py_table
from scenarios import COLUMNS

from paimon_feed import ChangeFeed, FeedError, UnsupportedTableError

KINDS = {
    "append": dict(options={"bucket": "2", "bucket-key": "id"}),
    "primary-key-lookup": dict(primary_keys=["id"], options={"bucket": "2", "changelog-producer": "lookup"}),
}
UNREADABLE = "pypaimon 2.1 cannot read Paimon 0.9 manifests: KeyError: '_VALUE_STATS_COLS'"


@dataclass
class Outcome:
    java_changes: list
    delivered: object = None
    error: BaseException | None = None
    storage_retries: int = 0


@pytest.fixture(scope="module", params=KINDS, ids=KINDS.keys())
def old_table(request, java_old, tmp_path_factory) -> Outcome:
    """A 0.9 table (three commits and a full compaction), and what a feed made of it."""
    warehouse = str(tmp_path_factory.mktemp("old") / "warehouse")
    table = java_old.table(warehouse, "db.legacy").create(COLUMNS, **KINDS[request.param])
    for n in range(1, 4):
        table.write([{"id": n * 10 + i, "commit": n, "payload": f"c{n}-{i}", "_kind": "+I"} for i in range(3)])
    table.compact()
    outcome = Outcome(java_changes=table.changes(after=0, to=table.snapshot_info()["snapshot"])["rows"])
    assert {row["commit"] for row in outcome.java_changes} == {1, 2, 3}, "Java 0.9 cannot read its own table"

    async def run():
        async with ChangeFeed(py_table(table), start="earliest", **FEED_OPTIONS) as feed:
            try:
                return await follow(feed, None, lambda: last_changed_snapshot(table), timeout=20)
            finally:
                outcome.storage_retries = feed.metrics().storage_retries

    try:
        outcome.delivered = asyncio.run(run())
    except FeedError as exc:
        outcome.error = exc
    return outcome


def test_paimon_09_table_never_yields_rows_that_differ_from_java(old_table):
    if old_table.error is None:
        assert_same_rows(feed_changes(old_table.delivered), old_table.java_changes)
    else:
        assert "_VALUE_STATS_COLS" in str(old_table.error), old_table.error
        assert "db.legacy" in str(old_table.error)


@pytest.mark.xfail(strict=True, raises=FeedError, reason=UNREADABLE)
def test_paimon_09_table_is_read_like_java(old_table):
    if old_table.error is not None:
        raise old_table.error
    assert_same_rows(feed_changes(old_table.delivered), old_table.java_changes)


def test_paimon_09_table_is_refused_at_once_not_retried_as_a_storage_error(old_table):
    if old_table.error is None:
        return  # read correctly: nothing to refuse
    assert isinstance(old_table.error, UnsupportedTableError), old_table.error
    assert old_table.storage_retries == 0  # a parse error is not retried
    message = str(old_table.error)
    assert "db.legacy" in message and "snapshot" in message and "manifest-list" in message
