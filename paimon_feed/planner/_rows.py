"""Row kinds and predicates applied to Arrow data: shared by every read path.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import pyarrow as pa

from paimon_feed.planner._schemas import _arrow_filter

logger = logging.getLogger(__name__)


ROW_KIND_COLUMN = "_row_kind"


def _filtered(data: Any, predicate: Any, columns: list[str] | None) -> Any:
    """``data`` (an Arrow table or record batch) with only the rows ``predicate`` accepts and
    only ``columns`` (all if ``None``)."""
    if predicate is not None and data.num_rows:
        table = data if isinstance(data, pa.Table) else pa.Table.from_batches([data])
        table = table.filter(_arrow_filter(predicate, table.schema))
        if isinstance(data, pa.RecordBatch):
            table = table.combine_chunks()
            data = table.to_batches()[0] if table.num_rows else data.slice(0, 0)
        else:
            data = table
    elif predicate is not None and isinstance(data, pa.RecordBatch):
        data = data.slice(0, 0)
    if columns is not None and data.schema.names != columns:
        data = data.select(columns)
    return data


def _with_row_kind(data: Any, kind: str) -> Any:
    """``data`` with every ``_row_kind`` set to ``kind``."""
    index = data.schema.get_field_index(ROW_KIND_COLUMN)
    column = pa.array([kind] * data.num_rows, pa.string())
    return data.set_column(index, data.schema.field(index), column)


def _prepend_row_kind(data: Any) -> Any:
    """``data`` (an Arrow table or record batch) with a first ``_row_kind`` column of ``+I``."""
    kinds = pa.array(["+I"] * data.num_rows, pa.string())
    schema = pa.schema([pa.field(ROW_KIND_COLUMN, pa.string()), *data.schema])
    if isinstance(data, pa.Table):
        return pa.Table.from_arrays([kinds, *data.columns], schema=schema)
    return pa.RecordBatch.from_arrays([kinds, *data.columns], schema=schema)


#: The row kinds a key-value file's ``_VALUE_KIND`` byte stands for (pypaimon's ``RowKind``),
#: and the bytes of the retracting ones (``-U``, ``-D``), which a merged state drops.
_ROW_KIND_NAMES = ("+I", "-U", "+U", "-D")


_RETRACT_KIND_BYTES = (1, 3)


# The two as Arrow arrays are built on first use: converting a Python list makes pyarrow import
# pandas, which importing this module must not (Spark's planning process pays every import
# before its first offset).
@functools.cache
def _row_kinds() -> pa.Array:
    return pa.array(_ROW_KIND_NAMES, pa.string())


@functools.cache
def _retract_kinds() -> pa.Array:
    return pa.array(_RETRACT_KIND_BYTES, pa.int8())
