"""Where a start spec lands on a table now: the snapshot to read in full (if any) and the first
snapshot whose changes follow. Only positions matter here, so it needs the table's
:class:`~paimon_feed.planner.timeline.Timeline` and nothing else."""

from __future__ import annotations

from dataclasses import dataclass

from paimon_feed.errors import InvalidStartError
from paimon_feed.planner.timeline import Timeline
from paimon_feed.start import StartSpec, parse_end, parse_start

__all__ = ["StartResolution", "resolve_start"]


@dataclass(frozen=True)
class StartResolution:
    """Where a start spec lands: a full scan at ``full_snapshot_id`` (if any), then changes
    from ``next_snapshot_id`` on."""

    next_snapshot_id: int
    full_snapshot_id: int | None = None


def resolve_start(
    timeline: Timeline, start: StartSpec, end: int | str | None = None
) -> StartResolution | None:
    """Resolve ``start`` (and check ``end`` is not before it) against ``timeline`` now;
    ``None`` when the table has no snapshot yet and the spec needs one (``latest-full``)."""
    position = parse_start(start)
    end_id = parse_end(end)
    latest = timeline.latest_snapshot_id()
    if position.kind == "latest-full":
        if latest is None:
            return None
        full = latest if end_id is None else min(latest, end_id)
        resolution = StartResolution(next_snapshot_id=full + 1, full_snapshot_id=full)
    elif position.kind == "latest":
        resolution = StartResolution(next_snapshot_id=(latest or 0) + 1)
    elif position.kind == "earliest":
        earliest = timeline.earliest_snapshot_id()
        resolution = StartResolution(next_snapshot_id=earliest or 1)
    elif position.kind == "snapshot":
        wanted = position.snapshot_id
        assert wanted is not None  # a snapshot position always names one
        if wanted > (latest or 0) + 1:
            raise InvalidStartError(
                f"table {timeline.table_name}: start snapshot {wanted} is ahead of the latest "
                f"snapshot ({latest if latest is not None else 'none yet'}); start at most "
                f"at {(latest or 0) + 1}, or use 'latest'"
            )
        timeline.check_not_expired(wanted)
        resolution = StartResolution(next_snapshot_id=wanted)
    elif position.kind == "tag":
        assert position.tag is not None
        tagged = timeline.tagged(position.tag)
        resolution = StartResolution(next_snapshot_id=tagged.id + 1, full_snapshot_id=tagged.id)
    else:  # time
        assert position.timestamp_ms is not None
        resolution = StartResolution(next_snapshot_id=timeline.first_after(position.timestamp_ms))
    if end_id is not None and end_id < resolution.next_snapshot_id - 1:
        raise InvalidStartError(
            f"table {timeline.table_name}: end snapshot {end_id} is before the start "
            f"({start!r} resolves to snapshot {resolution.next_snapshot_id}); "
            f"give an end at or after it"
        )
    return resolution
