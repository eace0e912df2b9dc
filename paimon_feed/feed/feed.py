"""ChangeFeed: the facade over the planning task, the bounded queue and the checkpoint (the
package docstring, :mod:`paimon_feed.feed`, says how a feed is used and what it guarantees)."""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import ConfigurationError, FeedClosedError
from paimon_feed.feed.config import (
    check_buckets,
    check_names,
    check_number,
    check_predicate,
    check_table,
    check_type,
)
from paimon_feed.feed.planning import Closed, Done, Failure, Planning
from paimon_feed.feed.stats import FeedMetrics, FeedStats
from paimon_feed.notifiers import Notifier, Subscription, create_notifier
from paimon_feed.planner import Planner
from paimon_feed.planner.planner import OverwritePolicy
from paimon_feed.progress import (
    ExpiredPolicy,
    HistoryPolicy,
    Progress,
    Resumed,
    check_policies,
)
from paimon_feed.start import StartSpec, parse_end, parse_start

if TYPE_CHECKING:
    from paimon_feed.feed.sync import SyncChangeFeed

__all__ = ["ChangeFeed"]

logger = logging.getLogger("paimon_feed.feed")


_releasing: set[asyncio.Task[None]] = set()  # notifier closes of abandoned feeds, held until done


def _release_abandoned(
    task: asyncio.Task[None], subscription: Subscription | None, notifier: Notifier | None
) -> None:
    """Stop what a collected, unclosed feed still holds; runs on that feed's event loop."""
    task.cancel()
    if subscription is not None:
        subscription.close()
    if notifier is not None:
        task = asyncio.get_running_loop().create_task(notifier.close())
        _releasing.add(task)
        task.add_done_callback(_releasing.discard)


