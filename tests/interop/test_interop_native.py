"""Merged reads by pypaimon-rust (the ``[native]`` extra) are Java Paimon's reads.

Java Paimon 1.4.2 writes primary-key tables the way Flink jobs write them (several commits
left uncompacted, so every state split needs a merge) for each merge engine and file format,
and with a column of every kind of type; Java's batch read is the oracle for the feed's full
batch read natively, and for the same read without the extra (pypaimon's merge) where that is
not refused. Each test also checks that Rust read every split it was meant to.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, py_table
from support.native import require_native, spy_native_reads

from paimon_feed import ChangeFeed
from paimon_feed.errors import UnsupportedTableError
from paimon_feed.planner import Planner


@pytest.fixture(autouse=True)
def _native_installed():
    require_native()


EPOCH = dt.date(1970, 1, 1)


def _value(value, data_type: pa.DataType):
    """One Arrow value (as Python) in the form Java's driver prints it."""
    if value is None:
        return None
    t = pa.types
    if t.is_decimal(data_type):
        return format(value, "f")
    if t.is_binary(data_type) or t.is_fixed_size_binary(data_type) or t.is_large_binary(data_type):
        return base64.b64encode(value).decode()
    if t.is_date(data_type):
        return (value - EPOCH).days
    if t.is_list(data_type) or t.is_large_list(data_type):
        return [_value(item, data_type.value_type) for item in value]
    if t.is_map(data_type):
        return {str(_value(k, data_type.key_type)): _value(v, data_type.item_type) for k, v in sorted(value)}
    if t.is_struct(data_type):
        return {f.name: _value(value[f.name], f.type) for f in data_type}
    return value


def java_form(table: pa.Table) -> list[dict]:
    """Arrow rows as Java's driver prints them: timestamps with nine digits (from the Arrow
    values, never through Python ``datetime``), the other types by :func:`_value`."""
    columns = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_timestamp(column.type):
            if column.type.tz is not None:
                column = column.cast(pa.timestamp(column.type.unit))
            columns[name] = pc.strftime(column.cast(pa.timestamp("ns")), "%Y-%m-%dT%H:%M:%S").to_pylist()
        else:
            columns[name] = [_value(v, column.type) for v in column.to_pylist()]
    rows = [dict(zip(columns, values)) for values in zip(*columns.values())]
    for row in rows:
        if "_row_kind" in row:
            row["_kind"] = row.pop("_row_kind")
    return rows


def full_state(table, monkeypatch, *, native: bool, **planner_args) -> tuple[list[dict], list[bool]]:
    """The feed's full batch at the latest snapshot, read with or without pypaimon-rust, and
    per split offered to Rust whether it read it."""
    used = spy_native_reads(monkeypatch, native=native)
    planner = Planner(py_table(table), **planner_args)
    batch = planner.full_batch(planner.latest_snapshot_id())
    rows = java_form(batch.to_arrow())
    streamed = java_form(pa.Table.from_batches(list(batch.to_batches()), schema=batch.schema))
    assert streamed == rows  # to_batches() and to_arrow() take the same path
    return rows, used


KEYED = [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("n", "INT"), ("total", "BIGINT"), ("score", "DOUBLE"),
         ("flag", "BOOLEAN"), ("seq", "BIGINT")]


def keyed_commits(deletes: bool) -> list[list[dict]]:
    """Four commits over overlapping keys, with nulls (partial updates), out-of-order ``seq``
    values and, where the engine allows them, deletes: every state split needs a merge."""
    commits = []
    for c in range(4):
        rows = []
        for k in range(c * 5, c * 5 + 12):
            rows.append({
                "id": k % 17, "name": None if (k + c) % 3 == 0 else f"n{c}-{k}", "n": k + c,
                "total": None if k % 4 == 0 else k * 10 + c, "score": (k % 5) * 0.25 - c,
                "flag": (k + c) % 2 == 0, "seq": (7 * k + 3 * c) % 11,
            })
        if deletes and c:
            rows.append({"id": (c * 3) % 17, "_kind": "-D"})
        by_key = {row["id"]: row for row in rows}  # one row per key and commit
        commits.append(list(by_key.values()))
    return commits


