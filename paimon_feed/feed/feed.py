"""ChangeFeed: the facade over the feed's roles (the package docstring, :mod:`paimon_feed.feed`,
says how a feed is used and what it guarantees).

The roles: :mod:`~paimon_feed.feed.config` checks the options, :mod:`~paimon_feed.feed.planning`
plans batches onto the bounded queue, :mod:`~paimon_feed.feed.consuming` takes them off it and
keeps the commits, :mod:`~paimon_feed.feed.lifecycle` holds the notifier, subscription and
planning task, and :mod:`~paimon_feed.feed.stats` counts.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from paimon_feed._units import Duration
from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import FeedClosedError
from paimon_feed.feed.config import FeedOptions, check_duration, check_notifier, check_table, suggest_keywords
from paimon_feed.feed.consuming import Consuming
from paimon_feed.feed.lifecycle import Lifecycle
from paimon_feed.feed.planning import Planning
from paimon_feed.feed.stats import FeedMetrics, FeedStats
from paimon_feed.feed.sync import SyncChangeFeed
from paimon_feed.notifiers import Notifier
from paimon_feed.planner import Planner
from paimon_feed.planner.planner import OverwritePolicy
from paimon_feed.progress import ExpiredPolicy, HistoryPolicy, Progress, Resumed
from paimon_feed.start import StartSpec

__all__ = ["ChangeFeed"]

logger = logging.getLogger("paimon_feed.feed")


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
        reconcile_interval: time between safety checks while push is healthy: seconds, or a
            duration such as ``"500ms"``, ``"2s"``, ``"1m"`` or a ``timedelta`` (every duration
            argument takes these).
        poll_interval: time between checks when polling (``notifier="poll"`` or fallback).
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

    @suggest_keywords
    def __init__(
        self,
        table: Any,
        *,
        consumer_id: str | None = None,
        start: StartSpec = "latest-full",
        end: int | str | None = None,
        notifier: str | Notifier = "auto",
        reconcile_interval: Duration = 60.0,
        poll_interval: Duration = 1.0,
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
        options = FeedOptions(
            consumer_id=consumer_id, start=start, end=end, notifier=notifier,
            reconcile_interval=check_duration("reconcile_interval", reconcile_interval),
            poll_interval=check_duration("poll_interval", poll_interval),
            include_row_kind=include_row_kind, projection=projection, predicate=predicate,
            buckets=buckets, max_pending=max_pending, catch_up_threshold=catch_up_threshold,
            auto_commit=auto_commit, on_expired=on_expired, sqs_queue_url=sqs_queue_url,
            overwrite=overwrite, on_history_rewritten=on_history_rewritten,
        )
        self._planner = Planner(
            table, projection=options.projection, predicate=options.predicate,
            buckets=options.buckets, include_row_kind=options.include_row_kind,
            catch_up_threshold=options.catch_up_threshold, overwrite=options.overwrite,
        )
        # Before any row: a start (or expiry policy) whose batch cannot be read exactly.
        self._planner.check_start(options.start_position)
        if options.on_expired == "latest-full":
            self._planner.check_start("latest-full")
        self.options = options  # the checked options, frozen
        self.table = table
        self.table_name = self._planner.table_name
        self.consumer_id = consumer_id
        checkpoint = CheckpointStore.for_table(table, consumer_id) if consumer_id is not None else None
        self._progress = Progress(
            self._planner, checkpoint, end=options.end_snapshot, on_expired=options.on_expired,
            on_history_rewritten=options.on_history_rewritten,
        )
        check_notifier(options.notifier, self._planner.table_url, options.notifier_options)
        self._started = False
        self._closed = False
        self._stats = FeedStats()
        self._consuming = Consuming(
            table_name=self.table_name, consumer_id=consumer_id, progress=self._progress,
            has_checkpoint=checkpoint is not None, stats=self._stats,
            max_pending=options.max_pending, auto_commit=options.auto_commit,
        )
        planning = Planning(
            table_name=self.table_name, planner=self._planner, progress=self._progress,
            start_spec=options.start_position, end=options.end_snapshot,
            max_pending=options.max_pending, reconcile_interval=options.reconcile_interval,
            poll_interval=options.poll_interval,
            stats=self._stats, on_rewound=self._consuming.rewound,
        )
        self._lifecycle = Lifecycle(
            table_name=self.table_name, table_url=self._planner.table_url,
            file_io=self._planner.file_io, notifier=options.notifier,
            notifier_options=options.notifier_options, planning=planning,
        )

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
        try:
            position = await self._lifecycle.open(self._consuming.open())
        except BaseException:
            await self.close()
            raise
        if self._closed:  # close() came from another task while this one started the feed
            raise FeedClosedError(f"feed for table {self.table_name} was closed while starting")
        logger.info(
            "feed for %s started (notifier=%s, consumer=%s, start=%s, end=%s)",
            self.table_name, self._lifecycle.source, self.consumer_id,
            self.options.start_position.to_spec(), self.options.end_snapshot,
        )
        if isinstance(position, Resumed) and position.from_checkpoint:
            self._consuming.resumed_at(position.next_snapshot_id)
        self._lifecycle.launch(position)

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
        self._consuming.close()
        await self._lifecycle.close()
        logger.info("feed for %s closed", self.table_name)

    def __del__(self) -> None:
        if getattr(self, "_started", False) and not getattr(self, "_closed", True):
            warnings.warn(
                f"unclosed ChangeFeed for table {self.table_name}; use 'async with'",
                ResourceWarning,
                stacklevel=1,
            )
            self._lifecycle.release_abandoned()

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
        return await self._consuming.next()

    def on_delivery(self, listener: Callable[[FeedBatch, float], None]) -> Callable[[], None]:
        """Call ``listener(batch, latency_seconds)`` as each batch is handed to the consumer.

        ``latency_seconds`` runs from the batch's commit time to its delivery, the figure
        :meth:`metrics` summarises as p50/p99 over recent batches; a listener sees every batch,
        for a histogram (:mod:`paimon_feed.metrics` uses it). It runs on the feed's event loop
        and must not block. Returns a function that removes the listener.
        """
        return self._consuming.on_delivery(listener)

    async def commit(self, batch: FeedBatch) -> None:
        """Record that ``batch`` (and every batch before it) is processed.

        Stores ``batch.next_snapshot_id`` in the consumer file. Committing an older batch than
        the last committed one does nothing: a checkpoint never moves backwards. Without a
        ``consumer_id`` this only updates :meth:`metrics`.
        """
        await self._consuming.commit(batch)

    def sync(self) -> SyncChangeFeed:
        """A blocking iterator over this feed for non-async code (runs its own event loop)."""
        return SyncChangeFeed(self)

    def metrics(self) -> FeedMetrics:
        """Progress, lag, latency and where wake-ups came from."""
        consuming = self._consuming
        return self._stats.metrics(
            table=self.table_name,
            consumer_id=self.consumer_id,
            notifier=self._lifecycle.source,
            delivered=consuming.last_delivered,
            committed_next=consuming.committed_next,
            lag_ms=consuming.lag_ms(),
            queue_depth=consuming.queue_depth(),
            expired_restarts=self._progress.expired_restarts,
            history_rewrites=self._progress.history_rewrites,
            overwrites_skipped=self._planner.overwrites_skipped,
        )
