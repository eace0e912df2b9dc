"""What the entry points need of pypaimon's catalogs (public: :mod:`paimon_feed.tables`, the CLI's
filters and the Spark source's options use it): the exceptions its catalogs raise for a missing
table, its file IO on a warehouse, a table's latest schema (and when its first one was written)
read from the schema files, its
catalog option keys and the Arrow schema of a table's fields.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``). Nothing
here loads the planner, nor pypaimon's catalog or table modules, which import pandas, polars and requests (about
half a second): Spark's ``load()`` reads a schema in a process that needs nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from paimon_feed._layout import SCHEMA_DIR
from paimon_feed.errors import StorageError, UnsupportedTableError

__all__ = [
    "arrow_schema_of",
    "canonical_option_keys",
    "not_found_errors",
    "read_created_millis",
    "read_latest_schema",
    "warehouse_file_io",
]

_SCHEMA_PREFIX = "schema-"


def not_found_errors() -> tuple[type[Exception], ...]:
    """What a pypaimon catalog's ``get_table`` raises when the database or the table does not
    exist."""
    from pypaimon.catalog.catalog_exception import (
        DatabaseNotExistException,
        TableNotExistException,
    )

    return TableNotExistException, DatabaseNotExistException


def warehouse_file_io(warehouse: str, options: Mapping[str, str]) -> Any:
    """pypaimon's file IO on ``warehouse``, as its filesystem catalog makes it from ``options``."""
    from pypaimon.common.file_io import FileIO
    from pypaimon.common.options import Options

    return FileIO.get(warehouse, Options({**options, "warehouse": warehouse}))


def read_latest_schema(file_io: Any, table_path: str, name: str) -> Any | None:
    """The newest schema (a pypaimon ``TableSchema``) in the table's ``schema/schema-N`` files,
    as pypaimon's ``SchemaManager`` lays them out (the highest id is the latest), or ``None`` if
    there is none (no such table, or one still being created).

    Raises :class:`StorageError` if the files cannot be listed or read, and
    :class:`UnsupportedTableError` if pypaimon cannot parse the newest one.
    """
    from pypaimon.schema.table_schema import TableSchema

    schema_dir = f"{table_path}/{SCHEMA_DIR}"
    try:
        ids = _schema_ids(file_io, schema_dir)
        if not ids:
            return None
        schema_path = f"{schema_dir}/{_SCHEMA_PREFIX}{max(ids)}"
        text = file_io.read_file_utf8(schema_path)
    except Exception as exc:
        raise StorageError(f"table {name}: cannot read its schema in {schema_dir}: {exc}") from exc
    try:
        return TableSchema.from_json(text)
    except Exception as exc:
        raise UnsupportedTableError(
            f"table {name}: pypaimon cannot parse its schema file {schema_path}: {exc}"
        ) from exc


def read_created_millis(file_io: Any, table_path: str, name: str) -> int | None:
    """When the table's first schema was written: the ``timeMillis`` of its lowest
    ``schema/schema-N`` file (``schema-0``, which Paimon writes when the table is created and
    never removes), or ``None`` if there is none or it has no ``timeMillis``.

    A table dropped and created again has a new ``schema-0``, written after every commit of the
    table it replaced. Raises :class:`StorageError` if the files cannot be listed or read.
    """
    schema_dir = f"{table_path}/{SCHEMA_DIR}"
    try:
        ids = _schema_ids(file_io, schema_dir)
        if not ids:
            return None
        text = file_io.read_file_utf8(f"{schema_dir}/{_SCHEMA_PREFIX}{min(ids)}")
    except Exception as exc:
        raise StorageError(f"table {name}: cannot read its schema in {schema_dir}: {exc}") from exc
    try:
        value = json.loads(text).get("timeMillis")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _schema_ids(file_io: Any, schema_dir: str) -> list[int]:
    statuses = file_io.list_status(schema_dir) if file_io.exists(schema_dir) else []
    ids = []
    for status in statuses or ():
        file_name = status.path.split("/")[-1]
        if file_name.startswith(_SCHEMA_PREFIX) and file_name[len(_SCHEMA_PREFIX):].isdigit():
            ids.append(int(file_name[len(_SCHEMA_PREFIX):]))
    return ids


def canonical_option_keys() -> dict[str, str]:
    """pypaimon's catalog/file-IO option keys by their lower-case spelling
    (``fs.s3.accesskeyid`` -> ``fs.s3.accessKeyId``), for callers whose options arrive
    lower-cased (Spark data source options are case-insensitive)."""
    from pypaimon.common.options import config
    from pypaimon.common.options.config_option import ConfigOption

    keys: dict[str, str] = {}
    for holder in vars(config).values():
        if isinstance(holder, type):
            for value in vars(holder).values():
                if isinstance(value, ConfigOption):
                    keys[value.key().lower()] = value.key()
    return keys


def arrow_schema_of(fields: Any) -> pa.Schema:
    """The Arrow schema of pypaimon's schema fields (a table's ``fields``)."""
    from pypaimon.schema.data_types import PyarrowFieldParser

    return pa.schema(PyarrowFieldParser.from_paimon_schema(fields))
