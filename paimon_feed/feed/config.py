"""Argument checks of :class:`~paimon_feed.feed.ChangeFeed`: a wrong-typed argument is a
:class:`ConfigurationError` naming it, not an AttributeError or TypeError from deep inside
planning."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from paimon_feed.errors import ConfigurationError
from paimon_feed.tables import check_data_table, check_table_endpoint

__all__ = ["check_type", "check_number", "check_names", "check_table", "check_predicate", "check_buckets"]


def check_type(
    name: str, value: Any, kind: type | tuple[type, ...], wanted: str, *, optional: bool = False
) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) and kind is not bool:
        ok = False  # True is an int to Python, not a count or an id
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ConfigurationError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}")


def check_number(name: str, value: Any, unit: str, *, minimum: float) -> None:
    check_type(name, value, (int, float), f"a number of {unit}")
    if not value > minimum:
        raise ConfigurationError(f"{name} must be > {minimum:g} {unit}, got {value!r}")


def check_names(name: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    names = list(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    if names is None or not all(isinstance(item, str) for item in names):
        raise ConfigurationError(
            f"{name} must be a list of column names such as ['id', 'amount'], got {value!r}"
        )
    return names


def check_table(table: Any) -> None:
    if not all(hasattr(table, attribute) for attribute in ("new_read_builder", "table_path", "file_io")):
        hint = (
            f"; open it first: paimon_feed.open_table(warehouse, {table!r})"
            if isinstance(table, str)
            else ""
        )
        raise ConfigurationError(
            f"table must be a pypaimon table (catalog.get_table('db.table')), got "
            f"{type(table).__name__} {table!r}{hint}"
        )
    check_data_table(table)
    check_table_endpoint(table)


def check_predicate(predicate: Any) -> None:
    if predicate is not None and not all(
        hasattr(predicate, attribute) for attribute in ("method", "field", "literals")
    ):
        raise ConfigurationError(
            f"predicate must be a pypaimon Predicate "
            f"(table.new_read_builder().new_predicate_builder().greater_than('x', 3)), got "
            f"{type(predicate).__name__} {predicate!r}"
        )


def check_buckets(buckets: Any) -> list[int] | None:
    """``buckets`` as a list of bucket ids (``None`` for all)."""
    if buckets is None:
        return None
    check_type("buckets", buckets, Iterable, "bucket ids such as [0, 1]")
    buckets = list(buckets)
    for bucket in buckets:
        check_type("buckets", bucket, int, "bucket ids such as [0, 1]")
    return buckets
