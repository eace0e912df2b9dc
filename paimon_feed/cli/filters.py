"""Row filters for ``paimon-feed tail -f``: ``col=value`` (or ``==``), ``!=``, ``>``, ``>=``,
``<``, ``<=``, and prefix match ``col=abc*`` on string columns.

A filter is parsed from text (:func:`parse_filter`), then bound to the table's columns
(:func:`bind_filters`): the value is read as the column's type -- an integer, a float (at the
column's precision), a ``Decimal`` at the column's scale, ``true``/``false``, an ISO date,
time or timestamp -- and an operator or value that does not fit the column is a
:class:`~paimon_feed.errors.ConfigurationError` naming both. A bound filter is pushed into
planning as a pypaimon predicate (files whose statistics cannot match are skipped) and applied
again to every row read, so the output is exact whatever the pushdown did.

Spaces around the operator are ignored (``'status = shipped'``). A timestamp without an offset
on a column with a time zone is taken as UTC; an offset on a column without one is refused.

>>> parse_filter("amount >= 10")
RowFilter(column='amount', op='>=', value='10')
>>> parse_filter("name=ab*")
RowFilter(column='name', op='prefix', value='ab')
>>> import pyarrow as pa
>>> bind_filters(pa.schema([("price", pa.decimal128(10, 2))]), [parse_filter("price=5.10")])
[BoundFilter(column='price', op='=', value=Decimal('5.10'), arrow_type=Decimal128Type(decimal128(10, 2)))]
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from paimon_feed.errors import ConfigurationError

__all__ = ["BoundFilter", "RowFilter", "bind_filters", "parse_filter", "table_schema", "to_predicate"]

_FILTER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_$]*)\s*(==|!=|>=|<=|=|>|<)\s*(.*?)\s*$", re.DOTALL)
_SYNTAX = "use col=value, col!=value, col>value, col>=value, col<value, col<=value or col=prefix*"
_ORDERING = (">", ">=", "<", "<=")


@dataclass(frozen=True)
class RowFilter:
    """A filter as written: ``op`` is ``=``, ``!=``, ``>``, ``>=``, ``<``, ``<=`` or ``prefix``."""

    column: str
    op: str
    value: str


@dataclass(frozen=True)
class BoundFilter:
    """A filter whose value is read as its column's type (``arrow_type``)."""

    column: str
    op: str
    value: Any
    arrow_type: Any


def parse_filter(text: str) -> RowFilter:
    """Parse ``col<op>value``; ``==`` means ``=``, and ``col=abc*`` a prefix match."""
    match = _FILTER.match(text)
    if not match:
        raise ConfigurationError(f"invalid filter {text!r}: {_SYNTAX}")
    column, op, value = match.groups()
    if value[:1] in ("=", "<", ">"):
        # 'a===b', 'a=>1', 'a<>1': a mistyped operator, not a value that starts with one.
        raise ConfigurationError(f"invalid filter {text!r}: operator {op}{value[:1]} is unknown; {_SYNTAX}")
    if op == "==":
        op = "="
    if value.endswith("*"):
        if op != "=":
            raise ConfigurationError(
                f"invalid filter {text!r}: a prefix match (value*) works only with '='"
            )
        return RowFilter(column, "prefix", value[:-1])
    return RowFilter(column, op, value)


def table_schema(table: Any) -> Any:
    """The Arrow schema of a pypaimon table's columns."""
    from paimon_feed.planner.catalog import arrow_schema_of

    return arrow_schema_of(table.fields)


def bind_filters(schema: Any, filters: Sequence[RowFilter]) -> list[BoundFilter]:
    """Read each filter's value as its column's type in ``schema`` (an Arrow schema)."""
    bound = []
    for row_filter in filters:
        if row_filter.column not in schema.names:
            raise ConfigurationError(
                f"filter on unknown column {row_filter.column!r}; the table has {schema.names}"
            )
        arrow_type = schema.field(row_filter.column).type
        bound.append(
            BoundFilter(row_filter.column, row_filter.op, _typed(row_filter, arrow_type), arrow_type)
        )
    return bound


