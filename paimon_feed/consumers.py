"""A table's consumers as an operator sees them: who reads it, how far behind, and who keeps
Paimon from expiring snapshots.

A consumer is a file ``{table}/consumer/consumer-{id}`` holding the next snapshot it will read
(see :mod:`paimon_feed.checkpoint`). Paimon's snapshot expiration never removes a snapshot at or
after the smallest ``nextSnapshot`` of all consumers, so one forgotten consumer pins every
snapshot after it for ever (Paimon's own remedy is ``consumer.expiration-time``: consumers whose
file was not written for that long are deleted; :func:`expire_consumers` applies the same rule).
Works on every file system pypaimon reads (local, ``s3://``, ...) through the table's file IO.
"""

from __future__ import annotations

import datetime
import json
import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from paimon_feed import _units
from paimon_feed.checkpoint import (
    CheckpointStore,
    decode_checkpoint,
    validate_consumer_id,
)
from paimon_feed.errors import (
    CheckpointError,
    ConfigurationError,
    InvalidStartError,
    SnapshotExpiredError,
)

__all__ = [
    "ConsumerInfo",
    "ResetPlan",
    "apply_reset",
    "delete_consumer",
    "expire_consumers",
    "list_consumers",
    "parse_duration",
    "plan_reset",
    "reset_consumer",
]

logger = logging.getLogger(__name__)

_PREFIX = "consumer-"


