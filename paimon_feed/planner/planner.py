"""Planner: snapshot ids in, FeedBatches out.

Synchronous and notifier-agnostic: it reads snapshot files from a position forward and plans
each scannable one with pypaimon's own streaming planner, so what a batch contains is exactly
what pypaimon's ``AsyncStreamingTableScan`` would have yielded for the same snapshot. Every
pypaimon internal the project relies on is imported in this folder (``_snapshots``, ``_manifests``,
``_schemas``, ``_scan``, ``_read``, ``_direct_read``, ``_native_read``, ``splits``).

:class:`Planner` is the facade: it validates the feed's options, resolves start positions and
plans full batches and ranges; the roles behind it are :class:`~paimon_feed.planner.timeline.Timeline`
(snapshots), ``_walk`` (the range walk of a round, catch-up included) and ``_batches`` (a
snapshot planned into a batch). A consumer that plans round after round holds a
:class:`~paimon_feed.planner.cursor.Cursor`.

Costs are kept to what push needs: checking for new data is one read attempt of
``snapshot-{next}``; the expiry check (which reads ``EARLIEST``/``LATEST``) runs only when the
caller has reason to think it is behind. Snapshot files are immutable, so parsed ones are kept
in a bounded cache: a retry or the next round never reads one twice, and a run of k snapshots
with nothing to read costs O(k) reads.

Every snapshot is planned and read with the schema it was committed with (its ``schemaId``);
the feed's projection and predicate follow columns by field id, so renamed columns arrive under
their new name. A batch never spans two schemas.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from paimon_feed._layout import is_local
from paimon_feed.batch import BatchKind, FeedBatch, SnapshotMark
from paimon_feed.errors import (
    ConfigurationError,
    FeedError,
    InvalidStartError,
    UnsupportedTableError,
    as_feed_error,
)
from paimon_feed.planner import _exact, _manifests, _scan, _snapshots, catalog
from paimon_feed.planner._batches import Batches
from paimon_feed.planner._objects import MetadataFiles
from paimon_feed.planner._resolve import StartResolution, resolve_start
from paimon_feed.planner._walk import Planned, RangeWalk
from paimon_feed.planner.schemas import SchemaPlanners, check_readable
from paimon_feed.planner.timeline import Timeline
from paimon_feed.start import StartSpec, parse_start
from paimon_feed.tables import check_data_table

__all__ = ["Planner", "Planned", "StartResolution", "reads_in_flight"]

# Metadata reads in flight when walking a range: an object store answers each in tens of ms
# and serves many at once; a local disk answers in microseconds, where threads only add overhead.
_READS_IN_FLIGHT_LOCAL = 1  # a local read costs less than handing it to a thread (GIL ping-pong)
_READS_IN_FLIGHT_REMOTE = 16
# Parsed manifests kept per planner: a catch-up of 8,000 commits fits (one manifest each).
_MANIFEST_CACHE_ENTRIES = 8192
_MANIFEST_CACHE_BYTES = 32 << 20

OverwritePolicy = Literal["skip", "read"]
OVERWRITE_POLICIES = ("skip", "read")


def reads_in_flight(table_url: str) -> int:
    """How many metadata files the planner reads at once on the store of ``table_url``."""
    return _READS_IN_FLIGHT_LOCAL if is_local(table_url) else _READS_IN_FLIGHT_REMOTE


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _storage_boundary(
    method: Callable[Concatenate[Planner, _P], _R],
) -> Callable[Concatenate[Planner, _P], _R]:
    """Translate failures escaping a public planner method into FeedErrors (see _translate)."""

    @functools.wraps(method)
    def wrapper(self: Planner, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except FeedError:
            raise
        except Exception as exc:
            raise as_feed_error(self.table_name, method.__name__, exc) from exc

    return wrapper


def _construction_boundary(
    init: Callable[Concatenate[Planner, Any, _P], None],
) -> Callable[Concatenate[Planner, Any, _P], None]:
    """Translate failures of building a planner into FeedErrors: whatever a table is, a
    caller that catches ``FeedError`` at ``Planner(...)`` catches it."""

    @functools.wraps(init)
    def wrapper(self: Planner, table: Any, /, *args: _P.args, **kwargs: _P.kwargs) -> None:
        check_data_table(table)
        try:
            return init(self, table, *args, **kwargs)
        except FeedError:
            raise
        except Exception as exc:
            raise as_feed_error(_snapshots.table_name(table), "opening the table", exc) from exc

    return wrapper


class Planner:
    """Plans FeedBatches for one table.

    Args:
        table: a pypaimon ``FileStoreTable``. ``projection`` and ``predicate`` name columns of
            its schema; snapshots of other schemas get them mapped by field id.
        projection: column names to read (default: all columns of each snapshot's schema).
        predicate: a pypaimon ``Predicate``: pushed into planning (partition pruning) and
            applied exactly to every row read, in every batch kind.
        buckets: only plan these bucket ids (for sharded consumers).
        include_row_kind: add a ``_row_kind`` column (``+I``, ``-U``, ``+U``, ``-D``).
        catch_up_threshold: when more than this many snapshots are waiting, plan them as one
            ``catch-up`` batch instead of one batch each.
        overwrite: what to do with OVERWRITE snapshots (``INSERT OVERWRITE``, truncate, drop
            partition): ``"skip"`` them (Java Paimon's default, ``streaming-read-overwrite =
            false``), logged and counted in :attr:`overwrites_skipped`; or ``"read"`` them as
            one ``overwrite`` batch each, the rows they removed as ``-D`` and the rows they
            added as ``+I`` (needs ``include_row_kind``).
    """

    @_construction_boundary
    def __init__(
        self,
        table: Any,
        *,
        projection: Sequence[str] | None = None,
        predicate: Any = None,
        buckets: Iterable[int] | None = None,
        include_row_kind: bool = False,
        catch_up_threshold: int = 10,
        overwrite: OverwritePolicy = "skip",
    ) -> None:
        if not isinstance(catch_up_threshold, int) or catch_up_threshold < 1:
            raise ConfigurationError(
                f"catch_up_threshold must be an int >= 1, got {catch_up_threshold!r}"
            )
        if overwrite not in OVERWRITE_POLICIES:
            raise ConfigurationError(
                f"overwrite must be one of {', '.join(OVERWRITE_POLICIES)}, got {overwrite!r}"
            )
        if overwrite == "read" and not include_row_kind:
            raise ConfigurationError(
                "overwrite='read' delivers removed rows as -D and added rows as +I: "
                "set include_row_kind=True so the two can be told apart"
            )
        if overwrite == "read" and table.options.deletion_vectors_enabled():
            raise ConfigurationError(
                f"table {_snapshots.table_name(table)}: overwrite='read' is not supported on "
                f"tables with deletion vectors (the rows an overwrite removed cannot be told "
                f"from rows deleted before it); use overwrite='skip'"
            )
        self.table = table
        self.table_name = _snapshots.table_name(table)
        self.table_url = _snapshots.table_url(table)
        self.reads_in_flight = reads_in_flight(self.table_url)
        self.files = MetadataFiles(table.file_io)
        self.manifests = _manifests.ManifestCache(
            self.files, _MANIFEST_CACHE_ENTRIES, _MANIFEST_CACHE_BYTES,
            local=self.reads_in_flight == _READS_IN_FLIGHT_LOCAL,
        )
        self.catch_up_threshold = catch_up_threshold
        self.buckets = frozenset(buckets) if buckets is not None else None
        self.include_row_kind = include_row_kind
        self.projection = list(projection) if projection is not None else None
        self.predicate = predicate
        self.overwrite = overwrite
        self.schemas = SchemaPlanners(
            table, projection=self.projection, predicate=predicate, buckets=self.buckets,
            include_row_kind=include_row_kind, manifests=self.manifests,
            reads_in_flight=self.reads_in_flight,
            prefetch=self.reads_in_flight > _READS_IN_FLIGHT_LOCAL,
        )
        base = self._schema_planner(table.table_schema.id)  # validates projection and predicate
        self.mode: BatchKind = base.mode
        if overwrite == "read" and _exact.FULL in base.refused:
            raise UnsupportedTableError(
                f"{base.refused[_exact.FULL]}. overwrite='read' reads the state an overwrite "
                f"replaced, which needs the same merge; use overwrite='skip'"
            )
        self.timeline = Timeline(table, self.files, self.reads_in_flight)
        self.batches = Batches(
            self.table_name, self.schemas, self.timeline, mode=self.mode, overwrite=overwrite
        )
        self._walk = RangeWalk(self.timeline, self.batches, catch_up_threshold)

    @property
    def overwrites_skipped(self) -> int:
        """OVERWRITE snapshots skipped so far (``overwrite="skip"``), each counted once."""
        return self.batches.overwrites_skipped

    # Snapshots.
    @property
    def file_io(self) -> Any:
        return self.table.file_io

    @_storage_boundary
    def snapshot_mark(self, snapshot_id: int, *, fresh: bool = False) -> SnapshotMark | None:
        """The :class:`SnapshotMark` of ``snapshot_id`` (``None`` if its file does not exist);
        ``fresh`` reads the file again (see :meth:`Timeline.mark`)."""
        return self.timeline.mark(snapshot_id, fresh=fresh)

    def forget_snapshots(self) -> None:
        """Drop every parsed snapshot (after the table's history was rewritten)."""
        self.timeline.forget()

    @_storage_boundary
    def latest_snapshot_id(self) -> int | None:
        """The newest snapshot id, or ``None`` (see :meth:`Timeline.latest_snapshot_id`)."""
        return self.timeline.latest_snapshot_id()

    @_storage_boundary
    def earliest_snapshot_id(self) -> int | None:
        """The oldest retained snapshot id, or ``None`` (see :meth:`Timeline.earliest_snapshot_id`)."""
        return self.timeline.earliest_snapshot_id()

    @_storage_boundary
    def created_millis(self) -> int | None:
        """When the table was created (its ``schema-0``'s ``timeMillis``), or ``None`` if the
        schema files do not say; see :func:`paimon_feed.planner.catalog.read_created_millis`."""
        return catalog.read_created_millis(self.file_io, str(self.table.table_path), self.table_name)

    @_storage_boundary
    def check_not_expired(self, next_snapshot_id: int) -> None:
        """Raise :class:`SnapshotExpiredError` if ``next_snapshot_id`` is gone for good (see
        :meth:`Timeline.check_not_expired`)."""
        self.timeline.check_not_expired(next_snapshot_id)

    # Schemas.
    def _schema_planner(self, schema_id: int) -> _scan.SchemaPlanner:
        """The planner of one schema, with the feed's columns mapped to it by field id."""
        return self.schemas.get(schema_id)

    def check_start(self, start: StartSpec) -> None:
        """Raise :class:`UnsupportedTableError` if ``start`` begins with a batch this table's
        latest schema cannot be read exactly in (a full state that needs a merge pypaimon
        cannot do, or that would change a value), before any row is read."""
        if parse_start(start).kind in ("latest-full", "tag"):
            check_readable(self._schema_planner(self.table.table_schema.id), _exact.FULL)

    def arrow_schema(self, schema_id: int | None = None) -> Any:
        """The Arrow schema batches of ``schema_id`` (default: the table's) are read with."""
        return self._schema_planner(
            self.table.table_schema.id if schema_id is None else schema_id
        ).arrow_schema

    # Start positions.
    @_storage_boundary
    def resolve_start(self, start: StartSpec, end: int | str | None = None) -> StartResolution | None:
        """Resolve a start spec against the table now.

        Returns ``None`` when the table has no snapshot yet and the spec needs one
        (``latest-full``): the caller waits for the first commit and asks again.
        """
        return resolve_start(self.timeline, start, end)

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

    # Planning.
    @_storage_boundary
    def full_batch(self, snapshot_id: int, *, detected_at: float | None = None) -> FeedBatch:
        """The whole table state at ``snapshot_id`` as one ``full`` batch (read with the
        schema of that snapshot). A snapshot whose file expired is read from a tag holding it."""
        snapshot = self.timeline.snapshot_or_tag(snapshot_id)
        if snapshot is None:
            self.check_not_expired(snapshot_id)
            raise InvalidStartError(
                f"table {self.table_name}: snapshot {snapshot_id} does not exist yet"
            )
        return self.batches.full(snapshot_id, snapshot, detected_at or time.time())

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
        covered_from: int | None = None,
    ) -> Planned:
        """Plan up to ``limit`` batches starting at ``next_snapshot_id``: one round, keeping
        no state. A consumer planning round after round holds a
        :class:`~paimon_feed.planner.cursor.Cursor`, which passes its state to each round.

        Reads snapshot files forward until one is missing, ``end`` (inclusive) is passed or
        ``limit`` batches are planned. More than ``catch_up_threshold`` snapshots behind, the
        waiting range is planned as one ``catch-up`` batch (cut where the schema changes, or
        at an overwrite that is read). With ``check_expiry``, a missing ``next_snapshot_id`` is
        checked against the retained range and raises :class:`SnapshotExpiredError` if it was
        expired.

        ``hinted_snapshot_id`` is the newest snapshot a notifier reported. It only saves
        requests: no look-ahead probe when the hint says the consumer is not far behind, and
        the round returns (with ``more=True``) once the hinted snapshot is planned, so its batch
        is handed over before the next snapshot is probed.

        ``covered_from`` is the previous round's :attr:`Planned.covered_from`: the first batch
        covers from there, so batches tile the snapshot ids across rounds too.
        """
        if limit < 1:
            raise ConfigurationError(f"limit must be >= 1, got {limit}")
        return self._walk.round(
            next_snapshot_id,
            limit,
            end=end,
            check_expiry=check_expiry,
            detected_at=detected_at,
            hinted_snapshot_id=hinted_snapshot_id,
            covered_from=covered_from,
        )

    @_storage_boundary
    def plan_range(self, first_snapshot_id: int, last_snapshot_id: int) -> list[FeedBatch]:
        """Plan every scannable snapshot of an inclusive range, one batch each.

        Deterministic: it depends only on the snapshots in the range, never on the latest one,
        so the same range always gives the same batches (Spark replays rely on this).
        Raises :class:`SnapshotExpiredError` if a snapshot of the range is gone.
        """
        return self._walk.plan_range(first_snapshot_id, last_snapshot_id)