class ChangeFeed:
    """Stream a Paimon table's changes as :class:`FeedBatch` es, woken by storage events.

    Args:
        table: a pypaimon ``FileStoreTable`` (``catalog.get_table("db.t")``).
        consumer_id: checkpoint progress in ``{table}/consumer/consumer-{id}``; a stored
            checkpoint wins over ``start``.
        start: where a consumer without a checkpoint begins (see :mod:`paimon_feed.start`).
        end: last snapshot id to deliver (inclusive); the feed then ends by itself.
        notifier: ``"auto"``, ``"local"``, ``"poll"``, ``"sqs"`` or a :class:`Notifier` instance
            (which the caller owns and may share between feeds).
        reconcile_interval: seconds between safety checks while push is healthy.
        poll_interval: seconds between checks when polling (``notifier="poll"`` or fallback).
        include_row_kind: add a ``_row_kind`` column (``+I``/``-U``/``+U``/``-D``).
        projection, predicate, buckets: passed to pypaimon's planning and reading.
        max_pending: batches planned ahead of the consumer at most.
        catch_up_threshold: more snapshots than this waiting are read as one catch-up batch.
        auto_commit: commit each batch when the consumer asks for the next one.
        on_expired: what to do if the next snapshot expired before it was read: ``"error"``
            (raise :class:`SnapshotExpiredError`), ``"earliest"`` or ``"latest-full"`` (log
            the gap and restart there).
        on_history_rewritten: what to do if the table no longer continues the history already
            delivered (rolled back, dropped and re-created, a branch fast-forwarded over it):
            ``"error"`` (raise :class:`HistoryRewrittenError`) or ``"latest-full"`` (log it,
            count it in :meth:`metrics`, and deliver the whole table as it is now as a ``full``
            batch, then its changes).
        overwrite: what to do with OVERWRITE snapshots (insert overwrite, truncate, dropped
            partitions): ``"skip"`` them (Java Paimon's default; logged and counted in
            :meth:`metrics`), or ``"read"`` them as ``overwrite`` batches: removed rows as ``-D``, added rows as ``+I``
            (needs ``include_row_kind=True``).
        sqs_queue_url: the queue ``notifier="auto"``/``"sqs"`` uses for ``s3://`` tables
            (default ``$PAIMON_FEED_SQS_QUEUE_URL``).
    """

    def __init__(
        self,
        table: Any,
        *,
        consumer_id: str | None = None,
        start: StartSpec = "latest-full",
        end: int | str | None = None,
        notifier: str | Notifier = "auto",
        reconcile_interval: float = 60.0,
        poll_interval: float = 1.0,
        include_row_kind: bool = False,
        projection: Sequence[str] | None = None,
        predicate: Any = None,
        buckets: Iterable[int] | None = None,
        max_pending: int = 8,
        catch_up_threshold: int = 10,
        auto_commit: bool = False,
        on_expired: ExpiredPolicy = "error",
        sqs_queue_url: str | None = None,
        overwrite: OverwritePolicy = "skip",
        on_history_rewritten: HistoryPolicy = "error",
    ) -> None:
        check_table(table)
        check_type("consumer_id", consumer_id, str, "a string such as 'orders-etl'", optional=True)
        check_number("reconcile_interval", reconcile_interval, "seconds", minimum=0.0)
        check_number("poll_interval", poll_interval, "seconds", minimum=0.0)
        check_type("include_row_kind", include_row_kind, bool, "True or False")
        check_type("auto_commit", auto_commit, bool, "True or False")
        projection = check_names("projection", projection)
        check_predicate(predicate)
        buckets = check_buckets(buckets)
        check_type("max_pending", max_pending, int, "a whole number of batches")
        check_type("catch_up_threshold", catch_up_threshold, int, "a whole number of snapshots")
        check_type("sqs_queue_url", sqs_queue_url, str, "the queue's URL", optional=True)
        if max_pending < 1:
            raise ConfigurationError(f"max_pending must be >= 1, got {max_pending}")
        check_policies(on_expired, on_history_rewritten)
        self._start_spec = parse_start(start)
        self._end = parse_end(end)
        self._planner = Planner(
            table,
            projection=projection,
            predicate=predicate,
            buckets=buckets,
            include_row_kind=include_row_kind,
            catch_up_threshold=catch_up_threshold,
            overwrite=overwrite,
        )
        # Before any row: a start (or expiry policy) whose batch cannot be read exactly.
        self._planner.check_start(self._start_spec)
        if on_expired == "latest-full":
            self._planner.check_start("latest-full")
        self.table = table
        self.table_name = self._planner.table_name
        self.consumer_id = consumer_id
        self._checkpoint = (
            CheckpointStore.for_table(table, consumer_id) if consumer_id is not None else None
        )
        self._progress = Progress(
            self._planner, self._checkpoint, end=self._end, on_expired=on_expired,
            on_history_rewritten=on_history_rewritten,
        )
        self._notifier_spec = notifier
        self._notifier_options = {"poll_interval": poll_interval, "sqs_queue_url": sqs_queue_url}
        if isinstance(notifier, str):
            # Fail on a bad name now, not in the background task.
            create_notifier(notifier, self._planner.table_url, **self._notifier_options)
        elif not isinstance(notifier, Notifier):
            raise ConfigurationError(
                f"notifier must be 'auto', 'local', 'poll', 'sqs' or a Notifier, got {notifier!r}"
            )
        self.reconcile_interval = reconcile_interval
        self.poll_interval = poll_interval
        self.max_pending = max_pending
        self.auto_commit = auto_commit
        self.on_expired = on_expired
        self.on_history_rewritten = on_history_rewritten

        self._notifier: Notifier | None = None
        self._owns_notifier = False
        self._subscription: Subscription | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False
        self._finished = False
        self._last_yielded: FeedBatch | None = None
        self._commit_lock: asyncio.Lock | None = None
        self._committed_next: int | None = None
        self._last_delivered: FeedBatch | None = None
        self._stats = FeedStats()
        self._planning = Planning(
            table_name=self.table_name, planner=self._planner, progress=self._progress,
            start_spec=self._start_spec, end=self._end, max_pending=max_pending,
            reconcile_interval=reconcile_interval, poll_interval=poll_interval,
            stats=self._stats, on_rewound=self._rewound,
        )
        self._delivery_listeners: list[Callable[[FeedBatch, float], None]] = []

    # lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> ChangeFeed:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Subscribe to the notifier and start planning. Called by ``async with``."""
        if self._closed:
            raise FeedClosedError(f"feed for table {self.table_name} is closed; create a new one")
        if self._started:
            return
        self._started = True
        self._queue = asyncio.Queue(maxsize=self.max_pending)
        self._commit_lock = asyncio.Lock()
        if isinstance(self._notifier_spec, Notifier):
            self._notifier = self._notifier_spec
        else:
            self._notifier = create_notifier(
                self._notifier_spec, self._planner.table_url, **self._notifier_options
            )
            self._owns_notifier = True
        self._subscription = self._notifier.subscribe(
            self._planner.table_url, file_io=self._planner.file_io
        )
        self._planning.attach(self._notifier, self._subscription, self._queue)
        await self._notifier.ready()
        try:
            # Resolve the position now, so "latest" means the latest when the feed started.
            position = await self._planning.initial_position()
        except BaseException:
            await self.close()
            raise
        if self._closed:  # close() came from another task while this one started the feed
            raise FeedClosedError(f"feed for table {self.table_name} was closed while starting")
        logger.info(
            "feed for %s started (notifier=%s, consumer=%s, start=%s, end=%s)",
            self.table_name, self._notifier.source, self.consumer_id,
            self._start_spec.to_spec(), self._end,
        )
        if isinstance(position, Resumed) and position.from_checkpoint:
            self._committed_next = position.next_snapshot_id
        self._task = asyncio.get_running_loop().create_task(
            self._planning.run(position), name=f"paimon-feed-{self.table_name}"
        )

    async def close(self) -> None:
        """Stop planning and release the subscription. Idempotent; uncommitted batches stay
        uncommitted (they are delivered again after a restart).

        Consumers waiting in ``__anext__`` (``async for``) when this is called end with
        ``StopAsyncIteration``, at once; later calls of ``__anext__`` raise
        :class:`FeedClosedError`. Must run on the feed's event loop (any task of it).
        """
        if self._closed:
            return
        self._closed = True
        if self._queue is not None and not self._queue.full():
            # A full queue has no consumer waiting on it; otherwise this wakes them all
            # (each one that takes the sentinel puts it back for the next).
            self._queue.put_nowait(Closed())
        try:
            if self._task is not None:
                await cancel_and_wait([self._task])
        finally:
            if self._subscription is not None:
                self._subscription.close()
            if self._owns_notifier and self._notifier is not None:
                await self._notifier.close()
        logger.info("feed for %s closed", self.table_name)

    def __del__(self) -> None:
        if getattr(self, "_started", False) and not getattr(self, "_closed", True):
            warnings.warn(
                f"unclosed ChangeFeed for table {self.table_name}; use 'async with'",
                ResourceWarning,
                stacklevel=1,
            )
            # The planning task holds no reference to the feed, so a feed can be collected
            # while its loop runs: stop the task there, and what it watched.
            task = getattr(self, "_task", None)
            loop = task.get_loop() if task is not None else None
            if loop is not None and not loop.is_closed():
                notifier = self._notifier if self._owns_notifier else None
                loop.call_soon_threadsafe(_release_abandoned, task, self._subscription, notifier)

    # consuming ---------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[FeedBatch]:
        return self

    async def __anext__(self) -> FeedBatch:
        """The next batch; ``StopAsyncIteration`` at the end snapshot or when ``close()`` is
        called while waiting; :class:`FeedClosedError` if called after ``close()``."""
        if self._closed:
            raise FeedClosedError(f"feed for table {self.table_name} is closed")
        if not self._started:
            try:
                await self.start()
            except FeedClosedError:
                if self._closed:  # closed by another task while starting
                    raise StopAsyncIteration from None
                raise
        if self.auto_commit and self._last_yielded is not None:
            await self.commit(self._last_yielded)
        if self._finished or self._closed:
            raise StopAsyncIteration
        queue = self._queue
        assert queue is not None  # start() made it
        item = await queue.get()
        if isinstance(item, Closed):
            if not queue.full():
                queue.put_nowait(item)  # for the next waiting consumer
            raise StopAsyncIteration
        if self._closed:
            raise StopAsyncIteration  # planned before close(), left uncommitted
        if isinstance(item, Done):
            self._finished = True
            raise StopAsyncIteration
        if isinstance(item, Failure):
            self._finished = True
            raise item.error
        previous = self._last_delivered
        if previous is not None and previous.schema_id != item.schema_id:
            self._stats.schema_changes += 1
            logger.warning(
                "table %s: schema changed from %d to %d at snapshot %d; batches now carry "
                "columns %s", self.table_name, previous.schema_id, item.schema_id,
                item.first_snapshot_id, item.schema.names if item.schema is not None else "?",
            )
        assert isinstance(item, FeedBatch)
        self._last_yielded = item
        self._last_delivered = item
        self._stats.batches_delivered += 1
        self._stats.snapshots_delivered += item.snapshot_count
        latency_ms = max(0.0, time.time() * 1000 - item.commit_time_ms)
        self._stats.latencies_ms.append(latency_ms)
        for listener in self._delivery_listeners:
            listener(item, latency_ms / 1000)
        return item

    def on_delivery(self, listener: Callable[[FeedBatch, float], None]) -> Callable[[], None]:
        """Call ``listener(batch, latency_seconds)`` as each batch is handed to the consumer.

        ``latency_seconds`` runs from the batch's commit time to its delivery, the figure
        :meth:`metrics` summarises as p50/p99 over recent batches; a listener sees every batch,
        for a histogram (:mod:`paimon_feed.metrics` uses it). It runs on the feed's event loop
        and must not block. Returns a function that removes the listener.
        """
        self._delivery_listeners.append(listener)
        return lambda: self._delivery_listeners.remove(listener)

    async def commit(self, batch: FeedBatch) -> None:
        """Record that ``batch`` (and every batch before it) is processed.

        Stores ``batch.next_snapshot_id`` in the consumer file. Committing an older batch than
        the last committed one does nothing: a checkpoint never moves backwards. Without a
        ``consumer_id`` this only updates :meth:`metrics`.
        """
        if batch.table != self.table_name:
            raise ConfigurationError(
                f"batch of table {batch.table} committed to the feed of {self.table_name}"
            )
        assert self._commit_lock is not None, "commit() needs a started feed"
        async with self._commit_lock:
            target = batch.next_snapshot_id
            if self._committed_next is not None and target <= self._committed_next:
                return
            if self._checkpoint is not None:
                # advance() never moves the file backwards, even with another writer of the
                # same consumer id (compare-and-swap on S3, a lock on local disks).
                moved = await asyncio.to_thread(self._progress.commit, target, batch.mark)
                if not moved:
                    logger.warning(
                        "consumer %s of %s: checkpoint already at or past snapshot %d "
                        "(another writer of this consumer id?); left as it is",
                        self.consumer_id, self.table_name, target,
                    )
            self._committed_next = target

    def sync(self) -> SyncChangeFeed:
        """A blocking iterator over this feed for non-async code (runs its own event loop)."""
        from paimon_feed.feed.sync import SyncChangeFeed

        return SyncChangeFeed(self)

    def metrics(self) -> FeedMetrics:
        """Progress, lag, latency and where wake-ups came from."""
        delivered = self._last_delivered
        delivered_id = delivered.snapshot_id if delivered else None
        stats = self._stats
        latest = stats.latest_known
        lag_snapshots = max(0, (latest or 0) - (delivered_id or 0)) if latest is not None else 0
        lag_ms = 0.0
        if self._queue is not None and not self._queue.empty():
            # A read-only peek at the oldest batch; typeshed does not declare Queue._queue.
            oldest = self._queue._queue[0]  # type: ignore[attr-defined]  # noqa: SLF001
            if isinstance(oldest, FeedBatch):
                lag_ms = max(0.0, time.time() * 1000 - oldest.commit_time_ms)
        p50, p99 = stats.latency_percentiles()
        return FeedMetrics(
            table=self.table_name,
            consumer_id=self.consumer_id,
            mode="fallback-poll" if stats.in_fallback else "push",
            notifier=self._notifier.source if self._notifier else str(self._notifier_spec),
            push_healthy=not stats.in_fallback,
            batches_planned=stats.batches_planned,
            batches_delivered=stats.batches_delivered,
            snapshots_delivered=stats.snapshots_delivered,
            last_delivered_snapshot_id=delivered_id,
            committed_next_snapshot_id=self._committed_next,
            latest_known_snapshot_id=latest,
            lag_snapshots=lag_snapshots,
            lag_ms=lag_ms,
            latency_ms_p50=p50,
            latency_ms_p99=p99,
            queue_depth=self._queue.qsize() if self._queue is not None else 0,
            hints_by_source=dict(stats.hints),
            wakeups=stats.wakeups,
            reconciles=stats.reconciles,
            fallbacks=stats.fallbacks,
            storage_retries=stats.storage_retries,
            expired_restarts=self._progress.expired_restarts,
            history_rewrites=self._progress.history_rewrites,
            schema_changes=stats.schema_changes,
            current_schema_id=delivered.schema_id if delivered else None,
            overwrites_skipped=self._planner.overwrites_skipped,
        )

    def _rewound(self) -> None:
        """The history was rewritten and planning restarted: the next commit may move the
        checkpoint backwards (see :meth:`Progress.commit`)."""
        self._committed_next = None
