"""Batch building: one snapshot, or a run of them, planned with its schema's planner into a
:class:`~paimon_feed.batch.FeedBatch`.

Which snapshots have anything for a feed (an OVERWRITE by the feed's policy, others by
pypaimon's ``should_scan``), how a planning failure is reported (a damaged file, an expired one,
a transient read), and the batch that binds the plan to its schema's reader. The
:class:`~paimon_feed.planner.Planner` and the range walk (``_walk``) decide *which* snapshots to
plan; this module plans them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from paimon_feed.batch import BatchKind, FeedBatch, SnapshotMark
from paimon_feed.errors import DamagedMetadataError, FeedError, StorageError, as_feed_error
from paimon_feed.planner import _exact, _scan
from paimon_feed.planner.schemas import SchemaPlanners, check_readable
from paimon_feed.planner.timeline import Timeline

__all__ = ["Batches", "PLANNING_THREADS"]

# The planner's own name: operators filter the planner's messages by it.
logger = logging.getLogger("paimon_feed.planner.planner")

#: Snapshots planned at once when a catch-up is planned snapshot by snapshot.
PLANNING_THREADS = 4

_T = TypeVar("_T")


class Batches:
    """Plans the batches of one feed (its schemas' planners, its overwrite policy).

    Args:
        table_name: the table, for messages.
        schemas: the planner of each schema, with the feed's columns mapped to it.
        timeline: the table's snapshots (expiry checks, the anchor of a catch-up).
        mode: the kind of a batch of one snapshot (``delta`` or ``changelog``).
        overwrite: ``"skip"`` or ``"read"`` OVERWRITE snapshots (see :class:`Planner`).
    """

    def __init__(
        self,
        table_name: str,
        schemas: SchemaPlanners,
        timeline: Timeline,
        *,
        mode: BatchKind,
        overwrite: str,
    ) -> None:
        self.table_name = table_name
        self.schemas = schemas
        self.timeline = timeline
        self.mode = mode
        self.overwrite = overwrite
        #: OVERWRITE snapshots skipped (``overwrite="skip"``), each counted once.
        self.overwrites_skipped = 0
        self._last_overwrite_seen = 0

    @property
    def reads_overwrites(self) -> bool:
        """Whether an OVERWRITE snapshot is a batch of its own (``overwrite="read"``)."""
        return self.overwrite == "read"

    def scannable(self, snapshot: Any) -> bool:
        """Whether ``snapshot`` has anything for this feed (OVERWRITE: by the policy)."""
        if snapshot.commit_kind == "OVERWRITE":
            if self.reads_overwrites:
                return True
            if snapshot.id > self._last_overwrite_seen:
                self._last_overwrite_seen = snapshot.id
                self.overwrites_skipped += 1
                logger.warning(
                    "table %s: snapshot %d is an OVERWRITE (insert overwrite, truncate or "
                    "dropped partition); skipped, as Java Paimon's streaming reads do by "
                    "default. overwrite='read' delivers its removed rows as -D and added as +I",
                    self.table_name, snapshot.id,
                )
            return False
        return bool(self.schemas.get(snapshot.schema_id).should_scan(snapshot))

    def full(self, snapshot_id: int, snapshot: Any, detected_at: float) -> FeedBatch:
        """The whole table state at ``snapshot`` (snapshot ``snapshot_id``, from its file or a
        tag) as one ``full`` batch, read with the schema of that snapshot."""
        planner = self.schemas.get(snapshot.schema_id)
        check_readable(planner, _exact.FULL)
        plan = self._plan(lambda: planner.full_plan(snapshot), snapshot)
        return self._batch(planner, plan, "full", snapshot_id, snapshot, detected_at)

    def of_snapshot(self, covered_from: int, snapshot: Any, detected_at: float) -> FeedBatch | None:
        """The batch of one snapshot (covering ``covered_from..snapshot.id``), or ``None`` if
        it has nothing for this feed."""
        if not self.scannable(snapshot):
            return None
        planner = self.schemas.get(snapshot.schema_id)
        if snapshot.commit_kind == "OVERWRITE":
            check_readable(planner, _exact.FULL)
            plan, removed = self._plan(lambda: planner.overwrite_plan(snapshot), snapshot)
            return self._batch(
                planner, plan, "overwrite", covered_from, snapshot, detected_at, removed=removed
            )
        plan = self._plan(lambda: planner.follow_up_plan(snapshot), snapshot)
        return self._batch(planner, plan, self.mode, covered_from, snapshot, detected_at)

    def catch_up(self, first_id: int, snapshots: list[Any], detected_at: float) -> FeedBatch | int:
        """One ``catch-up`` batch covering ``first_id`` to the last of ``snapshots`` (consecutive,
        of one schema, no overwrite that is read), or, if none of them has anything to read,
        the id of the snapshot after them."""
        scannable = [s for s in snapshots if self.scannable(s)]
        if not scannable:
            logger.debug(
                "table %s: snapshots %d..%d have nothing to read", self.table_name,
                snapshots[0].id, snapshots[-1].id,
            )
            return int(snapshots[-1].id) + 1
        first, last = snapshots[0], snapshots[-1]
        planner = self.schemas.get(first.schema_id)
        # The snapshot before the range anchors a set-diff: read again, not taken from the
        # cache, since a diff against an expired snapshot (manifests gone) cannot be planned.
        start = None
        if first.id > 1:
            start = self.timeline.get_fresh(first.id - 1)
        plan = self._plan(
            lambda: planner.catch_up_plan(start, snapshots, scannable, PLANNING_THREADS), last
        )
        logger.info(
            "table %s: %d snapshots behind, caught up %d..%d in one batch (%d splits)",
            self.table_name, len(snapshots), first_id, last.id, len(plan.splits()),
        )
        return self._batch(planner, plan, "catch-up", first_id, last, detected_at)

    def _plan(self, make_plan: Callable[[], _T], snapshot: Any) -> _T:
        """``make_plan()``, its failures reported as FeedErrors naming ``snapshot``."""
        try:
            return make_plan()
        except DamagedMetadataError as exc:
            raise DamagedMetadataError(
                f"table {self.table_name}: snapshot {snapshot.id}: {exc}; restore the file, "
                f"nothing past snapshot {snapshot.id - 1} is read until then"
            ) from exc
        except FeedError:
            raise
        except FileNotFoundError as exc:
            self.timeline.check_not_expired(snapshot.id)
            raise StorageError(
                f"table {self.table_name}: a file of snapshot {snapshot.id} is missing: {exc}"
            ) from exc
        except Exception as exc:
            lists = ", ".join(
                name for name in (
                    snapshot.base_manifest_list, snapshot.delta_manifest_list,
                    snapshot.changelog_manifest_list,
                ) if name
            )
            raise as_feed_error(
                self.table_name, f"planning snapshot {snapshot.id} (manifest lists {lists})", exc
            ) from exc

    def _batch(
        self,
        planner: _scan.SchemaPlanner,
        plan: Any,
        kind: BatchKind,
        first_id: int,
        snapshot: Any,
        detected_at: float,
        *,
        removed: Sequence[Any] = (),
    ) -> FeedBatch:
        """A batch read by ``planner``, the planner of ``snapshot``'s schema."""
        if kind != "full":
            _exact.refuse_partial_column_changes(self.table_name, plan.splits(), snapshot.id)
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
            schema_id=snapshot.schema_id,
            schema=planner.arrow_schema,
            removed_splits=tuple(removed),
            mark=SnapshotMark.of(snapshot),
            _reader=planner.state_read if kind == "overwrite" else planner.read,
        )
