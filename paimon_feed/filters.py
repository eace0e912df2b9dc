"""Row filters for ``paimon-feed tail -f``: ``col=value``, ``!=``, ``>``, ``>=``, ``<``, ``<=``,
and prefix match ``col=abc*``.

A filter is pushed into planning as a pypaimon predicate (files whose statistics cannot match are
skipped) and applied again to every row read, so the output is exact whatever the pushdown did.

>>> parse_filter("amount>=10")
RowFilter(column='amount', op='>=', value='10')
>>> parse_filter("name=ab*")
RowFilter(column='name', op='prefix', value='ab')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from paimon_feed.errors import ConfigurationError

__all__ = ["RowFilter", "parse_filter", "to_predicate", "apply_filters"]

_FILTER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_$]*)\s*(!=|>=|<=|=|>|<)(.*)$")


@dataclass(frozen=True)
class RowFilter:
    column: str
    op: str
    value: str


def parse_filter(text: str) -> RowFilter:
    match = _FILTER.match(text)
    if not match:
        raise ConfigurationError(
            f"invalid filter {text!r}: use col=value, col!=value, col>value, col>=value, "
            f"col<value, col<=value or col=prefix*"
        )
    column, op, value = match.groups()
    if op == "=" and value.endswith("*"):
        return RowFilter(column, "prefix", value[:-1])
    return RowFilter(column, op, value)


def _typed(value: str, arrow_type: Any, column: str) -> Any:
    import pyarrow as pa

    try:
        if pa.types.is_integer(arrow_type):
            return int(value)
        if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
            return float(value)
        if pa.types.is_boolean(arrow_type):
            if value.lower() not in ("true", "false"):
                raise ValueError(value)
            return value.lower() == "true"
    except ValueError:
        raise ConfigurationError(
            f"filter on column {column!r}: {value!r} is not a valid {arrow_type} value"
        ) from None
    return value


_BUILDERS = {
    "=": "equal",
    "!=": "not_equal",
    ">": "greater_than",
    ">=": "greater_or_equal",
    "<": "less_than",
    "<=": "less_or_equal",
    "prefix": "startswith",
}


def _arrow_types(table: Any) -> dict[str, Any]:
    from pypaimon.schema.data_types import PyarrowFieldParser

    return {field.name: field.type for field in PyarrowFieldParser.from_paimon_schema(table.fields)}


def to_predicate(table: Any, filters: Sequence[RowFilter]) -> Any:
    """The pypaimon predicate (AND of all filters) for pushdown, or ``None``."""
    if not filters:
        return None
    types = _arrow_types(table)
    builder = table.new_read_builder().new_predicate_builder()
    predicates = []
    for row_filter in filters:
        if row_filter.column not in types:
            raise ConfigurationError(
                f"filter on unknown column {row_filter.column!r}; the table has {list(types)}"
            )
        value = (
            row_filter.value
            if row_filter.op == "prefix"
            else _typed(row_filter.value, types[row_filter.column], row_filter.column)
        )
        predicates.append(getattr(builder, _BUILDERS[row_filter.op])(row_filter.column, value))
    return predicates[0] if len(predicates) == 1 else builder.and_predicates(predicates)


def apply_filters(data: Any, filters: Sequence[RowFilter]) -> Any:
    """Keep the rows of an Arrow table that pass every filter."""
    import pyarrow.compute as pc

    if not filters or data.num_rows == 0:
        return data
    mask = None
    for row_filter in filters:
        column = data.column(row_filter.column)
        if row_filter.op == "prefix":
            test = pc.starts_with(column, row_filter.value)
        else:
            value = _typed(row_filter.value, column.type, row_filter.column)
            test = {
                "=": pc.equal,
                "!=": pc.not_equal,
                ">": pc.greater,
                ">=": pc.greater_equal,
                "<": pc.less,
                "<=": pc.less_equal,
            }[row_filter.op](column, value)
        mask = test if mask is None else pc.and_(mask, test)
    return data.filter(pc.fill_null(mask, False))
