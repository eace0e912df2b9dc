"""The tables a :class:`~paimon_feed.feed.warehouse.WarehouseFeed` follows: discovery (a listing
at the start, then every ``discovery_interval`` seconds or when the notifier sees a new table
directory, or just the table a notifier's event names), one :class:`~paimon_feed.feed.ChangeFeed` per table on the shared notifier, a pump
from each into the shared queue, and what a failed or dropped table changes.

Items on the shared queue: ``(Followed, FeedBatch)`` pairs, :class:`Done` when every table's
stream has ended, and :class:`Failure` for an error the ``"raise"`` policy hands to the consumer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed.errors import TableNotFoundError
from paimon_feed.feed.feed import ChangeFeed
from paimon_feed.notifiers import Notifier, normalize_table_url
from paimon_feed.routing import TableSelector, list_tables, table_of_url

__all__ = ["Following", "Followed", "Done", "Failure"]

logger = logging.getLogger("paimon_feed.feed.warehouse")

_OPENING_AT_ONCE = 8  # tables opened concurrently (each open reads a few metadata files)
_NOT_READY_RETRY = 0.05  # seconds; a new table directory whose schema is not written yet
_NOT_READY_ATTEMPTS = 40


class Failure:
    """Queue item: a table's error, raised at the consumer (``on_table_error="raise"``)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Done:
    """Queue sentinel: every followed table's stream has ended."""


@dataclass(eq=False)
class Followed:
    """One followed table: its feed and the task that pumps its batches into the queue."""

    name: str
    feed: ChangeFeed
    pump: asyncio.Task[None] | None = None
    closed: bool = False
    ended: bool = False


