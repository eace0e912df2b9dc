"""The watches behind :class:`~paimon_feed.notifiers.local.LocalNotifier`, on the shared watcher.

- :class:`WatchLease`: one notifier's share of the process's inotify watcher
  (:mod:`paimon_feed.notifiers._inotify`): opened at first use, given back once.
- :class:`RetryTimer`: when to try again to watch a directory that cannot be watched now.
- :class:`TableWatches`: a watch per subscribed table, its loss and re-establishment, and the
  hints its events mean. While a table is not watched, its subscriptions poll
  (``push_lost``/``push_restored``).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from paimon_feed._layout import SNAPSHOT_DIR, local_path
from paimon_feed.notifiers import _inotify
from paimon_feed.notifiers.base import SnapshotHint, Subscription, snapshot_id_from_name

__all__ = ["RetryTimer", "TableWatch", "TableWatches", "WatchLease"]

logger = logging.getLogger("paimon_feed.notifiers.local")


class WatchLease:
    """``owner``'s watches on the shared inotify watcher, and its events to ``owner.deliver``.

    The shared watcher holds the owner only weakly: an owner never closed (its feed abandoned,
    its loop ended) is collected, and its finalizer then gives the watches back.
    """

    def __init__(self, owner: _inotify.Sink) -> None:
        self._owner = weakref.ref(owner)
        self.watcher: _inotify.Watcher | None = None
        self._live: dict[int, _inotify.Watch] = {}  # by id(): watches are not hashable

    def open(self) -> None:
        """Take a share of the shared watcher, unless taken already; ``OSError`` if inotify
        cannot be opened."""
        if self.watcher is not None:
            return
        owner = self._owner()
        assert owner is not None  # the owner calls this
        self.watcher = _inotify.shared_watcher()
        self._sink = _inotify.WeakSink(self._owner)
        self._lease = _inotify.Lease(self.watcher, self._live)
        weakref.finalize(owner, self._lease.release)

    def add(self, path: str, tag: Any) -> _inotify.Watch:
        """Watch directory ``path``; ``OSError`` if it cannot be watched (see
        :meth:`_inotify.Watcher.add`)."""
        assert self.watcher is not None  # open() succeeded first
        watch = self.watcher.add(path, self._sink, tag=tag)
        self._live[id(watch)] = watch
        return watch

    def remove(self, watch: _inotify.Watch) -> None:
        """Stop ``watch``; nothing to do once the share is given back."""
        self._live.pop(id(watch), None)
        if self.watcher is not None:
            self.watcher.remove(watch)

    async def release(self) -> None:
        """Give the share back (the last user's release joins the watcher's thread)."""
        if self.watcher is not None:
            self.watcher = None
            await asyncio.to_thread(self._lease.release)


class RetryTimer:
    """Calls back on the running loop after ``initial`` seconds, doubling the wait with every
    further :meth:`schedule` up to ``maximum``; :meth:`reset` after a success."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.initial = initial
        self.maximum = maximum
        self.delay = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def schedule(self, callback: Callable[[], None]) -> None:
        self.delay = min(self.maximum, max(self.initial, self.delay * 2))
        self._handle = asyncio.get_running_loop().call_later(self.delay, self._fire, callback)

    def _fire(self, callback: Callable[[], None]) -> None:
        self._handle = None
        callback()

    def reset(self) -> None:
        self.delay = 0.0

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class TableWatch:
    """The watch of one table: on ``snapshot/`` (``target='snapshot'``), on the table's root
    until ``snapshot/`` appears (``'root'``), or none while it is being re-established."""

    def __init__(self, key: str, retry: RetryTimer) -> None:
        self.key = key
        self.table_dir = local_path(key)
        self.snapshot_dir = os.path.join(self.table_dir, SNAPSHOT_DIR)
        self.watch: _inotify.Watch | None = None
        self.target = ""
        self.retry = retry
        self.lost_reason = ""


