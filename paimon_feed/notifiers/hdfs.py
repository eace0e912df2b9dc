"""HdfsNotifier: push for ``hdfs://`` tables from the NameNode's inotify stream.

A commit on HDFS renames ``.snapshot-N.<uuid>.tmp`` to ``snapshot/snapshot-N``; the NameNode's
inotify stream (``HdfsAdmin.getInotifyEventStream``) reports that rename, and this notifier turns
it into a hint for the table. One stream per process and namespace serves every table and every
feed (:mod:`paimon_feed.notifiers._hdfs_stream`, a small JVM helper on the cluster's Hadoop
client), so a ``WarehouseFeed`` of a hundred tables costs the NameNode one poll of the stream per
``stream_poll_interval``, not a hundred probes. Hints are only wake-ups (DESIGN invariants 1-3):
the feed's safety check still runs, and while the helper is down (it is started again from its
last transaction) feeds poll.

The stream needs HDFS superuser rights. DESIGN invariant 16:

- ``notifier="auto"`` without them (or without Java and a Hadoop client): one WARNING at the
  start, naming the cost, and the tables are polled the cheap way
  (:class:`~paimon_feed.notifiers.hdfs_poll.HdfsPollingNotifier`, one NameNode call per table per
  10 s);
- ``notifier="hdfs"`` without them: :class:`~paimon_feed.errors.ConfigurationError` before the
  first batch.

A ``viewfs://`` table is pushed by the stream of the nameservice its mount point leads to
(:mod:`paimon_feed.notifiers._viewfs`, the mount table in ``HADOOP_CONF_DIR``): a federated
namespace gets one stream per nameservice its tables live on, and each renamed snapshot file
wakes the ``viewfs://`` tables that show it. A table no link of the conf covers is polled.
An HA nameservice (``hdfs://<nameservice>``) has one stream; its Hadoop client fails over.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlparse

from paimon_feed._layout import snapshot_id_from_name
from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers._hdfs_stream import (
    START_TIMEOUT,
    InotifyStream,
    Listener,
    StreamUnavailable,
    acquire,
    hadoop_classpath,
    release,
)
from paimon_feed.notifiers._viewfs import MountTable, mount_table
from paimon_feed.notifiers.base import SnapshotHint, Subscription, normalize_table_url
from paimon_feed.notifiers.hdfs_poll import HDFS_POLL_INTERVAL, HdfsPollingNotifier

__all__ = ["HdfsNotifier", "STREAM_POLL_INTERVAL"]

logger = logging.getLogger(__name__)

#: Seconds between two polls of the inotify stream while nothing happens: 18,000 NameNode
#: calls an hour for the whole namespace, a rename seen ~0.1 s after it happened.
STREAM_POLL_INTERVAL = 0.2

_PUSH_HOW = (
    "run the feed as the HDFS superuser (or a member of dfs.permissions.superusergroup), with "
    "Java and the cluster's Hadoop client (PAIMON_FEED_HADOOP_CLASSPATH or `hadoop` on PATH)"
)


def namespace_of(table_url: str) -> str:
    """``hdfs://host:port`` (or ``hdfs://nameservice``) of a table URL.

    >>> namespace_of("hdfs://nn:8020/wh/db.db/t")
    'hdfs://nn:8020'
    """
    parsed = urlparse(table_url)
    return f"{parsed.scheme.lower()}://{parsed.netloc}"


class HdfsNotifier(HdfsPollingNotifier):
    """Hints from the NameNode's inotify stream; polls (cheaply) where the stream cannot be read.

    Args:
        required: raise :class:`ConfigurationError` from :meth:`ready` if the stream cannot be
            read (``notifier="hdfs"``); otherwise warn once and poll (``notifier="auto"``).
        hadoop_classpath: the Hadoop client's jars (default ``$PAIMON_FEED_HADOOP_CLASSPATH``,
            else ``hadoop classpath --glob``); ``$HADOOP_CONF_DIR`` is put first.
        stream_poll_interval: seconds between polls of the stream while it is idle.
        interval: seconds between the looks at a table's ``snapshot/`` when polling.
    """

    source = "hdfs"

    def __init__(
        self,
        *,
        required: bool = False,
        hadoop_classpath: str | None = None,
        stream_poll_interval: float = STREAM_POLL_INTERVAL,
        interval: float = HDFS_POLL_INTERVAL,
    ) -> None:
        super().__init__(interval=interval)
        if stream_poll_interval <= 0:
            raise ValueError(f"stream_poll_interval must be > 0 seconds, got {stream_poll_interval}")
        self.required = required
        self.stream_poll_interval = stream_poll_interval
        self._hadoop_classpath = hadoop_classpath
        self._streams: dict[str, InotifyStream] = {}
        self._listeners: dict[str, Listener] = {}
        self._polled: dict[str, str] = {}  # namespace -> why it is polled
        self._warehouses: list[tuple[str, Callable[[], None]]] = []  # (namespace + root/, on_change)
        self._namespaces: dict[str, str] = {}  # table URL -> the namespace whose stream serves it
        self._mount_tables: dict[str, MountTable] = {}  # viewfs cluster -> its mount table
        self._warned = False

    def __repr__(self) -> str:
        return f"HdfsNotifier(required={self.required}, namespaces={sorted(self._streams) + sorted(self._polled)})"

    @property
    def pushing(self) -> bool:
        """Whether at least one namespace is served by its inotify stream."""
        return any(stream.ready.done() and not stream.ready.exception() for stream in self._streams.values()
                   if not stream.ready.cancelled())

    def _namespace_of(self, table_url: str) -> str:
        """The namespace whose stream serves a table: its own for ``hdfs://``, the one its
        mount point leads to for ``viewfs://`` (the URL's own if no link covers it)."""
        namespace = self._namespaces.get(table_url)
        if namespace is None:
            namespace = namespace_of(table_url)
            parsed = urlparse(table_url)
            if parsed.scheme == "viewfs":
                table = self._mount_tables.get(parsed.netloc) or mount_table(parsed.netloc)
                resolved = table.resolve(parsed.path or "/") if table is not None else None
                if table is not None and resolved is not None:
                    self._mount_tables[parsed.netloc] = table
                    namespace = resolved[0]
            self._namespaces[table_url] = namespace
        return namespace

    def _on_subscribe(self, subscription: Subscription) -> None:
        if subscription.file_io is None:
            raise ValueError(f"HdfsNotifier needs the table's file_io to look at {subscription.location}")
        namespace = self._namespace_of(subscription.table_url)
        if namespace in self._polled:
            self._start_probe(subscription)
        elif namespace not in self._streams:
            if not namespace.startswith("hdfs://"):
                self._polled[namespace] = (
                    "no mount point of the viewfs mount table in HADOOP_CONF_DIR leads it to an hdfs:// nameservice"
                    if namespace.startswith("viewfs://") else "its mount point leads to a file system that is not HDFS"
                )
                self._start_probe(subscription)
                return
            try:
                classpath = hadoop_classpath(self._hadoop_classpath)
            except StreamUnavailable as exc:
                self._polled[namespace] = str(exc)
                self._start_probe(subscription)
                return
            stream = acquire(namespace, classpath, max(1, round(self.stream_poll_interval * 1000)))
            self._listeners[namespace] = partial(self._on_stream, namespace)
            stream.listeners.add(self._listeners[namespace])
            self._streams[namespace] = stream

    async def ready(self) -> None:
        """Wait until every namespace's stream is open; decide push or poll for those that fail."""
        for namespace, stream in list(self._streams.items()):
            try:
                await asyncio.wait_for(asyncio.shield(stream.ready), START_TIMEOUT)
            except (StreamUnavailable, asyncio.TimeoutError) as exc:
                reason = str(exc) or f"the inotify stream did not open in {START_TIMEOUT:.0f} s"
                await self._give_up(namespace, stream, reason)
        if self._polled:
            self._refuse_or_warn()

    async def _give_up(self, namespace: str, stream: InotifyStream, reason: str) -> None:
        del self._streams[namespace]
        stream.listeners.discard(self._listeners.pop(namespace))
        await release(stream)
        self._polled[namespace] = reason
        for key, subscriptions in self._subscriptions.items():
            if self._namespace_of(key) == namespace and subscriptions:
                self._start_probe(subscriptions[0])

    def _refuse_or_warn(self) -> None:
        reasons = "; ".join(f"{namespace}: {why}" for namespace, why in sorted(self._polled.items()))
        if self.required:
            raise ConfigurationError(
                f"notifier='hdfs' cannot read the NameNode's inotify stream ({reasons}); {_PUSH_HOW}, "
                f"or use notifier='auto' to poll"
            )
        if not self._warned:
            self._warned = True
            logger.warning(
                "HDFS push is not available (%s): polling each table's snapshot/ every %g s instead, "
                "%.0f NameNode calls per table-hour and a commit seen up to %g s late; to push, %s",
                reasons, self.interval, 3600 / self.interval, self.interval, _PUSH_HOW,
            )

    def watch_warehouse(self, warehouse: str, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """Call ``on_change()`` when the stream shows a commit to a table under ``warehouse`` that
        no feed follows yet (a new table): the warehouse feed lists again at once. Where the
        namespace is polled nothing calls it, and the feed's listing finds new tables."""
        if urlparse(warehouse).scheme.lower() not in ("hdfs", "viewfs"):
            return None
        entry = (normalize_table_url(warehouse) + "/", on_change)
        self._warehouses.append(entry)

        def stop() -> None:
            if entry in self._warehouses:
                self._warehouses.remove(entry)

        return stop

    def _on_stream(self, namespace: str, kind: str, path: str, txid: int) -> None:
        if kind == "snapshot":  # path: /wh/db.db/t/snapshot/snapshot-N, within the namespace
            table_path = path[: path.rindex("/snapshot/")]
            snapshot_id = snapshot_id_from_name(path.rsplit("/", 1)[1])
            # The table as hdfs:// names it, and as each viewfs:// mount table shows it.
            tables = [normalize_table_url(namespace + table_path)]
            for mounts in self._mount_tables.values():
                tables += mounts.views(namespace, table_path)
            hinted = sum(self._dispatch(SnapshotHint(table, snapshot_id, self.source)) for table in tables)
            if hinted == 0:  # nobody follows it: a new table of a watched warehouse?
                for root, on_change in list(self._warehouses):
                    if any((table + "/").startswith(root) for table in tables):
                        on_change()
        elif kind == "missed":  # events were lost: wake every table, the feeds look for themselves
            for key in list(self._subscriptions):
                if self._namespace_of(key) == namespace:
                    self._dispatch(SnapshotHint(key, None, "hdfs-missed"))
            for root, on_change in list(self._warehouses):  # a table may have come meanwhile
                if self._namespace_of(root.rstrip("/")) == namespace:
                    on_change()
        elif kind == "down":
            self._poll_while_down(namespace)
        elif kind == "up":
            self._push_again(namespace)

    def _poll_while_down(self, namespace: str) -> None:
        """The helper stopped (it is started again from its last transaction): look at each of
        the namespace's tables every ``interval`` seconds meanwhile, as a non-superuser's feed
        does, rather than let every feed plan each ``poll_interval``. Each feed counts the loss
        as a fallback; the first look wakes it, so nothing committed meanwhile waits."""
        logger.warning(
            "%s: the inotify helper stopped; looking at each table's snapshot/ every %g s until it "
            "is back (%.0f NameNode calls per table-hour)", namespace, self.interval, 3600 / self.interval,
        )
        for key, subscriptions in self._subscriptions.items():
            if self._namespace_of(key) == namespace and subscriptions:
                for subscription in subscriptions:
                    subscription.push_failures += 1
                self._start_probe(subscriptions[0], wake_first=True)

    def _push_again(self, namespace: str) -> None:
        """The helper is back: its stream replays the renames made while it was down, so the
        namespace's probes stop."""
        logger.info("%s: the inotify helper is back; push again", namespace)
        for key in [key for key in self._probes if self._namespace_of(key) == namespace]:
            self._probes.pop(key).cancel()

    async def _close(self) -> None:
        await self._stop_probes()
        streams = list(self._streams.items())
        self._streams.clear()
        for namespace, stream in streams:
            stream.listeners.discard(self._listeners.pop(namespace))
            await release(stream)

    def metrics(self) -> dict[str, Any]:
        streams = list(self._streams.values())
        return {
            **super().metrics(),
            "pushing": self.pushing,
            "renames": sum(len(stream.renames) for stream in streams),
            "last_txid": max((stream.last_txid for stream in streams), default=-1),
            "polled_namespaces": dict(self._polled),
        }
