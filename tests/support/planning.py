"""Drive a Planner the way a feed does: round after round until nothing more is waiting."""

from __future__ import annotations

from paimon_feed.planner import Cursor


def plan_rounds(planner, first: int, *, limit: int = 8) -> tuple[list, int]:
    """Every batch from snapshot ``first`` on, planned ``limit`` at a time by one
    :class:`Cursor` (which carries the position and ``covered_from`` between rounds; no expiry
    checks); and the position after the last."""
    cursor, batches = Cursor(planner, first), []
    while True:
        planned = cursor.advance(limit, check_expiry=False)
        batches.extend(planned.batches)
        if not planned.more:
            return batches, cursor.next_snapshot_id
