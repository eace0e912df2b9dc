"""One table's catch-up in one invocation: from its checkpoint to its newest snapshot, on the
consumer protocol every entry point shares (:class:`~paimon_feed.progress.Progress`), with the
outcome the invocation log line reports."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from paimon_feed.aws.config import HandlerConfig
from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import HistoryRewrittenError, SnapshotExpiredError, TableNotFoundError
from paimon_feed.planner import Cursor, Planner, Timeline
from paimon_feed.progress import RETRY, Progress

__all__ = ["Deadline", "TableOutcome", "run_table"]

logger = logging.getLogger(__name__)

DEFAULT_DEADLINE_MARGIN_MS = 10_000
DEFAULT_DEADLINE_FRACTION = 0.25


_Status = Literal["done", "failed", "unfinished", "skipped"]


@dataclass(frozen=True)
class TableOutcome:
    """What happened to one table in one invocation.

    ``status``: ``done`` (caught up), ``failed`` (an error stopped it), ``unfinished`` (the
    deadline came first) or ``skipped`` (the table no longer exists).
    """

    table: str
    status: _Status
    batches: int = 0
    next_snapshot_id: int | None = None
    error: str | None = None
    rows: int = 0
    snapshots: int = 0
    latencies_ms: tuple[float, ...] = field(default=(), repr=False)
    lag_snapshots: int | None = 0
    checkpoint_conflicts: int = 0

    @property
    def ok(self) -> bool:
        return self.status in ("done", "skipped")


class Deadline:
    """When to stop taking new batches: ``margin_ms`` before the invocation times out."""

    def __init__(self, context: Any, margin_ms: int | None) -> None:
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        self._remaining = remaining if callable(remaining) else None
        if margin_ms is None:
            margin_ms = DEFAULT_DEADLINE_MARGIN_MS
            if self._remaining is not None:
                margin_ms = min(margin_ms, int(self._remaining() * DEFAULT_DEADLINE_FRACTION))
        self.margin_ms = margin_ms

    def remaining_ms(self) -> int | None:
        return int(self._remaining()) if self._remaining is not None else None

    def reached(self) -> bool:
        remaining = self.remaining_ms()
        return remaining is not None and remaining < self.margin_ms


def run_table(
    name: str, open_table: Callable[[], Any], config: HandlerConfig, deadline: Deadline
) -> TableOutcome:
    """Catch table ``name`` up from its checkpoint to its newest snapshot (or the deadline)."""
    if deadline.reached():
        logger.warning(
            "table %s: not started, %s ms left is under the %d ms margin; its messages are "
            "reported as failed", name, deadline.remaining_ms(), deadline.margin_ms,
        )
        return TableOutcome(name, "unfinished", lag_snapshots=None)
    try:
        table = open_table()
    except TableNotFoundError as exc:
        logger.warning("table %s: skipped, %s", name, exc)
        return TableOutcome(name, "skipped")  # nothing left to read: no lag
    except Exception as exc:  # reported as this table's failure; other tables go on
        logger.error("table %s: cannot open: %s", name, exc, exc_info=True)
        return TableOutcome(name, "failed", error=str(exc), lag_snapshots=None)
    delivered = _Delivered()
    try:
        return _catch_up(name, table, config, deadline, delivered)
    except Exception as exc:  # the processor may raise anything; report it, keep others going
        logger.error(
            "table %s: failed after %d batches, checkpoint at snapshot %s; its messages are "
            "reported as failed: %s",
            name, delivered.batches, delivered.next_snapshot_id, exc, exc_info=True,
        )
        return delivered.outcome(name, "failed", table, error=str(exc))


@dataclass
class _Delivered:
    """What one table's catch-up delivered so far in this invocation."""

    batches: int = 0
    next_snapshot_id: int | None = None
    rows: int = 0
    snapshots: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    checkpoint_conflicts: int = 0

    def deliver(self, batch: FeedBatch, processor: Callable[[FeedBatch], Any]) -> None:
        """Hand ``batch`` to the processor and count it (after it returns)."""
        handed_at_ms = time.time() * 1000
        processor(batch)
        self.batches += 1
        self.rows += sum(split.row_count for split in batch.splits)
        self.snapshots += batch.snapshot_count
        self.latencies_ms.append(max(0.0, handed_at_ms - batch.commit_time_ms))

    def outcome(
        self, name: str, status: _Status, table: Any = None, *, error: str | None = None
    ) -> TableOutcome:
        """The table's outcome; with ``table``, its lag is read from the latest snapshot id
        (a table that caught up without losing a checkpoint race has none by construction)."""
        return TableOutcome(
            name, status, self.batches, self.next_snapshot_id, error=error, rows=self.rows,
            snapshots=self.snapshots, latencies_ms=tuple(self.latencies_ms),
            lag_snapshots=_lag(name, table, self.next_snapshot_id) if table is not None else 0,
            checkpoint_conflicts=self.checkpoint_conflicts,
        )


