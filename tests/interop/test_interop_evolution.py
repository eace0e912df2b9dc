"""Data-evolution and row-tracking tables as Java Paimon 1.4.2 writes and reads them.

A data-evolution update (Spark's ``MERGE INTO ... UPDATE SET v = ...`` on a
``data-evolution.enabled`` table) commits a file of only the updated columns for a whole file's
row-id range. What Java's streaming read delivers for that commit, pinned below:

- the update as ``+I`` rows with the updated columns set and every other column null — rows
  that look like new rows and name no key, not the update that happened;
- or, when a column it lacks is ``NOT NULL``, an ``IOException`` ("Required column is missing").

Neither is the commit's meaning, so the feed refuses such a batch with an
:class:`UnsupportedTableError` naming the snapshot, the columns and the file, after delivering
every batch before it; the table's state (``latest-full``) merges the columns and equals Java's
batch read. Commits of whole rows (appends) are delivered exactly as Java's streaming read
delivers them, on data-evolution and row-tracking tables alike.
"""

from __future__ import annotations

import asyncio

import pytest
from interop_support import assert_same_rows, py_table
from java_paimon import JavaError

from paimon_feed import ChangeFeed
from paimon_feed.errors import UnsupportedTableError

COLUMNS = [("id", "BIGINT"), ("v", "STRING"), ("w", "INT")]
EVOLUTION = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
FIRST = [{"id": 1, "v": "a", "w": 10}, {"id": 2, "v": "b", "w": 20}]
SECOND = [{"id": 3, "v": "c", "w": 30}]


async def _follow(table, **options) -> tuple[list, BaseException | None]:
    """The feed's batches as (kind, first id, last id, rows), and the error it stopped with."""
    batches: list = []
    try:
        async with ChangeFeed(table, notifier="poll", poll_interval=0.05, **options) as feed:
            async for batch in feed:
                rows = batch.to_arrow().to_pylist()
                for row in rows:
                    if "_row_kind" in row:
                        row["_kind"] = row.pop("_row_kind")
                batches.append((batch.kind, batch.first_snapshot_id, batch.snapshot_id, rows))
    except UnsupportedTableError as error:
        return batches, error
    return batches, None


@pytest.mark.parametrize("options", [
    EVOLUTION, {"row-tracking.enabled": "true", "bucket": "-1"},
], ids=["data-evolution", "row-tracking"])
def test_whole_row_commits_arrive_as_java_streams_them(java, warehouse, options):
    table = java.table(warehouse, "db.tracked").create(COLUMNS, options=options)
    table.write(FIRST)
    last = table.write(SECOND)
    batches, error = asyncio.run(_follow(py_table(table), start="earliest", end=last, include_row_kind=True))
    assert error is None
    assert [(kind, first, snapshot) for kind, first, snapshot, _ in batches] == [("delta", 1, 1), ("delta", 2, 2)]
    assert_same_rows(
        [row for *_, rows in batches for row in rows], table.changes(after=0, to=last)["rows"], with_kind=True
    )
    full, _ = asyncio.run(_follow(py_table(table), start="latest-full", end=last))
    assert_same_rows(full[0][3], table.read(last))


def test_a_column_update_java_streams_as_keyless_rows_is_refused_and_the_state_is_javas(java, warehouse):
    table = java.table(warehouse, "db.evolving").create(COLUMNS, options=EVOLUTION)
    first = table.write(FIRST)
    updated = table.update_columns(["v"], [{"v": "A"}, {"v": "B"}], first_row_id=0)

    # Java's streaming read: the update as two "new" rows with only v.
    java_rows = table.changes(after=first, to=updated)["rows"]
    assert java_rows == [
        {"id": None, "v": "A", "w": None, "_kind": "+I"}, {"id": None, "v": "B", "w": None, "_kind": "+I"},
    ]
    # The feed: snapshot 1 exactly, then a clear refusal instead of those rows.
    batches, error = asyncio.run(_follow(py_table(table), start="earliest", end=updated, include_row_kind=True))
    assert [rows for *_, rows in batches] == [[dict(row, _kind="+I") for row in FIRST]]
    assert isinstance(error, UnsupportedTableError)
    assert f"snapshot {updated} writes only the columns v" in str(error)
    assert "start='latest-full'" in str(error)
    # The state merges the columns, as Java's batch read does.
    full, error = asyncio.run(_follow(py_table(table), start="latest-full", end=updated))
    assert error is None and [kind for kind, *_ in full] == ["full"]
    assert_same_rows(full[0][3], table.read(updated))
    assert sorted(row["v"] for row in full[0][3]) == ["A", "B"]


def test_java_cannot_stream_a_column_update_of_a_table_with_a_not_null_column(java, warehouse):
    table = java.table(warehouse, "db.strict").create(
        [("id", "BIGINT NOT NULL"), ("v", "STRING")], options=EVOLUTION
    )
    first = table.write([{"id": 1, "v": "a"}])
    updated = table.update_columns(["v"], [{"v": "A"}], first_row_id=0)
    with pytest.raises(JavaError, match="Required column is missing"):
        table.changes(after=first, to=updated)
    batches, error = asyncio.run(_follow(py_table(table), start=first + 1, end=updated))
    assert batches == [] and isinstance(error, UnsupportedTableError)
    full, _ = asyncio.run(_follow(py_table(table), start="latest-full", end=updated))
    assert full[0][3] == [{"id": 1, "v": "A"}] == table.read(updated)
