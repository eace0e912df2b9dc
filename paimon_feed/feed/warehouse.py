"""WarehouseFeed: every table of a warehouse (or those matching patterns) as one stream.

::

    async with WarehouseFeed("/data/wh", tables=["sales.*", "ops.events"], consumer_id="etl") as feed:
        async for batch in feed:            # batch.table == "sales.orders"
            process(batch.table, batch.to_arrow())
            await feed.commit(batch)

Each table is followed by its own :class:`~paimon_feed.ChangeFeed` (so resume, integrity checks,
expiry and per-table order are exactly a ChangeFeed's, and each table checkpoints in its own
consumer file), all on **one** notifier per kind of table location (:mod:`.notifying`): a REST or
JDBC catalog's tables are watched where the catalog says they live. A table found after the feed
started (its directory appeared in a filesystem catalog's warehouse, or the listing every
``discovery_interval`` seconds shows it) is followed from its first snapshot; a dropped table ends
its stream with a log line and a count in :meth:`metrics`.

Batches of all tables meet in one bounded queue whose waiting producers are served in order,
so a busy table cannot starve the others; at most ``tables × (max_pending + 1)`` batch *plans*
(not rows) are held in memory.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from paimon_feed._units import Duration
from paimon_feed.batch import FeedBatch
from paimon_feed.errors import ConfigurationError, FeedClosedError
from paimon_feed.feed.config import check_duration, check_notifier, unknown_keyword
from paimon_feed.feed.feed import ChangeFeed
from paimon_feed.feed.following import Done, Failure, Following
from paimon_feed.feed.notifying import SharedNotifiers
from paimon_feed.feed.stats import FeedMetrics
from paimon_feed.feed.sync import SyncChangeFeed
from paimon_feed.notifiers import Notifier
from paimon_feed.routing import TableSelector

__all__ = ["WarehouseFeed", "WarehouseMetrics", "SyncWarehouseFeed"]

logger = logging.getLogger(__name__)

_FEED_OPTIONS = set(inspect.signature(ChangeFeed.__init__).parameters) - {"self", "table", "notifier"}


@dataclass(frozen=True)
class WarehouseMetrics:
    """Per-table :class:`FeedMetrics` and the warehouse's own counters."""

    tables: dict[str, FeedMetrics] = field(default_factory=dict)
    tables_discovered: int = 0
    tables_dropped: int = 0
    tables_failed: int = 0
    listings: int = 0