def _lag(name: str, table: Any, next_snapshot_id: int | None) -> int | None:
    """Snapshots after ``next_snapshot_id - 1`` that exist now; ``None`` if unknown."""
    if next_snapshot_id is None:
        return None
    try:
        latest = Timeline(table).latest_snapshot_id()
    except Exception as exc:  # only a figure for the log line; the outcome stands
        logger.warning("table %s: cannot read the latest snapshot id for its lag: %s", name, exc)
        return None
    return max(0, (latest or 0) - (next_snapshot_id - 1))


def _catch_up(
    name: str, table: Any, config: HandlerConfig, deadline: Deadline, progress: _Delivered
) -> TableOutcome:
    """Deliver every batch from the checkpoint (or the start) to the newest snapshot, on the
    consumer protocol every entry point shares (:class:`~paimon_feed.progress.Progress`).

    If another invocation checkpoints the same position first, this one leaves the table to it
    (see :func:`_advance`).
    """
    planner = Planner(table)
    store = CheckpointStore.for_table(
        table, config.consumer_id, catalog_options=config.catalog_options
    )
    protocol = Progress(
        planner, store, on_expired=config.on_expired,
        on_history_rewritten=config.on_history_rewritten,
    )

    def storage(call: Callable[[], Any]) -> Any:
        return RETRY.call(call, name)

    def restart(exc: SnapshotExpiredError | HistoryRewrittenError) -> bool:
        """Apply the policy (or raise); ``False`` if another invocation took the table."""
        batch, next_id = storage(lambda: protocol.recover(exc))
        if batch is not None:
            progress.deliver(batch, config.processor)
        # Also pins the restart, so the next invocation does not resolve it again later.
        return _advance(protocol, name, next_id, progress)

    try:
        resumed = storage(lambda: protocol.resume(config.start))
    except (SnapshotExpiredError, HistoryRewrittenError) as exc:
        if not restart(exc):
            return progress.outcome(name, "done", table)
    else:
        if resumed is None:
            logger.info("table %s: no snapshot yet, nothing to deliver", name)
            return progress.outcome(name, "done")
        if resumed.from_checkpoint:
            progress.next_snapshot_id = resumed.next_snapshot_id
        else:
            if resumed.full_snapshot_id is not None:
                full_id = resumed.full_snapshot_id
                batch = storage(lambda: planner.full_batch(full_id))
                protocol.after_full(batch)
                progress.deliver(batch, config.processor)
            # Also pins a change-only start, so the next invocation does not resolve it again.
            if not _advance(protocol, name, resumed.next_snapshot_id, progress):
                return progress.outcome(name, "done", table)
    assert progress.next_snapshot_id is not None  # set by the resume or restart above
    cursor = Cursor(planner, progress.next_snapshot_id)
    check_expiry = True  # the first round only: the checkpoint may be old
    while True:
        next_id = cursor.next_snapshot_id
        if deadline.reached():
            logger.warning(
                "table %s: stopped at snapshot %d after %d batches, %s ms left is under the "
                "%d ms margin; its messages are reported as failed and a retry resumes here",
                name, next_id, progress.batches, deadline.remaining_ms(), deadline.margin_ms,
            )
            return progress.outcome(name, "unfinished", table)
        try:
            planned = storage(lambda: cursor.advance(1, check_expiry=check_expiry))
            storage(lambda: protocol.after_round(next_id, planned.next_snapshot_id, checked=check_expiry))
        except (SnapshotExpiredError, HistoryRewrittenError) as exc:
            if not restart(exc):
                return progress.outcome(name, "done", table)
            assert progress.next_snapshot_id is not None  # set by the restart
            cursor.restart(progress.next_snapshot_id)
            continue
        check_expiry = False
        if not planned.batches:
            if planned.next_snapshot_id > next_id:  # snapshots with nothing to read
                if not _advance(protocol, name, planned.next_snapshot_id, progress):
                    return progress.outcome(name, "done", table)
            return progress.outcome(name, "done")
        batch = planned.batches[0]
        progress.deliver(batch, config.processor)
        target = max(batch.next_snapshot_id, planned.next_snapshot_id)
        if not _advance(protocol, name, target, progress):
            return progress.outcome(name, "done", table)


def _advance(protocol: Progress, name: str, next_snapshot_id: int, progress: _Delivered) -> bool:
    """Advance the checkpoint; ``False`` if a concurrent invocation got there first.

    The checkpoint only reaches ``next_snapshot_id`` through a writer that was running after
    this invocation last read or wrote it; that writer goes on to the newest snapshot (which
    covers every event this invocation was given) or fails and has its own messages retried.
    So the table is left to it: continuing in lockstep would deliver every batch twice.
    """
    if protocol.commit(next_snapshot_id, protocol.anchor):
        progress.next_snapshot_id = next_snapshot_id
        return True
    stored = protocol.stored_position()
    progress.checkpoint_conflicts += 1
    progress.next_snapshot_id = max(next_snapshot_id, stored or 0)
    logger.info(
        "table %s: a concurrent invocation checkpointed snapshot %d first; leaving the table "
        "to it", name, progress.next_snapshot_id,
    )
    return False
