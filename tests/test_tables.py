"""Opening tables by warehouse and name: the schema read straight from the schema file is the
one pypaimon's catalog opens the table with."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from s3_support import create_table, paimon_catalog, s3_catalog_options

from paimon_feed.errors import ConfigurationError, TableNotFoundError
from paimon_feed.planner._snapshots import table_url
from paimon_feed.tables import open_catalog, open_table, read_table_schema

NESTED = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("price", pa.decimal128(12, 3)),
        ("at", pa.timestamp("us", tz="UTC")),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
        ("point", pa.struct([("x", pa.float64()), pa.field("y", pa.float64(), nullable=False)])),
        ("day", pa.string()),
    ]
)


def _same(warehouse: str, name: str, options: dict | None = None) -> None:
    table = open_table(warehouse, name, options)
    schema, url = read_table_schema(warehouse, name, options)
    assert schema.to_schema() == table.table_schema.to_schema()
    assert (schema.id, schema.fields, schema.options) == (
        table.table_schema.id, table.table_schema.fields, table.table_schema.options
    )
    assert url == table_url(table)


@pytest.mark.parametrize("form", ["path", "path/", "file://"])
def test_the_schema_file_gives_the_schema_and_url_the_catalog_opens_the_table_with(tmp_path, form):
    warehouse = str(tmp_path / "wh")
    catalog = open_catalog(warehouse)
    catalog.create_database("db", True)
    schema = Schema.from_pyarrow_schema(
        NESTED, partition_keys=["day"], primary_keys=["id", "day"], options={"bucket": "2"}
    )
    catalog.create_table("db.nested", schema, False)
    given = {"path": warehouse, "path/": warehouse + "/", "file://": "file://" + warehouse}[form]
    _same(given, "db.nested")


def test_after_a_schema_change_the_newest_schema_file_is_read(tmp_path):
    warehouse = str(tmp_path / "wh")
    catalog = open_catalog(warehouse)
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(pa.schema([("id", pa.int64())])), False)
    for column in ("a", "b"):
        catalog.alter_table("db.t", [SchemaChange.add_column(column, AtomicType("STRING"))])
    schema, _ = read_table_schema(warehouse, "db.t")
    assert (schema.id, [field.name for field in schema.fields]) == (2, ["id", "a", "b"])
    _same(warehouse, "db.t")


@pytest.mark.parametrize(
    "name, missing",
    [("db.missing", "table db.missing does not exist in warehouse {warehouse}"),
     ("nodb.missing", "database nodb does not exist in warehouse {warehouse}; its databases: db")],
)
def test_a_missing_table_or_database_is_table_not_found_naming_both(tmp_path, name, missing):
    warehouse = str(tmp_path / "wh")
    open_catalog(warehouse).create_database("db", True)
    with pytest.raises(TableNotFoundError, match=re.escape(missing.format(warehouse=warehouse))):
        read_table_schema(warehouse, name)


def test_an_unknown_metastore_fails_as_the_catalog_does(tmp_path):
    with pytest.raises(ConfigurationError, match="cannot open warehouse"):
        read_table_schema(str(tmp_path), "db.t", {"metastore": "carrier-pigeon"})


def test_an_s3_table_reads_the_same_schema_and_url_as_the_catalog(s3_queue):
    catalog = paimon_catalog(s3_queue.server, s3_queue.bucket)
    create_table(catalog, "db.remote")
    options = s3_catalog_options(s3_queue.server, s3_queue.bucket)
    warehouse = options.pop("warehouse")
    _same(warehouse, "db.remote", options)


@pytest.mark.parametrize("system", ["snapshots", "options", "audit_log", "branch_dev$files"])
def test_system_tables_are_refused_as_configuration_errors_by_name_and_as_objects(tmp_path, system):
    from paimon_feed import ChangeFeed
    from paimon_feed.planner import Planner
    from paimon_feed.tables import commit_arrow

    catalog = open_catalog(str(tmp_path))
    table = create_table(catalog, "db.t")
    commit_arrow(table, pa.table({"id": [1], "v": ["a"]}))
    name = f"db.t${system}"
    with pytest.raises(ConfigurationError, match=r"system table '.*' of db\.t"):
        open_table(str(tmp_path), name)
    with pytest.raises(ConfigurationError, match="system table"):
        read_table_schema(str(tmp_path), name)
    if system in ("snapshots", "options"):  # the ones pypaimon opens
        view = catalog.get_table(name)
        for follow in (ChangeFeed, Planner):
            with pytest.raises(ConfigurationError, match=f"system table '{system}'"):
                follow(view)


def test_a_branch_is_not_taken_for_a_system_table():
    from paimon_feed.tables import _system_table_suffix

    assert _system_table_suffix("t$branch_dev") is None


def test_an_hdfs_warehouse_without_hdfs_native_names_the_hdfs_extra(monkeypatch):
    import sys

    from paimon_feed.errors import MissingDependencyError
    from paimon_feed.tables import open_catalog

    monkeypatch.setitem(sys.modules, "hdfs_native", None)  # import fails as if not installed
    for warehouse in ("hdfs://127.0.0.1:9/wh", "viewfs://cluster/wh"):
        with pytest.raises(MissingDependencyError, match=r'\[hdfs\].*pip install ".\[hdfs\]"'):
            open_catalog(warehouse)


def test_an_hdfs_warehouse_on_pyarrows_client_is_not_asked_for_hdfs_native(monkeypatch):
    import sys

    from paimon_feed.tables import check_hdfs_client

    monkeypatch.setitem(sys.modules, "hdfs_native", None)
    check_hdfs_client("hdfs://127.0.0.1:9/wh", {"hdfs.client.impl": "pyarrow"})
    check_hdfs_client("/tmp/wh")
