"""Cursor: the planning state of one consumer, carried from round to round.

A consumer plans in rounds (:meth:`Cursor.advance`); what one round leaves for the next lives
here instead of in the caller: the position (the first snapshot not planned yet), the first
snapshot no batch covers yet (trailing snapshots with nothing to read are covered by the next
batch, so batches tile the snapshot ids across rounds), the newest snapshot a notifier hinted,
when it was detected, and whether the next round checks a missing snapshot for expiry.

The rules for that check follow the hints: a hint newer than the position means the next
snapshot exists or expired, so the round checks; a hint older than the position means a
rewritten id (a rollback, a re-created table), so the round checks the history too; a round cut
short (by the limit or an error) may leave the consumer behind, so the next one checks; a round
that returned once the hinted snapshot was planned does not.

The history check follows the same hints (:mod:`paimon_feed.progress`): only a wake-up naming a
snapshot beyond the position can prove the table unchanged (its round reads the new snapshots,
then compares the anchor). Every other wake-up -- a hint naming no snapshot (a watch
re-established, a table directory created again), a hint naming an id already read, a safety
check -- asks the next round to compare the anchor (:attr:`Round.checked_history`): a table
dropped and re-created with a single commit writes no snapshot beyond the position, and would
otherwise wait silently forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_feed.batch import FeedBatch

if TYPE_CHECKING:
    from paimon_feed.planner.planner import Planner

__all__ = ["Cursor", "Round"]


@dataclass(frozen=True)
class Round:
    """What one :meth:`Cursor.advance` planned."""

    batches: tuple[FeedBatch, ...]
    first_snapshot_id: int
    """Where the round started (the cursor's position before it)."""
    next_snapshot_id: int
    """Where the next round starts (the cursor's position after it); may be past the last
    batch when trailing snapshots had nothing to read."""
    more: bool
    """Planning stopped before the newest snapshot: advance again now, without waiting."""
    checked_expiry: bool
    """Whether the round checked a missing first snapshot for expiry."""
    checked_history: bool = False
    """Whether the round was asked to compare the anchor even if it read nothing new."""


class Cursor:
    """One consumer's position in a table's snapshots, planned forward by a :class:`Planner`.

    Args:
        planner: plans the rounds.
        next_snapshot_id: the first snapshot to plan.
        end: the last snapshot to plan (inclusive), or ``None`` to follow the table.

    The first round checks a missing snapshot for expiry (the position may be old); later
    rounds follow the rules in the module docstring.
    """

    def __init__(self, planner: Planner, next_snapshot_id: int, *, end: int | None = None) -> None:
        self.planner = planner
        self.end = end
        #: The first snapshot not planned yet.
        self.next_snapshot_id = next_snapshot_id
        #: The first snapshot no batch covers yet: the next batch covers from here.
        self.covered_from = next_snapshot_id
        #: The newest snapshot a notifier hinted that was not planned yet, if any.
        self.hinted_snapshot_id: int | None = None
        #: When the hinted change was detected (the batches' ``detected_at``).
        self.detected_at: float | None = None
        #: Whether the next round checks a missing first snapshot for expiry.
        self.check_expiry = True
        #: Whether the next round compares the anchor even if it reads nothing new.
        self.check_history = False

    @property
    def done(self) -> bool:
        """Whether the position is past the end snapshot."""
        return self.end is not None and self.next_snapshot_id > self.end

    def hint(self, snapshot_id: int | None, detected_at: float | None) -> None:
        """Note hints that arrived since the last round (the newest wins; the first detection
        time is kept)."""
        self.detected_at = self.detected_at or detected_at
        if snapshot_id is None or snapshot_id < self.next_snapshot_id:
            self.check_history = True  # a hint that names no new snapshot proves nothing
        hinted = max(self.hinted_snapshot_id or 0, snapshot_id or 0) or None
        if hinted is not None:
            # Older than the position: a new file for an id already read (a rollback or a
            # re-created table writes those); the round checks that the history still holds.
            # Newer: that snapshot exists, so a missing next one expired.
            self.check_expiry = True
            if hinted < self.next_snapshot_id:
                hinted = None
        self.hinted_snapshot_id = hinted

    def woke(
        self,
        snapshot_id: int | None,
        detected_at: float | None,
        *,
        safety_check: bool = False,
        check_history: bool = True,
    ) -> None:
        """A wait for new snapshots ended, with the newest hinted ``snapshot_id`` (``None``:
        no hint, or hints naming no snapshot). Replaces the hint state; ``safety_check`` asks
        the next round to check for expiry even without a hint (a caller that learns of
        snapshots only by probing for the next one would never be hinted an expired one).
        Unless ``snapshot_id`` is beyond the position, the next round compares the anchor too;
        ``check_history=False`` spares a wake-up that is only a poll's timer (the caller then
        checks at its safety interval)."""
        self.detected_at = detected_at
        stale = snapshot_id is not None and snapshot_id < self.next_snapshot_id
        self.hinted_snapshot_id = None if stale else snapshot_id
        self.check_expiry = stale or self.hinted_snapshot_id is not None or safety_check
        self.check_history = check_history and self.hinted_snapshot_id is None

    def restart(self, next_snapshot_id: int) -> None:
        """Move to ``next_snapshot_id`` (after an expiry or a rewritten history was handled):
        nothing before it is covered."""
        self.next_snapshot_id = self.covered_from = next_snapshot_id

    def advance(self, limit: int, *, check_expiry: bool | None = None) -> Round:
        """Plan up to ``limit`` batches from the position and move past them (see
        :meth:`Planner.next_batches`). ``check_expiry`` overrides the cursor's own rule for
        this round. Nothing moves if planning raises."""
        checked = self.check_expiry if check_expiry is None else check_expiry
        check_history = self.check_history
        first = self.next_snapshot_id
        planned = self.planner.next_batches(
            first,
            limit,
            end=self.end,
            check_expiry=checked,
            detected_at=self.detected_at,
            hinted_snapshot_id=self.hinted_snapshot_id,
            covered_from=self.covered_from,
        )
        self.next_snapshot_id = planned.next_snapshot_id
        self.covered_from = (
            planned.covered_from if planned.covered_from is not None else planned.next_snapshot_id
        )
        self.check_history = False
        if planned.more:
            self.detected_at = None
            hinted = self.hinted_snapshot_id
            if hinted is not None and self.next_snapshot_id > hinted:
                # The hinted snapshot is out; probe for more without an expiry check.
                self.check_expiry, self.hinted_snapshot_id = False, None
            else:
                self.check_expiry = True  # the limit or an error cut the round: maybe behind
        return Round(
            planned.batches, first, planned.next_snapshot_id, planned.more, checked, check_history
        )