class WarehouseFeed:
    """Follow many tables of a warehouse through one notifier and one queue.

    Args:
        warehouse: a warehouse path or URL (a REST catalog's warehouse name), or a pypaimon
            catalog.
        catalog_options: extra catalog options (``fs.s3.endpoint``, ``metastore``, ``uri``,
            ...) for a path, URL or name.
        tables: ``fnmatch`` patterns over ``db.table`` (``"sales.*"``); default every table.
        start: where each table present at start begins (a stored checkpoint wins); a table
            created later starts at its first snapshot (``"earliest"``).
        discovery_interval: time between listings (seconds, ``"1m"``, a ``timedelta``) of the warehouse (new and dropped tables);
            with local push, new tables are found as their directories appear.
        on_table_error: ``"raise"`` (the error surfaces at the next ``__anext__`` and the feed
            ends) or ``"skip"`` (that table stops, logged and counted; the others go on).
        notifier: ``"auto"`` (by each table's location: inotify for local tables), a name, or a
            :class:`Notifier` the caller owns; one notifier serves every table of a kind.
        **feed_options: every other :class:`ChangeFeed` option (``consumer_id``, ``end``,
            ``include_row_kind``, ``max_pending``, ``auto_commit``, ``on_expired``, ...), applied
            to each table.
    """

    def __init__(
        self,
        warehouse: Any,
        *,
        catalog_options: Mapping[str, str] | None = None,
        tables: Iterable[str] | str | None = None,
        start: Any = "latest-full",
        discovery_interval: Duration = 60.0,
        on_table_error: str = "raise",
        notifier: str | Notifier = "auto",
        **feed_options: Any,
    ) -> None:
        for key in sorted(set(feed_options) - _FEED_OPTIONS):
            raise unknown_keyword("WarehouseFeed", key, [
                "catalog_options", "tables", "start", "discovery_interval", "on_table_error",
                "notifier", *sorted(_FEED_OPTIONS),
            ])
        if on_table_error not in ("raise", "skip"):
            raise ConfigurationError(f"on_table_error must be 'raise' or 'skip', got {on_table_error!r}")
        discovery_s = check_duration("discovery_interval", discovery_interval)
        if isinstance(warehouse, str):
            from paimon_feed.tables import open_catalog

            self.warehouse = warehouse
            self._catalog = open_catalog(warehouse, catalog_options)
        elif hasattr(warehouse, "list_databases") and hasattr(warehouse, "get_table"):
            self._catalog = warehouse
            self.warehouse = str(getattr(warehouse, "warehouse", "") or type(warehouse).__name__)
        else:
            raise ConfigurationError(
                f"warehouse must be a path, a URL or a pypaimon catalog, got {type(warehouse).__name__}"
            )
        self.table_name = self.warehouse  # for SyncChangeFeed's thread name and messages
        self.consumer_id = feed_options.get("consumer_id")
        self.selector = TableSelector(tables)
        self.start_spec = start
        self.discovery_interval = discovery_s
        self.on_table_error = on_table_error
        self.auto_commit = bool(feed_options.pop("auto_commit", False))
        self.max_pending = int(feed_options.get("max_pending", 8))
        self._feed_options = feed_options
        check_notifier(notifier, self.warehouse, self._notifier_options())
        self._notifiers = SharedNotifiers(notifier, self._notifier_options())
        self._following = Following(
            warehouse=self.warehouse, catalog=self._catalog, selector=self.selector, start=start,
            discovery_interval=self.discovery_interval, on_table_error=on_table_error,
            feed_options=feed_options,
        )
        self._queue: asyncio.Queue[Any] | None = None
        self._stop_watch: Callable[[], None] | None = None
        self._started = self._closed = self._finished = False
        self._last_yielded: FeedBatch | None = None
        self._listeners: list[Callable[[FeedBatch, float], None]] = []

    def _notifier_options(self) -> dict[str, Any]:
        return {key: self._feed_options[key] for key in ("poll_interval", "sqs_queue_url")
                if key in self._feed_options}

    async def __aenter__(self) -> WarehouseFeed:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Open the notifier, follow every matching table, and start discovery."""
        if self._closed:
            raise FeedClosedError(f"feed of warehouse {self.warehouse} is closed; create a new one")
        if self._started:
            return
        self._started = True
        self._queue = asyncio.Queue(maxsize=self.max_pending)
        self._following.attach(self._notifiers.for_location, self._queue)
        try:
            self._watch_for_new_tables()
            await self._following.refresh(initial=True)
            # A queue asked for that cannot be read fails the start here (its tables' feeds
            # found it first; a skipped table must not hide it).
            for notifier in self._notifiers.opened():
                await notifier.ready()
        except BaseException:
            await self.close()
            raise
        logger.info("warehouse feed of %s started: %d tables", self.warehouse, len(self.tables()))
        self._following.start_discovery()

    def _watch_for_new_tables(self) -> None:
        """Hear of new tables at once where the catalog's listing is a directory; otherwise
        (REST, JDBC) say once how they are found."""
        from paimon_feed.tables import catalog_directory

        directory = catalog_directory(self._catalog)
        if directory is None:
            logger.info("warehouse %s: its catalog lists the tables; new ones are found by listing "
                        "it every %gs (discovery_interval)", self.warehouse, self.discovery_interval)
            return
        notifier = self._notifiers.for_location(directory)
        self._stop_watch = notifier.watch_warehouse(directory, self._following.relist)

    async def close(self) -> None:
        """Stop every table's feed and discovery. Idempotent; uncommitted batches stay so."""
        if self._closed:
            return
        self._closed = True
        if self._stop_watch is not None:
            self._stop_watch()
        await self._following.close()
        await self._notifiers.close()
        logger.info("warehouse feed of %s closed", self.warehouse)

    def __del__(self) -> None:
        if getattr(self, "_started", False) and not getattr(self, "_closed", True):
            warnings.warn(f"unclosed WarehouseFeed of {self.warehouse}; use 'async with'",
                          ResourceWarning, stacklevel=1)

    def __aiter__(self) -> AsyncIterator[FeedBatch]:
        return self

    async def __anext__(self) -> FeedBatch:
        if self._closed:
            raise FeedClosedError(f"feed of warehouse {self.warehouse} is closed")
        if not self._started:
            await self.start()
        if self.auto_commit and self._last_yielded is not None:
            await self.commit(self._last_yielded)
            self._last_yielded = None
        queue = self._queue
        assert queue is not None  # start() made it
        while not self._finished:
            item = await queue.get()
            if isinstance(item, Done):
                self._finished = True
            elif isinstance(item, Failure):
                self._finished = True
                raise item.error
            else:
                table, batch = item
                assert isinstance(batch, FeedBatch)
                if table.closed:
                    continue  # its table was dropped or skipped after this was planned
                self._last_yielded = batch
                latency = max(0.0, time.time() - batch.commit_time_ms / 1000)
                for listener in self._listeners:
                    listener(batch, latency)
                return batch
        raise StopAsyncIteration

    async def commit(self, batch: FeedBatch) -> None:
        """Record that ``batch`` is processed, in its table's consumer file (see
        :meth:`ChangeFeed.commit`). A batch of a table no longer followed is ignored."""
        table = self._following.get(batch.table)
        if table is None:
            logger.debug("commit of %s ignored: the table is no longer followed", batch.table)
            return
        await table.feed.commit(batch)

    def on_delivery(self, listener: Callable[[FeedBatch, float], None]) -> Callable[[], None]:
        """Call ``listener(batch, latency_seconds)`` for each batch handed to the consumer."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def sync(self) -> SyncWarehouseFeed:
        """A blocking iterator over this feed for non-async code."""
        return SyncWarehouseFeed(self)

    def tables(self) -> list[str]:
        """The tables followed now, sorted."""
        return sorted(self._following.feeds())

    def table_feeds(self) -> dict[str, ChangeFeed]:
        """Each followed table's :class:`ChangeFeed` (for metrics collectors)."""
        return self._following.feeds()

    def metrics(self) -> WarehouseMetrics:
        return WarehouseMetrics(
            tables={name: feed.metrics() for name, feed in sorted(self.table_feeds().items())},
            tables_discovered=self._following.discovered, tables_dropped=self._following.dropped,
            tables_failed=self._following.failed, listings=self._following.listings,
        )


class SyncWarehouseFeed(SyncChangeFeed):
    """Blocking use of a :class:`WarehouseFeed` (see :class:`~paimon_feed.SyncChangeFeed`)."""

    _feed: WarehouseFeed

    def tables(self) -> list[str]:
        return self._feed.tables()
