"""An executor keeps the table it opened (``spark.table.worker_table``) only for split groups
planned against the same table: a schema change, or the table dropped and re-created under the
same name with other columns, opens it again. Oracle: the re-created table's own schema, as
pypaimon's catalog gives it."""

from __future__ import annotations

import time

import pyarrow as pa
from pypaimon import Schema

from paimon_feed.spark.options import parse_options
from paimon_feed.spark.partitions import table_token
from paimon_feed.spark.table import worker_table


def field_names(table) -> list[str]:
    return [field.name for field in table.table_schema.fields]


def test_a_worker_keeps_its_table_for_one_token_and_opens_the_re_created_one_for_another(paimon):
    table = paimon.create_append_table()
    options = parse_options(paimon.options(table))
    first = worker_table(options, 0, table_token(table))
    assert worker_table(options, 0, table_token(table)) is first  # kept: no second open

    paimon.catalog.drop_table("db.events", False)
    time.sleep(0.01)  # schema 0 of the new table is created in another millisecond
    schema = pa.schema([("key", pa.string()), ("amount", pa.float64())])
    paimon.catalog.create_table("db.events", Schema.from_pyarrow_schema(schema), False)
    recreated = paimon.catalog.get_table("db.events")
    assert recreated.table_schema.id == table.table_schema.id == 0
    assert table_token(recreated) != table_token(table)

    reopened = worker_table(options, 0, table_token(recreated))
    assert reopened is not first
    assert field_names(reopened) == field_names(recreated) == ["key", "amount"]


def test_a_schema_change_opens_the_table_again(paimon):
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    table = paimon.create_append_table()
    options = parse_options(paimon.options(table))
    first = worker_table(options, 0, table_token(table))
    paimon.catalog.alter_table("db.events", [SchemaChange.add_column("extra", AtomicType("INT"))], False)
    evolved = paimon.catalog.get_table("db.events")
    reopened = worker_table(options, 1, table_token(evolved))
    assert reopened is not first and field_names(reopened)[-1] == "extra"
