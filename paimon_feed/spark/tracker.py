"""The driver's memory of a table's newest snapshot, refreshed by push instead of per trigger.

Spark asks a streaming source for its latest offset on every trigger, up to a hundred times a
second with ``processingTime="0 seconds"``. Answering each call from storage is what makes
polling expensive. :class:`SnapshotTracker` answers from memory and touches storage only

- when a notifier (inotify, SQS, or the polling notifier) hints that a snapshot was committed,
- when ``reconcile_interval`` seconds passed since the last check (the safety net for a lost
  event; ``poll_interval`` while the push source is unhealthy),
- when asked to (``refresh()``: start-up, ``Trigger.AvailableNow``).

A check probes forward with existence checks of ``snapshot-{n}``: Paimon commits snapshot ids in
order, so the first missing id ends the contiguous run. An idle check costs one request, and the
driver's history check that follows it one more (:meth:`SnapshotTracker.history_check_due`: a
table dropped and re-created with a single commit writes no snapshot past the known one).

On a local file system (``file://`` or a plain path) ``notifier="auto"`` checks on every call
instead: the check is a ``stat`` nobody pays for, and Spark already calls ``latestOffset`` in a
loop, so an inotify thread buys no latency (``benchmarks/spark_bench.py`` measures both) and
would miss commits that another machine makes on a network mount. ``notifier="local"`` still
asks for inotify push.

The notifier runs on a private asyncio event loop in a daemon thread, the same notifiers a
:class:`~paimon_feed.ChangeFeed` uses. Hints are only wake-ups (DESIGN invariant 1): the
tracker alone decides, from storage, which snapshots exist.

The tracker keeps cheap counters (questions, checks, probes, hints: :meth:`SnapshotTracker.stats`);
counting every storage call is measurement, which lives in ``benchmarks/`` (see
:data:`paimon_feed.spark.driver.DRIVER_HOOK_ENV`).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from paimon_feed.errors import ConfigurationError, StorageError
from paimon_feed.spark.options import STORAGE_PER_TRIGGER

if TYPE_CHECKING:
    from paimon_feed._aio import LoopThread
    from paimon_feed.notifiers.base import Notifier, Subscription

__all__ = ["SnapshotTracker", "tracking_mode"]

logger = logging.getLogger(__name__)

_THREAD_START_TIMEOUT_S = 30.0
_THREAD_STOP_TIMEOUT_S = 10.0


def tracking_mode(notifier: str | None, table_url: str) -> str:
    """What a tracker asked for ``notifier`` does on ``table_url``: a notifier's name, or
    ``STORAGE_PER_TRIGGER`` (no notifier given, or ``auto`` on a local file system)."""
    if notifier is None or notifier == STORAGE_PER_TRIGGER:
        return STORAGE_PER_TRIGGER
    # The notifiers' own rule for a local table (they import asyncio: only when following).
    from paimon_feed.notifiers.base import normalize_table_url

    if notifier == "auto" and normalize_table_url(table_url).startswith("file://"):
        return STORAGE_PER_TRIGGER
    return notifier


class _NotifierThread:
    """A notifier subscription on its own event loop; collects hints for the driver thread."""

    def __init__(
        self, spec: str, table_url: str, file_io: Any, notifier_options: dict,
        on_hint: Callable[[], None] = lambda: None,
    ) -> None:
        self.spec = spec
        self.on_hint = on_hint
        self.table_url = table_url
        self.file_io = file_io
        self.notifier_options = notifier_options
        self.source = spec
        self._lock = threading.Lock()
        self._hinted = False
        self._max_snapshot_id: int | None = None
        self._hints: Counter[str] = Counter()
        self._runner: LoopThread | None = None
        self._following: concurrent.futures.Future[None] | None = None
        self._notifier: Notifier | None = None
        self._subscription: Subscription | None = None

    def start(self) -> None:
        # Only a query that follows the table needs asyncio (not AvailableNow).
        from paimon_feed._aio import LoopThread

        runner = self._runner = LoopThread(f"paimon-feed-spark-notifier-{self.table_url}")
        try:
            subscription = runner.run(self._subscribe(), timeout=_THREAD_START_TIMEOUT_S)
            self._following = runner.submit(self._follow(subscription))
        except concurrent.futures.TimeoutError:
            self.close()
            raise ConfigurationError(
                f"notifier {self.spec!r} for table {self.table_url} did not start within "
                f"{_THREAD_START_TIMEOUT_S:.0f}s"
            ) from None
        except BaseException:
            self.close()
            raise
        self._following.add_done_callback(self._followed)

    async def _subscribe(self) -> Subscription:
        from paimon_feed.notifiers import create_notifier

        notifier = self._notifier = create_notifier(self.spec, self.table_url, **self.notifier_options)
        self.source = notifier.source
        subscription = self._subscription = notifier.subscribe(self.table_url, file_io=self.file_io)
        await notifier.ready()
        return subscription

    async def _follow(self, subscription: Subscription) -> None:
        try:
            while True:
                wake = await subscription.wait(None)
                with self._lock:
                    self._hinted = self._hinted or wake.hinted or not wake.timed_out
                    self._hints.update(wake.sources)
                    if wake.max_snapshot_id is not None and (
                        self._max_snapshot_id is None or wake.max_snapshot_id > self._max_snapshot_id
                    ):
                        self._max_snapshot_id = wake.max_snapshot_id
                self.on_hint()
        finally:
            subscription.close()
            await subscription.notifier.close()

    def _followed(self, following: concurrent.futures.Future[None]) -> None:
        if not following.cancelled() and following.exception() is not None:
            logger.error(
                "notifier for %s failed; the Spark source falls back to polling every %ss",
                self.table_url, self.notifier_options.get("poll_interval"),
                exc_info=following.exception(),
            )

    @property
    def healthy(self) -> bool:
        if self._following is None or self._following.done():
            return False
        return self._notifier is None or self._notifier.healthy

    def take(self) -> tuple[bool, int | None]:
        """``(woken, max hinted snapshot id)`` since the last call."""
        with self._lock:
            woken, max_id = self._hinted, self._max_snapshot_id
            self._hinted, self._max_snapshot_id = False, None
        return woken, max_id

    def hints(self) -> dict[str, int]:
        with self._lock:
            return dict(self._hints)

    def expect(self, next_snapshot_id: int) -> None:
        """Tell probing notifiers (``poll``) which snapshot id to look for."""
        runner, subscription = self._runner, self._subscription
        if runner is not None and subscription is not None:
            runner.call_soon(subscription.expect, next_snapshot_id)

    def close(self) -> None:
        """Stop following: the loop cancels the subscription's task, which closes the notifier."""
        if self._runner is not None:
            self._runner.stop(_THREAD_STOP_TIMEOUT_S)


