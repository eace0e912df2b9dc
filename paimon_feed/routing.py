"""Which tables of a warehouse a consumer follows, and which table a storage location belongs
to: shared by :class:`~paimon_feed.feed.warehouse.WarehouseFeed`, the CLI and the Lambda handler.

>>> selector = TableSelector(["sales.*", "ops.events"])
>>> [name for name in ("sales.orders", "ops.events", "ops.audit") if selector.matches(name)]
['sales.orders', 'ops.events']
>>> TableSelector(None).matches("any.table"), selector.exact_names()
(True, ['ops.events'])
>>> table_of_url("s3://b/wh", "s3://b/wh/sales.db/orders")
('sales.orders', '')
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

from paimon_feed._layout import table_of_dir
from paimon_feed.errors import ConfigurationError
from paimon_feed.tables import parse_table_name

__all__ = ["TableSelector", "list_tables", "table_of_url"]

_GLOB = set("*?[")


class TableSelector:
    """``fnmatch`` patterns over ``db.table`` (case-sensitive); ``None`` or ``[]`` selects every
    table."""

    def __init__(self, patterns: Iterable[str] | str | None) -> None:
        if isinstance(patterns, str):
            patterns = [patterns]
        patterns = list(patterns or [])
        for pattern in patterns:
            if not isinstance(pattern, str) or "." not in pattern and not _GLOB & set(pattern):
                raise ConfigurationError(
                    f"invalid table pattern {pattern!r}: give 'db.table' or a pattern such as "
                    f"'sales.*' or '*.events'"
                )
        self.patterns = patterns

    def matches(self, name: str) -> bool:
        return not self.patterns or any(fnmatch.fnmatchcase(name, p) for p in self.patterns)

    def exact_names(self) -> list[str]:
        """The patterns that name one table (no wildcard)."""
        return [p for p in self.patterns if not _GLOB & set(p)]


def list_tables(catalog: Any, selector: TableSelector) -> list[str]:
    """Every ``db.table`` of ``catalog`` the selector matches, sorted. System tables and
    branches are never listed (a catalog lists data tables only)."""
    names = []
    for database in catalog.list_databases():
        for table in catalog.list_tables(database):
            name = f"{database}.{table}"
            if "$" not in table and selector.matches(name):
                names.append(name)
    return sorted(names)


def table_of_url(warehouse_url: str, table_url: str) -> tuple[str | None, str]:
    """``db.table`` for a table's normalised URL inside a warehouse, or ``None`` and why not."""
    warehouse_url = warehouse_url.rstrip("/")
    if not table_url.startswith(warehouse_url + "/"):
        return None, f"outside the warehouse {warehouse_url}"
    parts = table_url[len(warehouse_url) + 1:].split("/")
    name = table_of_dir(parts[0], parts[1]) if len(parts) == 2 else None
    if name is None:
        return None, "not a table directory (<warehouse>/<db>.db/<table>) of the warehouse"
    try:
        parse_table_name(name)
    except ConfigurationError:
        return None, f"{name!r} is not a valid table name"
    return name, ""
