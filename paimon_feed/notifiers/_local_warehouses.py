"""Table discovery for :class:`~paimon_feed.notifiers.local.LocalNotifier`: watches of a
warehouse's root and database directories, so a warehouse feed hears of a new table at once
instead of at its next listing. They only say "look again": the listing decides what exists."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from paimon_feed._layout import DATABASE_SUFFIX
from paimon_feed.notifiers import _inotify
from paimon_feed.notifiers._local_watches import RetryTimer, WatchLease

__all__ = ["WarehouseWatch", "WarehouseWatches"]

logger = logging.getLogger("paimon_feed.notifiers.local")


class WarehouseWatch:
    """Watches of a warehouse root and its database directories, for table discovery."""

    def __init__(self, root: str, on_change: Callable[[], None], retry: RetryTimer) -> None:
        self.root = root
        self.on_change = on_change
        self.watches: dict[str, _inotify.Watch] = {}
        self.retry = retry
        self.warned = False  # a root that cannot be watched is said once, not at every retry


class WarehouseWatches:
    """The warehouses a notifier watches; ``on_change()`` runs (on the event loop) whenever a
    database or table directory appears or disappears, or when events may have been lost."""

    def __init__(self, lease: WatchLease, *, retry_interval: float, max_retry_interval: float) -> None:
        self._lease = lease
        self._retry_interval = retry_interval
        self._max_retry_interval = max_retry_interval
        self._warehouses: list[WarehouseWatch] = []
        self.losses = 0

    def watch(self, root: str, on_change: Callable[[], None]) -> Callable[[], None]:
        """Watch the warehouse at local path ``root`` (the lease is open); returns the function
        that stops it."""
        warehouse = WarehouseWatch(
            root, on_change, RetryTimer(self._retry_interval, self._max_retry_interval)
        )
        self._warehouses.append(warehouse)
        self._watch_dirs(warehouse)
        return lambda: self.stop(warehouse)

    def _watch_dirs(self, warehouse: WarehouseWatch) -> None:
        """Watch the root and every database directory not watched yet; retry later if the
        root cannot be watched."""
        if warehouse.root not in warehouse.watches:
            try:
                warehouse.watches[warehouse.root] = self._lease.add(warehouse.root, tag=warehouse)
            except OSError as exc:
                log = logger.debug if warehouse.warned else logger.warning
                log("cannot watch warehouse %s (%s); new tables are found by listing until it can be",
                    warehouse.root, exc)
                warehouse.warned = True
                warehouse.retry.schedule(lambda: self._retry(warehouse))
                return
        try:
            names = os.listdir(warehouse.root)
        except OSError:
            names = []
        for name in names:
            path = os.path.join(warehouse.root, name)
            if name.endswith(DATABASE_SUFFIX) and path not in warehouse.watches:
                try:
                    warehouse.watches[path] = self._lease.add(path, tag=warehouse)
                except OSError:
                    continue  # gone, or not a directory: the listing judges it

    def _retry(self, warehouse: WarehouseWatch) -> None:
        if warehouse in self._warehouses:
            self._watch_dirs(warehouse)
            if warehouse.root in warehouse.watches:  # watched now: list what came meanwhile
                warehouse.on_change()

    def on_event(self, warehouse: WarehouseWatch, event: _inotify.InotifyEvent) -> None:
        if warehouse not in self._warehouses:
            return
        assert event.watch is not None  # a queue overflow (no watch) goes to changed_all()
        if event.dead:
            warehouse.watches.pop(event.watch.path, None)
            if event.watch.path == warehouse.root:
                self.losses += 1
                logger.warning("watch of warehouse %s lost (%s); re-establishing",
                               warehouse.root, event.reason)
                for watch in warehouse.watches.values():
                    self._lease.remove(watch)
                warehouse.watches.clear()
                self._watch_dirs(warehouse)
            warehouse.on_change()
            return
        if not event.is_dir:
            return
        if event.watch.path == warehouse.root and event.appeared:
            self._watch_dirs(warehouse)
        warehouse.on_change()

    def changed_all(self) -> None:
        """Events were lost (the kernel's queue overflowed): every warehouse lists again."""
        for warehouse in self._warehouses:
            warehouse.on_change()

    def stop(self, warehouse: WarehouseWatch) -> None:
        if warehouse in self._warehouses:
            self._warehouses.remove(warehouse)
        warehouse.retry.cancel()
        for watch in warehouse.watches.values():
            self._lease.remove(watch)
        warehouse.watches.clear()

    def close(self) -> None:
        for warehouse in list(self._warehouses):
            self.stop(warehouse)
