"""Reading planned splits exactly: the direct Arrow path where provably identical, Rust where exact, pypaimon otherwise.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from paimon_feed.errors import UnsupportedTableError
from paimon_feed.planner import _exact
from paimon_feed.planner._rows import _filtered, _prepend_row_kind, _with_row_kind
from paimon_feed.planner._snapshots import table_name

logger = logging.getLogger(__name__)


class ExactRead:
    """Reads splits of one schema: pypaimon's ``TableRead``, then the feed's predicate applied
    to every row.

    pypaimon uses a predicate to skip files and row groups, and filters rows only on columns
    stored in data files: a partition column is never filtered, and neither is a predicate
    under some read paths. Applying the predicate again to the Arrow result makes it exact
    for every batch kind; columns read only for the predicate are dropped afterwards.

    Plain append data (see :class:`_DirectParquet`) is read with pyarrow directly, which gives
    the same rows as pypaimon's reader at a fraction of the CPU per file; merged primary-key
    state, where ``pypaimon-rust`` is installed and exact, with Rust (see ``_native_read``).
    """

    def __init__(
        self, builder: Any, predicate: Any, columns: list[str] | None, *, direct: Any = None,
        values: _ExactValues | None = None, native: Any = None,
    ) -> None:
        self._builder = builder
        self._predicate = predicate
        self._columns = columns
        self._read_schema = builder.new_read().to_arrow([]).schema
        self.schema = _filtered(self._read_schema.empty_table(), None, columns).schema
        self._direct = direct
        self._values = values
        self._native = native

    def native_takes(self, split: Any) -> bool:
        """Whether ``split`` is read by pypaimon-rust (if the direct path does not take it)."""
        return self._native is not None and self._native.takes(split)

    def to_arrow(self, splits: list, *, removed: list | None = None) -> pa.Table:
        parts = []
        if removed:
            parts.append(_with_row_kind(self._read_table(removed), "-D"))
        if splits or not parts:
            read = self._read_table(splits)
            parts.append(_with_row_kind(read, "+I") if removed is not None else read)
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)

    def to_batches(self, splits: list, *, removed: list | None = None) -> Iterator[pa.RecordBatch]:
        for group, kind in ((removed or [], "-D"), (splits, "+I" if removed is not None else None)):
            if not group:
                continue
            for batch in self._raw_batches(group):
                batch = _filtered(batch, self._predicate, self._columns)
                if batch.num_rows:
                    yield _with_row_kind(batch, kind) if kind is not None else batch

    def _raw_batches(self, splits: list) -> Iterator[pa.RecordBatch]:
        if self._values is None:
            return self._raw_run(splits)
        return (
            self._values.conform(batch, orc)
            for orc, run in self._values.runs(splits) for batch in self._raw_run(run)
        )

    def _raw_run(self, splits: list) -> Iterator[pa.RecordBatch]:
        direct = self._direct.batches(splits, self._read_schema) if self._direct else None
        if direct is not None:
            return direct
        if self._native is not None:
            return self._native.read(splits, self._read_schema, self._pypaimon_run)
        return self._pypaimon_run(splits)

    def _pypaimon_run(self, splits: list) -> Iterator[pa.RecordBatch]:
        if self._values is not None:
            self._values.check_row_path(splits)
        return iter(self._builder.new_read().to_arrow_batch_reader(splits))

    def _read_table(self, splits: list) -> pa.Table:
        data = None
        if splits:
            if self._values is None:
                data = self._read_run(splits)
            else:
                parts = [
                    self._values.conform(self._read_run(run), orc)
                    for orc, run in self._values.runs(splits)
                ]
                data = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
        if data is None:
            data = self._read_schema.empty_table()
        return _filtered(data, self._predicate, self._columns)

    def _read_run(self, splits: list) -> pa.Table:
        data = None
        if self._direct is not None:
            data = self._direct.table(splits, self._read_schema)
        if data is None and self._native is not None and any(map(self._native.takes, splits)):
            batches = self._native.read(splits, self._read_schema, self._pypaimon_run)
            data = pa.Table.from_batches(list(batches), schema=self._read_schema)
        if data is None:
            if self._values is not None:
                self._values.check_row_path(splits)
            data = self._builder.new_read().to_arrow(splits)
        return data


class _ExactValues:
    """What a read of one schema does to deliver Java's values (see ``_exact``): cut the
    padding of ORC ``CHAR`` columns, and refuse a split pypaimon would read row by row when
    that loses the nanoseconds of a timestamp column."""

    def __init__(self, table_name: str, chars: list[str], nanos: dict[str, str]) -> None:
        self.table_name = table_name
        self.chars = chars
        self.nanos = nanos

    def runs(self, splits: list) -> list[tuple[bool, list]]:
        if not self.chars:
            return [(False, list(splits))]
        return _exact.orc_runs(splits, self.table_name)

    def conform(self, data: Any, orc: bool) -> Any:
        return _exact.strip_char_padding(data, self.chars) if orc else data

    def check_row_path(self, splits: list) -> None:
        if not self.nanos:
            return
        for split in splits:
            if getattr(split, "is_streaming", False) or not getattr(split, "raw_convertible", True):
                described = ", ".join(f"{c} {t}" for c, t in self.nanos.items())
                raise UnsupportedTableError(
                    f"table {self.table_name}: bucket {split.bucket} would be read row by row "
                    f"by pypaimon, which drops the nanoseconds of column(s) {described} (its "
                    f"files are not plain Parquet of the current schema, or need a merge the "
                    f"feed does not do itself); leave the column(s) out with a projection"
                )


def _exact_values(table: Any, columns: list[str] | None, chars: list[str]) -> _ExactValues | None:
    nanos = _exact.nanosecond_columns(table, columns) if table.is_primary_key_table else {}
    if not chars and not nanos:
        return None
    return _ExactValues(table_name(table), chars, nanos)


class _StateBuilder:
    """A batch ``ReadBuilder`` whose reads carry a ``_row_kind`` column, like streaming reads."""

    def __init__(self, builder: Any) -> None:
        self._builder = builder

    def new_read(self) -> Any:
        return _StateRead(self._builder.new_read())


class _StateRead:
    def __init__(self, read: Any) -> None:
        self._read = read

    def to_arrow(self, splits: list) -> pa.Table:
        return _prepend_row_kind(self._read.to_arrow(splits))

    def to_arrow_batch_reader(self, splits: list) -> Iterator[pa.RecordBatch]:
        return (_prepend_row_kind(batch) for batch in self._read.to_arrow_batch_reader(splits))


def read_state(table: Any, splits: list, row_kind: str) -> Iterator[pa.RecordBatch]:
    """The rows ``splits`` hold once merged (a primary key's latest version), as Arrow
    batches whose ``_row_kind`` is ``row_kind``: how overwrite batches are read."""
    for batch in _StateRead(table.new_read_builder().new_read()).to_arrow_batch_reader(splits):
        if batch.num_rows:
            yield _with_row_kind(batch, row_kind)
