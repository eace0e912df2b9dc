"""ChangeFeed: the async facade that ties a notifier, the planner, a bounded queue and checkpoints.

::

    async with ChangeFeed(table, consumer_id="orders-etl") as feed:
        async for batch in feed:
            process(batch.to_arrow())
            await feed.commit(batch)

A background task plans batches whenever the notifier wakes it (or the ``reconcile_interval``
safety check fires) and puts them on a queue of at most ``max_pending`` batches, so a slow
consumer slows planning and memory stays flat. Errors raised in the background are parked and
re-raised at the consumer's next iteration, after every batch planned before them.

Closing: ``close()`` may come from any task (a shutdown handler). A consumer waiting for a batch
at that moment ends its ``async for`` normally (``StopAsyncIteration``); a call made after
``close()`` raises :class:`FeedClosedError`. A started feed that is dropped without ``close()``
warns (``ResourceWarning``) and, if its event loop still runs, releases its subscription and
notifier there.

Commit semantics: ``commit(batch)`` stores ``batch.next_snapshot_id`` (the first snapshot *not*
processed) in Paimon's consumer file. Only committed progress survives a restart, so a crash
repeats at most the batches delivered but not committed (at-least-once), and never skips one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import statistics
import threading
import time
import warnings
import weakref
from collections import Counter, deque
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, Sequence

from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import (
    ConfigurationError,
    FeedClosedError,
    HistoryRewrittenError,
    SnapshotExpiredError,
    StorageError,
)
from paimon_feed.notifiers import Notifier, Subscription, create_notifier
from paimon_feed.notifiers.base import cancel_and_wait
from paimon_feed.planner import Planned, Planner
from paimon_feed.planner.planner import OverwritePolicy
from paimon_feed.progress import (
    RETRY,
    ExpiredPolicy,
    HistoryPolicy,
    Progress,
    Resumed,
    check_policies,
)
from paimon_feed.start import StartSpec, parse_end, parse_start
from paimon_feed.tables import check_data_table, check_table_endpoint

__all__ = ["ChangeFeed", "FeedMetrics", "SyncChangeFeed"]

logger = logging.getLogger(__name__)

_LATENCY_WINDOW = 1024


@dataclass(frozen=True)
class FeedMetrics:
    """A snapshot of a feed's state. Times in milliseconds; counters since the feed started."""

    table: str
    consumer_id: str | None
    mode: str
    notifier: str
    push_healthy: bool
    batches_planned: int
    batches_delivered: int
    snapshots_delivered: int
    last_delivered_snapshot_id: int | None
    committed_next_snapshot_id: int | None
    latest_known_snapshot_id: int | None
    lag_snapshots: int
    lag_ms: float
    latency_ms_p50: float | None
    latency_ms_p99: float | None
    queue_depth: int
    hints_by_source: dict[str, int] = field(default_factory=dict)
    wakeups: int = 0
    reconciles: int = 0
    fallbacks: int = 0
    storage_retries: int = 0
    expired_restarts: int = 0
    history_rewrites: int = 0
    schema_changes: int = 0
    current_schema_id: int | None = None
    overwrites_skipped: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


class _Done:
    """Queue sentinel: the feed reached its end snapshot."""


class _Closed:
    """Queue sentinel: ``close()`` was called; wakes consumers waiting for a batch."""


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_releasing: set[asyncio.Task] = set()  # notifier closes of abandoned feeds, held until done


