"""The one place paimon-feed touches pypaimon internals.

pypaimon's ``AsyncStreamingTableScan`` already knows how to plan one streaming frame: the full
scan of a snapshot, the delta or changelog of a follow-up snapshot (with auth, native planning and
bucket filtering), and a set-diff catch-up. We use it as a synchronous planning library and
leave its polling loop alone. pypaimon is pinned to the minor version whose private helpers are
called here; an upgrade touches this file only.
"""

from __future__ import annotations

import copy
import functools
import io
import logging
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator, List, Union

import pyarrow as pa
from cachetools import LRUCache

from pypaimon.read.plan import Plan
from pypaimon.read.scanner.changelog_follow_up_scanner import ChangelogFollowUpScanner

from paimon_feed.errors import ConfigurationError, DamagedMetadataError, UnsupportedTableError
from paimon_feed.planner import _exact
from paimon_feed.planner._objects import FilesystemPaths

__all__ = [
    "ManifestCache",
    "SchemaPlanner",
    "ExactRead",
    "table_at_schema",
    "field_ids",
    "rename_predicate",
    "NO_ROWS",
    "predicate_columns",
    "latest_snapshot_id",
    "earliest_snapshot_id",
    "listed_snapshot_ids",
    "read_snapshot",
    "parse_snapshot",
    "table_name",
    "table_url",
    "serialize_split",
    "deserialize_split",
    "canonical_option_keys",
    "divide_split",
    "with_read_batch_rows",
    "direct_batches",
]

logger = logging.getLogger(__name__)

ROW_KIND_COLUMN = "_row_kind"


def read_snapshot(snapshot_manager: Any, snapshot_id: int, files: Any = None) -> Any:
    """Snapshot ``snapshot_id``, or ``None`` if its file does not exist.

    One read instead of pypaimon's existence check plus read: on S3 an existence check of a
    missing key is a HEAD and a LIST, a read through pyarrow is one HEAD (missing) or a HEAD and
    a GET, through ``files`` (a :class:`~paimon_feed.planner._objects.MetadataFiles`) one GET.
    """
    try:
        text = _read_text(snapshot_manager, snapshot_manager.get_snapshot_path(snapshot_id), files)
    except FileNotFoundError:
        return None
    return parse_snapshot(text)


def _read_text(snapshot_manager: Any, path: str, files: Any) -> str:
    if files is None:
        return snapshot_manager.file_io.read_file_utf8(path)
    return files.read(path).decode("utf-8")


@functools.lru_cache(maxsize=1)
def _snapshot_fields() -> tuple[dict[str, str], dict[str, Any]] | None:
    """``Snapshot``'s JSON names -> field names, and the values of fields missing from the
    JSON, as pypaimon's ``JSON.from_json`` derives them; ``None`` if a field needs more than a
    rename (a decoder, a nested class), which only ``JSON.from_json`` does."""
    import dataclasses

    from pypaimon.snapshot.snapshot import Snapshot

    names, missing = {}, {}
    for field in dataclasses.fields(Snapshot):
        if field.metadata.get("json_ignore", False):
            continue
        kind = field.type
        origin, args = getattr(kind, "__origin__", None), getattr(kind, "__args__", None)
        if origin is Union and len(args) == 2:
            kind = args[0]
            origin, args = getattr(kind, "__origin__", None), getattr(kind, "__args__", None)
        if (
            field.metadata.get("decoder") is not None
            or dataclasses.is_dataclass(kind)
            or (origin in (list, List) and args and dataclasses.is_dataclass(args[0]))
        ):
            return None
        json_name = field.metadata.get("json_name", field.name)
        names[json_name] = field.name
        if "json_missing_default" in field.metadata:
            missing[json_name] = field.metadata["json_missing_default"]
    return names, missing


