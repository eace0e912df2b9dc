"""Reading Parquet data files straight with pyarrow where that is provably what pypaimon reads.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from paimon_feed.planner._objects import FilesystemPaths
from paimon_feed.planner._rows import (
    _ROW_KIND_NAMES,
    ROW_KIND_COLUMN,
    _prepend_row_kind,
    _retract_kinds,
    _row_kinds,
)

logger = logging.getLogger(__name__)


class _DirectParquet:
    """Reads splits with ``pyarrow.dataset`` where that provably gives pypaimon's result:

    - plain append splits: the files pypaimon would read as they are (``raw_convertible``);
    - primary-key change splits (``is_streaming``: a snapshot's changelog or delta files),
      which pypaimon concatenates in order without merging. Their files are key-value files:
      the value columns carry the table's field names, and ``_VALUE_KIND`` (0-3) gives each
      row its kind (``+I``, ``-U``, ``+U``, ``-D``);
    - primary-key state splits that pypaimon merges (not ``raw_convertible``), on tables with
      the ``deduplicate`` merge engine and no option that changes it (``sequence.field``,
      ``ignore-delete``): per split, the row with the highest sequence number of each key,
      unless it retracts (``-U``/``-D``), in key order, as pypaimon's merge gives it. Keys of a
      type whose order Arrow and pypaimon might not share (floating point, nested), two rows of
      one key with the same sequence number, or a split over :data:`MERGE_SPLIT_BYTES` on disk
      (merged in memory) go through pypaimon.

    Always: no deletion vectors on the split, every file written with the schema being read
    (no column mapping or casting), Parquet, on a pyarrow file system, and the columns pyarrow
    returns have exactly the names and types of pypaimon's output. Anything else (or any doubt)
    returns ``None`` and pypaimon reads it.
    """

    def __init__(self, table: Any, include_row_kind: bool) -> None:
        self._schema_id = table.table_schema.id
        self._file_io = table.file_io
        self._paths = FilesystemPaths(table.file_io)
        self._row_kind = include_row_kind
        self._key_value = table.is_primary_key_table
        self._merge_keys = _deduplicated_keys(table) if self._key_value else None

    @classmethod
    def for_table(cls, table: Any, include_row_kind: bool) -> _DirectParquet | None:
        import pyarrow.fs as pafs

        options = table.options
        if (
            # an append table's deletion vectors apply to raw reads; a primary-key split names
            # its deletion files itself (checked per split)
            (options.deletion_vectors_enabled() and not table.is_primary_key_table)
            or options.data_evolution_enabled()
            or not isinstance(getattr(table.file_io, "filesystem", None), pafs.FileSystem)
            or os.environ.get("PAIMON_FEED_DIRECT_READ", "1") == "0"
        ):
            return None
        return cls(table, include_row_kind)

    def _files(self, splits: list) -> tuple[list[list[tuple[str, int]]], bool] | None:
        """The files of each split, and whether they are to be merged; ``None``: not direct."""
        from pypaimon.read.split import DataSplit

        merge = None
        files = []
        for split in splits:
            if type(split) is not DataSplit or any(split.data_deletion_files or ()):
                return None
            if not self._key_value:
                merged = False if split.raw_convertible else None
            elif split.is_streaming:
                merged = False
            else:  # a raw-convertible state split is read raw by pypaimon: not mirrored here
                merged = True if self._merge_keys and not split.raw_convertible else None
            if merged is None or merge not in (None, merged):
                return None
            merge = merged
            split_files = []
            for data_file in split.files:
                if (
                    data_file.schema_id != self._schema_id
                    or not data_file.file_name.endswith(".parquet")
                    or data_file.file_path is None
                ):
                    return None
                split_files.append((self._paths(data_file.file_path), data_file.file_size))
            if merged and sum(size for _, size in split_files) > MERGE_SPLIT_BYTES:
                return None
            files.append(split_files)
        return files, bool(merge)

    def _scanners(self, splits: list, target: pa.Schema) -> tuple[list, bool] | None:
        """One scanner per split if merged, else one for all; ``None``: not direct."""
        import pyarrow.dataset as ds
        import pyarrow.fs as pafs

        planned = self._files(splits)
        if planned is None or not any(planned[0]):
            return None
        per_split, merge = planned
        columns = [name for name in target.names if name != ROW_KIND_COLUMN]
        filesystem = self._file_io.filesystem
        parquet = ds.ParquetFileFormat()
        # Sizes from the manifest spare object stores a HEAD per file before its footer read.
        fragments = [
            [parquet.make_fragment(path, filesystem, file_size=size or None) for path, size in files]
            for files in per_split
        ]
        stored = next(group for group in fragments if group)[0].physical_schema
        for name in columns:
            index = stored.get_field_index(name)
            if index < 0 or stored.field(index).type != target.field(name).type:
                return None
        system = []
        if merge:
            system = [*(_KEY_PREFIX + key for key in self._merge_keys or ()), _SEQUENCE_COLUMN]
            for name in system:
                index = stored.get_field_index(name)
                if index < 0 or not _orders_alike(stored.field(index).type):
                    return None
        if self._key_value and (self._row_kind or merge):
            system.append(_VALUE_KIND_COLUMN)
            if stored.get_field_index(_VALUE_KIND_COLUMN) < 0:
                return None
        readahead = 4 if isinstance(filesystem, pafs.LocalFileSystem) else 16
        groups = fragments if merge else [[f for group in fragments for f in group]]
        scanners = [
            ds.FileSystemDataset(group, stored, parquet, filesystem).scanner(
                columns=[*system, *columns], fragment_readahead=readahead
            )
            for group in groups if group
        ]
        return scanners, merge

    def _conformed(self, data: Any, target: pa.Schema) -> Any:
        if not self._key_value:
            return (_prepend_row_kind(data) if self._row_kind else data).cast(target)
        if self._row_kind:
            return _value_kind_as_row_kind(data).cast(target)
        if _VALUE_KIND_COLUMN in data.schema.names:  # read for a merge only
            data = data.drop_columns([_VALUE_KIND_COLUMN])
        return data.cast(target)

    def _merged(self, scanner: Any) -> pa.Table | None:
        """One split's rows merged as the deduplicate engine merges them (``None``: a tie)."""
        import pyarrow.compute as pc

        data = scanner.to_table()
        keys = [_KEY_PREFIX + key for key in self._merge_keys or ()]
        order = pc.sort_indices(
            data, sort_keys=[(name, "ascending") for name in (*keys, _SEQUENCE_COLUMN)]
        )
        data = data.take(order)
        rows = data.num_rows
        if rows == 0:
            return data.drop_columns([*keys, _SEQUENCE_COLUMN])
        # last[i]: row i is the last (highest sequence number) of its key
        differs = None
        for name in keys:
            column = data.column(name)
            step = pc.not_equal(column.slice(0, rows - 1), column.slice(1))
            differs = step if differs is None else pc.or_(differs, step)
        assert differs is not None  # a merged table has at least one key column
        last = pa.concat_arrays([differs.combine_chunks(), pa.array([True])])
        sequence = data.column(_SEQUENCE_COLUMN)
        same_sequence = pc.equal(sequence.slice(0, rows - 1), sequence.slice(1))
        if pc.any(pc.and_(pc.invert(differs), same_sequence)).as_py():
            return None  # two versions of a key with one sequence number: pypaimon decides
        kinds = data.column(_VALUE_KIND_COLUMN)
        keep = pc.and_(last, pc.invert(pc.is_in(kinds, _retract_kinds())))
        return data.filter(keep).drop_columns([*keys, _SEQUENCE_COLUMN])

    def table(self, splits: list, target: pa.Schema) -> pa.Table | None:
        batches = self.batches(splits, target)
        if batches is None:
            return None
        return pa.Table.from_batches(list(batches), schema=target)

    def batches(self, splits: list, target: pa.Schema) -> Iterator[pa.RecordBatch] | None:
        planned = self._scanners(splits, target)
        if planned is None:
            return None
        scanners, merge = planned
        if not merge:
            return (self._conformed(b, target) for b in scanners[0].to_batches() if b.num_rows)
        merged = [self._merged(scanner) for scanner in scanners]
        parts = [part for part in merged if part is not None]
        if len(parts) != len(merged):
            return None
        return (
            self._conformed(batch, target)
            for part in parts for batch in part.to_batches() if batch.num_rows
        )


def direct_batches(
    table: Any, splits: list, include_row_kind: bool, target: pa.Schema
) -> Iterator[pa.RecordBatch] | None:
    """``splits`` read with pyarrow directly when :class:`_DirectParquet` proves the result is
    pypaimon's (``target`` is pypaimon's read schema); ``None`` means: read them with pypaimon."""
    direct = _DirectParquet.for_table(table, include_row_kind)
    return direct.batches(splits, target) if direct is not None else None


def _with_path_factory_built_once(table: Any) -> Any:
    """A shallow copy of ``table`` whose ``path_factory()`` returns one factory: pypaimon's
    split generators ask for a new one twice for every data file a plan names, and building one
    costs more than resolving the file's path with it."""
    fixed = copy.copy(table)
    factory = table.path_factory()
    fixed.path_factory = lambda: factory
    return fixed


_VALUE_KIND_COLUMN = "_VALUE_KIND"


_KEY_PREFIX = "_KEY_"


_SEQUENCE_COLUMN = "_SEQUENCE_NUMBER"


#: A primary-key state split merged with pyarrow is read into memory whole; larger ones stream
#: through pypaimon's merge.
MERGE_SPLIT_BYTES = 128 * 1024 * 1024


#: Table options that change how the deduplicate engine merges (or make pypaimon merge with
#: another engine): any of them and the merge is pypaimon's.
_MERGE_OPTIONS = ("merge-engine", "sequence.field", "ignore-delete")


def _deduplicated_keys(table: Any) -> list[str] | None:
    """The key columns a state split is merged on, if pyarrow may merge it (see
    :class:`_DirectParquet`), else ``None``."""
    options = table.options.options.to_map()
    engine = options.get("merge-engine", "deduplicate")
    if engine != "deduplicate" or any(
        name != "merge-engine" and any(option in name for option in _MERGE_OPTIONS)
        for name in options
    ):
        return None
    keys = list(table.trimmed_primary_keys)
    return keys or None


def _orders_alike(data_type: pa.DataType) -> bool:
    """Whether Arrow sorts values of ``data_type`` the way pypaimon compares them."""
    t = pa.types
    return (
        t.is_integer(data_type) or t.is_string(data_type) or t.is_large_string(data_type)
        or t.is_binary(data_type) or t.is_large_binary(data_type) or t.is_date(data_type)
        or t.is_timestamp(data_type) or t.is_decimal(data_type) or t.is_boolean(data_type)
    )


def _value_kind_as_row_kind(data: Any) -> Any:
    """``data`` read from key-value files, its first column ``_VALUE_KIND``, with that column
    replaced by ``_row_kind`` strings."""
    import pyarrow.compute as pc

    kinds = data.column(0)
    bounds = pc.min_max(kinds)
    if len(kinds) and (bounds["min"].as_py() < 0 or bounds["max"].as_py() >= len(_ROW_KIND_NAMES)):
        raise ValueError(f"unknown row kind byte in a data file: {pc.unique(kinds).to_pylist()}")
    names = [ROW_KIND_COLUMN, *data.schema.names[1:]]
    columns = [_row_kinds().take(kinds), *data.columns[1:]]
    if isinstance(data, pa.Table):
        return pa.Table.from_arrays(columns, names=names)
    return pa.RecordBatch.from_arrays(columns, names=names)