def _release_abandoned(subscription: Subscription | None, notifier: Notifier | None) -> None:
    """Stop what a collected, unclosed feed still holds; runs on that feed's event loop."""
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
        _check_table(table)
        _check_type("consumer_id", consumer_id, str, "a string such as 'orders-etl'", optional=True)
        _check_number("reconcile_interval", reconcile_interval, "seconds", minimum=0.0)
        _check_number("poll_interval", poll_interval, "seconds", minimum=0.0)
        _check_type("include_row_kind", include_row_kind, bool, "True or False")
        _check_type("auto_commit", auto_commit, bool, "True or False")
        projection = _check_names("projection", projection)
        _check_predicate(predicate)
        if buckets is not None:
            _check_type("buckets", buckets, Iterable, "bucket ids such as [0, 1]")
            buckets = list(buckets)
            for bucket in buckets:
                _check_type("buckets", bucket, int, "bucket ids such as [0, 1]")
        _check_type("max_pending", max_pending, int, "a whole number of batches")
        _check_type("catch_up_threshold", catch_up_threshold, int, "a whole number of snapshots")
        _check_type("sqs_queue_url", sqs_queue_url, str, "the queue's URL", optional=True)
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
        self._queue: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None
        self._started = False
        self._closed = False
        self._finished = False
        self._last_yielded: FeedBatch | None = None
        self._commit_lock: asyncio.Lock | None = None
        self._position: Resumed | SnapshotExpiredError | HistoryRewrittenError | None = None

        self._committed_next: int | None = None
        self._latest_known: int | None = None
        self._last_delivered: FeedBatch | None = None
        self._batches_planned = 0
        self._batches_delivered = 0
        self._snapshots_delivered = 0
        self._hints: Counter[str] = Counter()
        self._wakeups = 0
        self._reconciles = 0
        self._fallbacks = 0
        self._storage_retries = 0
        self._schema_changes = 0
        self._expiry_checked_at = time.monotonic()
        self._in_fallback = False
        self._push_failures_seen = 0
        self._latencies_ms: deque[float] = deque(maxlen=_LATENCY_WINDOW)
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
        await self._notifier.ready()
        try:
            # Resolve the position now, so "latest" means the latest when the feed started.
            self._position = await self._initial_position()
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
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"paimon-feed-{self.table_name}"
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
            self._queue.put_nowait(_Closed())
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
            # Only a feed whose planning task ended (its end snapshot, a failure) can be
            # collected while its loop runs; its notifier would keep watching forever.
            task = getattr(self, "_task", None)
            loop = task.get_loop() if task is not None else None
            if loop is not None and not loop.is_closed():
                notifier = self._notifier if self._owns_notifier else None
                loop.call_soon_threadsafe(_release_abandoned, self._subscription, notifier)

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
        item = await self._queue.get()
        if isinstance(item, _Closed):
            if not self._queue.full():
                self._queue.put_nowait(item)  # for the next waiting consumer
            raise StopAsyncIteration
        if self._closed:
            raise StopAsyncIteration  # planned before close(), left uncommitted
        if isinstance(item, _Done):
            self._finished = True
            raise StopAsyncIteration
        if isinstance(item, _Failure):
            self._finished = True
            raise item.error
        previous = self._last_delivered
        if previous is not None and previous.schema_id != item.schema_id:
            self._schema_changes += 1
            logger.warning(
                "table %s: schema changed from %d to %d at snapshot %d; batches now carry "
                "columns %s", self.table_name, previous.schema_id, item.schema_id,
                item.first_snapshot_id, item.schema.names if item.schema is not None else "?",
            )
        self._last_yielded = item
        self._last_delivered = item
        self._batches_delivered += 1
        self._snapshots_delivered += item.snapshot_count
        latency_ms = max(0.0, time.time() * 1000 - item.commit_time_ms)
        self._latencies_ms.append(latency_ms)
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
        return SyncChangeFeed(self)

    def metrics(self) -> FeedMetrics:
        """Progress, lag, latency and where wake-ups came from."""
        delivered = self._last_delivered
        delivered_id = delivered.snapshot_id if delivered else None
        latest = self._latest_known
        lag_snapshots = max(0, (latest or 0) - (delivered_id or 0)) if latest is not None else 0
        lag_ms = 0.0
        if self._queue is not None and not self._queue.empty():
            oldest = self._queue._queue[0]  # noqa: SLF001 - read-only peek at the oldest batch
            if isinstance(oldest, FeedBatch):
                lag_ms = max(0.0, time.time() * 1000 - oldest.commit_time_ms)
        latencies = sorted(self._latencies_ms)
        return FeedMetrics(
            table=self.table_name,
            consumer_id=self.consumer_id,
            mode="fallback-poll" if self._in_fallback else "push",
            notifier=self._notifier.source if self._notifier else str(self._notifier_spec),
            push_healthy=not self._in_fallback,
            batches_planned=self._batches_planned,
            batches_delivered=self._batches_delivered,
            snapshots_delivered=self._snapshots_delivered,
            last_delivered_snapshot_id=delivered_id,
            committed_next_snapshot_id=self._committed_next,
            latest_known_snapshot_id=latest,
            lag_snapshots=lag_snapshots,
            lag_ms=lag_ms,
            latency_ms_p50=statistics.median(latencies) if latencies else None,
            latency_ms_p99=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
            if latencies
            else None,
            queue_depth=self._queue.qsize() if self._queue is not None else 0,
            hints_by_source=dict(self._hints),
            wakeups=self._wakeups,
            reconciles=self._reconciles,
            fallbacks=self._fallbacks,
            storage_retries=self._storage_retries,
            expired_restarts=self._progress.expired_restarts,
            history_rewrites=self._progress.history_rewrites,
            schema_changes=self._schema_changes,
            current_schema_id=delivered.schema_id if delivered else None,
            overwrites_skipped=self._planner.overwrites_skipped,
        )

    # background planning -----------------------------------------------------------------

    async def _run(self) -> None:
        try:
            next_id = await self._first_batch(self._position)
            covered_from = next_id
            check_expiry = True
            detected_at = None
            hinted = None
            while True:
                if self._end is not None and next_id > self._end:
                    logger.info("feed for %s reached end snapshot %d", self.table_name, self._end)
                    await self._queue.put(_Done())
                    return
                self._subscription.expect(next_id)
                # Hints that came in while publishing are covered by this round.
                early = self._subscription.drain()
                if early.hinted:
                    self._hints.update(early.sources)
                    detected_at = detected_at or early.detected_at
                    hinted = max(hinted or 0, early.max_snapshot_id or 0) or None
                if hinted is not None and hinted < next_id:
                    # A new file for an id already read: a rollback or a re-created table
                    # writes those. The round checks that the history still holds.
                    hinted, check_expiry = None, True
                elif hinted is not None:
                    check_expiry = True  # a newer snapshot exists: a missing next one expired
                planned = await self._plan_round(
                    next_id, check_expiry, detected_at, hinted, covered_from
                )
                for batch in planned.batches:
                    await self._publish(batch)
                next_id = planned.next_snapshot_id
                covered_from = planned.covered_from if planned.covered_from is not None else next_id
                if self._end is not None and next_id > self._end:
                    continue
                if planned.more:
                    detected_at = None
                    if hinted is not None and next_id > hinted:
                        # The hinted snapshot is out; probe for more without an expiry check.
                        check_expiry, hinted = False, None
                    else:
                        check_expiry = True  # the limit or an error cut the round: maybe behind
                    continue
                wake = await self._wait(next_id)
                detected_at = wake.detected_at
                hinted = wake.max_snapshot_id
                if hinted is not None and hinted < next_id:
                    hinted, stale = None, True  # see above: the round checks the history
                else:
                    stale = False
                # After a hint of a newer snapshot, or at a safety check (a poller hints only
                # once the next snapshot exists, so an expired one would never be hinted).
                check_expiry = stale or (hinted is not None and hinted >= next_id) or (
                    wake.timed_out and not wake.hinted and self._expiry_check_due()
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.error("feed for %s failed: %s", self.table_name, exc)
            await self._queue.put(_Failure(exc))

    async def _initial_position(self) -> Resumed | SnapshotExpiredError | HistoryRewrittenError | None:
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
            self._committed_next = resumed.next_snapshot_id
            logger.info(
                "feed for %s resumes consumer %s at snapshot %d",
                self.table_name, self.consumer_id, resumed.next_snapshot_id,
            )
        return resumed

    async def _first_batch(
        self, position: Resumed | SnapshotExpiredError | HistoryRewrittenError | None
    ) -> int:
        """Publish the full batch the start asks for (waiting for a first commit if the table
        is empty) and return the snapshot id change planning starts at."""
        if isinstance(position, (SnapshotExpiredError, HistoryRewrittenError)):
            return await self._recover(position)
        if position is None:
            logger.info("table %s has no snapshot yet; waiting for its first commit", self.table_name)
            while position is None:
                self._subscription.expect(1)
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

    async def _plan_round(
        self,
        next_id: int,
        check_expiry: bool,
        detected_at: float | None,
        hinted: int | None,
        covered_from: int,
    ) -> Planned:
        if check_expiry:
            self._expiry_checked_at = time.monotonic()
        try:
            planned = await self._storage(
                lambda: self._planner.next_batches(
                    next_id,
                    self.max_pending,
                    end=self._end,
                    check_expiry=check_expiry,
                    detected_at=detected_at,
                    hinted_snapshot_id=hinted,
                    covered_from=covered_from,
                )
            )
            # After the round's reads: a rollback racing the round is seen too.
            await self._storage(
                lambda: self._progress.after_round(
                    next_id, planned.next_snapshot_id, checked=check_expiry
                )
            )
            return planned
        except (SnapshotExpiredError, HistoryRewrittenError) as exc:
            restart = await self._recover(exc)
            return Planned((), restart, covered_from=restart)

    def _expiry_check_due(self) -> bool:
        """Whether a safety check without a hint should also look for expiry (a few reads of
        snapshot hints): only while the feed learns of new snapshots by probing for the next one
        (a polling notifier, or fallback polling), at most once per reconcile interval.

        A notifier that announces every commit hints each new snapshot, and a hint newer than
        the expected one triggers the check; an idle feed's next snapshot does not exist yet,
        so it cannot have expired. Skipping it keeps an idle table at one read per interval.
        """
        if self._notifier.announces_commits and not self._in_fallback:
            return False
        return time.monotonic() - self._expiry_checked_at >= self.reconcile_interval

    async def _recover(self, exc: SnapshotExpiredError | HistoryRewrittenError) -> int:
        """Apply the policy for ``exc`` (raise it, or publish where the feed restarts) and
        return the snapshot id planning goes on from."""
        batch, next_id = await self._storage(lambda: self._progress.recover(exc))
        if isinstance(exc, HistoryRewrittenError):
            self._committed_next = None  # the next commit may move the checkpoint back
        if batch is not None:
            await self._publish(batch)
        return next_id

    async def _storage(self, call):
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
                self._storage_retries += 1
                await asyncio.sleep(delay)

    async def _publish(self, batch: FeedBatch) -> None:
        logger.debug(
            "feed for %s: batch %d..%d planned (%s, %d splits)", self.table_name,
            batch.first_snapshot_id, batch.snapshot_id, batch.kind, len(batch.splits),
        )
        self._batches_planned += 1
        self._note_latest(batch.snapshot_id)
        await self._queue.put(batch)

    def _note_latest(self, snapshot_id: int | None) -> None:
        if snapshot_id is not None and (self._latest_known is None or snapshot_id > self._latest_known):
            self._latest_known = snapshot_id

    async def _wait(self, next_id: int):
        self._subscription.expect(next_id)
        healthy = self._subscription.push_healthy
        # A watch that died and came back before this wait is a fallback too (counted by the
        # subscription), though the feed never polled in between.
        failures = self._subscription.push_failures - self._push_failures_seen
        self._push_failures_seen = self._subscription.push_failures
        if failures or (not healthy and not self._in_fallback):
            self._fallbacks += max(failures, 1)
            logger.warning(
                "feed for %s: push failed; %s", self.table_name,
                f"polling every {self.poll_interval:.1f}s until it recovers" if not healthy
                else "re-established; a safety read covers the gap",
            )
        elif healthy and self._in_fallback:
            logger.info("feed for %s: push recovered, back to push", self.table_name)
        self._in_fallback = not healthy
        if not healthy:
            timeout = self.poll_interval
        elif self._wakeups == 0 and self._reconciles == 0:
            # The first wait after start-up is short, so a commit that raced the notifier's
            # start is not left to the reconcile interval.
            timeout = min(self.poll_interval, self.reconcile_interval)
        else:
            timeout = self.reconcile_interval
        wake = await self._subscription.wait(timeout)
        if wake.timed_out and not wake.hinted:
            self._reconciles += 1
            self._hints["fallback-poll" if not healthy else "reconcile"] += 1
        else:
            self._wakeups += 1
            self._hints.update(wake.sources)
        self._note_latest(wake.max_snapshot_id)
        return wake


# argument checks: wrong-typed arguments are a ConfigurationError naming the argument, not an
# AttributeError or TypeError from deep inside planning.
def _check_type(
    name: str, value: Any, kind: type | tuple[type, ...], wanted: str, *, optional: bool = False
) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) and kind is not bool:
        ok = False  # True is an int to Python, not a count or an id
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ConfigurationError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}")


