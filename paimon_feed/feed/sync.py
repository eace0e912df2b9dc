"""SyncChangeFeed: a :class:`~paimon_feed.feed.ChangeFeed` for code without an event loop."""

from __future__ import annotations

import logging
import threading
import warnings
import weakref
from collections.abc import Coroutine, Iterator
from typing import Any, Protocol

from paimon_feed._aio import LoopClosedError, LoopThread
from paimon_feed.batch import FeedBatch
from paimon_feed.errors import FeedClosedError
from paimon_feed.feed.stats import FeedMetrics

__all__ = ["SyncChangeFeed"]

logger = logging.getLogger("paimon_feed.feed")


class _AsyncFeed(Protocol):
    """What a sync feed drives: a :class:`~paimon_feed.ChangeFeed`, or a
    :class:`~paimon_feed.WarehouseFeed` (through :class:`~paimon_feed.SyncWarehouseFeed`). A
    protocol, so that this module does not import the feed that imports it."""

    @property
    def table_name(self) -> str: ...
    @property
    def _started(self) -> bool: ...
    @property
    def _closed(self) -> bool: ...
    async def start(self) -> None: ...
    async def __anext__(self) -> FeedBatch: ...
    async def commit(self, batch: FeedBatch) -> None: ...
    async def close(self) -> None: ...
    def metrics(self) -> Any: ...


def _release_abandoned_sync(feed: _AsyncFeed, runner: LoopThread) -> None:
    """Finalizer of a :class:`SyncChangeFeed` dropped without ``close()``: warn, then close the
    feed and stop the loop thread. It does not wait, since it may run on any thread."""
    if feed._started and not feed._closed:
        warnings.warn(
            f"unclosed SyncChangeFeed for table {feed.table_name}; use 'with feed.sync() as ...'",
            ResourceWarning,
            stacklevel=1,
        )
    runner.stop_after(feed.close())


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

    def __init__(self, feed: _AsyncFeed) -> None:
        self._feed: _AsyncFeed = feed
        self._closed = False
        self._close_lock = threading.Lock()
        # The runner holds the loop, never this object, so a dropped sync feed can be collected.
        self._runner = LoopThread(f"paimon-feed-sync-{feed.table_name}")
        self._finalizer = weakref.finalize(self, _release_abandoned_sync, feed, self._runner)
        self._finalizer.atexit = False  # at exit the daemon thread just stops

    def _call(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coroutine`` on the loop and wait for it (interruptibly: see
        :attr:`LoopThread.WAIT_SLICE`); :class:`FeedClosedError` if the loop stops
        (``close()`` from another thread) before it finishes."""
        try:
            return self._runner.run(coroutine)
        except LoopClosedError:
            raise self._closed_error() from None

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
            batch: FeedBatch = self._interruptible(self._feed.__anext__())
            return batch
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
        metrics: FeedMetrics = self._feed.metrics()
        return metrics

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
            self._runner.stop()
