"""WarehouseFeed: every table of a warehouse (or those matching patterns) as one stream.

::

    async with WarehouseFeed("/data/wh", tables=["sales.*", "ops.events"], consumer_id="etl") as feed:
        async for batch in feed:            # batch.table == "sales.orders"
            process(batch.table, batch.to_arrow())
            await feed.commit(batch)

Each table is followed by its own :class:`~paimon_feed.ChangeFeed` (so resume, integrity checks,
expiry and per-table order are exactly a ChangeFeed's, and each table checkpoints in its own
consumer file), all on **one** notifier. A table found after the feed started (its directory
appeared, or the listing every ``discovery_interval`` seconds shows it) is followed from its
first snapshot; a dropped table ends its stream with a log line and a count in :meth:`metrics`.

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

from paimon_feed._aio import cancel_and_wait
from paimon_feed.batch import FeedBatch
from paimon_feed.errors import ConfigurationError, FeedClosedError, TableNotFoundError
from paimon_feed.feed import ChangeFeed, FeedMetrics, SyncChangeFeed
from paimon_feed.notifiers import Notifier, create_notifier
from paimon_feed.routing import TableSelector, list_tables

__all__ = ["WarehouseFeed", "WarehouseMetrics", "SyncWarehouseFeed"]

logger = logging.getLogger(__name__)

_OPENING_AT_ONCE = 8  # tables opened concurrently (each open reads a few metadata files)
_NOT_READY_RETRY = 0.05  # seconds; a new table directory whose schema is not written yet
_NOT_READY_ATTEMPTS = 40
_FEED_OPTIONS = set(inspect.signature(ChangeFeed.__init__).parameters) - {"self", "table", "notifier"}


@dataclass(frozen=True)
class WarehouseMetrics:
    """Per-table :class:`FeedMetrics` and the warehouse's own counters."""

    tables: dict[str, FeedMetrics] = field(default_factory=dict)
    tables_discovered: int = 0
    tables_dropped: int = 0
    tables_failed: int = 0
    listings: int = 0


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Done:
    pass


@dataclass(eq=False)
class _Table:
    name: str
    feed: ChangeFeed
    pump: asyncio.Task[None] | None = None
    closed: bool = False
    ended: bool = False


