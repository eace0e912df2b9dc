"""Manifest lists and manifest files, read once per planner and checked against the sizes recorded for them.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import builtins
import io
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cachetools import LRUCache

from paimon_feed.errors import DamagedMetadataError

logger = logging.getLogger(__name__)


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

    def _bytes(self, path: str) -> builtins.bytes:  # builtins: the class has a ``bytes`` property
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
