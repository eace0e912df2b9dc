"""Values exactly as Java Paimon reads them, or refused before any row (DESIGN invariant 12).

Java Paimon 1.4.2 writes the tables; Java's own batch and streaming reads are the oracle.
"""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, py_table

from paimon_feed import ChangeFeed
from paimon_feed.errors import UnsupportedTableError
from paimon_feed.planner import Planner

CHAR_COLUMNS = [("id", "BIGINT NOT NULL"), ("code", "CHAR(5)"), ("note", "STRING")]
CHAR_ROWS = [
    [{"id": 1, "code": "ab", "note": "x"}, {"id": 2, "code": "xyz  ", "note": "y"}],
    [{"id": 3, "code": " q", "note": "z"}, {"id": 1, "code": "abc", "note": "x2", "_kind": "+U"}],
]
NANOS = [("id", "BIGINT NOT NULL"), ("ts", "TIMESTAMP(9)"), ("note", "STRING")]
NANO_ROWS = [
    [{"id": 1, "ts": "2024-01-02T03:04:05.000000005", "note": "a"}],
    [{"id": 2, "ts": "2024-01-02T03:04:05.123456789", "note": "b"}],
]


def _rows(table: pa.Table) -> list[dict]:
    """Arrow rows as the Java driver prints them (timestamps with nine digits)."""
    columns = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_timestamp(column.type):
            column = pc.strftime(column.cast(pa.timestamp("ns")), "%Y-%m-%dT%H:%M:%S")
        columns[name] = column.to_pylist()
    rows = [dict(zip(columns, values)) for values in zip(*columns.values())]
    for row in rows:
        if "_row_kind" in row:
            row["_kind"] = row.pop("_row_kind")
    return rows


async def _batches(table, **options) -> list:
    out = []
    async with ChangeFeed(table, notifier="poll", poll_interval=0.05, **options) as feed:
        async for batch in feed:
            out.append((batch.kind, _rows(batch.to_arrow())))
    return out


@pytest.mark.parametrize("primary_keys, options", [
    (["id"], {"file.format": "orc", "bucket": "1", "changelog-producer": "lookup"}),
    ([], {"file.format": "orc", "bucket": "-1"}),
], ids=["primary-key-lookup", "append"])
def test_orc_char_arrives_without_padding_as_java_reads_it_in_full_and_change_batches(java, warehouse, primary_keys, options):
    table = java.table(warehouse, "db.codes").create(CHAR_COLUMNS, primary_keys=primary_keys, options=options)
    first = table.write(CHAR_ROWS[0])
    last = table.write(CHAR_ROWS[1], options={"write-only": "true"} if primary_keys else None)
    last = table.compact() if primary_keys else last

    batches = asyncio.run(_batches(py_table(table), start="latest-full", end=first, include_row_kind=True))
    assert [kind for kind, _ in batches] == ["full"]
    assert_same_rows([{k: v for k, v in r.items() if k != "_kind"} for r in batches[0][1]], table.read(first))

    changes = asyncio.run(_batches(py_table(table), start=first + 1, end=last, include_row_kind=True))
    assert_same_rows(
        [row for _, rows in changes for row in rows], table.changes(after=first, to=last)["rows"], with_kind=True
    )
    full = asyncio.run(_batches(py_table(table), start="latest-full", end=last))
    assert_same_rows(full[0][1], table.read(last))
    assert "abc" in {row["code"] for row in full[0][1]}  # Java trims the padding ORC stores


def test_orc_char_predicate_matches_the_unpadded_value_java_reads(java, warehouse):
    table = java.table(warehouse, "db.codes").create(CHAR_COLUMNS, options={"file.format": "orc", "bucket": "-1"})
    snapshot = table.write(CHAR_ROWS[0])
    pt = py_table(table)
    predicate = pt.new_read_builder().new_predicate_builder().equal("code", "ab")
    batches = asyncio.run(_batches(pt, start="latest-full", end=snapshot, predicate=predicate))
    assert batches[0][1] == [{"id": 1, "code": "ab", "note": "x"}]


def test_orc_primary_key_table_with_nanosecond_timestamps_is_refused_before_any_row(java, warehouse):
    table = java.table(warehouse, "db.events").create(
        NANOS, primary_keys=["id"], options={"file.format": "orc", "bucket": "1", "changelog-producer": "input"}
    )
    for rows in NANO_ROWS:
        table.write(rows)
    for start in ("latest-full", "earliest"):
        with pytest.raises(UnsupportedTableError, match=r"ts TIMESTAMP\(9\).*nanoseconds|nanoseconds.*ts TIMESTAMP\(9\)"):
            ChangeFeed(py_table(table), start=start, **FEED_OPTIONS)
    # Without the column nothing is lost: the feed reads it.
    projected = asyncio.run(_batches(py_table(table), start="latest-full", end=2, projection=["id", "note"]))
    assert_same_rows(projected[0][1], [{"id": r["id"], "note": r["note"]} for r in table.read(2)])


