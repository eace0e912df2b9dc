"""Reading serialized splits exactly as the feed reads them: the public read API for executors.

A Spark executor gets a partition's splits as bytes (:mod:`paimon_feed.planner.splits`) and
reads them here, with the same exactness rules as :meth:`FeedBatch.to_arrow`: ORC ``CHAR``
padding trimmed as Java trims it, plain append files read straight from pyarrow where that is
provably identical, merged primary-key state read by pypaimon-rust where it is exact, and
overwrite state read with the row kind it is delivered as.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from paimon_feed.planner import _direct_read, _exact, _native_read, _read, _rows, _schemas
from paimon_feed.planner.splits import deserialize_split, with_read_batch_rows

__all__ = ["read_serialized_splits", "native_reads_available"]


def native_reads_available() -> bool:
    """Whether this process merges primary-key state with pypaimon-rust where exact (the
    ``[native]`` extra installed and not switched off)."""
    return _native_read.native_available()


def read_serialized_splits(
    table: Any,
    splits: Sequence[bytes],
    *,
    table_name: str,
    schema_id: int,
    include_row_kind: bool = False,
    keys: Sequence[int | None] | None = None,
    row_kinds: Sequence[str | None] | None = None,
    batch_rows: int | None = None,
) -> Iterator[tuple[int | None, pa.RecordBatch]]:
    """Read ``splits`` (``serialize_split`` bytes) into schema ``schema_id`` of ``table`` (the
    latest table; an older schema is read as it was), as ``(key, batch)`` pairs.

    ``keys`` holds one value per split (a snapshot id, say), or is ``None``; consecutive splits
    with the same key and row kind are read as one run and their batches carry that key.
    ``row_kinds`` holds, per split, ``None`` (a change read as written) or the row kind every
    row of the split's merged state gets (``-D``/``+I``). ``batch_rows`` sets the rows per
    Arrow batch unless the table sets its own ``read.batch-size``. ``table_name`` names the
    table in errors. Empty batches are skipped.
    """
    table = _schemas.table_at_schema(table, schema_id) or table
    if batch_rows is not None:
        table = with_read_batch_rows(table, batch_rows)
    table = _exact.readable_table(table)
    chars = _exact.char_columns(table)[0]
    decoded = [deserialize_split(data, table) for data in splits]
    read = table.new_stream_read_builder().with_include_row_kind(include_row_kind).new_read()
    kinds = row_kinds or (None,) * len(decoded)
    run_keys = keys if keys is not None else (None,) * len(decoded)
    runs = [
        (key, [split for _, split in run])
        for key, run in itertools.groupby(
            zip(zip(run_keys, kinds, strict=True), decoded, strict=True), key=lambda pair: pair[0]
        )
    ]
    target = read.to_arrow([]).schema
    # Merged state (full batches, overwrites) with pypaimon-rust where it is exact, per split.
    natives = _NativeReads(table, include_row_kind)
    for (key, row_kind), key_splits in runs:
        # ORC pads CHAR(n) and Java's reader trims it: runs of all-ORC splits are trimmed
        for orc, run_splits in (
            _exact.orc_runs(key_splits, table_name) if chars else [(False, key_splits)]
        ):
            for batch in _read_run(
                table, read, run_splits, row_kind, include_row_kind, target, natives
            ):
                if batch.num_rows:
                    yield key, _exact.strip_char_padding(batch, chars) if orc else batch


class _NativeReads:
    """A read's native readers (``_native_read``), built on first use: one for change reads
    (row kinds from the merge), one per row kind a state is read as."""

    def __init__(self, table: Any, include_row_kind: bool) -> None:
        self._table = table
        self._include_row_kind = include_row_kind
        self._readers: dict[str | None, Any] = {}
        self._state_target: Any = None

    def get(self, row_kind: str | None) -> Any:
        if row_kind not in self._readers:
            kind = row_kind if row_kind is not None else (
                _native_read.ROW_KIND_FROM_MERGE if self._include_row_kind else None
            )
            self._readers[row_kind] = _native_read.NativeRead.for_table(self._table, None, kind)
        return self._readers[row_kind]

    def state_target(self) -> Any:
        """The schema of :func:`_read.read_state`'s batches."""
        if self._state_target is None:
            schema = self._table.new_read_builder().new_read().to_arrow([]).schema
            self._state_target = pa.schema([pa.field(_rows.ROW_KIND_COLUMN, pa.string()), *schema])
        return self._state_target


def _read_run(
    table: Any, read: Any, run_splits: list, row_kind: str | None, include_row_kind: bool,
    target: Any, natives: _NativeReads,
) -> Iterator[pa.RecordBatch]:
    native = natives.get(row_kind)
    if row_kind is not None:
        state = functools.partial(_read.read_state, table, row_kind=row_kind)
        return (
            native.read(run_splits, natives.state_target(), state)
            if native is not None else state(run_splits)
        )
    # plain append files straight from pyarrow where provably identical
    batches = _direct_read.direct_batches(table, run_splits, include_row_kind, target)
    if batches is None and native is not None:
        batches = native.read(run_splits, target, read.to_arrow_batch_reader)
    if batches is None:
        batches = read.to_arrow_batch_reader(run_splits)
    return batches
