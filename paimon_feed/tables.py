"""Opening tables by warehouse and name, for the entry points (CLI, Lambda, Spark), and
writing one commit (the demo, the benchmarks).

Library users usually hold a pypaimon table already; the entry points start from strings, and
this is where those strings are checked and pypaimon's catalog errors become ``FeedError``\\ s.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from paimon_feed.errors import ConfigurationError, TableNotFoundError

__all__ = ["commit_arrow", "open_catalog", "open_table", "parse_table_name", "redact"]

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_$-]*")
_SECRET_WORDS = ("secret", "password", "token", "credential", "key")


def parse_table_name(name: str) -> tuple[str, str]:
    """Split ``db.table`` and reject names that could escape the warehouse.

    >>> parse_table_name("sales.orders")
    ('sales', 'orders')
    """
    parts = name.split(".") if isinstance(name, str) else []
    if len(parts) != 2 or not all(_NAME.fullmatch(part) for part in parts):
        raise ConfigurationError(
            f"invalid table name {name!r}: give 'database.table' using letters, digits, "
            f"'_', '-' or '$'"
        )
    return parts[0], parts[1]


def redact(options: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of catalog options safe to log: values of secret-looking keys are masked.

    >>> redact({"fs.s3.accessKeySecret": "abc", "warehouse": "s3://b/wh"})
    {'fs.s3.accessKeySecret': '***', 'warehouse': 's3://b/wh'}
    """
    return {
        key: "***" if any(word in key.lower() for word in _SECRET_WORDS) and "id" not in key.lower() else value
        for key, value in options.items()
    }


def open_catalog(warehouse: str, options: Mapping[str, str] | None = None) -> Any:
    """A pypaimon filesystem catalog on ``warehouse`` (a path or URL) with extra options."""
    from pypaimon import CatalogFactory

    if not warehouse or not isinstance(warehouse, str):
        raise ConfigurationError(f"invalid warehouse {warehouse!r}: give a path or URL")
    try:
        return CatalogFactory.create({**dict(options or {}), "warehouse": warehouse})
    except Exception as exc:
        raise ConfigurationError(
            f"cannot open warehouse {warehouse} with options {redact(options or {})}: {exc}"
        ) from exc


def open_table(
    warehouse: str, name: str, options: Mapping[str, str] | None = None, *, catalog: Any = None
) -> Any:
    """The pypaimon table ``name`` (``db.table``) of ``warehouse``."""
    from pypaimon.catalog.catalog_exception import (
        DatabaseNotExistException,
        TableNotExistException,
    )

    parse_table_name(name)
    catalog = catalog or open_catalog(warehouse, options)
    try:
        return catalog.get_table(name)
    except (TableNotExistException, DatabaseNotExistException) as exc:
        raise TableNotFoundError(
            f"table {name} does not exist in warehouse {warehouse}"
        ) from exc


def commit_arrow(table: Any, data: Any) -> None:
    """Write ``data`` (a ``pyarrow.Table``) to ``table`` as one batch commit: one new snapshot."""
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(data)
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()