def test_merged_full_state_of_partial_update_with_nanoseconds_is_refused_and_its_changelog_is_exact(java, warehouse, monkeypatch):
    """Without pypaimon-rust (the ``[native]`` extra, ``test_interop_native.py`` has it)."""
    monkeypatch.setenv("PAIMON_FEED_NATIVE_READ", "0")
    table = java.table(warehouse, "db.events").create(
        NANOS, primary_keys=["id"],
        options={"bucket": "1", "merge-engine": "partial-update", "changelog-producer": "input"},
    )
    for rows in NANO_ROWS:
        last = table.write(rows, options={"write-only": "true"})
    with pytest.raises(UnsupportedTableError, match=r"ts TIMESTAMP\(9\).*start='latest'|start='latest'"):
        ChangeFeed(py_table(table), start="latest-full", **FEED_OPTIONS)
    with pytest.raises(UnsupportedTableError, match="TIMESTAMP"):
        Planner(py_table(table)).full_batch(last)
    batches = asyncio.run(_batches(py_table(table), start=1, end=last, include_row_kind=True))
    assert_same_rows([r for _, rows in batches for r in rows], table.changes(after=0, to=last)["rows"], with_kind=True)


@pytest.mark.parametrize("producer", ["lookup", "input"])
def test_partial_update_with_sequence_group_is_followed_from_its_changelog(java, warehouse, producer):
    table = java.table(warehouse, "db.profiles").create(
        [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("name_version", "INT")],
        primary_keys=["id"],
        options={
            "bucket": "1", "merge-engine": "partial-update", "changelog-producer": producer,
            "fields.name_version.sequence-group": "name",
        },
    )
    first = table.write([{"id": 1, "name": "a", "name_version": 2}])
    with pytest.raises(UnsupportedTableError, match=r"fields\.name_version\.sequence-group.*start='latest'"):
        ChangeFeed(py_table(table), **FEED_OPTIONS)  # the default start is latest-full
    feed = ChangeFeed(py_table(table), start="latest", **FEED_OPTIONS)  # needs no merge
    assert feed.table_name == "db.profiles"
    table.write([{"id": 1, "name": "old", "name_version": 1}])  # an older version: no change
    table.write([{"id": 1, "name": "b", "name_version": 3}, {"id": 2, "name": "c", "name_version": 1}])
    last = table.compact()
    batches = asyncio.run(_batches(py_table(table), start=first + 1, end=last, include_row_kind=True))
    rows = [r for _, rows in batches for r in rows]
    assert_same_rows(rows, table.changes(after=first, to=last)["rows"], with_kind=True)


def test_partial_update_with_ignore_delete_and_no_changelog_is_refused_with_a_feed_error(java, warehouse):
    table = java.table(warehouse, "db.profiles").create(
        [("id", "BIGINT NOT NULL"), ("name", "STRING")], primary_keys=["id"],
        options={"bucket": "1", "merge-engine": "partial-update", "ignore-delete": "true"},
    )
    table.write([{"id": 1, "name": "a"}])
    for start in ("latest", "latest-full"):
        with pytest.raises(UnsupportedTableError, match="ignore-delete.*changelog-producer"):
            ChangeFeed(py_table(table), start=start, **FEED_OPTIONS)


def test_spark_executor_reads_orc_char_as_java_and_follows_a_sequence_group_changelog(java, warehouse):
    from paimon_feed.spark.driver import plan_batch, read_splits
    from paimon_feed.spark.options import parse_options

    codes = java.table(warehouse, "db.codes").create(CHAR_COLUMNS, options={"file.format": "orc", "bucket": "-1"})
    codes.write(CHAR_ROWS[0])
    options = parse_options({"warehouse": str(warehouse), "table": "db.codes"})
    rows = [r for group in plan_batch(options) for b in read_splits(options, group) for r in _rows(pa.table(b))]
    assert_same_rows(rows, codes.read())

    profiles = java.table(warehouse, "db.profiles").create(
        [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("name_version", "INT")], primary_keys=["id"],
        options={"bucket": "1", "merge-engine": "partial-update", "changelog-producer": "input",
                 "fields.name_version.sequence-group": "name"},
    )
    last = profiles.write([{"id": 1, "name": "a", "name_version": 2}])
    options = parse_options({"warehouse": str(warehouse), "table": "db.profiles", "startingPosition": "earliest",
                             "endSnapshot": str(last), "includeRowKind": "true"})
    rows = [r for group in plan_batch(options) for b in read_splits(options, group) for r in _rows(pa.table(b))]
    assert_same_rows(rows, profiles.changes(after=0, to=last)["rows"], with_kind=True)
