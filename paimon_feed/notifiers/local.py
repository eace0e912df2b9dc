"""LocalNotifier: push for local tables, from one inotify instance per process.

Every ``LocalNotifier`` of the process (every ``ChangeFeed``'s, every ``WarehouseFeed``'s) shares
one inotify instance and one reader thread (:mod:`paimon_feed.notifiers._inotify`), with a watch
per table directory: 1,000 tables cost one file descriptor, one thread and no CPU while idle.

Only committed ``snapshot-N`` files wake a feed: Paimon writes ``.snapshot-N.<uuid>.tmp`` and
renames it, then rewrites ``LATEST``; the temp file and the hint files are ignored. A table
without a ``snapshot/`` directory yet is watched at its root until the directory appears.

A watch that dies (the snapshot directory deleted, renamed away or replaced by a rename, its
file system unmounted) is noticed at once: logged, counted (``watch_losses`` here, ``fallbacks``
in the feed's metrics), and re-established, right away if the directory is back, else with a
growing retry interval; the table's feeds poll in between and read once when it is back.

Where inotify does not exist (macOS, Windows) or with ``force_polling=True``, each table gets its
own watchfiles watcher, as before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from paimon_feed._aio import cancel_and_wait
from paimon_feed._layout import is_local, local_path
from paimon_feed.notifiers import _inotify
from paimon_feed.notifiers._local_warehouses import WarehouseWatch, WarehouseWatches
from paimon_feed.notifiers._local_watches import TableWatches, WatchLease
from paimon_feed.notifiers._watchfiles import watch_table
from paimon_feed.notifiers.base import Notifier, Subscription

__all__ = ["LocalNotifier"]

logger = logging.getLogger(__name__)


class LocalNotifier(Notifier):
    """Push for local tables (``file://`` or plain paths) via inotify (FSEvents elsewhere).

    Args:
        step_ms, debounce_ms: batching of changes by the watchfiles fallback (no inotify).
        force_polling: poll directories (network file systems), through watchfiles.
        retry_interval: seconds before the first attempt to re-establish a dead watch whose
            directory is not back yet; doubled after each failure up to ``max_retry_interval``.
    """

    source = "local"

    def __init__(
        self,
        *,
        step_ms: int = 2,
        debounce_ms: int = 50,
        force_polling: bool = False,
        retry_interval: float = 0.05,
        max_retry_interval: float = 5.0,
    ):
        super().__init__()
        if step_ms < 1 or debounce_ms < step_ms:
            raise ValueError(
                f"need 1 <= step_ms <= debounce_ms, got step_ms={step_ms}, debounce_ms={debounce_ms}"
            )
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.force_polling = force_polling
        self.retry_interval = retry_interval
        self.max_retry_interval = max_retry_interval
        self._use_inotify = not force_polling and _inotify.available()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lease = WatchLease(self)
        retries = {"retry_interval": retry_interval, "max_retry_interval": max_retry_interval}
        self._tables = TableWatches(
            self._lease, self._subscriptions, self._dispatch, source=self.source, **retries
        )
        self._warehouses = WarehouseWatches(self._lease, **retries)
        # the watchfiles fallback: a task per table
        self._watchers: dict[str, tuple[asyncio.Task, asyncio.Event]] = {}
        self._watching: dict[str, asyncio.Event] = {}

    @property
    def watch_losses(self) -> int:
        """Watches that died (a table's or a warehouse's directory deleted, renamed, unmounted)."""
        return self._tables.losses + self._warehouses.losses

    @property
    def watches_restored(self) -> int:
        """Table watches re-established after a loss."""
        return self._tables.restored

    # subscriptions ----------------------------------------------------------------------------
    def _on_subscribe(self, subscription: Subscription) -> None:
        if not self._use_inotify:
            self._start_watchfiles(subscription.table_url)
        elif subscription.table_url in self._tables or self._open_watcher():
            self._tables.subscribe(subscription)

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        key = subscription.table_url
        if key in self._subscriptions:
            return
        if not self._use_inotify:
            self._stop_watchfiles(key)
        else:
            self._tables.unsubscribe(key)

    def _open_watcher(self) -> bool:
        self._loop = asyncio.get_running_loop()
        try:
            self._lease.open()
        except OSError as exc:
            self._set_healthy(False, f"cannot open inotify: {exc}")
            return False
        return True

    async def ready(self) -> None:
        """Watches are in place once ``subscribe()`` returns (inotify); the watchfiles fallback
        starts in a task, so this waits for it."""
        for watching in list(self._watching.values()):
            await watching.wait()
        await asyncio.sleep(0)

    async def _close(self) -> None:
        self._tables.close()
        self._warehouses.close()
        await self._lease.release()
        watchers = list(self._watchers.values())
        self._watchers.clear()
        for _, stop in watchers:
            stop.set()
        await cancel_and_wait(task for task, _ in watchers)

    # events from the watcher thread -----------------------------------------------------------
    def deliver(self, events: list[_inotify.InotifyEvent]) -> None:
        """Called on the inotify thread: move the events onto this notifier's loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._on_events, events)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for these
            pass

    def _on_events(self, events: list[_inotify.InotifyEvent]) -> None:
        if self._closed:
            return
        detected_at = time.time()
        for event in events:
            if event.watch is None:  # queue overflow: events were lost, everyone reads once
                logger.warning("inotify event queue overflowed; every local table is checked")
                self._tables.check_all(detected_at)
                self._warehouses.changed_all()
            elif isinstance(event.watch.tag, WarehouseWatch):
                self._warehouses.on_event(event.watch.tag, event)
            else:
                self._tables.on_event(event.watch.tag, event, detected_at)

    # warehouse discovery ----------------------------------------------------------------------
    def watch_warehouse(self, warehouse: str, on_change: Callable[[], None]) -> Callable[[], None] | None:
        if not self._use_inotify or not is_local(warehouse):
            return None
        if not self._open_watcher():
            return None
        return self._warehouses.watch(local_path(warehouse), on_change)

    # the watchfiles fallback (no inotify) -----------------------------------------------------
    def _start_watchfiles(self, key: str) -> None:
        if key in self._watchers:
            return
        stop, watching = asyncio.Event(), asyncio.Event()
        self._watching[key] = watching
        task = asyncio.get_running_loop().create_task(
            watch_table(
                key, self._dispatch, stop, watching, debounce_ms=self.debounce_ms,
                step_ms=self.step_ms, force_polling=self.force_polling,
                on_failure=lambda reason: self._set_healthy(False, reason),
            ),
            name=f"paimon-feed-local-{key}",
        )
        self._watchers[key] = (task, stop)

    def _stop_watchfiles(self, key: str) -> None:
        if key not in self._watchers:
            return
        task, stop = self._watchers.pop(key)
        self._watching.pop(key, None)
        stop.set()
        task.cancel()
