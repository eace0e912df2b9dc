"""spark.read.format("paimon_feed"): schema mapping for every type, bounded reads, and options
that fail at load() with their name."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pyspark.sql import functions as F
from pyspark.sql import types as T
from spark_support import commit, expected_changes

from paimon_feed.tables import commit_arrow

ALL_TYPES_ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("t_tinyint", pa.int8()),
        ("t_smallint", pa.int16()),
        ("t_int", pa.int32()),
        ("t_decimal", pa.decimal128(10, 2)),
        ("t_decimal_wide", pa.decimal128(38, 18)),
        ("t_float", pa.float32()),
        ("t_double", pa.float64()),
        ("t_char", pa.string()),
        ("t_varchar", pa.string()),
        ("t_string", pa.string()),
        ("t_binary", pa.binary(4)),
        ("t_varbinary", pa.binary()),
        ("t_bytes", pa.binary()),
        ("t_boolean", pa.bool_()),
        ("t_date", pa.date32()),
        ("t_time", pa.time32("ms")),
        ("t_timestamp", pa.timestamp("us")),
        ("t_timestamp_ms", pa.timestamp("ms")),
        ("t_timestamp_ns", pa.timestamp("ns")),
        ("t_timestamp_ltz", pa.timestamp("us", tz="UTC")),
        ("t_array", pa.list_(pa.field("item", pa.int32(), nullable=False))),
        ("t_map", pa.map_(pa.string(), pa.int64())),
        ("t_row", pa.struct([pa.field("a", pa.int32(), nullable=False), ("b", pa.string())])),
    ]
)
# Types Arrow cannot express, set on the Paimon schema directly.
PAIMON_ONLY_TYPES = {"t_char": "CHAR(5)", "t_varchar": "VARCHAR(20)", "t_varbinary": "VARBINARY(10)"}

EXPECTED_SPARK_SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType(), False),
        T.StructField("t_tinyint", T.ByteType()),
        T.StructField("t_smallint", T.ShortType()),
        T.StructField("t_int", T.IntegerType()),
        T.StructField("t_decimal", T.DecimalType(10, 2)),
        T.StructField("t_decimal_wide", T.DecimalType(38, 18)),
        T.StructField("t_float", T.FloatType()),
        T.StructField("t_double", T.DoubleType()),
        T.StructField("t_char", T.StringType()),
        T.StructField("t_varchar", T.StringType()),
        T.StructField("t_string", T.StringType()),
        T.StructField("t_binary", T.BinaryType()),
        T.StructField("t_varbinary", T.BinaryType()),
        T.StructField("t_bytes", T.BinaryType()),
        T.StructField("t_boolean", T.BooleanType()),
        T.StructField("t_date", T.DateType()),
        T.StructField("t_time", T.TimeType(0)),
        T.StructField("t_timestamp", T.TimestampNTZType()),
        T.StructField("t_timestamp_ms", T.TimestampNTZType()),
        T.StructField("t_timestamp_ns", T.TimestampNTZType()),
        T.StructField("t_timestamp_ltz", T.TimestampType()),
        T.StructField("t_array", T.ArrayType(T.IntegerType(), containsNull=False)),
        T.StructField("t_map", T.MapType(T.StringType(), T.LongType(), valueContainsNull=True)),
        T.StructField(
            "t_row",
            T.StructType(
                [T.StructField("a", T.IntegerType(), False), T.StructField("b", T.StringType())]
            ),
        ),
    ]
)

LTZ = dt.datetime(2024, 2, 29, 13, 45, 30, 123456, tzinfo=dt.timezone.utc)
FULL_ROW = {
    "id": 1,
    "t_tinyint": -8,
    "t_smallint": 300,
    "t_int": 70000,
    "t_decimal": decimal.Decimal("12345678.90"),
    "t_decimal_wide": decimal.Decimal("12345678901234567890.123456789012345678"),
    "t_float": 1.5,
    "t_double": 2.25,
    "t_char": "abc",
    "t_varchar": "varchar",
    "t_string": "string",
    "t_binary": b"\x00\x01\x02\x03",
    "t_varbinary": b"vb",
    "t_bytes": b"bytes",
    "t_boolean": True,
    "t_date": dt.date(2024, 2, 29),
    "t_time": dt.time(13, 45, 30),
    "t_timestamp": dt.datetime(2024, 2, 29, 13, 45, 30, 123456),
    "t_timestamp_ms": dt.datetime(2024, 2, 29, 13, 45, 30, 123000),
    "t_timestamp_ns": dt.datetime(2024, 2, 29, 13, 45, 30, 123456),
    "t_timestamp_ltz": LTZ,
    "t_array": [1, 2, 3],
    "t_map": [("k", 1), ("n", None)],
    "t_row": {"a": 7, "b": "bee"},
}
NULL_ROW = {name: None for name in FULL_ROW} | {"id": 2}


@pytest.fixture
def all_types_table(paimon):
    schema = Schema.from_pyarrow_schema(ALL_TYPES_ARROW)
    for field in schema.fields:
        if field.name in PAIMON_ONLY_TYPES:
            field.type = AtomicType(PAIMON_ONLY_TYPES[field.name])
    paimon.catalog.create_table("db.all_types", schema, False)
    table = paimon.catalog.get_table("db.all_types")
    commit_arrow(table, pa.Table.from_pylist([FULL_ROW, NULL_ROW], schema=ALL_TYPES_ARROW))
    return table


def load(spark, options: dict):
    return spark.read.format("paimon_feed").options(**options).load()


def test_every_paimon_type_maps_to_its_spark_type_with_nullability(spark, paimon, all_types_table):
    df = load(spark, paimon.options(all_types_table))
    assert df.schema == EXPECTED_SPARK_SCHEMA


def test_every_paimon_type_reads_its_values_through_spark(spark, paimon, all_types_table):
    df = load(spark, paimon.options(all_types_table))
    rows = {row["id"]: row for row in df.collect()}
    full = rows[1].asDict(recursive=True)
    for name, value in FULL_ROW.items():
        if name == "t_timestamp_ltz":
            continue  # compared as an instant below; collect() renders it in local time
        if name == "t_map":
            assert full[name] == dict(value)
        elif name == "t_row":
            assert full[name] == value
        else:
            assert full[name] == value, name
    micros = df.where("id = 1").select(F.unix_micros("t_timestamp_ltz")).first()[0]
    assert micros == int(LTZ.timestamp() * 1_000_000)
    assert all(rows[2][name] is None for name in FULL_ROW if name != "id")


def test_row_kind_comes_first_as_a_non_null_string(spark, paimon, all_types_table):
    df = load(spark, paimon.options(all_types_table, includeRowKind="true"))
    assert df.schema.fields[0] == T.StructField("_row_kind", T.StringType(), False)
    assert df.schema.fields[1:] == EXPECTED_SPARK_SCHEMA.fields
    assert sorted(r["_row_kind"] for r in df.select("_row_kind").collect()) == ["+I", "+I"]


def test_snapshot_id_follows_the_row_kind_as_a_non_null_long(spark, paimon):
    table = paimon.create_pk_table()
    for n in (1, 2, 3):
        commit(table, n)
    df = load(spark, paimon.options(table, includeRowKind="true", includeSnapshotId="true"))
    assert df.schema.fields[:2] == [
        T.StructField("_row_kind", T.StringType(), False),
        T.StructField("_snapshot_id", T.LongType(), False),
    ]
    # the full state is read at snapshot 3: every row carries it
    assert {row["_snapshot_id"] for row in df.collect()} == {3}
    ranged = load(spark, paimon.options(
        table, startingPosition="snapshot:2", endSnapshot=3, includeSnapshotId="true"
    ))
    assert ranged.schema.fields[0] == T.StructField("_snapshot_id", T.LongType(), False)
    assert {(row["commit"], row["_snapshot_id"]) for row in ranged.collect()} == {(2, 2), (3, 3)}


@pytest.mark.parametrize(
    ("column", "option"), [("_row_kind", "includeRowKind"), ("_snapshot_id", "includeSnapshotId")]
)
def test_a_metadata_column_the_table_already_has_is_refused_at_load(spark, paimon, column, option):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), (column, pa.string())])
    paimon.catalog.create_table("db.clash", Schema.from_pyarrow_schema(schema), False)
    table = paimon.catalog.get_table("db.clash")
    with pytest.raises(Exception, match=f"already has a column {column}; option {option}"):
        load(spark, paimon.options(table, **{option: "true"})).schema


def test_a_batch_read_is_the_current_state_by_default(spark, paimon):
    table = paimon.create_pk_table()
    for n in (1, 2, 3):
        commit(table, n)
    rows = load(spark, paimon.options(table)).collect()
    # commit 3 inserted key 3, updated key 2 and deleted key 1
    assert sorted((r["id"], r["payload"]) for r in rows) == [(2, "upd-3"), (3, "new-3")]


def test_a_batch_read_with_start_and_end_returns_the_bounded_changes(spark, paimon):
    table = paimon.create_pk_table()
    for n in (1, 2, 3, 4):
        commit(table, n)
    options = paimon.options(
        table, startingPosition="snapshot:2", endSnapshot=3, includeRowKind="true"
    )
    rows = load(spark, options).collect()
    delivered = sorted((r["_row_kind"], r["id"], r["commit"], r["payload"]) for r in rows)
    assert delivered == expected_changes(table, (2, 3))


def test_an_empty_table_reads_as_an_empty_frame(spark, paimon):
    table = paimon.create_append_table()
    assert load(spark, paimon.options(table)).count() == 0


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"startingPositon": "latest"}, "startingpositon"),
        ({"startingPosition": "tomorrow"}, "startingPosition"),
        ({"maxSnapshotsPerTrigger": "0"}, "maxSnapshotsPerTrigger"),
        ({"includeRowKind": "sometimes"}, "includeRowKind"),
        ({"includeSnapshotId": "perhaps"}, "includeSnapshotId"),
        ({"consumerId": "no/slashes"}, "consumerId"),
        ({"notifier": "carrier-pigeon"}, "notifier"),
        ({"notifier": "sqs"}, "queueUrl"),
        ({"reconcileInterval": "never"}, "reconcileInterval"),
        ({"table": "db.missing"}, "db.missing"),
    ],
)
def test_invalid_options_fail_at_load_naming_the_option(spark, paimon, extra, named):
    table = paimon.create_append_table()
    options = paimon.options(table) | extra
    with pytest.raises(Exception, match=named):
        load(spark, options)


def test_invalid_stream_options_fail_at_load_too(spark, paimon):
    table = paimon.create_append_table()
    options = paimon.options(table, endSnapshot="soon")
    with pytest.raises(Exception, match="endSnapshot"):
        spark.readStream.format("paimon_feed").options(**options).load()


def test_register_hints_at_unix_sockets_in_a_session_on_sparks_default_tcp(spark, caplog):
    import logging

    import paimon_feed.spark

    assert spark.conf.get(paimon_feed.spark.UNIX_SOCKETS_CONF) == "false"  # Spark's default
    with caplog.at_level(logging.INFO, logger="paimon_feed.spark"):
        paimon_feed.spark.register(spark)
    hints = [r.getMessage() for r in caplog.records if paimon_feed.spark.UNIX_SOCKETS_CONF in r.getMessage()]
    assert len(hints) == 1 and "set it to true" in hints[0].lower()
