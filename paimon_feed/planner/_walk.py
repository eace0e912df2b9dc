"""The range walk behind a planning round: from a position forward, snapshot by snapshot, or as
one ``catch-up`` batch when far behind.

:meth:`Planner.next_batches <paimon_feed.planner.Planner.next_batches>` is one walk;
:class:`~paimon_feed.planner.Cursor` carries what one walk leaves for the next (position,
``covered_from``, hints). The walk decides which snapshots to plan and where a round stops;
:class:`~paimon_feed.planner._batches.Batches` plans them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from paimon_feed.batch import FeedBatch
from paimon_feed.errors import FeedError, StorageError
from paimon_feed.planner._batches import Batches
from paimon_feed.planner.timeline import Timeline

__all__ = ["Planned", "RangeWalk"]

# The planner's own name: operators filter the planner's messages by it.
logger = logging.getLogger("paimon_feed.planner.planner")


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
    covered_from: int | None = None
    """The first snapshot no batch covers yet (``next_snapshot_id`` when ``None``): pass it to
    the next round, whose first batch then covers the snapshots skipped at the end of this one."""


class RangeWalk:
    """Walks a table's snapshots forward for one feed (see the module docstring).

    Args:
        timeline: the table's snapshots.
        batches: plans the snapshots the walk picks.
        catch_up_threshold: more than this many snapshots behind, plan one ``catch-up`` batch.
    """

    def __init__(self, timeline: Timeline, batches: Batches, catch_up_threshold: int) -> None:
        self.timeline = timeline
        self.batches = batches
        self.catch_up_threshold = catch_up_threshold
        self.table_name = batches.table_name

    def round(
        self,
        next_snapshot_id: int,
        limit: int,
        *,
        end: int | None,
        check_expiry: bool,
        detected_at: float | None,
        hinted_snapshot_id: int | None,
        covered_from: int | None,
    ) -> Planned:
        """One round of :meth:`Planner.next_batches <paimon_feed.planner.Planner.next_batches>`
        (which documents the arguments)."""
        self.timeline.revalidate_from(next_snapshot_id)
        started = time.time()
        detected = detected_at or started
        batches: list[FeedBatch] = []
        if covered_from is None or covered_from > next_snapshot_id:
            covered_from = next_snapshot_id
        position = next_snapshot_id
        while len(batches) < limit and (end is None or position <= end):
            try:
                snapshot = self.timeline.get(position)
                if snapshot is None:
                    if check_expiry and position == next_snapshot_id:
                        self.timeline.check_not_expired(position)
                    break
                if not batches and self._far_behind(position, end, hinted_snapshot_id):
                    caught_up = self._catch_up(covered_from, snapshot, end, detected)
                    if isinstance(caught_up, FeedBatch):
                        after = caught_up.snapshot_id + 1
                        return Planned((caught_up,), after, more=True, covered_from=after)
                    if caught_up > position:  # a run with nothing to read, each read once
                        position = caught_up
                        continue
                batch = self.batches.of_snapshot(covered_from, snapshot, detected)
                if batch is not None:
                    batches.append(batch)
                    covered_from = position + 1
            except FeedError as exc:
                if not batches:
                    raise
                # Deliver what is planned first; the next round, from the first uncovered
                # snapshot, retries a transient error or raises a permanent one.
                logger.debug("table %s: planning stopped at snapshot %d: %s", self.table_name, position, exc)
                return Planned(tuple(batches), covered_from, more=True, covered_from=covered_from)
            position += 1
            if batches and hinted_snapshot_id is not None and position > hinted_snapshot_id:
                return Planned(tuple(batches), position, more=True, covered_from=covered_from)
        return Planned(
            tuple(batches), position, more=len(batches) >= limit, covered_from=covered_from
        )

    def plan_range(self, first_snapshot_id: int, last_snapshot_id: int) -> list[FeedBatch]:
        """:meth:`Planner.plan_range <paimon_feed.planner.Planner.plan_range>`: every scannable
        snapshot of an inclusive range, one batch each, whatever the latest snapshot is."""
        batches: list[FeedBatch] = []
        covered_from = first_snapshot_id
        ids = range(first_snapshot_id, last_snapshot_id + 1)
        for snapshot_id, snapshot in zip(ids, self.timeline.get_many(ids)):
            if snapshot is None:
                self.timeline.check_not_expired(snapshot_id)
                raise StorageError(
                    f"table {self.table_name}: snapshot {snapshot_id} of the planned range "
                    f"{first_snapshot_id}..{last_snapshot_id} does not exist"
                )
            batch = self.batches.of_snapshot(covered_from, snapshot, time.time())
            if batch is not None:
                batches.append(batch)
                covered_from = snapshot_id + 1
        return batches

    def _far_behind(self, position: int, end: int | None, hinted: int | None) -> bool:
        ahead = position + self.catch_up_threshold
        if (end is not None and ahead > end) or (hinted is not None and hinted < ahead):
            return False
        return self.timeline.get(ahead) is not None

    def _catch_up(
        self, first_id: int, first_snapshot: Any, end: int | None, detected_at: float
    ) -> FeedBatch | int:
        """One batch for the waiting range from ``first_snapshot``, or, if nothing in it is to
        be read, the id of the first snapshot after the part of the range that was looked at.

        The range ends at the latest snapshot (or ``end``), and before the first snapshot of
        another schema or an overwrite that is read: a batch is read with one schema, and an
        overwrite is a batch of its own.
        """
        latest = self.timeline.latest_snapshot_id()
        assert latest is not None  # first_snapshot exists, so some snapshot does
        last_id = latest if end is None else min(latest, end)
        ids = list(range(first_snapshot.id, last_id + 1))
        snapshots = []
        for snapshot_id, snapshot in zip(ids, self.timeline.get_many(ids)):
            if snapshot is None:
                self.timeline.check_not_expired(snapshot_id)
                break  # not visible yet on this store: catch up to what is there
            if snapshot.schema_id != first_snapshot.schema_id or (
                snapshot.commit_kind == "OVERWRITE" and self.batches.reads_overwrites
            ):
                break
            snapshots.append(snapshot)
        if not snapshots:
            return int(first_snapshot.id)
        return self.batches.catch_up(first_id, snapshots, detected_at)
