"""The consumer side of a :class:`~paimon_feed.feed.ChangeFeed`: take batches off the bounded
queue the planning task fills, count and announce each delivery, and keep the commit
bookkeeping (what is committed, never backwards).

The counterpart of :mod:`paimon_feed.feed.planning`; the two share only the queue and the
:class:`~paimon_feed.feed.stats.FeedStats`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from paimon_feed.batch import FeedBatch
from paimon_feed.errors import ConfigurationError
from paimon_feed.feed.planning import Closed, Done, Failure
from paimon_feed.feed.stats import FeedStats
from paimon_feed.progress import Progress

__all__ = ["Consuming"]

logger = logging.getLogger("paimon_feed.feed")


class Consuming:
    """One feed's queue, deliveries and commits (see the module docstring)."""

    def __init__(
        self,
        *,
        table_name: str,
        consumer_id: str | None,
        progress: Progress,
        has_checkpoint: bool,
        stats: FeedStats,
        max_pending: int,
        auto_commit: bool,
    ) -> None:
        self.table_name = table_name
        self.consumer_id = consumer_id
        self._progress = progress
        self._has_checkpoint = has_checkpoint
        self._stats = stats
        self._max_pending = max_pending
        self.auto_commit = auto_commit
        self.queue: asyncio.Queue[Any] | None = None
        self._commit_lock: asyncio.Lock | None = None
        self.closed = False
        self._finished = False
        self._last_yielded: FeedBatch | None = None
        self.last_delivered: FeedBatch | None = None
        self.committed_next: int | None = None
        self.listeners: list[Callable[[FeedBatch, float], None]] = []

    def open(self) -> asyncio.Queue[Any]:
        """The queue, made on the feed's event loop when the feed starts."""
        self.queue = asyncio.Queue(maxsize=self._max_pending)
        self._commit_lock = asyncio.Lock()
        return self.queue

    def close(self) -> None:
        """Release every consumer waiting for a batch (they end with ``StopAsyncIteration``)."""
        self.closed = True
        if self.queue is not None and not self.queue.full():
            # A full queue has no consumer waiting on it; otherwise this wakes them all
            # (each one that takes the sentinel puts it back for the next).
            self.queue.put_nowait(Closed())

    async def next(self) -> FeedBatch:
        """The next batch, once the feed has started; see :meth:`ChangeFeed.__anext__`."""
        if self.auto_commit and self._last_yielded is not None:
            await self.commit(self._last_yielded)
        if self._finished or self.closed:
            raise StopAsyncIteration
        queue = self.queue
        assert queue is not None  # open() made it
        item = await queue.get()
        if isinstance(item, Closed):
            if not queue.full():
                queue.put_nowait(item)  # for the next waiting consumer
            raise StopAsyncIteration
        if self.closed:
            raise StopAsyncIteration  # planned before close(), left uncommitted
        if isinstance(item, Done):
            self._finished = True
            raise StopAsyncIteration
        if isinstance(item, Failure):
            self._finished = True
            raise item.error
        assert isinstance(item, FeedBatch)
        self._deliver(item)
        return item

    def _deliver(self, batch: FeedBatch) -> None:
        previous = self.last_delivered
        if previous is not None and previous.schema_id != batch.schema_id:
            self._stats.schema_changes += 1
            logger.warning(
                "table %s: schema changed from %d to %d at snapshot %d; batches now carry "
                "columns %s", self.table_name, previous.schema_id, batch.schema_id,
                batch.first_snapshot_id, batch.schema.names if batch.schema is not None else "?",
            )
        self._last_yielded = batch
        self.last_delivered = batch
        self._stats.batches_delivered += 1
        self._stats.snapshots_delivered += batch.snapshot_count
        latency_ms = max(0.0, time.time() * 1000 - batch.commit_time_ms)
        self._stats.latencies_ms.append(latency_ms)
        for listener in self.listeners:
            listener(batch, latency_ms / 1000)

    def on_delivery(self, listener: Callable[[FeedBatch, float], None]) -> Callable[[], None]:
        """Add a delivery listener; returns a function that removes it."""
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    async def commit(self, batch: FeedBatch) -> None:
        """Store ``batch.next_snapshot_id``, unless a later batch is committed already; see
        :meth:`ChangeFeed.commit`."""
        if batch.table != self.table_name:
            raise ConfigurationError(
                f"batch of table {batch.table} committed to the feed of {self.table_name}"
            )
        assert self._commit_lock is not None, "commit() needs a started feed"
        async with self._commit_lock:
            target = batch.next_snapshot_id
            if self.committed_next is not None and target <= self.committed_next:
                return
            if self._has_checkpoint:
                # advance() never moves the file backwards, even with another writer of the
                # same consumer id (compare-and-swap on S3, a lock on local disks).
                moved = await asyncio.to_thread(self._progress.commit, target, batch.mark)
                if not moved:
                    logger.warning(
                        "consumer %s of %s: checkpoint already at or past snapshot %d "
                        "(another writer of this consumer id?); left as it is",
                        self.consumer_id, self.table_name, target,
                    )
            self.committed_next = target

    def resumed_at(self, next_snapshot_id: int) -> None:
        """The feed resumed from its checkpoint: that much is committed already."""
        self.committed_next = next_snapshot_id

    def rewound(self) -> None:
        """The history was rewritten and planning restarted: the next commit may move the
        checkpoint backwards (see :meth:`Progress.commit`)."""
        self.committed_next = None

    def lag_ms(self) -> float:
        """How long the oldest batch waiting on the queue has been committed to the table."""
        if self.queue is None or self.queue.empty():
            return 0.0
        # A read-only peek at the oldest batch; typeshed does not declare Queue._queue.
        oldest = self.queue._queue[0]  # type: ignore[attr-defined]  # noqa: SLF001
        if not isinstance(oldest, FeedBatch):
            return 0.0
        return max(0.0, time.time() * 1000 - oldest.commit_time_ms)

    def queue_depth(self) -> int:
        return self.queue.qsize() if self.queue is not None else 0