def _check_number(name: str, value: Any, unit: str, *, minimum: float) -> None:
    _check_type(name, value, (int, float), f"a number of {unit}")
    if not value > minimum:
        raise ConfigurationError(f"{name} must be > {minimum:g} {unit}, got {value!r}")


def _check_names(name: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    names = list(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    if names is None or not all(isinstance(item, str) for item in names):
        raise ConfigurationError(
            f"{name} must be a list of column names such as ['id', 'amount'], got {value!r}"
        )
    return names


def _check_table(table: Any) -> None:
    if not all(hasattr(table, attribute) for attribute in ("new_read_builder", "table_path", "file_io")):
        hint = (
            f"; open it first: paimon_feed.open_table(warehouse, {table!r})"
            if isinstance(table, str)
            else ""
        )
        raise ConfigurationError(
            f"table must be a pypaimon table (catalog.get_table('db.table')), got "
            f"{type(table).__name__} {table!r}{hint}"
        )
    check_data_table(table)
    check_table_endpoint(table)


def _check_predicate(predicate: Any) -> None:
    if predicate is not None and not all(
        hasattr(predicate, attribute) for attribute in ("method", "field", "literals")
    ):
        raise ConfigurationError(
            f"predicate must be a pypaimon Predicate "
            f"(table.new_read_builder().new_predicate_builder().greater_than('x', 3)), got "
            f"{type(predicate).__name__} {predicate!r}"
        )


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Body of a sync feed's loop thread: run until stopped, then release what the loop holds
    (as ``asyncio.run`` does): cancel what still runs, join the executor threads, close it.

    It holds the loop, never the :class:`SyncChangeFeed`, so a dropped one can be collected.
    """
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            for task in tasks:
                if not task.cancelled() and task.exception() is not None:
                    loop.call_exception_handler(
                        {"message": "error in a sync feed's task at shutdown", "task": task,
                         "exception": task.exception()}
                    )
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


async def _close_and_stop(feed: ChangeFeed) -> None:
    try:
        await feed.close()
    finally:
        asyncio.get_running_loop().stop()


def _release_abandoned_sync(feed: ChangeFeed, loop: asyncio.AbstractEventLoop) -> None:
    """Finalizer of a :class:`SyncChangeFeed` dropped without ``close()``: warn, then close the
    feed and stop the loop thread. It does not wait, since it may run on any thread."""
    if feed._started and not feed._closed:
        warnings.warn(
            f"unclosed SyncChangeFeed for table {feed.table_name}; use 'with feed.sync() as ...'",
            ResourceWarning,
            stacklevel=1,
        )
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.create_task, _close_and_stop(feed))


class SyncChangeFeed:
    """Blocking use of a :class:`ChangeFeed` from non-async code.

    ::

        with ChangeFeed(table, consumer_id="job").sync() as feed:
            for batch in feed:
                process(batch.to_arrow())
                feed.commit(batch)

    The feed runs on an event loop in a daemon thread. Ctrl-C (``KeyboardInterrupt``) or any
    other exception raised while waiting for a batch closes the feed, then propagates: a
    feed left idle in a ``for`` loop ends promptly, with uncommitted batches left uncommitted.

    :meth:`close` may be called from any thread: a thread waiting for a batch at that moment
    ends its ``for`` loop (``StopIteration``); a call made after ``close()`` raises
    :class:`FeedClosedError`. A sync feed dropped without ``close()`` warns
    (``ResourceWarning``) when collected, then closes its feed and ends its thread.
    """

    # The main thread waits in slices, not in one blocking ``Future.result()``: a signal the
    # kernel hands to another thread (pypaimon's, watchfiles', the loop's) does not interrupt
    # a lock wait in the main thread, so Python would only run its SIGINT handler after the
    # next batch arrived, which on an idle table is never.
    _WAIT_SLICE = 0.2  # seconds

    def __init__(self, feed: ChangeFeed) -> None:
        self._feed = feed
        self._closed = False
        self._close_lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=_run_loop,
            args=(self._loop,),
            name=f"paimon-feed-sync-{feed.table_name}",
            daemon=True,
        )
        self._thread.start()
        self._finalizer = weakref.finalize(self, _release_abandoned_sync, feed, self._loop)
        self._finalizer.atexit = False  # at exit the daemon thread just stops

    def _call(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coroutine`` on the loop and wait for it; :class:`FeedClosedError` if the loop
        stops (``close()`` from another thread) before it finishes."""
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        except RuntimeError:  # the loop is closed
            coroutine.close()
            raise self._closed_error() from None
        try:
            while True:
                try:
                    return future.result(timeout=self._WAIT_SLICE)
                except concurrent.futures.TimeoutError:
                    if not self._thread.is_alive() and not future.done():
                        raise self._closed_error() from None
        except concurrent.futures.CancelledError:
            raise self._closed_error() from None
        except BaseException:
            future.cancel()
            raise

    def _closed_error(self) -> FeedClosedError:
        return FeedClosedError(f"feed for table {self._feed.table_name} is closed")

    def __enter__(self) -> SyncChangeFeed:
        self._interruptible(self._feed.start())
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[FeedBatch]:
        return self

    def __next__(self) -> FeedBatch:
        """The next batch; ``StopIteration`` at the end snapshot or when another thread calls
        :meth:`close` meanwhile; :class:`FeedClosedError` if called after ``close()``."""
        if self._closed:
            raise self._closed_error()
        try:
            return self._interruptible(self._feed.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None
        except FeedClosedError:
            if self._closed:  # close() from another thread ended this wait
                raise StopIteration from None
            raise

    def _interruptible(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coroutine``; if the caller is interrupted meanwhile, close the feed first."""
        try:
            return self._call(coroutine)
        except (KeyboardInterrupt, SystemExit):
            self.close()
            raise

    def commit(self, batch: FeedBatch) -> None:
        """Record that ``batch`` is processed (see :meth:`ChangeFeed.commit`)."""
        if self._closed:
            raise self._closed_error()
        self._call(self._feed.commit(batch))

    def metrics(self) -> FeedMetrics:
        return self._feed.metrics()

    def close(self) -> None:
        """Close the feed, stop its event loop and join its thread. Idempotent; may be called
        from any thread (a waiting ``for`` loop in another thread then ends)."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._finalizer.detach()
        try:
            self._call(self._feed.close())
        finally:
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._loop.stop)
            if threading.current_thread() is not self._thread:
                self._thread.join()
