"""The consumer protocol: one implementation for ChangeFeed, the Spark source and the Lambda handler.

A consumer's progress is a position (the first snapshot it has not read) plus the
:class:`~paimon_feed.batch.SnapshotMark` of the snapshot just before it, the *anchor*. This
module decides, without any I/O of its own beyond the planner and the checkpoint store it is
given, and without asyncio, Spark or SQS:

- **resume**: where a consumer starts, from its checkpoint or from the start spec;
- **history integrity**: whether the table still continues what was read. Snapshot ids are
  re-used after a rollback and start again at 1 in a re-created table, so an id alone proves
  nothing; the anchor is read again and compared (:meth:`Progress.verify`) when a round of
  planning found new snapshots (after reading them, so a rollback racing the round is seen), and
  after every wake-up that does not name a snapshot beyond the anchor: a notification naming an
  id already read, one naming no id (a watch re-established, a directory created again), the
  safety check, the expiry checks; and when resuming (against the mark stored beside the
  consumer file). Only a wake-up naming a snapshot beyond the anchor, whose round then finds
  the anchor's snapshot file still matching the mark, proves the table unchanged;
- **policies** for an expired snapshot (``on_expired``) and a rewritten history
  (``on_history_rewritten``): raise, or restart with a warning and a metric;
- **retries** of transient storage errors (:data:`RETRY`), the same everywhere.

The cost: one read of the anchor's snapshot file per planning round that found new snapshots
(a catch-up round of many snapshots costs one), and per safety check: an idle table costs two
reads per reconcile interval (the next snapshot's file and the anchor's).

What a check cannot see: a rollback to a snapshot at or after the anchor rewrites nothing that
was read (the snapshots after it were never delivered), so it is not an error. An anchor that
snapshot expiration removed cannot be compared. Snapshots have no parent pointer, so the
evidence then is the table's birth: if its ``schema-0`` was written (its ``timeMillis``) after
the anchor's commit time, the table was dropped and created again since the consumer read, and
that is a rewritten history; otherwise the check is skipped until the next one (clocks of the
writers' hosts more than the gap between the anchor's commit and the drop apart can hide it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from paimon_feed.batch import FeedBatch, SnapshotMark
from paimon_feed.errors import (
    ConfigurationError,
    HistoryRewrittenError,
    SnapshotExpiredError,
    StorageError,
)

__all__ = [
    "ExpiredPolicy",
    "HistoryPolicy",
    "EXPIRED_POLICIES",
    "HISTORY_POLICIES",
    "RETRY",
    "RetryPolicy",
    "Progress",
    "Resumed",
    "check_policies",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

ExpiredPolicy = Literal["error", "earliest", "latest-full"]
HistoryPolicy = Literal["error", "latest-full"]
EXPIRED_POLICIES: tuple[str, ...] = ("error", "earliest", "latest-full")
HISTORY_POLICIES: tuple[str, ...] = ("error", "latest-full")


def check_policies(on_expired: Any, on_history_rewritten: Any) -> None:
    """Raise :class:`ConfigurationError` for an unknown policy name."""
    for name, value, allowed in (
        ("on_expired", on_expired, EXPIRED_POLICIES),
        ("on_history_rewritten", on_history_rewritten, HISTORY_POLICIES),
    ):
        if value not in allowed:
            raise ConfigurationError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


@dataclass(frozen=True)
class RetryPolicy:
    """Transient storage errors (:class:`StorageError`) are retried after these pauses;
    everything else is reported at once (see :func:`paimon_feed.errors.is_transient`)."""

    delays: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2)  # seconds; ~6 s in all

    def delay(self, attempt: int, exc: StorageError, table: str) -> float | None:
        """The pause before trying again after failed ``attempt`` (1-based), logged; ``None``
        when the attempts are used up and ``exc`` is to be raised."""
        if attempt > len(self.delays):
            return None
        delay = self.delays[attempt - 1]
        logger.warning(
            "table %s: storage error (attempt %d, retrying in %.1fs): %s", table, attempt, delay, exc
        )
        return delay

    def call(
        self,
        call: Callable[[], T],
        table: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        on_retry: Callable[[], None] | None = None,
    ) -> T:
        """``call()``, retried as the policy says (blocking; the feed has an async twin)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return call()
            except StorageError as exc:
                delay = self.delay(attempt, exc, table)
                if delay is None:
                    raise
                if on_retry is not None:
                    on_retry()
                sleep(delay)