@dataclass(frozen=True)
class ConsumerInfo:
    """One consumer of a table. Times in milliseconds since the epoch (UTC).

    ``lag_snapshots``: committed snapshots it has not read (0 when caught up).
    ``oldest_unread_commit_ms``: commit time of the first of those, ``None`` when caught up.
    ``holds_expiry``: it has the smallest next snapshot among consumers with unread
    snapshots, so it is the one that keeps Paimon from expiring them.
    """

    consumer_id: str
    next_snapshot_id: int
    lag_snapshots: int
    oldest_unread_commit_ms: int | None
    last_modified_ms: int | None
    holds_expiry: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a number and a unit of the project's one grammar (``ms``, ``s``,
    ``m``, ``h``, ``d``, ``w``; see :mod:`paimon_feed._units`).

    >>> parse_duration("7d"), parse_duration("90m"), parse_duration("1.5h"), parse_duration("1w")
    (604800.0, 5400.0, 5400.0, 604800.0)
    """
    return _units.parse_duration(text)


def _consumer_dir(table: Any) -> str:
    return f"{str(table.table_path).rstrip('/')}/consumer"


def _mtime_ms(status: Any) -> int | None:
    mtime = getattr(status, "mtime", None)
    if isinstance(mtime, datetime.datetime):
        if mtime.tzinfo is None:
            mtime = mtime.replace(tzinfo=datetime.timezone.utc)
        return int(mtime.timestamp() * 1000)
    if isinstance(mtime, (int, float)):
        return int(mtime * 1000)
    return None


def _consumer_files(table: Any) -> dict[str, Any]:
    """consumer id -> its file status, for every consumer file of ``table``."""
    directory = _consumer_dir(table)
    file_io = table.file_io
    if not file_io.exists(directory):
        return {}
    files = {}
    for status in file_io.list_status(directory):
        name = getattr(status, "base_name", None) or str(status.path).rstrip("/").rsplit("/", 1)[-1]
        if name.startswith(_PREFIX) and not name.endswith(".tmp"):
            files[name[len(_PREFIX):]] = status
    return files


def _commit_time_ms(table: Any, snapshot_id: int) -> int | None:
    path = f"{str(table.table_path).rstrip('/')}/snapshot/snapshot-{snapshot_id}"
    try:
        return int(json.loads(table.file_io.read_file_utf8(path))["timeMillis"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # expired meanwhile, or unreadable: the age is unknown, not an error


def list_consumers(table: Any) -> list[ConsumerInfo]:
    """Every consumer of ``table``, sorted by id. A corrupt consumer file is a
    :class:`CheckpointError` naming it (Paimon's expiration would fail on it too)."""
    from paimon_feed.planner import Timeline

    latest = Timeline(table).latest_snapshot_id() or 0
    entries = []
    for consumer_id, status in sorted(_consumer_files(table).items()):
        path = f"{_consumer_dir(table)}/{_PREFIX}{consumer_id}"
        next_id = decode_checkpoint(table.file_io.read_file_utf8(path), path)
        lag = max(0, latest - next_id + 1)
        entries.append((consumer_id, next_id, lag, _mtime_ms(status)))
    behind = [next_id for _, next_id, lag, _ in entries if lag > 0]
    pinning = min(behind) if behind else None
    return [
        ConsumerInfo(
            consumer_id=consumer_id,
            next_snapshot_id=next_id,
            lag_snapshots=lag,
            oldest_unread_commit_ms=_commit_time_ms(table, next_id) if lag else None,
            last_modified_ms=modified,
            holds_expiry=next_id == pinning,
        )
        for consumer_id, next_id, lag, modified in entries
    ]


@dataclass(frozen=True)
class ResetPlan:
    """What :func:`reset_consumer` would do, found without writing anything.

    ``current_next_snapshot_id`` is ``None`` when the consumer does not exist (a reset would
    create it); ``earliest_snapshot_id`` is the earliest retained snapshot (``None`` for a table
    without one). ``past_expired``: the new position is a snapshot that already expired, so the
    consumer's next read fails (or skips them, by its ``on_expired`` policy).
    """

    consumer_id: str
    current_next_snapshot_id: int | None
    next_snapshot_id: int
    earliest_snapshot_id: int | None
    latest_snapshot_id: int | None

    @property
    def creates(self) -> bool:
        return self.current_next_snapshot_id is None

    @property
    def past_expired(self) -> bool:
        return (
            self.earliest_snapshot_id is not None
            and self.next_snapshot_id < self.earliest_snapshot_id
        )


def plan_reset(table: Any, consumer_id: str, position: str | int) -> ResetPlan:
    """Where ``position`` (a snapshot id, ``earliest``, ``latest``, a tag or a time, as for
    ``start``) would put ``consumer_id``, without writing anything."""
    from paimon_feed.planner import Planner
    from paimon_feed.start import parse_start

    validate_consumer_id(consumer_id)
    spec = parse_start(position)
    if spec.kind == "latest-full":
        raise InvalidStartError(
            "a consumer file holds a snapshot to read next, not a full read: reset to 'latest' "
            "(changes after now) or a snapshot id instead of 'latest-full'"
        )
    planner = Planner(table)
    latest = planner.latest_snapshot_id()
    if spec.kind == "snapshot" and spec.snapshot_id is not None and spec.snapshot_id > (latest or 0) + 1:
        raise InvalidStartError(
            f"table {_table_name(table)}: cannot reset consumer {consumer_id} to snapshot "
            f"{spec.snapshot_id}: it is ahead of the latest snapshot "
            f"({latest if latest is not None else 'none yet'}); reset it at most to "
            f"{(latest or 0) + 1} (the next snapshot to be committed: 'latest'), or to an "
            f"earlier snapshot, a tag or a time"
        )
    try:
        resolution = planner.resolve_start(spec)
        next_id = resolution.next_snapshot_id if resolution is not None else 1
    except SnapshotExpiredError as exc:
        next_id = exc.snapshot_id  # the operator decides: see ResetPlan.past_expired
    current = CheckpointStore.for_table(table, consumer_id).load()
    return ResetPlan(
        consumer_id=consumer_id,
        current_next_snapshot_id=current,
        next_snapshot_id=next_id,
        earliest_snapshot_id=planner.earliest_snapshot_id(),
        latest_snapshot_id=latest,
    )


def apply_reset(table: Any, plan: ResetPlan, *, create: bool = False, past_expired: bool = False) -> int:
    """Write ``plan``; returns the next snapshot id stored. A consumer pins snapshot expiry, so
    creating one needs ``create=True``, and a position on expired snapshots ``past_expired=True``
    (a :class:`ConfigurationError` otherwise)."""
    if plan.creates and not create:
        known = ", ".join(sorted(_consumer_files(table))) or "none"
        raise ConfigurationError(
            f"table {_table_name(table)} has no consumer {plan.consumer_id} (its consumers: "
            f"{known}); creating one keeps Paimon from expiring the snapshots it has not read, "
            f"so pass create=True to create it"
        )
    if plan.past_expired and not past_expired:
        raise ConfigurationError(
            f"table {_table_name(table)}: snapshot {plan.next_snapshot_id} expired (the earliest "
            f"retained is {plan.earliest_snapshot_id}), so consumer {plan.consumer_id} would fail "
            f"to read it; pass past_expired=True to do it anyway, or reset to 'earliest'"
        )
    CheckpointStore.for_table(table, plan.consumer_id).save(plan.next_snapshot_id)
    logger.info("consumer %s reset to snapshot %d", plan.consumer_id, plan.next_snapshot_id)
    return plan.next_snapshot_id


def reset_consumer(
    table: Any, consumer_id: str, position: str | int, *, create: bool = False, past_expired: bool = False
) -> int:
    """Move ``consumer_id`` to ``position``, forwards or backwards: :func:`plan_reset`, then
    :func:`apply_reset`. Returns the next snapshot id stored."""
    return apply_reset(table, plan_reset(table, consumer_id, position), create=create, past_expired=past_expired)


def delete_consumer(table: Any, consumer_id: str, *, dry_run: bool = False) -> None:
    """Delete ``consumer_id``'s file (with ``dry_run``, only check that it exists); a
    :class:`CheckpointError` if there is none."""
    validate_consumer_id(consumer_id)
    if consumer_id not in _consumer_files(table):
        raise CheckpointError(f"no consumer {consumer_id!r}: {_consumer_dir(table)} has no {_PREFIX}{consumer_id}")
    if dry_run:
        return
    _delete(table, consumer_id)
    logger.info("consumer %s deleted", consumer_id)


def expire_consumers(
    table: Any, older_than_seconds: float, *, now_ms: int | None = None, dry_run: bool = False
) -> list[str]:
    """Delete the consumers whose file was last written more than ``older_than_seconds`` ago
    (Paimon's ``consumer.expiration-time`` rule); returns their ids. With ``dry_run`` nothing
    is deleted: the ids are those that would be."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = now - older_than_seconds * 1000
    expired = [
        consumer_id
        for consumer_id, status in sorted(_consumer_files(table).items())
        if (modified := _mtime_ms(status)) is not None and modified < cutoff
    ]
    if dry_run:
        return expired
    for consumer_id in expired:
        _delete(table, consumer_id)
        logger.info("consumer %s expired (not written for %.0f s)", consumer_id, older_than_seconds)
    return expired


def _delete(table: Any, consumer_id: str) -> None:
    """Delete the consumer file, then our side files beside it: the mark
    (:mod:`paimon_feed.checkpoint.marks`) and the runner's batch record.

    A mark left behind would be ignored (its ``nextSnapshot`` matches no new checkpoint), so
    failing to delete it only leaves clutter: logged, not raised, once the consumer is gone.
    """
    table.file_io.delete(f"{_consumer_dir(table)}/{_PREFIX}{consumer_id}", False)
    store = CheckpointStore.for_table(table, consumer_id)
    try:
        store.delete_mark()
    except OSError as exc:
        logger.warning(
            "consumer %s deleted, but not all its side files (%s, %s): delete them by hand, or a "
            "new consumer of the same id may replay the old one's batch in flight",
            consumer_id, store.mark_path, exc,
        )


def _table_name(table: Any) -> str:
    identifier = getattr(table, "identifier", None)
    return identifier.get_full_name() if identifier is not None else str(table.table_path)
