"""Planner: snapshot ids in, FeedBatches out.

Synchronous and notifier-agnostic: it reads snapshot files from a position forward and plans
each scannable one with pypaimon's own streaming planner, so what a batch contains is exactly
what pypaimon's ``AsyncStreamingTableScan`` would have yielded for the same snapshot. Every
pypaimon internal the project relies on is imported in this folder (see ``_pypaimon.py``).

Costs are kept to what push needs: checking for new data is one existence check of
``snapshot-{next}``; the expiry check (which reads ``EARLIEST``/``LATEST``) runs only when the
caller has reason to think it is behind.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from paimon_feed.batch import BatchKind, FeedBatch
from paimon_feed.errors import (
    ConfigurationError,
    FeedError,
    InvalidStartError,
    SnapshotExpiredError,
    StorageError,
)
from paimon_feed.planner import _pypaimon
from paimon_feed.start import StartSpec, parse_end, parse_start

__all__ = ["Planner", "Planned", "StartResolution"]

logger = logging.getLogger(__name__)

_PLANNING_THREADS = 4


def _storage_boundary(method):
    """Translate storage failures escaping a public planner method into :class:`StorageError`.

    pypaimon surfaces storage trouble as whatever its file system raised (OSError, pyarrow's
    errors, botocore's); callers should only have to know ``FeedError``.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except FeedError:
            raise
        except Exception as exc:
            raise StorageError(
                f"table {self.table_name}: {method.__name__} failed: {type(exc).__name__}: {exc}"
            ) from exc

    return wrapper


@dataclass(frozen=True)
class StartResolution:
    """Where a start spec lands: a full scan at ``full_snapshot_id`` (if any), then changes
    from ``next_snapshot_id`` on."""

    next_snapshot_id: int
    full_snapshot_id: int | None = None


@dataclass(frozen=True)
class Planned:
    """The result of one planning round: batches in order, and where the next round starts.

    ``next_snapshot_id`` may be past the last batch when trailing snapshots had nothing to read
    (compactions under a delta scan): they need not be read again, but are committed only with
    the next batch that follows them.
    """

    batches: tuple[FeedBatch, ...]
    next_snapshot_id: int
    more: bool = False
    """True when planning stopped before reaching the newest snapshot (the limit was hit, or a
    storage error cut the round short after some batches): plan again now, without waiting."""


class Planner:
    """Plans FeedBatches for one table.

    Args:
        table: a pypaimon ``FileStoreTable``.
        projection: column names to read (default: all).
        predicate: a pypaimon ``Predicate`` pushed into planning and reading.
        buckets: only plan these bucket ids (for sharded consumers).
        include_row_kind: add a ``_row_kind`` column (``+I``, ``-U``, ``+U``, ``-D``).
        catch_up_threshold: when more than this many snapshots are waiting, plan them as one
            ``catch-up`` batch instead of one batch each.
    """

    def __init__(
        self,
        table: Any,
        *,
        projection: Sequence[str] | None = None,
        predicate: Any = None,
        buckets: Iterable[int] | None = None,
        include_row_kind: bool = False,
        catch_up_threshold: int = 10,
    ) -> None:
        if catch_up_threshold < 1:
            raise ConfigurationError(
                f"catch_up_threshold must be >= 1, got {catch_up_threshold}"
            )
        self.table = table
        self.table_name = _pypaimon.table_name(table)
        self.table_url = _pypaimon.table_url(table)
        self.catch_up_threshold = catch_up_threshold
        self.buckets = frozenset(buckets) if buckets is not None else None
        self.include_row_kind = include_row_kind
        self.projection = list(projection) if projection is not None else None
        self.predicate = predicate
        self._streaming = _pypaimon.StreamingPlanner(
            table,
            projection=self.projection,
            predicate=predicate,
            buckets=self.buckets,
            include_row_kind=include_row_kind,
        )
        self.mode: BatchKind = self._streaming.mode
        self._snapshots = table.snapshot_manager()

    # snapshots ---------------------------------------------------------------------------
    @property
    def file_io(self) -> Any:
        return self.table.file_io

    def _get_snapshot(self, snapshot_id: int):
        try:
            return _pypaimon.read_snapshot(self._snapshots, snapshot_id)
        except Exception as exc:  # pypaimon raises plain OSError/ValueError from storage
            raise StorageError(
                f"table {self.table_name}: cannot read snapshot {snapshot_id}: {exc}"
            ) from exc

    @_storage_boundary
    def latest_snapshot_id(self) -> int | None:
        """The newest snapshot id, or ``None`` for a table with no snapshot yet."""
        latest = self._snapshots.get_latest_snapshot()
        return latest.id if latest is not None else None

    @_storage_boundary
    def earliest_snapshot_id(self) -> int | None:
        """The oldest retained snapshot id, or ``None`` for an empty table."""
        latest = self.latest_snapshot_id()
        if latest is None:
            return None
        try:
            earliest = self._snapshots.try_get_earliest_snapshot(latest)
        except RuntimeError:  # pypaimon's "cannot find earliest snapshot"
            return latest
        return earliest.id if earliest is not None else latest

    @_storage_boundary
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
        if self._get_snapshot(next_snapshot_id) is not None:
            return
        raise SnapshotExpiredError(self.table_name, next_snapshot_id, self.earliest_snapshot_id())

    # start positions ---------------------------------------------------------------------
    @_storage_boundary
    def resolve_start(self, start: StartSpec, end: int | str | None = None) -> StartResolution | None:
        """Resolve a start spec against the table now.

        Returns ``None`` when the table has no snapshot yet and the spec needs one
        (``latest-full``): the caller waits for the first commit and asks again.
        """
        position = parse_start(start)
        end_id = parse_end(end)
        latest = self.latest_snapshot_id()
        if position.kind == "latest-full":
            if latest is None:
                return None
            full = latest if end_id is None else min(latest, end_id)
            resolution = StartResolution(next_snapshot_id=full + 1, full_snapshot_id=full)
        elif position.kind == "latest":
            resolution = StartResolution(next_snapshot_id=(latest or 0) + 1)
        elif position.kind == "earliest":
            earliest = self.earliest_snapshot_id()
            resolution = StartResolution(next_snapshot_id=earliest or 1)
        elif position.kind == "snapshot":
            wanted = position.snapshot_id
            if wanted > (latest or 0) + 1:
                raise InvalidStartError(
                    f"table {self.table_name}: start snapshot {wanted} is ahead of the latest "
                    f"snapshot ({latest if latest is not None else 'none yet'}); start at most "
                    f"at {(latest or 0) + 1}, or use 'latest'"
                )
            self.check_not_expired(wanted)
            resolution = StartResolution(next_snapshot_id=wanted)
        else:  # time
            resolution = StartResolution(next_snapshot_id=self._first_after(position.timestamp_ms))
        if end_id is not None and end_id < resolution.next_snapshot_id - 1:
            raise InvalidStartError(
                f"table {self.table_name}: end snapshot {end_id} is before the start "
                f"({start!r} resolves to snapshot {resolution.next_snapshot_id}); "
                f"give an end at or after it"
            )
        return resolution

    def _first_after(self, timestamp_ms: int) -> int:
        """The first snapshot committed after ``timestamp_ms`` (may not exist yet)."""
        try:
            at_or_before = self._snapshots.earlier_or_equal_time_mills(timestamp_ms)
        except RuntimeError:
            at_or_before = None
        if at_or_before is not None:
            return at_or_before.id + 1
        return self.earliest_snapshot_id() or 1

    @_storage_boundary
    def first_batch(self, start: StartSpec, end: int | str | None = None) -> tuple[FeedBatch | None, int | None]:
        """The batch a new consumer starts with, and the next snapshot id after it.

        Returns ``(full_batch, next_id)`` for ``latest-full``, ``(None, next_id)`` for change-only
        starts, and ``(None, None)`` when the table is empty and the start needs a snapshot.
        """
        resolution = self.resolve_start(start, end)
        if resolution is None:
            return None, None
        if resolution.full_snapshot_id is None:
            return None, resolution.next_snapshot_id
        return self.full_batch(resolution.full_snapshot_id), resolution.next_snapshot_id

    # planning ----------------------------------------------------------------------------
    @_storage_boundary
    def full_batch(self, snapshot_id: int, *, detected_at: float | None = None) -> FeedBatch:
        """The whole table state at ``snapshot_id`` as one ``full`` batch."""
        snapshot = self._get_snapshot(snapshot_id)
        if snapshot is None:
            self.check_not_expired(snapshot_id)
            raise InvalidStartError(
                f"table {self.table_name}: snapshot {snapshot_id} does not exist yet"
            )
        started = time.time()
        plan = self._plan(lambda: self._streaming.full_plan(snapshot), snapshot_id)
        return self._batch(plan, "full", snapshot_id, snapshot, detected_at or started)

    @_storage_boundary
    def next_batches(
        self,
        next_snapshot_id: int,
        limit: int,
        *,
        end: int | None = None,
        check_expiry: bool = False,
        detected_at: float | None = None,
        hinted_snapshot_id: int | None = None,
    ) -> Planned:
        """Plan up to ``limit`` batches starting at ``next_snapshot_id``.

        Reads snapshot files forward until one is missing, ``end`` (inclusive) is passed or
        ``limit`` batches are planned. More than ``catch_up_threshold`` snapshots behind, the
        waiting range is planned as one ``catch-up`` batch. With ``check_expiry``, a missing
        ``next_snapshot_id`` is checked against the retained range and raises
        :class:`SnapshotExpiredError` if it was expired.

        ``hinted_snapshot_id`` is the newest snapshot a notifier reported. It only saves
        requests: no look-ahead probe when the hint says the consumer is not far behind, and
        the round returns (with ``more=True``) once the hinted snapshot is planned, so its batch
        is handed over before the next snapshot is probed.
        """
        if limit < 1:
            raise ConfigurationError(f"limit must be >= 1, got {limit}")
        started = time.time()
        detected = detected_at or started
        batches: list[FeedBatch] = []
        covered_from = next_snapshot_id
        position = next_snapshot_id
        while len(batches) < limit and (end is None or position <= end):
            try:
                snapshot = self._get_snapshot(position)
                if snapshot is None:
                    if check_expiry and position == next_snapshot_id:
                        self.check_not_expired(position)
                    break
                if not batches and self._far_behind(position, end, hinted_snapshot_id):
                    batch = self._catch_up(covered_from, snapshot, end, detected)
                    if batch is not None:
                        return Planned((batch,), batch.snapshot_id + 1)
                if self._streaming.should_scan(snapshot):
                    plan = self._plan(lambda: self._streaming.follow_up_plan(snapshot), position)
                    batches.append(self._batch(plan, self.mode, covered_from, snapshot, detected))
                    covered_from = position + 1
            except StorageError as exc:
                if not batches:
                    raise
                # Keep what is planned; the caller retries from the first uncovered snapshot.
                logger.debug("table %s: planning stopped at snapshot %d: %s", self.table_name, position, exc)
                return Planned(tuple(batches), covered_from, more=True)
            position += 1
            if batches and hinted_snapshot_id is not None and position > hinted_snapshot_id:
                return Planned(tuple(batches), position, more=True)
        return Planned(tuple(batches), position, more=len(batches) >= limit)

    @_storage_boundary
    def plan_range(self, first_snapshot_id: int, last_snapshot_id: int) -> list[FeedBatch]:
        """Plan every scannable snapshot of an inclusive range, one batch each.

        Deterministic: it depends only on the snapshots in the range, never on the latest one,
        so the same range always gives the same batches (Spark replays rely on this).
        Raises :class:`SnapshotExpiredError` if a snapshot of the range is gone.
        """
        batches: list[FeedBatch] = []
        covered_from = first_snapshot_id
        for snapshot_id in range(first_snapshot_id, last_snapshot_id + 1):
            snapshot = self._get_snapshot(snapshot_id)
            if snapshot is None:
                self.check_not_expired(snapshot_id)
                raise StorageError(
                    f"table {self.table_name}: snapshot {snapshot_id} of the planned range "
                    f"{first_snapshot_id}..{last_snapshot_id} does not exist"
                )
            if self._streaming.should_scan(snapshot):
                plan = self._plan(lambda: self._streaming.follow_up_plan(snapshot), snapshot_id)
                batches.append(self._batch(plan, self.mode, covered_from, snapshot, time.time()))
                covered_from = snapshot_id + 1
        return batches

    def _far_behind(self, position: int, end: int | None, hinted: int | None) -> bool:
        ahead = position + self.catch_up_threshold
        if (end is not None and ahead > end) or (hinted is not None and hinted < ahead):
            return False
        return self.file_io.exists(self._snapshots.get_snapshot_path(ahead))

    def _catch_up(
        self, first_id: int, first_snapshot: Any, end: int | None, detected_at: float
    ) -> FeedBatch | None:
        """One batch for everything from ``first_id`` to the latest snapshot (or ``end``)."""
        latest = self.latest_snapshot_id()
        last_id = latest if end is None else min(latest, end)
        ids = list(range(first_snapshot.id, last_id + 1))
        fetched = self._snapshots.get_snapshots_batch(ids, max_workers=_PLANNING_THREADS)
        snapshots = []
        for snapshot_id in ids:
            snapshot = fetched.get(snapshot_id)
            if snapshot is None:
                self.check_not_expired(snapshot_id)
                break  # not visible yet on this store: catch up to what is there
            snapshots.append(snapshot)
        scannable = [s for s in snapshots if self._streaming.should_scan(s)]
        if not scannable:
            return None
        last = snapshots[-1]
        plan = self._plan(
            lambda: self._streaming.catch_up_plan(snapshots, scannable, _PLANNING_THREADS),
            last.id,
        )
        logger.info(
            "table %s: %d snapshots behind, caught up %d..%d in one batch (%d splits)",
            self.table_name, len(snapshots), first_id, last.id, len(plan.splits()),
        )
        return self._batch(plan, "catch-up", first_id, last, detected_at)

    def _plan(self, make_plan, snapshot_id: int):
        try:
            return make_plan()
        except FeedError:
            raise
        except FileNotFoundError as exc:
            self.check_not_expired(snapshot_id)
            raise StorageError(
                f"table {self.table_name}: a file of snapshot {snapshot_id} is missing: {exc}"
            ) from exc
        except Exception as exc:
            raise StorageError(
                f"table {self.table_name}: cannot plan snapshot {snapshot_id}: {exc}"
            ) from exc

    def _batch(
        self, plan: Any, kind: BatchKind, first_id: int, snapshot: Any, detected_at: float
    ) -> FeedBatch:
        return FeedBatch(
            table=self.table_name,
            snapshot_id=snapshot.id,
            first_snapshot_id=first_id,
            kind=kind,
            plan=plan,
            splits=tuple(plan.splits()),
            commit_time_ms=snapshot.time_millis,
            detected_at=detected_at,
            planned_at=time.time(),
            _reader=self._streaming.reader,
        )