def _describe(row_filter: RowFilter) -> str:
    op = "=" if row_filter.op == "prefix" else row_filter.op
    star = "*" if row_filter.op == "prefix" else ""
    return f"filter '{row_filter.column}{op}{row_filter.value}{star}'"


def _typed(row_filter: RowFilter, arrow_type: Any) -> Any:
    import pyarrow as pa

    column, op, text = row_filter.column, row_filter.op, row_filter.value
    where = f"{_describe(row_filter)}: column {column} is {arrow_type}"
    is_string = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    if op == "prefix":
        if not is_string:
            raise ConfigurationError(f"{where}; a prefix match (value*) needs a string column")
        return text
    if is_string:
        return text
    if pa.types.is_boolean(arrow_type):
        if op in _ORDERING:
            raise ConfigurationError(f"{where}; use = or != on a boolean")
        if text.lower() not in ("true", "false"):
            raise ConfigurationError(f"{where}; {text!r} is not a valid boolean: use true or false")
        return text.lower() == "true"
    kind = _kind(arrow_type)
    parse = None if kind is None else _PARSERS.get(kind)
    if kind is None or parse is None:
        raise ConfigurationError(f"{where}; filters work on numbers, strings, booleans, dates and times")
    try:
        value = parse(text, arrow_type)
        # The column's own type decides: an int8 takes no 300, a decimal(10,2) no 5.123.
        scalar = pa.scalar(value, type=arrow_type)
    except (ValueError, ArithmeticError, TypeError, pa.ArrowException) as exc:
        hint = _HINTS.get(kind, "")
        raise ConfigurationError(f"{where}; {text!r} is not a valid value for it{hint} ({exc})") from None
    typed = scalar.as_py()
    if kind == "timestamp" and typed != value:
        raise ConfigurationError(f"{where}; {text!r} is finer than the column's precision")
    return typed


def _kind(arrow_type: Any) -> str | None:
    import pyarrow as pa

    for kind, test in (
        ("integer", pa.types.is_integer),
        ("float", pa.types.is_floating),
        ("decimal", pa.types.is_decimal),
        ("date", pa.types.is_date),
        ("time", pa.types.is_time),
        ("timestamp", pa.types.is_timestamp),
    ):
        if test(arrow_type):
            return kind
    return None


def _timestamp(text: str, arrow_type: Any) -> datetime.datetime:
    # Python 3.10's fromisoformat takes no 'Z'.
    value = datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    if arrow_type.tz is None:
        if value.tzinfo is not None:
            raise ValueError("the column has no time zone: give the time without an offset")
        return value
    return value if value.tzinfo is not None else value.replace(tzinfo=datetime.timezone.utc)


def _decimal(text: str, arrow_type: Any) -> decimal.Decimal:
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        # Its message is a list of signal classes: "[<class 'decimal.ConversionSyntax'>]".
        raise ValueError("not a decimal number") from None
    if not value.is_finite():
        raise ValueError("not a finite number")
    return value


_PARSERS: dict[str, Callable[[str, Any], Any]] = {
    "integer": lambda text, _: int(text),
    "float": lambda text, _: float(text),
    "decimal": _decimal,
    "date": lambda text, _: datetime.date.fromisoformat(text),
    "time": lambda text, _: datetime.time.fromisoformat(text),
    "timestamp": _timestamp,
}
_HINTS = {
    "date": ": use YYYY-MM-DD",
    "time": ": use HH:MM[:SS[.ffffff]]",
    "timestamp": ": use YYYY-MM-DDTHH:MM[:SS[.ffffff]][+HH:MM]",
    "decimal": ": at most the column's scale in decimal places",
}

_BUILDERS = {
    "=": "equal",
    "!=": "not_equal",
    ">": "greater_than",
    ">=": "greater_or_equal",
    "<": "less_than",
    "<=": "less_or_equal",
    "prefix": "startswith",
}


def to_predicate(table: Any, filters: Sequence[BoundFilter]) -> Any:
    """The pypaimon predicate (AND of all filters) for pushdown, or ``None``."""
    if not filters:
        return None
    builder = table.new_read_builder().new_predicate_builder()
    predicates = [getattr(builder, _BUILDERS[f.op])(f.column, f.value) for f in filters]
    return predicates[0] if len(predicates) == 1 else builder.and_predicates(predicates)