AGGREGATES = {
    "fields.n.aggregate-function": "sum", "fields.total.aggregate-function": "max",
    "fields.score.aggregate-function": "min", "fields.name.aggregate-function": "last_non_null_value",
    "fields.flag.aggregate-function": "bool_or", "fields.seq.aggregate-function": "first_value",
}
ENGINES = {
    "deduplicate-orc": ({"file.format": "orc"}, True),
    "deduplicate-avro": ({"file.format": "avro"}, True),
    "deduplicate-sequence-field": ({"file.format": "orc", "sequence.field": "seq"}, True),
    "deduplicate-deletion-vectors": ({"file.format": "orc", "deletion-vectors.enabled": "true"}, True),
    "partial-update": ({"merge-engine": "partial-update"}, False),
    "partial-update-orc": ({"merge-engine": "partial-update", "file.format": "orc"}, False),
    "partial-update-avro": ({"merge-engine": "partial-update", "file.format": "avro"}, False),
    "partial-update-sequence-field": ({"merge-engine": "partial-update", "sequence.field": "seq"}, False),
    "partial-update-deletion-vectors": ({"merge-engine": "partial-update", "deletion-vectors.enabled": "true"}, False),
    "aggregation": ({"merge-engine": "aggregation", **AGGREGATES}, False),
    "aggregation-orc": ({"merge-engine": "aggregation", "file.format": "orc", **AGGREGATES}, False),
    "aggregation-listagg-product": ({
        "merge-engine": "aggregation", "fields.name.aggregate-function": "listagg",
        "fields.score.aggregate-function": "product", "fields.total.aggregate-function": "sum",
        "fields.n.aggregate-function": "min", "fields.flag.aggregate-function": "bool_and",
        "fields.seq.aggregate-function": "last_value"}, False),
    "first-row": ({"merge-engine": "first-row"}, False),
}


@pytest.mark.parametrize("case", sorted(ENGINES))
def test_merged_state_read_natively_is_javas_read_per_merge_engine(java, warehouse, monkeypatch, case):
    options, deletes = ENGINES[case]
    table = java.table(warehouse, "db.keyed").create(
        KEYED, primary_keys=["id"], options={"bucket": "2", **options}
    )
    dv = "deletion-vectors.enabled" in options or options.get("merge-engine") == "first-row"
    for rows in keyed_commits(deletes):
        # Deletion vectors and first-row show only compacted files: let Java compact those.
        table.write(rows, options=None if dv else {"write-only": "true"})
    java_rows = table.read()
    assert java_rows

    native, used = full_state(table, monkeypatch, native=True)
    assert_same_rows(native, java_rows)
    assert used and all(used), used

    python, _ = full_state(table, monkeypatch, native=False)
    assert_same_rows(python, java_rows)  # pypaimon's merge agrees where it is not refused


@pytest.mark.parametrize("case", ["partial-update", "aggregation", "deduplicate-orc"])
def test_row_kinds_of_a_merged_state_are_javas(java, warehouse, monkeypatch, case):
    """partial-update and aggregation merge into ``+I`` (read natively); deduplicate keeps the
    kept row's ``+U``, which Rust would report as ``+I``: that read is left to pypaimon."""
    options, _ = ENGINES[case]
    table = java.table(warehouse, "db.keyed").create(KEYED, primary_keys=["id"], options={"bucket": "1", **options})
    commits = keyed_commits(False)
    for n, rows in enumerate(commits):
        kind = "+U" if n else "+I"
        table.write([{**row, "_kind": kind} for row in rows], options={"write-only": "true"})
    java_rows = table.read_with_schema(with_kind=True)["rows"]
    native, used = full_state(table, monkeypatch, native=True, include_row_kind=True)
    assert_same_rows(native, java_rows, with_kind=True)
    assert bool(used) == (case != "deduplicate-orc"), used
    if case == "deduplicate-orc":
        assert "+U" in {row["_kind"] for row in java_rows}


