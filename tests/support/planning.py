"""Drive a Planner the way a feed does: round after round until nothing more is waiting."""

from __future__ import annotations


def plan_rounds(planner, first: int, *, limit: int = 8) -> tuple[list, int]:
    """Every batch from snapshot ``first`` on, planned ``limit`` at a time, each round handed
    the previous round's position and ``covered_from``; and the position after the last."""
    batches, position, covered_from = [], first, None
    while True:
        planned = planner.next_batches(position, limit=limit, covered_from=covered_from)
        batches.extend(planned.batches)
        position, covered_from = planned.next_snapshot_id, planned.covered_from
        if not planned.more:
            return batches, position