class SnapshotTracker:
    """Knows the newest contiguous snapshot id of one table, checking storage only when needed.

    Args:
        table: a pypaimon ``FileStoreTable``.
        table_url: the table's root, as the notifiers key it.
        notifier: ``auto``/``local``/``poll``/``sqs``; ``storage-per-trigger`` or ``None`` for
            no push: every :meth:`latest` call checks storage (what ``auto`` does on a local
            file system, see :func:`tracking_mode`).
        reconcile_interval: seconds between safety checks while push is healthy.
        poll_interval: seconds between checks while the push source is down, and the polling
            notifier's interval.
        sqs_queue_url: the queue for ``sqs`` (or ``auto`` on ``s3://``).
        files: what checks whether a snapshot file exists (the planner's
            :class:`~paimon_feed.planner._objects.MetadataFiles`: one request on S3); the
            table's FileIO if ``None``.
        clock: monotonic seconds (tests).
    """

    def __init__(
        self,
        table: Any,
        table_url: str,
        *,
        notifier: str | None = "auto",
        reconcile_interval: float = 60.0,
        poll_interval: float = 1.0,
        sqs_queue_url: str | None = None,
        files: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table_url = table_url
        self.reconcile_interval = reconcile_interval
        self.poll_interval = poll_interval
        self._clock = clock
        self._checked_unverified = False  # a storage check the driver has not followed up yet
        self._history_checked_at: float | None = None
        self._file_io = table.file_io
        self._exists_file = files.exists if files is not None else table.file_io.exists
        self._snapshots = table.snapshot_manager()
        self._known: int | None = None
        self._last_check: float | None = None
        self._checks = 0
        self._probes = 0
        self._calls = 0
        self._errors = 0
        self._closed = False
        self._notifier: _NotifierThread | None = None
        self._wake = threading.Event()
        self.mode = tracking_mode(notifier, table_url)
        if self.mode != STORAGE_PER_TRIGGER:
            self._notifier = _NotifierThread(
                self.mode,
                table_url,
                self._file_io,
                {"poll_interval": poll_interval, "sqs_queue_url": sqs_queue_url},
                on_hint=self._wake.set,
            )

    def start(self) -> None:
        """Start the notifier (if any) and learn the current latest snapshot."""
        if self._notifier is not None:
            self._notifier.start()
        self.refresh()

    # queries -----------------------------------------------------------------------------
    def latest(self) -> int | None:
        """The newest contiguous snapshot id (``None``: the table has none yet).

        Answers from memory unless a hint arrived, the safety interval elapsed, or there is no
        notifier.
        """
        self._calls += 1
        if self._notifier is None or self._last_check is None:
            return self.refresh()
        woken, hinted_id = self._notifier.take()
        interval = self.reconcile_interval if self._notifier.healthy else self.poll_interval
        due = self._last_check is None or self._clock() - self._last_check >= interval
        if woken or due:
            try:
                return self.refresh(hinted_id)
            except StorageError as exc:
                # A storage hiccup delays a batch, it does not fail the query: the check is
                # due again on the next call (the last check time did not move).
                self._errors += 1
                logger.warning("%s; answering from memory until storage answers", exc)
        return self._known

    def refresh(self, hinted_snapshot_id: int | None = None) -> int | None:
        """Check storage now: probe forward from the newest known snapshot."""
        self._checks += 1
        try:
            if self._last_check is None:
                # Start from the LATEST hint file once; from then on, existence checks only.
                latest = self._snapshots.get_latest_snapshot()
                self._known = latest.id if latest is not None else None
            if (
                hinted_snapshot_id is not None
                and hinted_snapshot_id > (self._known or 0) + 1
                and self._exists(hinted_snapshot_id)
            ):
                # Ids are committed in order: if the hinted one exists, all before it did.
                self._known = hinted_snapshot_id
            position = (self._known or 0) + 1
            while self._exists(position):
                self._known = position
                position += 1
        except StorageError:
            raise
        except Exception as exc:
            raise StorageError(
                f"table {self.table_url}: cannot check for new snapshots: {exc}"
            ) from exc
        self._last_check = self._clock()
        self._checked_unverified = True
        if self._notifier is not None:
            self._notifier.expect((self._known or 0) + 1)
        return self._known

    def wait(self, timeout: float) -> None:
        """Block until a notifier hints, :meth:`interrupt` is called, the next check of
        :meth:`latest` is due, or ``timeout`` seconds passed: for a caller that loops on
        :meth:`latest` (the ``foreach_batch`` runner) instead of being called by Spark."""
        if self._notifier is None:
            interval = self.poll_interval
        else:
            interval = self.reconcile_interval if self._notifier.healthy else self.poll_interval
        elapsed = self._clock() - self._last_check if self._last_check is not None else interval
        self._wake.wait(max(0.0, min(timeout, interval - elapsed)))
        self._wake.clear()

    def interrupt(self) -> None:
        """Wake a :meth:`wait` now (from any thread)."""
        self._wake.set()

    def _exists(self, snapshot_id: int) -> bool:
        self._probes += 1
        return bool(self._exists_file(self._snapshots.get_snapshot_path(snapshot_id)))

    def history_check_due(self) -> bool:
        """Whether the driver compares the commit before its position now, after finding
        nothing new: storage was checked since it last asked (a hint, a safety check, a
        refresh), and, unless push is healthy, a reconcile interval passed since it last did
        (so checking on every trigger does not double every trigger's cost)."""
        if not self._checked_unverified:
            return False
        now = self._clock()
        last = self._history_checked_at
        if not self.push_healthy and last is not None and now - last < self.reconcile_interval:
            return False
        self._checked_unverified, self._history_checked_at = False, now
        return True

    @property
    def known_latest(self) -> int | None:
        """The last answer, without any check."""
        return self._known

    @property
    def push_healthy(self) -> bool:
        return self._notifier is not None and self._notifier.healthy

    def stats(self) -> dict:
        """Counters for benchmarks and debugging (JSON-ready)."""
        return {
            "table_url": self.table_url,
            "notifier": self._notifier.source if self._notifier is not None else self.mode,
            "push_healthy": self.push_healthy,
            "latest_calls": self._calls,
            "storage_checks": self._checks,
            "snapshot_probes": self._probes,
            "storage_errors": self._errors,
            "hints": self._notifier.hints() if self._notifier is not None else {},
            "known_latest_snapshot_id": self._known,
            "written_at": time.time(),
        }

    def close(self) -> None:
        """Stop the notifier thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._notifier is not None:
            self._notifier.close()
