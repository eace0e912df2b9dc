"""Timeline: a table's snapshots as Java Paimon sees them, cheap to build.

Which snapshot is the latest and the earliest (by Java's rules: the ``LATEST``/``EARLIEST``
hints when they are right, else a listing), whether a missing snapshot expired, which snapshot a
tag or a time names, and each snapshot's :class:`~paimon_feed.batch.SnapshotMark`. Parsed
snapshot files are kept in a bounded cache: they are immutable under one history, so a retry or
the next round never reads one twice; what a rollback may have replaced is read again (see
:meth:`Timeline.revalidate_from` and the ``fresh`` reads of :meth:`Timeline.mark`).

Used by the :class:`~paimon_feed.planner.Planner`, and on its own wherever only positions
matter (the Spark source's tracker, ``consumers``, the Lambda handler's lag).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cachetools import LRUCache

from paimon_feed.batch import SnapshotMark
from paimon_feed.errors import (
    DamagedMetadataError,
    InvalidStartError,
    SnapshotExpiredError,
    storage_errors,
)
from paimon_feed.planner import _snapshots
from paimon_feed.planner._objects import MetadataFiles

__all__ = ["Timeline"]

logger = logging.getLogger(__name__)

_SNAPSHOT_CACHE_ENTRIES = 4096


class Timeline:
    """The snapshots of one table (see the module docstring).

    Args:
        table: a pypaimon ``FileStoreTable``.
        files: what reads whole metadata files (default: one for the table's FileIO).
        reads_in_flight: snapshot files read at once when a range is read.
    """

    def __init__(self, table: Any, files: MetadataFiles | None = None, reads_in_flight: int = 1) -> None:
        self.table = table
        self.table_name = _snapshots.table_name(table)
        self.files = files if files is not None else MetadataFiles(table.file_io)
        self.reads_in_flight = reads_in_flight
        self._manager = table.snapshot_manager()
        self._cache: LRUCache = LRUCache(maxsize=_SNAPSHOT_CACHE_ENTRIES)
        self._highest_cached = 0
        self._tags: dict[int, Any] = {}

    # snapshots ---------------------------------------------------------------------------
    def get(self, snapshot_id: int) -> Any:
        """Snapshot ``snapshot_id`` or ``None`` if its file does not exist (yet, or any more).
        A file holding another snapshot than its name says is :class:`DamagedMetadataError`."""
        cached = self._cache.get(snapshot_id)
        if cached is not None:
            return cached
        snapshot = self._read(snapshot_id)
        if snapshot is not None:
            if snapshot.id != snapshot_id:
                raise DamagedMetadataError(
                    f"table {self.table_name}: snapshot file {self.path(snapshot_id)} holds "
                    f"snapshot {snapshot.id}, not {snapshot_id} (a botched copy or restore?); "
                    f"restore the file, nothing past snapshot {snapshot_id - 1} is read until then"
                )
            self._cache[snapshot_id] = snapshot
            self._highest_cached = max(self._highest_cached, snapshot_id)
        return snapshot

    def _read(self, snapshot_id: int) -> Any:
        with storage_errors(self.table_name, f"reading snapshot {snapshot_id} ({self.path(snapshot_id)})"):
            return _snapshots.read_snapshot(self._manager, snapshot_id, self.files)

    def path(self, snapshot_id: int) -> str:
        path: str = self._manager.get_snapshot_path(snapshot_id)
        return path

    def get_many(self, snapshot_ids: Sequence[int]) -> list[Any]:
        """The snapshots of ``snapshot_ids`` (``None`` for missing ones), the ones not cached
        read :attr:`reads_in_flight` at a time."""
        missing = [i for i in snapshot_ids if i not in self._cache]
        if len(missing) > 1 and self.reads_in_flight > 1:
            with ThreadPoolExecutor(max_workers=min(self.reads_in_flight, len(missing))) as pool:
                list(pool.map(self.get, missing))
        return [self.get(i) for i in snapshot_ids]

    def get_fresh(self, snapshot_id: int) -> Any:
        """:meth:`get`, read again from storage (a rollback replaces snapshot files)."""
        self._cache.pop(snapshot_id, None)
        return self.get(snapshot_id)

    def exists(self, snapshot_id: int) -> bool:
        """Whether snapshot ``snapshot_id``'s file exists: a damaged one does (it is reported
        when it is planned, after what comes before it was delivered)."""
        try:
            return self.get(snapshot_id) is not None
        except DamagedMetadataError:
            return True

    def mark(self, snapshot_id: int, *, fresh: bool = False) -> SnapshotMark | None:
        """The :class:`SnapshotMark` of ``snapshot_id`` (``None`` if its file does not exist);
        ``fresh`` reads the file again instead of answering from the cache."""
        snapshot = self.get_fresh(snapshot_id) if fresh else self.get(snapshot_id)
        return SnapshotMark.of(snapshot) if snapshot is not None else None

    def revalidate_from(self, snapshot_id: int) -> None:
        """Snapshots from ``snapshot_id`` on that were read but not planned yet may be gone or
        other commits by now: a rollback to a snapshot at or after the position rewrites
        nothing that was read, so no history check would see a stale one. The newest of them is
        read again (one read, only when there are any); if it is still the same commit, so are
        all before it (a rollback below it would have replaced it), else all are dropped."""
        if self._highest_cached < snapshot_id:
            return
        newest = self._highest_cached
        cached = self._cache.get(newest)
        if cached is not None:
            fresh = self._read(newest)
            if fresh is not None and SnapshotMark.of(fresh) == SnapshotMark.of(cached):
                return
        for stale in [i for i in self._cache if i >= snapshot_id]:
            del self._cache[stale]
        self._highest_cached = snapshot_id - 1

    def forget(self) -> None:
        """Drop every parsed snapshot: after the history was rewritten, ids name other commits."""
        self._cache.clear()
        self._highest_cached = 0
        self._tags.clear()

    # positions ---------------------------------------------------------------------------
    def latest_snapshot_id(self) -> int | None:
        """The newest snapshot id, or ``None`` for a table with no snapshot yet.

        Read as Java Paimon reads it: the ``LATEST`` hint if it names an existing snapshot
        with no newer one, else a listing of the snapshot directory.
        """
        with storage_errors(self.table_name, "finding the latest snapshot"):
            return _snapshots.latest_snapshot_id(self._manager, self.exists, self.files)

    def earliest_snapshot_id(self) -> int | None:
        """The oldest retained snapshot id, or ``None`` for an empty table (the ``EARLIEST``
        hint if it names an existing snapshot, else a listing)."""
        with storage_errors(self.table_name, "finding the earliest snapshot"):
            return _snapshots.earliest_snapshot_id(self._manager, self.files)

    def check_not_expired(self, next_snapshot_id: int) -> None:
        """Raise :class:`SnapshotExpiredError` if ``next_snapshot_id`` is gone for good.

        A missing snapshot is expired (not merely uncommitted) when a newer one exists. It is
        looked for with a read, not pypaimon's ``exists()``, which answers "missing" for some
        storage errors (any whose message holds "133" or "not exist"): a transient error must
        not pass for an expiry, which the ``on_expired`` policies act on.
        """
        latest = self.latest_snapshot_id()
        if latest is None or latest < next_snapshot_id:
            return
        if self.get_fresh(next_snapshot_id) is not None:
            return
        raise SnapshotExpiredError(self.table_name, next_snapshot_id, self.earliest_snapshot_id())

    # tags and times ----------------------------------------------------------------------
    def tagged(self, name: str) -> Any:
        """The snapshot tag ``name`` holds (it outlives the snapshot's own file)."""
        with storage_errors(self.table_name, "reading its tags"):
            tags = _snapshots.read_tags(self.table)
        if name not in tags:
            raise InvalidStartError(
                f"table {self.table_name} has no tag {name!r}; its tags: {sorted(tags) or 'none'}"
            )
        self._tags[tags[name].id] = tags[name]
        return tags[name]

    def snapshot_or_tag(self, snapshot_id: int) -> Any:
        """Snapshot ``snapshot_id`` from its file, or from a tag holding it once it expired."""
        snapshot = self.get(snapshot_id) or self._tags.get(snapshot_id)
        if snapshot is None:
            with storage_errors(self.table_name, "reading its tags"):
                tags = _snapshots.read_tags(self.table)
            for tag in tags.values():
                if tag.id == snapshot_id:
                    self._tags[snapshot_id] = tag
                    return tag
        return snapshot

    def first_after(self, timestamp_ms: int) -> int:
        """The first snapshot committed after ``timestamp_ms`` (may not exist yet): a binary
        search over the retained snapshots by commit time (expired gaps are stepped over)."""
        earliest, latest = self.earliest_snapshot_id(), self.latest_snapshot_id()
        if earliest is None or latest is None:
            return 1
        low, high, answer = earliest, latest, latest + 1
        while low <= high:
            middle = (low + high) // 2
            probe = middle
            snapshot = self.get(probe)
            while snapshot is None and probe < high:  # expired while we searched
                probe += 1
                snapshot = self.get(probe)
            if snapshot is None:
                high = middle - 1
            elif snapshot.time_millis > timestamp_ms:
                answer, high = snapshot.id, middle - 1
            else:
                low = probe + 1
        return answer