def parse_snapshot(text: str) -> Any:
    """A snapshot file's JSON as pypaimon's ``Snapshot``, exactly as ``JSON.from_json`` builds
    it, at a fraction of its cost (it derives the field mapping anew for every file; a catch-up
    parses thousands)."""
    import json

    from pypaimon.common.json_util import JSON
    from pypaimon.snapshot.snapshot import Snapshot

    fields = _snapshot_fields()
    if fields is None:
        return JSON.from_json(text, Snapshot)
    names, missing = fields
    data = json.loads(text)
    kwargs = {names[key]: value for key, value in data.items() if key in names}
    for key, value in missing.items():
        if key not in data:
            kwargs[names[key]] = value
    return Snapshot(**kwargs)


def table_name(table: Any) -> str:
    """``db.table`` of a pypaimon table."""
    return table.identifier.get_full_name()


def table_url(table: Any) -> str:
    """The table's root as a URL (``file:///...`` for local tables)."""
    from paimon_feed._layout import local_url

    path = str(table.table_path)
    return path if "://" in path else local_url(path)


def serialize_split(split: Any) -> bytes:
    """A split as pypaimon's cross-language ``SplitSerializer`` v1 bytes (stable across
    versions, unlike a pickle), for shipping splits to other processes (Spark executors)."""
    from pypaimon.read.split_serializer import serialize_split_v1

    return serialize_split_v1(split)


def deserialize_split(data: bytes, table: Any) -> Any:
    """The split :func:`serialize_split` wrote, rebuilt against ``table``'s schema."""
    from pypaimon.read.split_serializer import deserialize_split_v1

    schema = table.table_schema
    by_name = {field.name: field for field in schema.fields}
    partition_fields = [by_name[name] for name in schema.partition_keys]
    return deserialize_split_v1(data, partition_fields, table.trimmed_primary_keys_fields)


def divide_split(table: Any, split: Any, max_bytes: int, open_cost_bytes: int) -> list:
    """``split`` cut into splits of at most ``max_bytes`` (each file weighing at least
    ``open_cost_bytes``), for reading in parallel; ``[split]`` when it cannot be cut.

    Only append-table splits whose files are read as they are (``raw_convertible``, no data
    evolution) are cut: their files are independent. Primary-key splits must be merged whole.
    """
    from pypaimon.read.split import DataSplit

    if (
        type(split) is not DataSplit
        or not split.raw_convertible
        or table.is_primary_key_table
        or table.options.data_evolution_enabled()
        or len(split.files) < 2
    ):
        return [split]
    groups: list[set[int]] = [set()]
    size = 0
    for data_file in split.files:
        weight = max(data_file.file_size, open_cost_bytes)
        if groups[-1] and size + weight > max_bytes:
            groups.append(set())
            size = 0
        groups[-1].add(id(data_file))
        size += weight
    if len(groups) == 1:
        return [split]
    return [split.filter_file(lambda f, g=group: id(f) in g) for group in groups]


def with_read_batch_rows(table: Any, rows: int) -> Any:
    """``table`` reading Arrow batches of ``rows`` rows, unless the table sets its own
    ``read.batch-size``."""
    if "read.batch-size" in table.options.options.to_map():
        return table
    return table.copy({"read.batch-size": str(rows)})


def canonical_option_keys() -> dict[str, str]:
    """pypaimon's catalog/file-IO option keys by their lower-case spelling
    (``fs.s3.accesskeyid`` -> ``fs.s3.accessKeyId``), for callers whose options arrive
    lower-cased (Spark data source options are case-insensitive)."""
    from pypaimon.common.options import config
    from pypaimon.common.options.config_option import ConfigOption

    keys: dict[str, str] = {}
    for holder in vars(config).values():
        if isinstance(holder, type):
            for value in vars(holder).values():
                if isinstance(value, ConfigOption):
                    keys[value.key().lower()] = value.key()
    return keys


# Snapshot hints, read the way Java Paimon reads them: a hint is trusted only when the snapshot
# it names exists (and, for LATEST, no newer one does); a missing, empty, garbage or stale hint
# falls back to listing the snapshot directory.

_SNAPSHOT_FILE = re.compile(r"snapshot-(\d+)")


