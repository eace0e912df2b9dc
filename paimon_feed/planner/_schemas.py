"""Schemas by id, and the feed's projection and predicate mapped onto each by field id.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

logger = logging.getLogger(__name__)


def table_at_schema(table: Any, schema_id: int) -> Any:
    """``table`` as of schema ``schema_id`` (with the same dynamic options), or ``None`` if the
    schema file does not exist."""
    from pypaimon.table.file_store_table import FileStoreTable

    if table.table_schema.id == schema_id:
        return table
    schema = table.schema_manager.get_schema(schema_id)
    if schema is None:
        return None
    dynamic = getattr(table, "_applied_dynamic_options", {}) or {}
    if dynamic:
        options = dict(schema.options)
        for key, value in dynamic.items():
            if value is None:
                options.pop(key, None)
            else:
                options[key] = value
        schema = schema.copy(new_options=options)
    at_schema = FileStoreTable(
        table.file_io, table.identifier, table.table_path, schema, table.catalog_environment
    )
    at_schema._applied_dynamic_options = dynamic
    return at_schema


def field_ids(table: Any, names: Iterable[str]) -> dict[str, int]:
    """Field ids of ``names`` (top-level columns) in ``table``'s schema."""
    by_name = {field.name: field.id for field in table.table_schema.fields}
    return {name: by_name[name] for name in names if name in by_name}


#: A predicate that no row satisfies (what :func:`rename_predicate` returns when every row of a
#: schema fails it).
NO_ROWS = object()


def rename_predicate(predicate: Any, names: dict[str, str], table: Any) -> Any:
    """``predicate`` with its columns renamed by ``names`` and indexed by ``table``'s fields.

    A column missing from ``names`` does not exist in ``table``'s schema (added later, or
    dropped): its value is null in every row of it. pypaimon predicates have no negation, so a
    leaf on a null is false unless it tests for null, and the predicate is simplified: the
    result is ``None`` if every row passes, :data:`NO_ROWS` if none does.
    """
    from pypaimon.common.predicate import Predicate

    if predicate is None:
        return None
    if predicate.method in ("and", "or"):
        children = [rename_predicate(child, names, table) for child in predicate.literals]
        absorbing, neutral = (NO_ROWS, None) if predicate.method == "and" else (None, NO_ROWS)
        if any(child is absorbing for child in children):
            return absorbing
        children = [child for child in children if child is not neutral]
        if not children:
            return neutral
        if len(children) == 1:
            return children[0]
        return Predicate(
            method=predicate.method, index=predicate.index, field=predicate.field, literals=children
        )
    if predicate.field not in names:
        return None if predicate.method == "isNull" else NO_ROWS
    name = names[predicate.field]
    return Predicate(
        method=predicate.method,
        index=table.field_names.index(name),
        field=name,
        literals=predicate.literals,
    )


def predicate_columns(predicate: Any) -> set[str]:
    """The columns a predicate reads."""
    from pypaimon.read.push_down_utils import predicate_field_names

    return set(predicate_field_names(predicate)) if predicate is not None else set()


def _partition_test(table: Any, predicate: Any) -> Callable[[Any], bool] | None:
    """A test of a split's partition against the conjuncts of ``predicate`` that read only
    partition columns (``None`` when there are none)."""
    from pypaimon.read.push_down_utils import (
        rewrite_predicate_indices,
        trim_predicate_by_fields,
    )

    if predicate is None or not table.partition_keys:
        return None
    trimmed = trim_predicate_by_fields(predicate, table.partition_keys)
    if trimmed is None:
        return None
    on_partition = rewrite_predicate_indices(trimmed, table.partition_keys_fields)
    return lambda split: on_partition.test(split.partition)


def _arrow_filter(predicate: Any, schema: pa.Schema) -> Any:
    return predicate.to_arrow(schema) if predicate is not None else None