class Following:
    """The followed tables of one warehouse (see the module docstring)."""

    def __init__(
        self,
        *,
        warehouse: str,
        catalog: Any,
        selector: TableSelector,
        start: Any,
        discovery_interval: float,
        on_table_error: str,
        feed_options: dict[str, Any],
    ) -> None:
        self.warehouse = warehouse
        self._catalog = catalog
        self._selector = selector
        self._start = start
        self._discovery_interval = discovery_interval
        self._on_table_error = on_table_error
        self._feed_options = feed_options
        self._notifier_for: Callable[[str], Notifier] | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._tables: dict[str, Followed] = {}
        self._skipped: set[str] = set()
        self._opening: dict[str, asyncio.Task[None]] = {}  # tables an event named, being opened
        self._closing = False
        self._relist = asyncio.Event()
        self._discovery: asyncio.Task[None] | None = None
        self.discovered = self.dropped = self.failed = self.listings = 0

    def attach(self, notifier_for: Callable[[str], Notifier], queue: asyncio.Queue[Any]) -> None:
        """The started warehouse feed's notifiers (the one for a table's location) and queue,
        before any table is followed."""
        self._notifier_for, self._queue = notifier_for, queue

    def relist(self, table_url: str | None = None) -> None:
        """A table may have appeared: open just the table at ``table_url`` when the notifier's
        event named one under the warehouse (the listing stays the safety net), else list the
        warehouse again now."""
        name = table_of_url(normalize_table_url(self.warehouse), table_url)[0] if table_url else None
        if name is None:
            self._relist.set()
            return
        if self._closing or name in self._tables or name in self._skipped or name in self._opening:
            return
        if not self._selector.matches(name):
            return
        self._opening[name] = asyncio.get_running_loop().create_task(
            self._follow_named(name), name=f"paimon-feed-open-{name}")

    async def _follow_named(self, name: str) -> None:
        try:
            await self._follow(name, "earliest", initial=False)
        finally:
            self._opening.pop(name, None)
        if name not in self._tables and name not in self._skipped and not self._closing:
            self._relist.set()  # not openable yet (its schema not written): the listing looks again

    def start_discovery(self) -> None:
        """List the warehouse in the background from now on."""
        self._discovery = asyncio.get_running_loop().create_task(
            self._discover(), name=f"paimon-feed-warehouse-{self.warehouse}"
        )

    def get(self, name: str) -> Followed | None:
        """The table ``name`` if it is followed now."""
        table = self._tables.get(name)
        return None if table is None or table.closed else table

    def feeds(self) -> dict[str, ChangeFeed]:
        """Each followed table's feed, by name."""
        return {name: t.feed for name, t in self._tables.items() if not t.closed}

    async def _discover(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._relist.wait(), self._discovery_interval)
            except asyncio.TimeoutError:
                pass
            self._relist.clear()
            try:
                await self.refresh(initial=False)
            except Exception as exc:  # noqa: BLE001 - a failed listing is retried next time
                logger.warning("listing warehouse %s failed: %s; retrying in %.0fs",
                               self.warehouse, exc, self._discovery_interval)

    async def refresh(self, *, initial: bool) -> None:
        """List the warehouse: follow new matching tables, end dropped ones. Tables present at
        the first listing begin at the feed's start; later ones at their first snapshot."""
        self.listings += 1
        names = set(await asyncio.to_thread(list_tables, self._catalog, self._selector))
        for name in sorted(set(self._tables) - names):
            await self._end(self._tables[name], "dropped from the warehouse")
        self._skipped &= names  # a skipped table that was dropped may come back as a new one
        new = sorted(names - set(self._tables) - self._skipped - set(self._opening))
        semaphore = asyncio.Semaphore(_OPENING_AT_ONCE)

        async def follow(name: str) -> None:
            async with semaphore:
                await self._follow(name, self._start if initial else "earliest", initial)

        await asyncio.gather(*(follow(name) for name in new))

    async def close(self) -> None:
        """Stop discovery and every pump, then close every table's feed."""
        self._closing = True
        tasks = [t.pump for t in self._tables.values() if t.pump is not None]
        tasks.extend(self._opening.values())
        if self._discovery is not None:
            tasks.append(self._discovery)
        await cancel_and_wait(tasks)
        await asyncio.gather(*(self._close(t) for t in list(self._tables.values())))

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
                await self._failed(name, None, exc)
                return
        if feed is None or self._closing or name in self._tables:
            return
        table = self._tables[name] = Followed(name, feed)
        try:
            await feed.start()
        except Exception as exc:  # noqa: BLE001 - the table error policy decides
            await self._failed(name, table, exc)
            return
        if not initial:
            self.discovered += 1
            logger.info("warehouse %s: new table %s followed from its first snapshot",
                        self.warehouse, name)
        table.pump = asyncio.get_running_loop().create_task(self._pump(table), name=f"paimon-feed-{name}")

    def _open(self, name: str, start: Any) -> ChangeFeed:
        from paimon_feed.tables import open_table

        table = open_table(self.warehouse, name, catalog=self._catalog)
        assert self._notifier_for is not None  # attach() comes before any table is followed
        notifier = self._notifier_for(str(table.table_path))
        return ChangeFeed(table, start=start, notifier=notifier, **self._feed_options)

    async def _pump(self, table: Followed) -> None:
        queue = self._queue
        assert queue is not None  # attach() comes before any table is followed
        try:
            async for batch in table.feed:
                await queue.put((table, batch))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the table error policy decides
            await self._failed(table.name, table, exc)
            return
        table.ended = True
        if all(t.ended or t.closed for t in self._tables.values()):
            await queue.put(Done())

    async def _failed(self, name: str, table: Followed | None, exc: BaseException) -> None:
        if table is not None and not await self._still_exists(table):
            await self._end(table, "dropped from the warehouse")
            return
        self.failed += 1
        if self._on_table_error == "skip":
            logger.warning("warehouse %s: table %s skipped after an error: %s", self.warehouse, name, exc)
            self._skipped.add(name)
            if table is not None:
                await self._end(table, None)
            return
        assert self._queue is not None  # attach() comes before any table is followed
        await self._queue.put(Failure(exc))

    @staticmethod
    async def _still_exists(table: Followed) -> bool:
        path = f"{str(table.feed.table.table_path).rstrip('/')}/schema"
        return await asyncio.to_thread(table.feed.table.file_io.exists, path)

    async def _end(self, table: Followed, reason: str | None) -> None:
        if table.closed:
            return
        table.closed = True
        if reason is not None:
            self.dropped += 1
            logger.warning("warehouse %s: table %s %s; its stream ends", self.warehouse, table.name, reason)
        if table.pump is not None and table.pump is not asyncio.current_task():
            await cancel_and_wait([table.pump])
        await self._close(table)
        if self._tables.get(table.name) is table:
            del self._tables[table.name]

    @staticmethod
    async def _close(table: Followed) -> None:
        table.closed = True
        await table.feed.close()