def _read_hint(snapshot_manager: Any, name: str, files: Any = None) -> int | None:
    path = f"{snapshot_manager.snapshot_dir}/{name}"
    try:
        text = _read_text(snapshot_manager, path, files)
    except FileNotFoundError:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        logger.debug("snapshot hint %s holds %r, not a snapshot id; listing instead", path, text[:40])
        return None
    return value if value > 0 else None


def _snapshot_exists(snapshot_manager: Any, snapshot_id: int, files: Any = None) -> bool:
    # A read, not pypaimon's exists(): that one answers "missing" for some storage errors.
    try:
        _read_text(snapshot_manager, snapshot_manager.get_snapshot_path(snapshot_id), files)
    except FileNotFoundError:
        return False
    return True


def listed_snapshot_ids(snapshot_manager: Any) -> list[int]:
    """Ids of the ``snapshot-N`` files in the snapshot directory, sorted (empty if none)."""
    directory = snapshot_manager.snapshot_dir
    try:
        statuses = snapshot_manager.file_io.list_status(directory)
    except FileNotFoundError:
        return []
    ids = []
    for status in statuses:
        match = _SNAPSHOT_FILE.fullmatch(str(status.path).rstrip("/").rsplit("/", 1)[-1])
        if match:
            ids.append(int(match.group(1)))
    return sorted(ids)


def latest_snapshot_id(
    snapshot_manager: Any, exists: Callable[[int], bool] | None = None, files: Any = None
) -> int | None:
    """The newest snapshot id (``None`` for a table without snapshots), as Java finds it.

    ``exists`` answers whether a snapshot exists (a caller with a cache of parsed snapshots
    passes one that asks it first); by default the snapshot file is read (through ``files``,
    a ``MetadataFiles``, if given).
    """
    exists = exists or (lambda snapshot_id: _snapshot_exists(snapshot_manager, snapshot_id, files))
    hinted = _read_hint(snapshot_manager, "LATEST", files)
    if hinted is not None and not exists(hinted + 1) and exists(hinted):
        return hinted
    ids = listed_snapshot_ids(snapshot_manager)
    return ids[-1] if ids else None


def earliest_snapshot_id(snapshot_manager: Any, files: Any = None) -> int | None:
    """The oldest retained snapshot id (``None`` for a table without snapshots).

    Without a usable ``EARLIEST`` hint (pypaimon writes none), ``snapshot-1`` is looked for
    before the directory is listed: ids start at 1, so if it exists it is the oldest, and a
    listing (a stat per file on a local disk) costs far more on a long history.
    """
    hinted = _read_hint(snapshot_manager, "EARLIEST", files)
    if hinted is not None and _snapshot_exists(snapshot_manager, hinted, files):
        return hinted
    if hinted != 1 and _snapshot_exists(snapshot_manager, 1, files):
        return 1
    ids = listed_snapshot_ids(snapshot_manager)
    return ids[0] if ids else None


# Manifests: manifest lists and manifest files are immutable once written, so a planner keeps
# what it read. pypaimon makes its manifest managers anew in several places (the diff scanner,
# the file scanner); the planner gives each one it uses the cache by replacing the manager's
# ``read`` and ``file_io`` on that instance, never on pypaimon's classes.

# Bytes a parsed entry holds in memory, measured with tracemalloc on pypaimon 2.1 (one manifest
# list entry ~880 B; one manifest entry with its statistics ~2,900 B).
_LIST_ENTRY_BYTES = 1_000
_FILE_ENTRY_BYTES = 3_000