RETRY = RetryPolicy()

#: Pauses (seconds) before reading a missing anchor again, before it counts as gone.
_CONFIRM_MISSING_S = (0.1, 0.3, 0.6)


@dataclass(frozen=True)
class Resumed:
    """Where a consumer starts: a full batch of ``full_snapshot_id`` first (if set), then the
    changes from ``next_snapshot_id``. ``from_checkpoint`` says whether a stored position won."""

    next_snapshot_id: int
    full_snapshot_id: int | None = None
    from_checkpoint: bool = False


class Progress:
    """The protocol for one consumer of one table (see the module docstring).

    Args:
        planner: the table's :class:`~paimon_feed.planner.Planner`.
        checkpoint: the consumer's :class:`~paimon_feed.checkpoint.CheckpointStore` (``None``:
            no consumer id, nothing stored).
        end: the last snapshot to read (inclusive), for restarts at ``latest-full``.
        on_expired: ``"error"``, ``"earliest"`` or ``"latest-full"``.
        on_history_rewritten: ``"error"`` or ``"latest-full"``.

    Blocking: callers with an event loop run its methods in a thread. ``anchor`` is the mark
    of the last snapshot read; ``expired_restarts`` and ``history_rewrites`` count the
    restarts the policies made.
    """

    def __init__(
        self,
        planner: Any,
        checkpoint: Any = None,
        *,
        end: int | None = None,
        on_expired: ExpiredPolicy = "error",
        on_history_rewritten: HistoryPolicy = "error",
    ) -> None:
        check_policies(on_expired, on_history_rewritten)
        self.planner = planner
        self.checkpoint = checkpoint
        self.end = end
        self.on_expired = on_expired
        self.on_history_rewritten = on_history_rewritten
        self.table = planner.table_name
        self.anchor: SnapshotMark | None = None
        self.expired_restarts = 0
        self.history_rewrites = 0
        self._rewound = False  # the next commit may move the checkpoint backwards
        self.sleep: Callable[[float], None] = time.sleep

    # where to start ----------------------------------------------------------------------
    def stored_position(self) -> int | None:
        """The consumer's checkpoint, or ``None`` (no consumer, or none stored yet)."""
        return self.checkpoint.load() if self.checkpoint is not None else None

    def resume(self, start: Any, end: int | None = None) -> Resumed | None:
        """Where to start: the checkpoint (checked against the table) if one is stored, else
        ``start``. ``None`` when the table has no snapshot yet and ``start`` needs one.

        Raises :class:`HistoryRewrittenError` if the table no longer continues the history
        the checkpoint followed, and :class:`SnapshotExpiredError` if the checkpoint's next
        snapshot expired; :meth:`recover` applies the policy to either.
        """
        stored = self.stored_position()
        if stored is not None:
            self.resume_at(stored)
            return Resumed(stored, from_checkpoint=True)
        resolution = self.planner.resolve_start(start, end)
        if resolution is None:
            return None
        if resolution.full_snapshot_id is None:
            self.anchor_at(resolution.next_snapshot_id)
        return Resumed(resolution.next_snapshot_id, resolution.full_snapshot_id)

    def resume_at(self, next_snapshot_id: int) -> None:
        """Take ``next_snapshot_id`` (a stored position) as the position, after checking it:
        against the mark stored with it, else against the table's length."""
        latest = self.planner.latest_snapshot_id()
        marked = self.checkpoint.load_mark() if self.checkpoint is not None else None
        if marked is not None and marked[0] == next_snapshot_id:
            self.anchor = marked[1]
            self.verify()
        elif next_snapshot_id > (latest or 0) + 1:
            raise HistoryRewrittenError(
                self.table, next_snapshot_id - 1,
                f"the checkpoint is at snapshot {next_snapshot_id}, but the latest snapshot is "
                f"{latest}: rolled back, or dropped and re-created",
            )
        else:
            if marked is not None:
                logger.info(
                    "table %s: the mark beside the checkpoint is for snapshot %d, not %d (the "
                    "consumer was moved by another tool); history is checked from here on",
                    self.table, marked[0], next_snapshot_id,
                )
            self.anchor_at(next_snapshot_id)
        self.planner.check_not_expired(next_snapshot_id)

    def anchor_at(self, next_snapshot_id: int) -> None:
        """Anchor on the snapshot before ``next_snapshot_id`` as the table has it now."""
        self.anchor = (
            self.planner.snapshot_mark(next_snapshot_id - 1) if next_snapshot_id > 1 else None
        )

    # history integrity -------------------------------------------------------------------
    def verify(self) -> None:
        """Raise :class:`HistoryRewrittenError` if the table no longer holds the anchor.

        One read of the anchor's snapshot file; if it is gone, the latest and earliest ids
        tell a rollback or a re-creation (the table is shorter now) from an expiry (nothing to
        compare: passes).
        """
        anchor = self.anchor
        if anchor is not None:
            self._check(anchor.snapshot_id, anchor.differs, anchor.time_millis)

    def check_digest(self, snapshot_id: int, digest: str) -> None:
        """:meth:`verify` for an anchor known by its :meth:`SnapshotMark.digest` only."""
        self._check(
            snapshot_id,
            lambda now: None if now.digest() == digest else (
                f"snapshot {snapshot_id} is another commit now (committed at {now.time_millis} "
                f"ms by {now.commit_user!r}) than the one read"
            ),
        )

    def _check(
        self,
        snapshot_id: int,
        differs: Callable[[SnapshotMark], str | None],
        committed_at: int | None = None,
    ) -> None:
        now = self.planner.snapshot_mark(snapshot_id, fresh=True)
        if now is None and self._expired(snapshot_id, committed_at):
            return
        for pause in _CONFIRM_MISSING_S:
            if now is not None:
                break
            # Gone, or not visible for a moment (a snapshot directory restored by a rename is
            # missing between the two renames): a rewritten history is only concluded when
            # the snapshot stays gone.
            self.sleep(pause)
            now = self.planner.snapshot_mark(snapshot_id, fresh=True)
        if now is not None:
            change = differs(now)
            if change is not None:
                raise HistoryRewrittenError(self.table, snapshot_id, change)
            return
        latest = self.planner.latest_snapshot_id()
        if latest is None or latest < snapshot_id:
            raise HistoryRewrittenError(
                self.table, snapshot_id,
                f"snapshot {snapshot_id} no longer exists and the latest snapshot is {latest}: "
                f"rolled back, or dropped and re-created",
            )
        if self._expired(snapshot_id, committed_at):
            return
        raise HistoryRewrittenError(
            self.table, snapshot_id,
            f"snapshot {snapshot_id} no longer exists, though snapshots "
            f"{self.planner.earliest_snapshot_id()}..{latest} do",
        )

    def _expired(self, snapshot_id: int, committed_at: int | None) -> bool:
        """Whether a missing snapshot is explained by expiry (older than the earliest one):
        then there is nothing to compare, and no reason to wait for it to reappear.

        Raises :class:`HistoryRewrittenError` if the table was created after ``committed_at``
        (the missing snapshot's commit time, epoch ms): then it is another table, not an
        expired stretch of the one that was read (see the module docstring)."""
        earliest = self.planner.earliest_snapshot_id()
        if earliest is not None and earliest > snapshot_id:
            created = self.planner.created_millis() if committed_at is not None else None
            if created is not None and committed_at is not None and created > committed_at:
                raise HistoryRewrittenError(
                    self.table, snapshot_id,
                    f"snapshot {snapshot_id} is gone and snapshots start at {earliest}, but not "
                    f"by expiry: the table's schema-0 was written at {created} ms, after "
                    f"snapshot {snapshot_id} was committed at {committed_at} ms, so the table "
                    f"was dropped and created again since it was read (and expired since)",
                )
            logger.debug(
                "table %s: snapshot %d expired; history continuity is checked from the next "
                "one read", self.table, snapshot_id,
            )
            return True
        return False

    def after_round(self, next_snapshot_id: int, planned_next_id: int, *, checked: bool = False) -> None:
        """Account for a planning round from ``next_snapshot_id`` that got to
        ``planned_next_id``: verify the anchor if the round read new snapshots (or ``checked``,
        an expiry check that wants it), then anchor on the last snapshot the round read."""
        if planned_next_id > next_snapshot_id or checked:
            self.verify()
        if planned_next_id > next_snapshot_id:
            self.anchor = self.planner.snapshot_mark(planned_next_id - 1)

    def after_full(self, batch: FeedBatch) -> None:
        """A full batch was planned: the history continues from its snapshot."""
        self.anchor = batch.mark

    # policies ----------------------------------------------------------------------------
    def restart_point(self, exc: SnapshotExpiredError | HistoryRewrittenError) -> Resumed:
        """Apply the policy for ``exc``: re-raise it (``"error"``), or log and count it and
        return where to restart (``earliest``: the oldest snapshot; ``latest-full``: a full
        batch of the latest snapshot, then its changes). Plans nothing."""
        policy: str
        if isinstance(exc, HistoryRewrittenError):
            policy, name = self.on_history_rewritten, "on_history_rewritten"
        else:
            policy, name = self.on_expired, "on_expired"
        if policy == "error":
            raise exc
        logger.warning("%s; %s=%r: restarting there", exc, name, policy)
        if isinstance(exc, HistoryRewrittenError):
            self.history_rewrites += 1
            self.planner.forget_snapshots()
            # The restart point may lie before the stored position (the table is shorter
            # now). The stored position stays until the restart's first batch is committed:
            # a crash before that finds the rewrite again and restarts again.
            self._rewound = True
        else:
            self.expired_restarts += 1
        self.anchor = None  # nothing before the restart point was read
        if policy == "earliest":
            return Resumed(self.planner.earliest_snapshot_id() or exc.snapshot_id)
        latest = self.planner.latest_snapshot_id()
        if latest is None:  # no snapshot at all (re-created, not committed to yet)
            return Resumed(1 if isinstance(exc, HistoryRewrittenError) else exc.snapshot_id)
        return Resumed(latest + 1, full_snapshot_id=latest)

    def recover(self, exc: SnapshotExpiredError | HistoryRewrittenError) -> tuple[FeedBatch | None, int]:
        """:meth:`restart_point`, with its full batch planned: the batch to deliver first
        (``None`` if there is none) and the next snapshot to read."""
        point = self.restart_point(exc)
        if point.full_snapshot_id is None:
            return None, point.next_snapshot_id
        batch = self.planner.full_batch(point.full_snapshot_id)
        self.after_full(batch)
        return batch, point.next_snapshot_id

    # checkpoints -------------------------------------------------------------------------
    def commit(self, next_snapshot_id: int, mark: SnapshotMark | None) -> bool:
        """Advance the checkpoint to ``next_snapshot_id`` (never backwards, except for the first
        commit after a restart on a rewritten history) and store ``mark``, the snapshot before
        it, beside it. ``False`` if the checkpoint was already there."""
        if self.checkpoint is None:
            return True
        if self._rewound:  # the first commit after a rewritten history: set, even backwards
            self.checkpoint.save(next_snapshot_id)
            self._rewound, moved = False, True
        else:
            moved = bool(self.checkpoint.advance(next_snapshot_id))
        if moved and mark is not None and mark.snapshot_id == next_snapshot_id - 1:
            self.checkpoint.save_mark(next_snapshot_id, mark)
        return moved