class TableWatches:
    """A watch per subscribed table, kept alive: a watch that dies is re-established at once if
    its directory is back, else retried with a growing interval, and its table's subscriptions
    poll in between and read once when it is back.

    ``subscriptions`` is the notifier's registry (table URL to subscriptions), ``dispatch`` its
    way to hand them a hint.
    """

    def __init__(
        self,
        lease: WatchLease,
        subscriptions: Mapping[str, Sequence[Subscription]],
        dispatch: Callable[[SnapshotHint], int],
        *,
        source: str,
        retry_interval: float,
        max_retry_interval: float,
    ) -> None:
        self._lease = lease
        self._subscriptions = subscriptions
        self._dispatch = dispatch
        self._source = source
        self._retry_interval = retry_interval
        self._max_retry_interval = max_retry_interval
        self._tables: dict[str, TableWatch] = {}
        self.losses = 0
        self.restored = 0

    def __contains__(self, key: str) -> bool:
        return key in self._tables

    def subscribe(self, subscription: Subscription) -> None:
        """Watch the subscription's table, unless watched already (the lease is open)."""
        table = self._tables.get(subscription.table_url)
        if table is not None:
            if table.watch is None:
                subscription.push_lost()
            return
        retry = RetryTimer(self._retry_interval, self._max_retry_interval)
        table = self._tables[subscription.table_url] = TableWatch(subscription.table_url, retry)
        if not self._establish(table):
            logger.warning(
                "cannot watch table directory %s (%s); its feeds poll until it can be watched",
                table.table_dir, table.lost_reason,
            )
            subscription.push_lost()
            table.retry.schedule(lambda: self._retry(table))

    def unsubscribe(self, key: str) -> None:
        """Stop watching table ``key`` (nobody follows it any more)."""
        table = self._tables.pop(key, None)
        if table is not None:
            self._drop(table)

    def close(self) -> None:
        for table in list(self._tables.values()):
            self._drop(table)
        self._tables.clear()

    def _establish(self, table: TableWatch) -> bool:
        """Watch ``snapshot/``, else the table's root; ``False`` (with ``lost_reason``) if
        neither can be watched now."""
        for target, path in (("snapshot", table.snapshot_dir), ("root", table.table_dir)):
            try:
                table.watch = self._lease.add(path, tag=table)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    table.lost_reason = f"{path} does not exist"
                    continue
                table.lost_reason = str(exc)
                return False
            table.target = target
            if target == "root" and os.path.isdir(table.snapshot_dir):
                self._lease.remove(table.watch)  # snapshot/ appeared meanwhile: watch it
                return self._establish(table)
            logger.debug("watching %s for new snapshots", path)
            return True
        table.watch = None
        return False

    def _drop(self, table: TableWatch) -> None:
        table.retry.cancel()
        if table.watch is not None:
            self._lease.remove(table.watch)
        table.watch = None

    def _lost(self, table: TableWatch, reason: str) -> None:
        self.losses += 1
        table.watch = None
        table.lost_reason = reason
        for subscription in list(self._subscriptions.get(table.key, ())):
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
        table.retry.reset()
        table.retry.schedule(lambda: self._retry(table))

    def _retry(self, table: TableWatch) -> None:
        if self._tables.get(table.key) is not table:
            return  # unsubscribed or closed meanwhile
        if self._establish(table):
            logger.info("watch of table %s re-established; push again", table.table_dir)
            self._restored(table)
        else:
            table.retry.schedule(lambda: self._retry(table))

    def _restored(self, table: TableWatch) -> None:
        self.restored += 1
        table.retry.reset()
        for subscription in list(self._subscriptions.get(table.key, ())):
            subscription.push_restored()
        # Commits made while nothing watched: one read finds them.
        self._dispatch(SnapshotHint(table.key, None, self._source))

    # events -----------------------------------------------------------------------------------
    def on_event(self, table: TableWatch, event: _inotify.InotifyEvent, detected_at: float) -> None:
        if self._tables.get(table.key) is not table or table.watch is not event.watch:
            return  # a watch replaced or dropped meanwhile
        if event.dead:
            self._lost(table, event.reason)
        elif table.target == "snapshot" and event.appeared:
            snapshot_id = snapshot_id_from_name(event.name)
            if snapshot_id is not None:
                self._dispatch(SnapshotHint(table.key, snapshot_id, self._source, detected_at))
        elif table.target == "root" and event.appeared and event.name == SNAPSHOT_DIR:
            assert table.watch is not None  # it is event.watch
            self._lease.remove(table.watch)
            if not self._establish(table):
                self._lost(table, table.lost_reason)
                return
            # The first commit may already be inside.
            self._dispatch(SnapshotHint(table.key, None, self._source, detected_at))

    def check_all(self, detected_at: float) -> None:
        """Events were lost (the kernel's queue overflowed): every table reads once."""
        for key in list(self._tables):
            self._dispatch(SnapshotHint(key, None, self._source, detected_at))
