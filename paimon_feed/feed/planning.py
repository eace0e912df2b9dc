"""The planning task of a :class:`~paimon_feed.feed.ChangeFeed`: wait on the subscription, plan
round after round with a :class:`~paimon_feed.planner.Cursor`, check the history with
:class:`~paimon_feed.progress.Progress`, publish batches on the bounded queue.

It holds no reference to the feed, so a feed dropped while its task still plans can be
collected (and then warns and releases what it holds).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from paimon_feed.batch import FeedBatch
from paimon_feed.errors import HistoryRewrittenError, SnapshotExpiredError, StorageError
from paimon_feed.feed.stats import FeedStats
from paimon_feed.planner import Cursor, Planner
from paimon_feed.progress import RETRY, Progress, Resumed
from paimon_feed.start import StartPosition

__all__ = ["Planning", "Position", "Done", "Closed", "Failure"]

_T = TypeVar("_T")

logger = logging.getLogger("paimon_feed.feed")

#: Where planning starts: a resumed position, an error whose policy applies in the background,
#: or ``None`` (the table has no snapshot yet and the start needs one).
Position = Resumed | SnapshotExpiredError | HistoryRewrittenError | None


class Done:
    """Queue sentinel: the feed reached its end snapshot."""


class Closed:
    """Queue sentinel: ``close()`` was called; wakes consumers waiting for a batch."""


class Failure:
    """Queue item: the error the planning task failed with, raised at the consumer."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Planning:
    """One feed's planning state and loop (see the module docstring)."""

    def __init__(
        self,
        *,
        table_name: str,
        planner: Planner,
        progress: Progress,
        start_spec: StartPosition,
        end: int | None,
        max_pending: int,
        reconcile_interval: float,
        poll_interval: float,
        stats: FeedStats,
        on_rewound: Callable[[], None],
    ) -> None:
        self.table_name = table_name
        self._planner = planner
        self._progress = progress
        self._start_spec = start_spec
        self._end = end
        self.max_pending = max_pending
        self.reconcile_interval = reconcile_interval
        self.poll_interval = poll_interval
        self.stats = stats
        self._on_rewound = on_rewound
        self.notifier: Any = None
        self.subscription: Any = None
        self.queue: asyncio.Queue | None = None
        self._expiry_checked_at = self._history_checked_at = time.monotonic()
        self._push_failures_seen = 0

    def attach(self, notifier: Any, subscription: Any, queue: asyncio.Queue) -> None:
        """The notifier, subscription and queue of the started feed."""
        self.notifier, self.subscription, self.queue = notifier, subscription, queue

    async def run(self, position: Position) -> None:
        """Plan and publish until the end snapshot, a failure (parked on the queue) or
        cancellation."""
        queue = self.queue
        assert queue is not None  # attach() comes first
        try:
            cursor = Cursor(self._planner, await self._first_batch(position), end=self._end)
            while True:
                if cursor.done:
                    logger.info("feed for %s reached end snapshot %d", self.table_name, self._end)
                    await queue.put(Done())
                    return
                self.subscription.expect(cursor.next_snapshot_id)
                # Hints that came in while publishing are covered by this round.
                early = self.subscription.drain()
                if early.hinted:
                    self.stats.hints.update(early.sources)
                    cursor.hint(early.max_snapshot_id, early.detected_at)
                if await self._plan_round(cursor) or cursor.done:
                    continue
                wake = await self._wait(cursor.next_snapshot_id)
                # A safety check looks for expiry when due: a poller hints only once the next
                # snapshot exists, so an expired one would never be hinted.
                quiet = wake.timed_out and not wake.hinted
                cursor.woke(
                    wake.max_snapshot_id, wake.detected_at,
                    safety_check=quiet and self._expiry_check_due(),
                    check_history=not quiet or self._history_check_due(),
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.error("feed for %s failed: %s", self.table_name, exc)
            await queue.put(Failure(exc))

    async def initial_position(self) -> Position:
        """Where planning starts: the checkpoint if there is one (checked against the table),
        else the start spec.

        ``None`` means the table has no snapshot yet and the start needs one; an expired start
        or a rewritten history is returned, not raised, so its policy applies in the background.
        """
        try:
            resumed = await self._storage(
                lambda: self._progress.resume(self._start_spec, self._end)
            )
        except (SnapshotExpiredError, HistoryRewrittenError) as exc:
            return exc
        if resumed is not None and resumed.from_checkpoint:
            logger.info(
                "feed for %s resumes its consumer at snapshot %d",
                self.table_name, resumed.next_snapshot_id,
            )
        return resumed

    async def _first_batch(
        self, position: Position
    ) -> int:
        """Publish the full batch the start asks for (waiting for a first commit if the table
        is empty) and return the snapshot id change planning starts at."""
        if isinstance(position, (SnapshotExpiredError, HistoryRewrittenError)):
            return await self._recover(position)
        if position is None:
            logger.info("table %s has no snapshot yet; waiting for its first commit", self.table_name)
            while position is None:
                self.subscription.expect(1)
                await self._wait(1)
                position = await self._storage(
                    lambda: self._progress.resume(self._start_spec, self._end)
                )
        if position.full_snapshot_id is not None:
            full_id = position.full_snapshot_id
            batch = await self._storage(lambda: self._planner.full_batch(full_id))
            self._progress.after_full(batch)
            await self._publish(batch)
        return position.next_snapshot_id

    async def _plan_round(self, cursor: Cursor) -> bool:
        """Plan and publish one round; whether to plan again at once (``more``)."""
        if cursor.check_expiry:
            self._expiry_checked_at = time.monotonic()
        try:
            planned = await self._storage(lambda: cursor.advance(self.max_pending))
            # After the round's reads: a rollback racing the round is seen too.
            await self._storage(
                lambda: self._progress.after_round(
                    planned.first_snapshot_id, planned.next_snapshot_id,
                    checked=planned.checked_expiry or planned.checked_history,
                )
            )
            if planned.checked_expiry or planned.checked_history:
                self._history_checked_at = time.monotonic()
        except (SnapshotExpiredError, HistoryRewrittenError) as exc:
            cursor.restart(await self._recover(exc))
            return False
        for batch in planned.batches:
            await self._publish(batch)
        return planned.more

    def _expiry_check_due(self) -> bool:
        """Whether a safety check without a hint should also look for expiry (a few reads of
        snapshot hints): only while the feed learns of new snapshots by probing for the next one
        (a polling notifier, or fallback polling), at most once per reconcile interval.

        A notifier that announces every commit hints each new snapshot, and a hint newer than
        the expected one triggers the check; an idle feed's next snapshot does not exist yet,
        so it cannot have expired. Skipping it keeps an idle table at one read per interval.
        """
        if self.notifier.announces_commits and not self.stats.in_fallback:
            return False
        return time.monotonic() - self._expiry_checked_at >= self.reconcile_interval

    def _history_check_due(self) -> bool:
        """Whether a safety check (a wait that timed out without a hint) compares the anchor:
        always while push is healthy (its waits time out once per reconcile interval), and at
        most once per reconcile interval while the feed polls, so fallback polling stays one
        read per poll."""
        if self.subscription.push_healthy:
            return True
        return time.monotonic() - self._history_checked_at >= self.reconcile_interval

    def _safety_check_deferred(self) -> bool:
        """Whether a quiet wait's safety check can wait: while the notifier proves the pipe
        alive for this table's warehouse, the table is checked every ``safety_interval`` (its
        pipe check's ``proven_interval``) instead of every reconcile interval. Asked after each
        reconcile interval, so a pipe check that fails brings the short interval back at once."""
        interval = self.subscription.safety_interval(self.reconcile_interval)
        if interval <= self.reconcile_interval or not self.subscription.push_healthy:
            return False
        deferred = time.monotonic() - self._history_checked_at < interval
        self.stats.safety_checks_deferred += deferred
        return deferred

    async def _recover(self, exc: SnapshotExpiredError | HistoryRewrittenError) -> int:
        """Apply the policy for ``exc`` (raise it, or publish where the feed restarts) and
        return the snapshot id planning goes on from."""
        batch, next_id = await self._storage(lambda: self._progress.recover(exc))
        if isinstance(exc, HistoryRewrittenError):
            self._on_rewound()  # the next commit may move the checkpoint back
        if batch is not None:
            await self._publish(batch)
        return next_id

    async def _storage(self, call: Callable[[], _T]) -> _T:
        """Run a blocking storage call in a thread, retrying transient storage errors
        (:data:`paimon_feed.progress.RETRY`)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await asyncio.to_thread(call)
            except StorageError as exc:
                delay = RETRY.delay(attempt, exc, self.table_name)
                if delay is None:
                    raise
                self.stats.storage_retries += 1
                await asyncio.sleep(delay)

    async def _publish(self, batch: FeedBatch) -> None:
        logger.debug(
            "feed for %s: batch %d..%d planned (%s, %d splits)", self.table_name,
            batch.first_snapshot_id, batch.snapshot_id, batch.kind, len(batch.splits),
        )
        self.stats.batches_planned += 1
        self.stats.note_latest(batch.snapshot_id)
        assert self.queue is not None  # attach() comes first
        await self.queue.put(batch)

    async def _wait(self, next_id: int) -> Any:
        self.subscription.expect(next_id)
        healthy = self.subscription.push_healthy
        # A watch that died and came back before this wait is a fallback too (counted by the
        # subscription), though the feed never polled in between.
        failures = self.subscription.push_failures - self._push_failures_seen
        self._push_failures_seen = self.subscription.push_failures
        if failures or (not healthy and not self.stats.in_fallback):
            self.stats.fallbacks += max(failures, 1)
            logger.warning(
                "feed for %s: push failed; %s", self.table_name,
                f"polling every {self.poll_interval:.1f}s until it recovers" if not healthy
                else "re-established; a safety read covers the gap",
            )
        elif healthy and self.stats.in_fallback:
            logger.info("feed for %s: push recovered, back to push", self.table_name)
        self.stats.in_fallback = not healthy
        first = self.stats.wakeups == 0 and self.stats.reconciles == 0
        if not healthy:
            timeout = self.poll_interval
        elif first:
            # The first wait after start-up is short, so a commit that raced the notifier's
            # start is not left to the reconcile interval.
            timeout = min(self.poll_interval, self.reconcile_interval)
        else:
            timeout = self.reconcile_interval
        wake = await self.subscription.wait(timeout)
        while healthy and not first and wake.timed_out and not wake.hinted and self._safety_check_deferred():
            wake = await self.subscription.wait(self.reconcile_interval)
        if wake.timed_out and not wake.hinted:
            self.stats.reconciles += 1
            self.stats.hints["fallback-poll" if not healthy else "reconcile"] += 1
        else:
            self.stats.wakeups += 1
            self.stats.hints.update(wake.sources)
        self.stats.note_latest(wake.max_snapshot_id)
        return wake
