"""Merged primary-key reads with ``pypaimon-rust`` (the ``[native]`` extra), where exact.

pypaimon merges the rows of a primary-key state split one at a time in Python (about 10x
slower than Rust's merge) and turns them into Python values on the way, which drops the
nanoseconds of ``TIMESTAMP(7..9)``. pypaimon 2.1 can hand a split to ``pypaimon-rust``
(``read.native.enabled``), but it decides for a whole read (one unsupported split sends every
split back to Python) and takes Rust's answer as it comes. Here the choice is made per split,
and only where Rust's read is proven to be Java's (``tests/interop/test_interop_native.py``)
and pypaimon's (``tests/planner/test_native_read.py``):

- the table: a primary-key table whose merge pypaimon can do too (so the fallback is always
  available), with a merge engine and aggregate functions in :data:`_ENGINES` and
  :data:`_AGGREGATE_FUNCTIONS`; no data evolution, row tracking, BLOB or VARIANT columns;
- the split: a state split (not a snapshot's changes) of plain ``DataSplit`` type, all its
  files Parquet, ORC or Avro written with the schema being read (no schema evolution);
- the columns: Rust returns exactly the Arrow names and types pypaimon's read has, checked on
  every batch (a first batch that differs sends the split to pypaimon; later ones cannot);
- row kinds: deduplicate and first-row keep the kind of the row they keep (``+U`` stays
  ``+U``, in Java and pypaimon), which Rust reports as ``+I``, so those two engines are read
  natively only when no row kind is asked for. partial-update and aggregation merge into
  ``+I`` everywhere.

A split Rust fails on before it yields a row is read by the other path, with a warning. The
extra is optional: without it (or with ``PAIMON_FEED_NATIVE_READ=0``) nothing here runs.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

__all__ = ["NativeRead", "native_available", "ROW_KIND_FROM_MERGE"]

logger = logging.getLogger(__name__)

#: Environment switch: ``0`` turns native reads off (tests and benchmarks compare both paths).
ENVIRONMENT_SWITCH = "PAIMON_FEED_NATIVE_READ"
#: ``row_kind`` of :class:`NativeRead`: each row's kind as the merge gives it.
ROW_KIND_FROM_MERGE = "merge"

_ROW_KIND_COLUMN = "_row_kind"
_NATIVE_ROW_KIND_COLUMN = "rowkind"
#: Merge engines read natively, and whether their merged rows carry their own row kind.
_ENGINES = {"deduplicate": True, "first-row": True, "partial-update": False, "aggregation": False}
#: Aggregate functions whose Rust merge is checked against Java's and pypaimon's.
_AGGREGATE_FUNCTIONS = frozenset({
    "primary_key", "sum", "max", "min", "last_value", "last_non_null_value", "first_value",
    "first_non_null_value", "bool_and", "bool_or", "product", "listagg",
})
_FILE_SUFFIXES = (".parquet", ".orc", ".avro")
_UNSUPPORTED_TYPES = ("BLOB", "VARIANT", "VECTOR")


@functools.cache
def _runtime_available() -> bool:
    try:
        from pypaimon.read.native_plan import native_split_bridge_available
    except ImportError:
        return False
    return native_split_bridge_available()


def native_available() -> bool:
    """Whether ``pypaimon-rust`` is installed with the API this module uses, and not switched
    off (``PAIMON_FEED_NATIVE_READ=0``)."""
    return os.environ.get(ENVIRONMENT_SWITCH, "1") != "0" and _runtime_available()


def _why_not_native(table: Any, row_kind: str | None) -> str | None:
    """Why no split of ``table`` is read natively (``None``: its state splits may be)."""
    if not table.is_primary_key_table:
        return "not a primary-key table"
    options = table.options
    if options.data_evolution_enabled() or options.row_tracking_enabled():
        return "data evolution or row tracking"
    from paimon_feed.planner import _exact

    if _exact.unmergeable_options(table):
        return "merge options pypaimon cannot merge with (no fallback)"
    settings = options.options.to_map()
    engine = str(settings.get("merge-engine", "deduplicate")).lower()
    if engine not in _ENGINES:
        return f"merge-engine={engine}"
    if row_kind == ROW_KIND_FROM_MERGE and _ENGINES[engine]:
        return f"merge-engine={engine} keeps +U row kinds, which Rust reports as +I"
    for key, value in settings.items():
        if key.startswith("fields.") and key.endswith("aggregate-function"):
            if str(value).lower() not in _AGGREGATE_FUNCTIONS:
                return f"{key}={value}"
    for field in table.fields:
        text = str(field.type).upper()
        if any(name in text for name in _UNSUPPORTED_TYPES):
            return f"column {field.name} {field.type}"
    return None


class NativeRead:
    """Reads the state splits of one table schema with ``pypaimon-rust``, split by split,
    handing every other split to the caller's reader.

    ``row_kind``: ``None`` (no ``_row_kind`` column), :data:`ROW_KIND_FROM_MERGE` (the kind of
    each merged row), or a kind every row gets (``"+I"``).
    """

    def __init__(self, table: Any, columns: Sequence[str] | None, row_kind: str | None) -> None:
        from pypaimon.read.read_builder import ReadBuilder

        self._table = table
        self._schema_id = table.table_schema.id
        builder = ReadBuilder(table)
        if columns is not None:
            builder.with_projection(list(columns))
        self._read_type = builder.read_type()
        self._row_kind = row_kind
        self._reader: Callable[[list], Any] | None = None
        self._broken: str | None = None
        self._name = table.identifier.get_full_name()
        # pypaimon-rust yields batches of about a thousand rows whatever read.batch-size says;
        # they are joined up to it, so a Spark executor hands its JVM a few large batches.
        self._batch_rows = table.options.read_batch_size()

    @classmethod
    def for_table(
        cls, table: Any, columns: Sequence[str] | None, row_kind: str | None
    ) -> NativeRead | None:
        """A native reader for ``table`` (the schema being read, with ``columns`` of it), or
        ``None`` if the extra is absent or no split of this table could be read natively."""
        if not native_available():
            return None
        reason = _why_not_native(table, row_kind)
        if reason is not None:
            logger.debug("table %s: native reads off: %s", table.identifier.get_full_name(), reason)
            return None
        return cls(table, columns, row_kind)

    def takes(self, split: Any) -> bool:
        """Whether ``split`` is read natively."""
        from pypaimon.read.split import DataSplit

        return (
            self._broken is None
            and type(split) is DataSplit
            and not split.is_streaming
            and bool(split.files)
            and all(
                f.schema_id == self._schema_id and f.file_name.lower().endswith(_FILE_SUFFIXES)
                for f in split.files
            )
        )

    def read(
        self, splits: list, target: pa.Schema, other: Callable[[list], Iterator[pa.RecordBatch]]
    ) -> Iterator[pa.RecordBatch]:
        """``splits`` in order as batches of ``target`` (pypaimon's read schema): runs of
        splits this reader takes are read natively, the others by ``other``."""
        run: list = []
        for split in splits:
            if self.takes(split):
                if run:
                    yield from other(run)
                    run = []
                yield from self._split(split, target, other)
            else:
                run.append(split)
        if run:
            yield from other(run)

    def _split(
        self, split: Any, target: pa.Schema, other: Callable[[list], Iterator[pa.RecordBatch]]
    ) -> Iterator[pa.RecordBatch]:
        """One split natively, or by ``other`` if Rust fails or differs before its first row."""
        batches = self._native_batches(split)
        first = None
        if batches is not None:
            try:
                first = next(batches, None)
            except Exception as exc:  # Rust's errors are not typed: any failure falls back
                self._fall_back(split, exc)
                batches = None
        if first is not None:
            first = self._conformed(first, target)
            if first is None:
                self._fall_back(split, f"its columns are not pypaimon's {target}", setup=True)
                batches = None
        if batches is None:
            yield from other([split])
            return
        if first is not None:
            yield from _joined(self._rest(first, batches, split, target), self._batch_rows)

    def _rest(
        self, first: pa.RecordBatch, batches: Iterator[pa.RecordBatch], split: Any, target: pa.Schema
    ) -> Iterator[pa.RecordBatch]:
        yield first
        for batch in batches:
            conformed = self._conformed(batch, target)
            if conformed is None:
                raise RuntimeError(
                    f"table {self._name}: pypaimon-rust changed the columns of bucket "
                    f"{split.bucket} mid-read ({batch.schema}); set {ENVIRONMENT_SWITCH}=0"
                )
            yield conformed

    def _native_batches(self, split: Any) -> Iterator[pa.RecordBatch] | None:
        from pypaimon.read.native_plan import native_split_from_python

        if self._reader is None:
            try:
                self._reader = self._new_reader()
            except Exception as exc:  # a setup failure leaves every split to pypaimon
                self._fall_back(split, exc, setup=True)
                return None
        try:
            return iter(self._reader([native_split_from_python(split)]))
        except Exception as exc:
            self._fall_back(split, exc)
            return None

    def _new_reader(self) -> Callable[[list], Any]:
        from pypaimon.read.native_plan import _prepare_native_read

        return _prepare_native_read(
            self._table, read_type=self._read_type,
            include_row_kind=self._row_kind == ROW_KIND_FROM_MERGE,
        )

    def _fall_back(self, split: Any, why: Any, *, setup: bool = False) -> None:
        """Leave ``split`` (and with ``setup``, every later split) to the other reader."""
        from pypaimon.read.native_plan import _raise_if_native_fork_safety_error

        if isinstance(why, BaseException):
            _raise_if_native_fork_safety_error(why)
        if setup:
            self._broken = str(why)
        logger.warning(
            "table %s: pypaimon-rust did not read a split of bucket %s (%s); %s through "
            "pypaimon", self._name, split.bucket, why,
            "it and every later split of this schema go" if setup else "it goes",
        )

    def _conformed(self, batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch | None:
        """``batch`` with ``target``'s schema if its columns are exactly ``target``'s (names
        and types; Rust's field metadata differs), else ``None``: never a cast."""
        columns = list(batch.columns)
        names = list(batch.schema.names)
        if self._row_kind == ROW_KIND_FROM_MERGE:
            if not names or names[0] != _NATIVE_ROW_KIND_COLUMN:
                return None
            names[0] = _ROW_KIND_COLUMN
        elif self._row_kind is not None:
            kinds = pa.array([self._row_kind] * batch.num_rows, pa.string())
            columns.insert(0, kinds)
            names.insert(0, _ROW_KIND_COLUMN)
        if names != target.names:
            return None
        if any(column.type != field.type for column, field in zip(columns, target)):
            return None
        return pa.RecordBatch.from_arrays(columns, schema=target)

    def __repr__(self) -> str:
        return f"NativeRead({self._name!r}, row_kind={json.dumps(self._row_kind)})"


def _joined(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """``batches`` in order, small ones joined into batches of about ``rows`` rows (at least
    ``rows`` but the last; a batch that is large already passes as it is)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        pending.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield from _concat(pending)
            pending, count = [], 0
    if pending:
        yield from _concat(pending)


def _concat(batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """``batches`` as one contiguous batch where Arrow makes one (pyarrow 16 has no
    ``concat_batches``), else as they are."""
    if len(batches) == 1:
        return batches
    joined = pa.Table.from_batches(batches).combine_chunks().to_batches()
    return joined if len(joined) == 1 else batches