class ManifestCache:
    """Manifest lists and manifest files of one table, read once: parsed where the read has no
    filter that changes what is parsed, as bytes otherwise.

    Bounded by ``max_entries`` and by ``max_bytes``, the estimated memory of what it holds
    (raw bytes as they are, parsed entries by the measured size of one); least recently used
    first out. Thread-safe. ``reads`` counts files read from storage, ``hits`` reads saved.
    Files are read through ``files`` (a :class:`~paimon_feed.planner._objects.MetadataFiles`:
    one request each where the store allows).

    Decoding a manifest is pure Python work that holds the GIL, so where reading costs nothing
    to wait for (``local`` storage, or every file of a read already held) manifests are decoded
    one after another on the caller's thread: pypaimon's pool of one thread per core spends
    more on handing each file over than it saves (1,000 manifests: 0.36 s pooled, 0.20 s
    inline). Reads that must wait for the store keep pypaimon's pool.
    """

    def __init__(
        self, files: Any, max_entries: int = 8192, max_bytes: int = 32 << 20, *, local: bool = False
    ) -> None:
        self.files = files
        self.local = local
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: LRUCache = LRUCache(maxsize=max_bytes, getsizeof=lambda item: item[1])
        self._lock = threading.Lock()
        self._checked: LRUCache = LRUCache(maxsize=max_entries * 4)  # path -> size found right
        self.reads = 0
        self.hits = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        """Estimated bytes held now."""
        return int(self._items.currsize)

    def _get(self, key: tuple) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self.hits += 1
                return item[0]
            return None

    def _put(self, key: tuple, value: Any, weight: int) -> None:
        if weight > self.max_bytes:
            return
        with self._lock:
            self._items[key] = (value, max(1, weight))
            while len(self._items) > self.max_entries:
                self._items.popitem()

    def _bytes(self, path: str) -> bytes:
        data = self._get(("bytes", path))
        if data is None:
            data = self.files.read(path)
            with self._lock:
                self.reads += 1
            self._put(("bytes", path), data, len(data))
        return data

    def check_size(self, path: str, expected: int | None, what: str) -> None:
        """Raise :class:`DamagedMetadataError` if the file at ``path`` does not have the size
        the metadata naming it recorded (a snapshot records its manifest lists' sizes, a
        manifest list its manifests'): a file cut short, even to a valid but empty Avro file,
        must not pass for a commit without changes. The bytes read stay cached for the parse."""
        if expected is None or expected <= 0:
            return  # written by a Paimon version that did not record it
        with self._lock:
            if self._checked.get(path) == expected:
                return
        size = len(self._bytes(path))
        if size != expected:
            raise DamagedMetadataError(
                f"{what} {path} has {size} bytes where {expected} were written (cut short by "
                f"a torn upload or a bad restore?)"
            )
        with self._lock:
            self._checked[path] = expected

    def install(self, manager: Any) -> Any:
        """``manager`` (a pypaimon ``ManifestListManager`` or ``ManifestFileManager``) reading
        through this cache; returns it."""
        from pypaimon.manifest.manifest_list_manager import ManifestListManager

        if getattr(manager, "_paimon_feed_cache", None) is self:
            return manager
        read = manager.read  # the class's method, bound to this instance
        manager.file_io = _CachedManifestIO(manager.file_io, self)
        if isinstance(manager, ManifestListManager):
            def read_list(name: str, file_size: int | None = None) -> list:
                key = ("list", f"{manager.manifest_path}/{name}")
                metas = self._get(key)
                if metas is None:
                    self.check_size(key[1], file_size, "manifest list")
                    metas = read(name, file_size)
                    self._put(key, metas, _LIST_ENTRY_BYTES * max(1, len(metas)))
                return list(metas)

            manager.read = read_list
        else:
            def read_file(name: str, manifest_entry_filter: Any = None, drop_stats: bool = True,
                          **filters: Any) -> list:
                if filters.get("selected_blocks") is None:  # a sidecar read takes some blocks
                    self.check_size(
                        f"{manager.manifest_path}/{name}", filters.get("file_size"), "manifest"
                    )
                if any(value is not None for key, value in filters.items() if key != "file_size"):
                    return read(name, manifest_entry_filter, drop_stats, **filters)
                # No early filter: one parse (with statistics) serves every caller; the entry
                # filter sees entries with statistics, then they are dropped, as in pypaimon.
                key = ("file", f"{manager.manifest_path}/{name}")
                entries = self._get(key)
                if entries is None:
                    entries = read(name, None, False, **filters)
                    self._put(key, entries, _FILE_ENTRY_BYTES * max(1, len(entries)))
                if manifest_entry_filter is not None:
                    entries = [entry for entry in entries if manifest_entry_filter(entry)]
                return [e.copy_without_stats() for e in entries] if drop_stats else list(entries)

            manager.read = read_file
            manager.read_entries_parallel = self._inline_when_held(manager)
        manager._paimon_feed_cache = self
        return manager

    def _held(self, paths: list[str]) -> bool:
        with self._lock:
            return all(("bytes", path) in self._items for path in paths)

    def _inline_when_held(self, manager: Any) -> Any:
        """``manager.read_entries_parallel``, decoding on the caller's thread when there is no
        read to wait for (see the class). Manifest sidecars (an option pypaimon reads with its
        own block selection) keep pypaimon's path."""
        pooled = manager.read_entries_parallel

        def read_entries(manifest_files: list, manifest_entry_filter: Any = None,
                         drop_stats: bool = True, max_workers: int = 8, **filters: Any) -> list:
            if (
                len(manifest_files) < 2
                or manager.table.options.manifest_sidecar_enabled()
                or not (self.local or self._held(
                    [f"{manager.manifest_path}/{meta.file_name}" for meta in manifest_files]
                ))
            ):
                return pooled(manifest_files, manifest_entry_filter, drop_stats, max_workers, **filters)
            filters.pop("row_ranges", None)  # only used to select sidecar blocks
            return _merge_entries(
                manager.read(meta.file_name, manifest_entry_filter, drop_stats,
                             file_size=meta.file_size, **filters)
                for meta in manifest_files
            )

        return read_entries

    def prefetch(self, paths: list[tuple[str, int]], in_flight: int) -> int:
        """Read the files of ``paths`` (path, size) not held yet, ``in_flight`` at a time, as far
        as they fit in half of each budget (so they are still held when planning gets to them);
        returns how many were read."""
        with self._lock:
            missing = [(p, n) for p, n in dict(paths).items() if ("bytes", p) not in self._items]
        wanted, budget = [], self.max_bytes // 2
        for path, size in missing[: self.max_entries // 2]:
            budget -= size or 0
            if budget < 0:
                break
            wanted.append(path)
        if not wanted:
            return 0
        with ThreadPoolExecutor(max_workers=max(1, min(in_flight, len(wanted)))) as pool:
            list(pool.map(self._bytes, wanted))
        return len(wanted)


def _merge_entries(per_manifest: Iterable[list]) -> list:
    """The live files of manifests read in order, as pypaimon's ``read_entries_parallel``
    merges them: every ADD entry whose file no DELETE entry names."""
    added, deleted = [], set()
    for entries in per_manifest:
        for entry in entries:
            if entry.kind == 0:
                added.append(entry)
            else:
                deleted.add(_entry_identifier(entry))
    if not deleted:
        return added
    return [entry for entry in added if _entry_identifier(entry) not in deleted]


def _entry_identifier(entry: Any) -> tuple:
    """What makes two manifest entries the same file (pypaimon's identifier)."""
    file = entry.file
    return (
        tuple(entry.partition.values),
        entry.bucket,
        file.level,
        file.file_name,
        tuple(file.extra_files) if file.extra_files else (),
        file.embedded_index,
        file.external_path,
    )


class _CachedManifestIO:
    """A FileIO whose ``new_input_stream`` serves manifest files from a :class:`ManifestCache`."""

    def __init__(self, inner: Any, cache: ManifestCache) -> None:
        self._inner = inner
        self._cache = cache

    def new_input_stream(self, path: str) -> Any:
        return io.BytesIO(self._cache._bytes(path))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


# Schemas: every snapshot is planned and read with the schema it was committed with.


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
    from pypaimon.read.push_down_utils import rewrite_predicate_indices, trim_predicate_by_fields

    if predicate is None or not table.partition_keys:
        return None
    trimmed = trim_predicate_by_fields(predicate, table.partition_keys)
    if trimmed is None:
        return None
    on_partition = rewrite_predicate_indices(trimmed, table.partition_keys_fields)
    return lambda split: on_partition.test(split.partition)


def _arrow_filter(predicate: Any, schema: pa.Schema) -> Any:
    return predicate.to_arrow(schema) if predicate is not None else None


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



class ExactRead:
    """Reads splits of one schema: pypaimon's ``TableRead``, then the feed's predicate applied
    to every row.

    pypaimon uses a predicate to skip files and row groups, and filters rows only on columns
    stored in data files: a partition column is never filtered, and neither is a predicate
    under some read paths. Applying the predicate again to the Arrow result makes it exact
    for every batch kind; columns read only for the predicate are dropped afterwards.

    Plain append data (see :class:`_DirectParquet`) is read with pyarrow directly, which gives
    the same rows as pypaimon's reader at a fraction of the CPU per file.
    """

    def __init__(
        self, builder: Any, predicate: Any, columns: list[str] | None, *, direct: Any = None,
        values: _ExactValues | None = None,
    ) -> None:
        self._builder = builder
        self._predicate = predicate
        self._columns = columns
        self._read_schema = builder.new_read().to_arrow([]).schema
        self.schema = _filtered(self._read_schema.empty_table(), None, columns).schema
        self._direct = direct
        self._values = values

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
            system = [*(_KEY_PREFIX + key for key in self._merge_keys), _SEQUENCE_COLUMN]
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
        keys = [_KEY_PREFIX + key for key in self._merge_keys]
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
        if any(part is None for part in merged):
            return None
        return (
            self._conformed(batch, target)
            for part in merged for batch in part.to_batches() if batch.num_rows
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


class SchemaPlanner:
    """Plans and reads the snapshots of one schema with pypaimon's streaming scan, no polling.

    ``projection`` and ``predicate`` name columns of this schema (the caller maps them from
    the feed's schema by field id).
    """

    def __init__(
        self,
        table: Any,
        *,
        projection: list[str] | None,
        predicate: Any,
        buckets: frozenset[int] | None,
        include_row_kind: bool,
        manifests: ManifestCache | None = None,
        reads_in_flight: int = 4,
        prefetch: bool = False,
    ) -> None:
        # Options pypaimon cannot merge with: change splits are read without them (no merge);
        # a merged read is refused (``refused``).
        unmergeable = _exact.unmergeable_options(table)
        if unmergeable:
            table = _exact.without_merge_options(table, unmergeable)
        table = _with_path_factory_built_once(table)
        self.table = table
        self.schema_id = table.table_schema.id
        self._no_rows = predicate is NO_ROWS  # no row of this schema can match: read nothing
        if self._no_rows:
            predicate = None
        self._manifests = manifests
        self._reads_in_flight = reads_in_flight
        self._prefetch = prefetch
        if projection is not None:
            columns = [field.name for field in table.fields]
            unknown = [name for name in projection if name not in columns]
            if unknown or not projection:
                raise ConfigurationError(
                    f"table {table_name(table)}: invalid projection {list(projection)!r}: "
                    f"unknown columns {unknown}; the table has {columns}"
                )
        # Columns the exact filter needs are read too, then dropped.
        read_columns = None
        output_columns = None
        if projection is not None:
            extra = [name for name in table.field_names if name in predicate_columns(predicate)
                     and name not in projection]
            read_columns = list(projection) + extra
            output_columns = ([ROW_KIND_COLUMN] if include_row_kind else []) + list(projection)
        #: Why a batch kind (``_exact.CHANGES``, ``_exact.FULL``) cannot be read exactly.
        self.refused = _exact.lossy_reads(table, read_columns, unmergeable)
        chars = _exact.char_columns(table, read_columns)[0]
        pushed = _exact.pushable_predicate(predicate, table, chars)
        builder = table.new_stream_read_builder()
        try:
            if read_columns is not None:
                builder.with_projection(read_columns)
            if pushed is not None:
                builder.with_filter(pushed)
            if buckets is not None:
                builder.with_buckets(sorted(buckets))
            builder.with_include_row_kind(include_row_kind)
            self._scan = builder.new_streaming_scan()
            if manifests is not None:
                manifests.install(self._scan._manifest_list_manager)
                manifests.install(self._scan._manifest_file_manager)
            self._values = _exact_values(table, read_columns, chars)
            self.read = ExactRead(
                builder, predicate, output_columns,
                direct=_DirectParquet.for_table(table, include_row_kind), values=self._values,
            )
            # Kept for overwrite reads: whole-table state, row kinds set by the feed.
            self._state_builder = table.new_read_builder()
            if read_columns is not None:
                self._state_builder.with_projection(read_columns)
            if pushed is not None:
                self._state_builder.with_filter(pushed)
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"table {table_name(table)}: invalid projection {projection!r} or predicate: {exc}"
            ) from exc
        self._buckets = buckets
        self._in_partition = _partition_test(table, predicate)
        scanner = self._scan.follow_up_scanner
        self.should_scan = scanner.should_scan
        self.mode = "changelog" if isinstance(scanner, ChangelogFollowUpScanner) else "delta"
        options = table.options
        # Set-diff catch-up returns files present at the end but not at the start. That equals
        # the union of the deltas only for plain append tables whose range holds no compaction
        # or overwrite; anything else would repeat rows, so it is planned snapshot by snapshot.
        self._diff_capable = (
            self.mode == "delta"
            and not table.is_primary_key_table
            and not options.deletion_vectors_enabled()
            and not options.data_evolution_enabled()
        )

    @property
    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema batches of this schema are read with."""
        return self.read.schema

    def _pruned(self, plan: Plan) -> Plan:
        if self._no_rows:
            return Plan([], snapshot_id=plan.snapshot_id)
        if self._buckets is None and self._in_partition is None:
            return plan
        splits = [
            split for split in plan.splits()
            if (self._buckets is None or split.bucket in self._buckets)
            and (self._in_partition is None or self._in_partition(split))
        ]
        return Plan(splits, snapshot_id=plan.snapshot_id)

    def full_plan(self, snapshot: Any) -> Plan:
        plan = self._scan._create_initial_plan(snapshot)
        return self._pruned(Plan(plan.splits(), snapshot_id=snapshot.id))

    def follow_up_plan(self, snapshot: Any) -> Plan:
        plan = self._scan._create_follow_up_plan(snapshot)
        return self._pruned(Plan(plan.splits(), snapshot_id=snapshot.id))

    def catch_up_plan(
        self, start: Any, snapshots: list, scannable: Iterable[Any], threads: int
    ) -> Plan:
        """One plan covering ``snapshots`` (consecutive ids of this schema, oldest first);
        ``start`` is the snapshot before them (``None`` if it is gone or there is none)."""
        first, last = snapshots[0], snapshots[-1]
        if self._diff_capable and all(s.commit_kind == "APPEND" for s in snapshots):
            if start is not None or first.id == 1:
                plan = self._diff_plan(start, first.id, last)
                return self._pruned(Plan(plan.splits(), snapshot_id=last.id))
        scannable = list(scannable)
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(scannable)))) as pool:
            plans = list(pool.map(self.follow_up_plan, scannable))
        splits = [split for plan in plans for split in plan.splits()]
        return Plan(splits, snapshot_id=last.id)

    def _diff_plan(self, start: Any, first_id: int, last: Any) -> Plan:
        """pypaimon's set-diff catch-up (``_create_catch_up_plan``): files in ``last`` not in
        ``start``, or all of ``last`` from the first snapshot. With a manifest cache the same
        scanners read through it; with ``prefetch`` (object stores) the manifests are fetched
        ``reads_in_flight`` at a time first, where pypaimon reads as many at a time as the
        machine has cores. On a local disk a read costs less than the threads would."""
        from pypaimon.read.scanner.file_scanner import FileScanner
        from pypaimon.read.scanner.incremental_diff_scanner import IncrementalDiffScanner

        scan = self._scan
        if self._manifests is None or scan._AsyncStreamingTableScan__auth_query() is not None:
            return scan._create_catch_up_plan(first_id, last)  # REST auth: pypaimon's own path
        lists = self._manifests.install(scan._manifest_list_manager)
        if self._prefetch:
            metas = lists.read_all(last) + (lists.read_all(start) if start is not None else [])
            self._manifests.prefetch(
                [(f"{lists.manifest_path}/{m.file_name}", m.file_size) for m in metas],
                self._reads_in_flight,
            )
        if start is None:
            scanner = FileScanner(
                self.table, lambda: (lists.read_all(last), last), predicate=scan.predicate, limit=None
            )
            self._manifests.install(scanner.manifest_file_manager)
            return scanner.scan()
        scanner = IncrementalDiffScanner(self.table)
        scanner.manifest_list_manager = lists
        self._manifests.install(scanner.manifest_file_manager)
        return scanner.scan(start, last)

    def overwrite_plan(self, snapshot: Any) -> tuple[Plan, list]:
        """What an OVERWRITE snapshot changed: splits of the files it added, and splits of the
        files it removed (each read as the state it held, to be delivered as ``-D``)."""
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager
        from pypaimon.manifest.manifest_list_manager import ManifestListManager

        lists, reader = ManifestListManager(self.table), ManifestFileManager(self.table)
        if self._manifests is not None:
            self._manifests.install(lists)
            self._manifests.install(reader)
        manifests = lists.read_delta(snapshot)
        entries = [
            entry
            for manifest in manifests
            for entry in reader.read(manifest.file_name, drop_stats=True, file_size=manifest.file_size)
        ]
        added = self._state_splits([e for e in entries if e.kind == 0], snapshot.id)
        removed = self._state_splits([_as_added(e) for e in entries if e.kind != 0], snapshot.id)
        return Plan(added, snapshot_id=snapshot.id), removed

    def _state_splits(self, entries: list, snapshot_id: int) -> list:
        from pypaimon.read.scanner.append_table_split_generator import AppendTableSplitGenerator
        from pypaimon.read.scanner.primary_key_table_split_generator import (
            PrimaryKeyTableSplitGenerator,
        )

        if self._buckets is not None:
            entries = [e for e in entries if e.bucket in self._buckets]
        if not entries:
            return []
        options = self.table.options
        generator = (
            PrimaryKeyTableSplitGenerator
            if self.table.is_primary_key_table
            else AppendTableSplitGenerator
        )(
            self.table,
            options.source_split_target_size(),
            options.source_split_open_file_cost(),
            deletion_files_map={},
            snapshot_id=snapshot_id,
        )
        splits = generator.create_splits(entries)
        return self._pruned(Plan(splits, snapshot_id=snapshot_id)).splits()

    @functools.cached_property
    def state_read(self) -> ExactRead:
        """A reader that merges primary-key files into the state they hold, for overwrite
        batches (whose rows get their kinds from :meth:`ExactRead.to_arrow`); built once."""
        return ExactRead(
            _StateBuilder(self._state_builder), self.read._predicate, self.read._columns,
            values=self._values,
        )


def _as_added(entry: Any) -> Any:
    """A DELETE manifest entry as the ADD entry of the same file, to plan a read of it."""
    from pypaimon.manifest.schema.manifest_entry import ManifestEntry

    return ManifestEntry(
        kind=0, partition=entry.partition, bucket=entry.bucket,
        total_buckets=entry.total_buckets, file=entry.file,
    )


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


def read_tags(table: Any) -> dict[str, Any]:
    """The table's tags by name, each as the snapshot it holds (empty if it has none)."""
    from pypaimon.common.json_util import JSON
    from pypaimon.tag.tag import Tag

    manager = table.tag_manager()
    directory = manager.tag_directory()
    try:
        statuses = table.file_io.list_status(directory)
    except FileNotFoundError:
        return {}
    tags = {}
    for status in statuses:
        name = str(status.path).rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("tag-"):
            try:
                text = table.file_io.read_file_utf8(manager.tag_path(name[4:]))
            except FileNotFoundError:
                continue  # deleted while listing
            tags[name[4:]] = JSON.from_json(text, Tag)
    return tags