class WarehouseFeed:
    """Follow many tables of a warehouse through one notifier and one queue.

    Args:
        warehouse: a warehouse path or URL, or a pypaimon catalog.
        catalog_options: extra catalog options (``fs.s3.endpoint``, ...) for a path or URL.
        tables: ``fnmatch`` patterns over ``db.table`` (``"sales.*"``); default every table.
        start: where each table present at start begins (a stored checkpoint wins); a table
            created later starts at its first snapshot (``"earliest"``).
        discovery_interval: seconds between listings of the warehouse (new and dropped tables);
            with local push, new tables are found as their directories appear.
        on_table_error: ``"raise"`` (the error surfaces at the next ``__anext__`` and the feed
            ends) or ``"skip"`` (that table stops, logged and counted; the others go on).
        notifier: ``"auto"`` (by the warehouse's scheme), a name, or a :class:`Notifier` the
            caller owns; one notifier serves every table.
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
        discovery_interval: float = 60.0,
        on_table_error: str = "raise",
        notifier: str | Notifier = "auto",
        **feed_options: Any,
    ) -> None:
        unknown = sorted(set(feed_options) - _FEED_OPTIONS)
        if unknown:
            raise ConfigurationError(
                f"WarehouseFeed got unknown options {unknown}; ChangeFeed options are "
                f"{sorted(_FEED_OPTIONS)}"
            )
        if on_table_error not in ("raise", "skip"):
            raise ConfigurationError(f"on_table_error must be 'raise' or 'skip', got {on_table_error!r}")
        if not isinstance(discovery_interval, (int, float)) or discovery_interval <= 0:
            raise ConfigurationError(f"discovery_interval must be > 0 seconds, got {discovery_interval!r}")
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
        self.discovery_interval = float(discovery_interval)
        self.on_table_error = on_table_error
        self.auto_commit = bool(feed_options.pop("auto_commit", False))
        self.max_pending = int(feed_options.get("max_pending", 8))
        self._feed_options = feed_options
        self._notifier_spec = notifier
        if isinstance(notifier, str):
            create_notifier(notifier, self.warehouse, **self._notifier_options())
        elif not isinstance(notifier, Notifier):
            raise ConfigurationError(f"notifier must be a name or a Notifier, got {notifier!r}")
        self._notifier: Notifier | None = None
        self._owns_notifier = False
        self._tables: dict[str, _Table] = {}
        self._skipped: set[str] = set()
        self._queue: asyncio.Queue[Any] | None = None
        self._relist = asyncio.Event()
        self._discovery: asyncio.Task[None] | None = None
        self._stop_watch: Callable[[], None] | None = None
        self._started = self._closed = self._finished = False
        self._last_yielded: FeedBatch | None = None
        self._listeners: list[Callable[[FeedBatch, float], None]] = []
        self._discovered = self._dropped = self._failed = self._listings = 0

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
        if isinstance(self._notifier_spec, Notifier):
            self._notifier = self._notifier_spec
        else:
            self._notifier = create_notifier(self._notifier_spec, self.warehouse, **self._notifier_options())
            self._owns_notifier = True
        try:
            self._stop_watch = self._notifier.watch_warehouse(self.warehouse, self._relist.set)
            await self._refresh(initial=True)
        except BaseException:
            await self.close()
            raise
        logger.info("warehouse feed of %s started: %d tables", self.warehouse, len(self._tables))
        self._discovery = asyncio.get_running_loop().create_task(
            self._discover(), name=f"paimon-feed-warehouse-{self.warehouse}"
        )

    async def close(self) -> None:
        """Stop every table's feed and discovery. Idempotent; uncommitted batches stay so."""
        if self._closed:
            return
        self._closed = True
        if self._stop_watch is not None:
            self._stop_watch()
        tasks = [t.pump for t in self._tables.values() if t.pump is not None]
        if self._discovery is not None:
            tasks.append(self._discovery)
        await cancel_and_wait(tasks)
        await asyncio.gather(*(self._close_table(t) for t in list(self._tables.values())))
        if self._owns_notifier and self._notifier is not None:
            await self._notifier.close()
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
            if isinstance(item, _Done):
                self._finished = True
            elif isinstance(item, _Failure):
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
        table = self._tables.get(batch.table)
        if table is None or table.closed:
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
        return sorted(name for name, table in self._tables.items() if not table.closed)

    def table_feeds(self) -> dict[str, ChangeFeed]:
        """Each followed table's :class:`ChangeFeed` (for metrics collectors)."""
        return {name: t.feed for name, t in self._tables.items() if not t.closed}

    def metrics(self) -> WarehouseMetrics:
        return WarehouseMetrics(
            tables={name: feed.metrics() for name, feed in sorted(self.table_feeds().items())},
            tables_discovered=self._discovered, tables_dropped=self._dropped,
            tables_failed=self._failed, listings=self._listings,
        )

    async def _discover(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._relist.wait(), self.discovery_interval)
            except asyncio.TimeoutError:
                pass
            self._relist.clear()
            try:
                await self._refresh(initial=False)
            except Exception as exc:  # noqa: BLE001 - a failed listing is retried next time
                logger.warning("listing warehouse %s failed: %s; retrying in %.0fs",
                               self.warehouse, exc, self.discovery_interval)

    async def _refresh(self, *, initial: bool) -> None:
        """List the warehouse: follow new matching tables, end dropped ones."""
        self._listings += 1
        names = set(await asyncio.to_thread(list_tables, self._catalog, self.selector))
        for name in sorted(set(self._tables) - names):
            await self._end_table(self._tables[name], "dropped from the warehouse")
        self._skipped &= names  # a skipped table that was dropped may come back as a new one
        new = sorted(names - set(self._tables) - self._skipped)
        semaphore = asyncio.Semaphore(_OPENING_AT_ONCE)

        async def follow(name: str) -> None:
            async with semaphore:
                await self._follow(name, self.start_spec if initial else "earliest", initial)

        await asyncio.gather(*(follow(name) for name in new))

    async def _follow(self, name: str, start: Any, initial: bool) -> None:
        feed = None
        for _ in range(_NOT_READY_ATTEMPTS):
            try:
                feed = await asyncio.to_thread(self._open, name, start)
                break
            except TableNotFoundError:
                # A directory without a schema yet (being created): look again shortly; after
                # that, the next listing does.
                await asyncio.sleep(_NOT_READY_RETRY)
            except Exception as exc:  # noqa: BLE001 - the table error policy decides
                await self._table_failed(name, None, exc)
                return
        if feed is None or self._closed or name in self._tables:
            return
        table = self._tables[name] = _Table(name, feed)
        try:
            await feed.start()
        except Exception as exc:  # noqa: BLE001 - the table error policy decides
            await self._table_failed(name, table, exc)
            return
        if not initial:
            self._discovered += 1
            logger.info("warehouse %s: new table %s followed from its first snapshot",
                        self.warehouse, name)
        table.pump = asyncio.get_running_loop().create_task(self._pump(table), name=f"paimon-feed-{name}")

    def _open(self, name: str, start: Any) -> ChangeFeed:
        from paimon_feed.tables import open_table

        table = open_table(self.warehouse, name, catalog=self._catalog)
        assert self._notifier is not None  # start() opened it before following any table
        return ChangeFeed(table, start=start, notifier=self._notifier, **self._feed_options)

    async def _pump(self, table: _Table) -> None:
        queue = self._queue
        assert queue is not None  # start() made it before following any table
        try:
            async for batch in table.feed:
                await queue.put((table, batch))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the table error policy decides
            await self._table_failed(table.name, table, exc)
            return
        table.ended = True
        if all(t.ended or t.closed for t in self._tables.values()):
            await queue.put(_Done())

    async def _table_failed(self, name: str, table: _Table | None, exc: BaseException) -> None:
        if table is not None and not await self._still_exists(table):
            await self._end_table(table, "dropped from the warehouse")
            return
        self._failed += 1
        if self.on_table_error == "skip":
            logger.warning("warehouse %s: table %s skipped after an error: %s", self.warehouse, name, exc)
            self._skipped.add(name)
            if table is not None:
                await self._end_table(table, None)
            return
        assert self._queue is not None  # start() made it before following any table
        await self._queue.put(_Failure(exc))

    async def _still_exists(self, table: _Table) -> bool:
        path = f"{str(table.feed.table.table_path).rstrip('/')}/schema"
        return await asyncio.to_thread(table.feed.table.file_io.exists, path)

    async def _end_table(self, table: _Table, reason: str | None) -> None:
        if table.closed:
            return
        table.closed = True
        if reason is not None:
            self._dropped += 1
            logger.warning("warehouse %s: table %s %s; its stream ends", self.warehouse, table.name, reason)
        if table.pump is not None and table.pump is not asyncio.current_task():
            await cancel_and_wait([table.pump])
        await self._close_table(table)
        if self._tables.get(table.name) is table:
            del self._tables[table.name]

    @staticmethod
    async def _close_table(table: _Table) -> None:
        table.closed = True
        await table.feed.close()


class SyncWarehouseFeed(SyncChangeFeed):
    """Blocking use of a :class:`WarehouseFeed` (see :class:`~paimon_feed.SyncChangeFeed`)."""

    _feed: WarehouseFeed

    def tables(self) -> list[str]:
        return self._feed.tables()
