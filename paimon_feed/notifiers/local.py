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
import errno
import logging
import os
import time
import weakref
from collections.abc import Callable
from typing import Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed._layout import DATABASE_SUFFIX, SNAPSHOT_DIR, local_path
from paimon_feed.notifiers import _inotify
from paimon_feed.notifiers._watchfiles import watch_table
from paimon_feed.notifiers.base import (
    Notifier,
    SnapshotHint,
    Subscription,
    snapshot_id_from_name,
)

__all__ = ["LocalNotifier"]

logger = logging.getLogger(__name__)


class _TableWatch:
    """The watch of one table: on ``snapshot/`` (``target='snapshot'``), on the table's root
    until ``snapshot/`` appears (``'root'``), or none while it is being re-established."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.table_dir = local_path(key)
        self.snapshot_dir = os.path.join(self.table_dir, SNAPSHOT_DIR)
        self.watch: _inotify.Watch | None = None
        self.target = ""
        self.retry: asyncio.TimerHandle | None = None
        self.retry_delay = 0.0
        self.lost_reason = ""


class _WarehouseWatch:
    """Watches of a warehouse root and its database directories, for table discovery."""

    def __init__(self, root: str, on_change: Callable[[], None]) -> None:
        self.root = root
        self.on_change = on_change
        self.watches: dict[str, _inotify.Watch] = {}
        self.retry: asyncio.TimerHandle | None = None
        self.retry_delay = 0.0


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
        self.watch_losses = 0
        self.watches_restored = 0
        self._use_inotify = not force_polling and _inotify.available()
        self._watcher: _inotify.Watcher | None = None
        self._live_watches: dict[int, _inotify.Watch] = {}  # by id(): watches are not hashable
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tables: dict[str, _TableWatch] = {}
        self._warehouses: list[_WarehouseWatch] = []
        # the watchfiles fallback: a task per table
        self._watchers: dict[str, tuple[asyncio.Task, asyncio.Event]] = {}
        self._watching: dict[str, asyncio.Event] = {}

    # subscriptions ----------------------------------------------------------------------------
    def _on_subscribe(self, subscription: Subscription) -> None:
        if not self._use_inotify:
            self._start_watchfiles(subscription.table_url)
            return
        key = subscription.table_url
        table = self._tables.get(key)
        if table is not None:
            if table.watch is None:
                subscription.push_lost()
            return
        if not self._open_watcher():
            return
        table = self._tables[key] = _TableWatch(key)
        if not self._establish(table):
            logger.warning(
                "cannot watch table directory %s (%s); its feeds poll until it can be watched",
                table.table_dir, table.lost_reason,
            )
            subscription.push_lost()
            self._schedule_retry(table)

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        key = subscription.table_url
        if key in self._subscriptions:
            return
        if not self._use_inotify:
            self._stop_watchfiles(key)
            return
        table = self._tables.pop(key, None)
        if table is not None:
            self._drop(table)

    def _open_watcher(self) -> bool:
        if self._watcher is not None:
            return True
        self._loop = asyncio.get_running_loop()
        try:
            self._watcher = _inotify.shared_watcher()
        except OSError as exc:
            self._set_healthy(False, f"cannot open inotify: {exc}")
            return False
        # The shared watcher holds this notifier only weakly: one never closed (its feed
        # abandoned, its loop ended) is collected, and then gives its watches back.
        self._sink = _inotify.WeakSink(weakref.ref(self))
        self._lease = _inotify.Lease(self._watcher, self._live_watches)
        weakref.finalize(self, self._lease.release)
        return True

    def _add_watch(self, path: str, tag: Any) -> _inotify.Watch:
        assert self._watcher is not None  # _open_watcher() succeeded first
        watch = self._watcher.add(path, self._sink, tag=tag)
        self._live_watches[id(watch)] = watch
        return watch

    def _remove_watch(self, watch: _inotify.Watch) -> None:
        self._live_watches.pop(id(watch), None)
        assert self._watcher is not None  # watches exist only while it is open
        self._watcher.remove(watch)

    async def ready(self) -> None:
        """Watches are in place once ``subscribe()`` returns (inotify); the watchfiles fallback
        starts in a task, so this waits for it."""
        for watching in list(self._watching.values()):
            await watching.wait()
        await asyncio.sleep(0)

    async def _close(self) -> None:
        for table in list(self._tables.values()):
            self._drop(table)
        self._tables.clear()
        for warehouse in list(self._warehouses):
            self._stop_warehouse(warehouse)
        if self._watcher is not None:
            self._watcher = None
            await asyncio.to_thread(self._lease.release)
        watchers = list(self._watchers.values())
        self._watchers.clear()
        for _, stop in watchers:
            stop.set()
        await cancel_and_wait(task for task, _ in watchers)

    # table watches ----------------------------------------------------------------------------
    def _establish(self, table: _TableWatch) -> bool:
        """Watch ``snapshot/``, else the table's root; ``False`` (with ``lost_reason``) if
        neither can be watched now."""
        for target, path in (("snapshot", table.snapshot_dir), ("root", table.table_dir)):
            try:
                table.watch = self._add_watch(path, tag=table)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    table.lost_reason = f"{path} does not exist"
                    continue
                table.lost_reason = str(exc)
                return False
            table.target = target
            if target == "root" and os.path.isdir(table.snapshot_dir):
                self._remove_watch(table.watch)  # snapshot/ appeared meanwhile: watch it
                return self._establish(table)
            logger.debug("watching %s for new snapshots", path)
            return True
        table.watch = None
        return False

    def _drop(self, table: _TableWatch) -> None:
        if table.retry is not None:
            table.retry.cancel()
            table.retry = None
        if table.watch is not None and self._watcher is not None:
            self._remove_watch(table.watch)
        table.watch = None

    def _lost(self, table: _TableWatch, reason: str) -> None:
        self.watch_losses += 1
        table.watch = None
        table.lost_reason = reason
        subscriptions = list(self._subscriptions.get(table.key, ()))
        for subscription in subscriptions:
            subscription.push_lost()
        if self._establish(table):
            logger.warning(
                "watch of table %s lost (%s); re-established at once", table.table_dir, reason
            )
            self._restored(table)
            return
        logger.warning(
            "watch of table %s lost (%s); its feeds poll until %s can be watched again",
            table.table_dir, reason, table.table_dir,
        )
        table.retry_delay = 0.0
        self._schedule_retry(table)

    def _schedule_retry(self, table: _TableWatch) -> None:
        table.retry_delay = min(
            self.max_retry_interval, max(self.retry_interval, table.retry_delay * 2)
        )
        assert self._loop is not None  # set by _open_watcher(), before any watch
        table.retry = self._loop.call_later(table.retry_delay, self._retry, table)

    def _retry(self, table: _TableWatch) -> None:
        table.retry = None
        if self._closed or self._tables.get(table.key) is not table:
            return
        if self._establish(table):
            logger.info("watch of table %s re-established; push again", table.table_dir)
            self._restored(table)
        else:
            self._schedule_retry(table)

    def _restored(self, table: _TableWatch) -> None:
        self.watches_restored += 1
        table.retry_delay = 0.0
        for subscription in list(self._subscriptions.get(table.key, ())):
            subscription.push_restored()
        # Commits made while nothing watched: one read finds them.
        self._dispatch(SnapshotHint(table.key, None, self.source))

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
                for key in list(self._tables):
                    self._dispatch(SnapshotHint(key, None, self.source, detected_at))
                for warehouse in self._warehouses:
                    warehouse.on_change()
                continue
            tag = event.watch.tag
            if isinstance(tag, _WarehouseWatch):
                self._on_warehouse_event(tag, event)
                continue
            table: _TableWatch = tag
            if self._tables.get(table.key) is not table or table.watch is not event.watch:
                continue  # a watch replaced or dropped meanwhile
            if event.dead:
                self._lost(table, event.reason)
            elif table.target == "snapshot" and event.appeared:
                snapshot_id = snapshot_id_from_name(event.name)
                if snapshot_id is not None:
                    self._dispatch(SnapshotHint(table.key, snapshot_id, self.source, detected_at))
            elif table.target == "root" and event.appeared and event.name == SNAPSHOT_DIR:
                self._remove_watch(table.watch)
                if not self._establish(table):
                    self._lost(table, table.lost_reason)
                    continue
                # The first commit may already be inside.
                self._dispatch(SnapshotHint(table.key, None, self.source, detected_at))

    # warehouse discovery ----------------------------------------------------------------------
    def watch_warehouse(self, warehouse: str, on_change: Callable[[], None]) -> Callable[[], None] | None:
        if not self._use_inotify or "://" in warehouse and not warehouse.startswith("file://"):
            return None
        if not self._open_watcher():
            return None
        watch = _WarehouseWatch(local_path(warehouse), on_change)
        self._warehouses.append(watch)
        self._watch_warehouse_dirs(watch)
        return lambda: self._stop_warehouse(watch)

    def _watch_warehouse_dirs(self, warehouse: _WarehouseWatch) -> None:
        """Watch the root and every database directory not watched yet; retry later if the
        root cannot be watched."""
        if warehouse.root not in warehouse.watches:
            try:
                warehouse.watches[warehouse.root] = self._add_watch(warehouse.root, tag=warehouse)
            except OSError as exc:
                logger.warning("cannot watch warehouse %s (%s); new tables are found by listing",
                               warehouse.root, exc)
                warehouse.retry_delay = min(
                    self.max_retry_interval, max(self.retry_interval, warehouse.retry_delay * 2)
                )
                assert self._loop is not None  # set by _open_watcher(), before any watch
                warehouse.retry = self._loop.call_later(
                    warehouse.retry_delay, self._retry_warehouse, warehouse
                )
                return
        try:
            names = os.listdir(warehouse.root)
        except OSError:
            names = []
        for name in names:
            path = os.path.join(warehouse.root, name)
            if name.endswith(DATABASE_SUFFIX) and path not in warehouse.watches:
                try:
                    warehouse.watches[path] = self._add_watch(path, tag=warehouse)
                except OSError:
                    continue  # gone, or not a directory: the listing judges it

    def _retry_warehouse(self, warehouse: _WarehouseWatch) -> None:
        warehouse.retry = None
        if warehouse in self._warehouses and not self._closed:
            self._watch_warehouse_dirs(warehouse)
            warehouse.on_change()

    def _on_warehouse_event(self, warehouse: _WarehouseWatch, event: _inotify.InotifyEvent) -> None:
        if warehouse not in self._warehouses:
            return
        assert event.watch is not None  # _on_events handles a queue overflow (no watch) itself
        if event.dead:
            warehouse.watches.pop(event.watch.path, None)
            if event.watch.path == warehouse.root:
                self.watch_losses += 1
                logger.warning("watch of warehouse %s lost (%s); re-establishing",
                               warehouse.root, event.reason)
                for watch in warehouse.watches.values():
                    self._remove_watch(watch)
                warehouse.watches.clear()
                self._watch_warehouse_dirs(warehouse)
            warehouse.on_change()
            return
        if not event.is_dir:
            return
        if event.watch.path == warehouse.root and event.appeared:
            self._watch_warehouse_dirs(warehouse)
        warehouse.on_change()

    def _stop_warehouse(self, warehouse: _WarehouseWatch) -> None:
        if warehouse in self._warehouses:
            self._warehouses.remove(warehouse)
        if warehouse.retry is not None:
            warehouse.retry.cancel()
        if self._watcher is not None:
            for watch in warehouse.watches.values():
                self._remove_watch(watch)
        warehouse.watches.clear()

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
