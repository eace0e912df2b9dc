"""HdfsPollingNotifier: polling that spares the NameNode, for ``hdfs://`` and ``viewfs://``.

On HDFS every storage call is a NameNode call, and the NameNode is shared by the whole cluster:
Paimon's own streaming source raised its discovery interval from 1 s to 10 s for that reason.
This notifier asks one question per table every ``interval`` seconds (default 10 s, as Paimon
Java): the status of the table's ``snapshot/`` directory, one ``getFileInfo`` call. HDFS moves a
directory's modification time whenever a file in it is created, renamed or deleted, so a changed
time means a commit (or an expiry, or a rollback) happened, and the feed is woken to plan.
Nothing else is read while a table is idle: 360 NameNode calls per table-hour, plus the feed's
safety check (one read per ``reconcile_interval``). A commit reaches the feed after at most
``interval`` seconds, ``interval / 2`` on average.

Hints are only wake-ups (DESIGN invariant 1): a change this misses (two changes within one
millisecond of a probe) is found by the feed's safety check.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed.notifiers.base import Notifier, SnapshotHint, Subscription

__all__ = ["HdfsPollingNotifier", "HDFS_POLL_INTERVAL"]

logger = logging.getLogger(__name__)

#: Seconds between two looks at a table's ``snapshot/`` directory (Paimon Java's discovery
#: interval): at most one NameNode call per table per interval.
HDFS_POLL_INTERVAL = 10.0


def _modification_time(file_io: Any, path: str) -> object:
    """The directory's modification time (as the file IO gives it: a datetime from
    hdfs-native, milliseconds precise), or ``None`` if it does not exist: one call."""
    try:
        return file_io.get_file_status(path).mtime
    except FileNotFoundError:
        return None


class HdfsPollingNotifier(Notifier):
    """Look at each followed table's ``snapshot/`` directory every ``interval`` seconds and wake
    its feeds when the directory changed.

    Args:
        interval: seconds between two looks at one table (default :data:`HDFS_POLL_INTERVAL`).
    """

    source = "hdfs-poll"
    #: The source of the probes' hints (a subclass that pushes keeps it for its polled tables).
    probe_source = "hdfs-poll"
    # A change of snapshot/ wakes the feed for any new, expired or replaced snapshot: the feed
    # needs no expiry check of its own while this is healthy.
    announces_commits = True

    def __init__(self, *, interval: float = HDFS_POLL_INTERVAL) -> None:
        super().__init__()
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.interval = interval
        self.probes = 0
        self.probe_errors = 0
        self._probes: dict[str, asyncio.Task[None]] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(interval={self.interval})"

    def _on_subscribe(self, subscription: Subscription) -> None:
        if subscription.file_io is None:
            raise ValueError(
                f"{type(self).__name__} needs the table's file_io to look at {subscription.location}"
            )
        self._start_probe(subscription)

    def _start_probe(self, subscription: Subscription, *, wake_first: bool = False) -> None:
        """Probe the subscription's table, unless a probe of it runs already (one per table).
        ``wake_first``: hint the table after the first look too (push was lost: a commit made
        before that look is then read by the feed, a later one changes the directory)."""
        if subscription.table_url in self._probes:
            return
        self._probes[subscription.table_url] = asyncio.get_running_loop().create_task(
            self._probe(subscription.table_url, subscription.location.rstrip("/"), subscription.file_io,
                        wake_first),
            name=f"paimon-feed-hdfs-poll-{subscription.table_url}",
        )

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        if subscription.table_url not in self._subscriptions:  # nobody follows it any more
            task = self._probes.pop(subscription.table_url, None)
            if task is not None:
                task.cancel()

    async def _stop_probes(self) -> None:
        tasks = list(self._probes.values())
        self._probes.clear()
        await cancel_and_wait(tasks)

    async def _close(self) -> None:
        await self._stop_probes()

    async def _probe(self, table_url: str, root: str, file_io: Any, wake_first: bool = False) -> None:
        path = f"{root}/snapshot"
        seen: object = None
        first = not wake_first
        while True:
            try:
                self.probes += 1
                mtime = await asyncio.to_thread(_modification_time, file_io, path)
            except Exception as exc:  # noqa: BLE001 - a NameNode hiccup: the safety check still runs
                self.probe_errors += 1
                logger.warning("%r: looking at %s failed: %s", self, path, exc)
            else:
                if not first and mtime != seen:
                    self._dispatch(SnapshotHint(table_url, None, self.probe_source))
                seen, first = mtime, False
            await asyncio.sleep(self.interval)

    def metrics(self) -> dict[str, Any]:
        return {"probes": self.probes, "probe_errors": self.probe_errors, "tables": len(self._probes)}