TYPES = [
    ("id", "BIGINT NOT NULL"), ("i8", "TINYINT"), ("i16", "SMALLINT"), ("i32", "INT"), ("f32", "FLOAT"),
    ("f64", "DOUBLE"), ("ok", "BOOLEAN"), ("dec", "DECIMAL(38, 18)"), ("small_dec", "DECIMAL(9, 2)"),
    ("code", "CHAR(5)"), ("short", "VARCHAR(8)"), ("text", "STRING"), ("bin", "VARBINARY(8)"),
    ("bytes", "BYTES"), ("day", "DATE"),
    ("ts0", "TIMESTAMP(0)"), ("ts3", "TIMESTAMP(3)"), ("ts6", "TIMESTAMP(6)"), ("ts9", "TIMESTAMP(9)"),
    ("ltz3", "TIMESTAMP_LTZ(3)"), ("ltz6", "TIMESTAMP_LTZ(6)"),
    ("ints", "ARRAY<INT>"), ("names", "MAP<STRING, BIGINT>"), ("pair", "ROW<x INT, s STRING>"),
]


def typed_row(k: int, c: int) -> dict:
    b64 = base64.b64encode(bytes([k, c, 255])).decode()
    return {
        "id": k, "i8": -k, "i16": 300 * k, "i32": None if k == 2 else 70000 * k, "f32": k * 1.5 - c,
        "f64": k / 8 + c, "ok": k % 2 == 0, "dec": f"{k}{c}.123456789012345678", "small_dec": f"-{k}.{c}5",
        "code": ["ab", "xyz  ", " q", "abcde"][k % 4], "short": f"s{k}", "text": f"t{k}-{c}" if c % 2 else None,
        "bin": b64, "bytes": b64, "day": 19000 + k + c,
        "ts0": f"2024-01-0{1 + c}T03:04:0{k % 10}", "ts3": f"2024-01-02T03:04:05.{k:03d}",
        "ts6": f"2024-01-02T03:04:05.123{k:03d}", "ts9": f"2024-01-02T03:04:05.000000{c}{k:02d}",
        "ltz3": f"2023-12-31T23:59:59.{c}{k:02d}", "ltz6": f"2024-06-30T12:00:00.00{c}{k:03d}",
        "ints": [k, None, c], "names": {"a": k, "b": None}, "pair": {"x": c, "s": f"p{k}"},
    }


@pytest.mark.parametrize("file_format", ["parquet", "orc", "avro"])
def test_every_type_merged_natively_is_javas_value(java, warehouse, monkeypatch, file_format):
    """A partial-update table holding every kind of type, merged from three commits: Rust's
    values are Java's (nanoseconds kept, ORC CHAR trimmed as Java trims it), so the feed reads
    a Parquet ``TIMESTAMP(9)`` state it must refuse without the extra. (Avro cannot hold
    nanoseconds; an ORC table with them stays refused: its change files are still read by
    pypaimon's row reader.)"""
    columns = TYPES if file_format == "parquet" else [c for c in TYPES if c[0] != "ts9"]
    table = java.table(warehouse, "db.typed").create(
        columns, primary_keys=["id"],
        options={"bucket": "1", "merge-engine": "partial-update", "file.format": file_format},
    )
    names = {name for name, _ in columns}
    for c in range(3):
        rows = [{k: v for k, v in typed_row(k, c).items() if k in names} for k in range(c, c + 5)]
        if c == 2:  # a partial update: only some columns
            rows = [{k: r[k] for k in ("id", "ts9", "text") if k in names} for r in rows]
        table.write(rows, options={"write-only": "true"})
    java_rows = table.read()
    native, used = full_state(table, monkeypatch, native=True)
    assert_same_rows(native, java_rows)
    assert used and all(used), used
    if file_format != "parquet":
        return
    assert any(row["ts9"].endswith(("01", "02", "03", "04")) for row in java_rows)

    monkeypatch.setenv("PAIMON_FEED_NATIVE_READ", "0")
    with pytest.raises(UnsupportedTableError, match=r"ts9 TIMESTAMP\(9\)"):
        Planner(py_table(table)).full_batch(3)
    projected = [c for c, _ in TYPES if c != "ts9"]  # without it pypaimon's merge is exact too
    python, _ = full_state(table, monkeypatch, native=False, projection=projected)
    assert_same_rows(python, [{k: v for k, v in row.items() if k != "ts9"} for row in java_rows])


def test_a_split_rust_cannot_read_exactly_is_read_by_pypaimon_or_refused(java, warehouse, monkeypatch):
    """Files of an older schema are left to pypaimon (same rows); with a ``TIMESTAMP(9)``
    column that would lose its nanoseconds there, the full batch is refused before any row."""
    table = java.table(warehouse, "db.evolved").create(
        [("id", "BIGINT NOT NULL"), ("v", "STRING")], primary_keys=["id"],
        options={"bucket": "1", "merge-engine": "partial-update"},
    )
    table.write([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], options={"write-only": "true"})
    table.alter({"add": "w", "type": "BIGINT"})
    table.write([{"id": 1, "w": 7}, {"id": 3, "v": "c"}], options={"write-only": "true"})
    native, used = full_state(table, monkeypatch, native=True)
    assert_same_rows(native, table.read())
    assert not used  # the split holds a file of schema 0: Rust was not offered it

    table.alter({"add": "ts", "type": "TIMESTAMP(9)"})
    table.write([{"id": 2, "ts": "2024-01-02T03:04:05.000000009"}], options={"write-only": "true"})
    monkeypatch.setenv("PAIMON_FEED_NATIVE_READ", "1")
    with pytest.raises(UnsupportedTableError, match=r"pypaimon-rust.*does not read bucket 0"):
        Planner(py_table(table)).full_batch(table.snapshot_info()["snapshot"])
    table.compact()  # one file of the latest schema: Rust reads it
    native, used = full_state(table, monkeypatch, native=True)
    assert_same_rows(native, table.read())
    assert used and all(used)


def test_feed_and_spark_executors_deliver_javas_merged_state_with_nanoseconds(java, warehouse, monkeypatch):
    from paimon_feed.spark.driver import plan_batch, read_splits
    from paimon_feed.spark.options import parse_options

    table = java.table(warehouse, "db.events").create(
        [("id", "BIGINT NOT NULL"), ("ts", "TIMESTAMP(9)"), ("note", "STRING"), ("n", "BIGINT")],
        primary_keys=["id"], options={"bucket": "2", "merge-engine": "aggregation",
                                      "fields.n.aggregate-function": "sum",
                                      "fields.ts.aggregate-function": "max"},
    )
    for c in range(3):
        table.write([{"id": k, "ts": f"2024-01-02T03:04:05.00000000{c}", "note": f"c{c}", "n": k}
                     for k in range(c, c + 4)], options={"write-only": "true"})
    java_rows = table.read()
    used = spy_native_reads(monkeypatch, native=True)

    async def first_batch():
        async with ChangeFeed(py_table(table), start="latest-full", **FEED_OPTIONS) as feed:
            async for batch in feed:
                return java_form(batch.to_arrow())

    assert_same_rows(asyncio.run(first_batch()), java_rows)
    options = parse_options({"warehouse": str(warehouse), "table": "db.events"})
    spark_rows = [
        row for group in plan_batch(options) for batch in read_splits(options, group)
        for row in java_form(pa.table(batch))
    ]
    assert_same_rows(spark_rows, java_rows)
    assert used and all(used)


def test_decimal_text_is_plain():
    """The oracle's decimals are plain text, as Java's ``toPlainString``."""
    assert _value(decimal.Decimal("0E-18"), pa.decimal128(38, 18)) == "0.000000000000000000"
