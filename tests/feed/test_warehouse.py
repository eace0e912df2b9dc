"""WarehouseFeed on real local pypaimon warehouses: many tables, one notifier, one queue."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil

import pytest
from support import tables
from support.tables import append_rows, commit, table_dir

from paimon_feed import ConfigurationError, LocalNotifier, WarehouseFeed
from paimon_feed.checkpoint import CheckpointStore

TIMEOUT = 60  # seconds; a guard against hangs, never a latency assertion


async def take(feed, count: int) -> list:
    batches = []
    async with asyncio.timeout(TIMEOUT):
        while len(batches) < count:
            batch = await feed.__anext__()
            batches.append(batch)
            await feed.commit(batch)
    return batches


def ids_by_table(batches) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for batch in batches:
        rows.setdefault(batch.table, []).extend(batch.to_arrow().column("id").to_pylist())
    return rows


@pytest.fixture
def three_tables(cat):
    cat.create_database("sales", True)
    return {
        name: tables.create_append_table(cat, name)
        for name in ("db.events", "sales.orders", "sales.returns")
    }


def test_patterns_select_tables_and_each_batch_names_its_table(warehouse, three_tables):
    for n, table in enumerate(three_tables.values()):
        commit(table, n)

    async def main():
        async with WarehouseFeed(warehouse, tables=["sales.*"], consumer_id="etl", start="earliest") as feed:
            assert feed.tables() == ["sales.orders", "sales.returns"]
            batches = await take(feed, 2)
            commit(three_tables["sales.orders"], 7)
            commit(three_tables["db.events"], 8)  # not selected
            batches += await take(feed, 1)
            return batches, feed.metrics()

    batches, metrics = asyncio.run(main())
    assert ids_by_table(batches) == {
        "sales.orders": [r["id"] for r in append_rows(1) + append_rows(7)],
        "sales.returns": [r["id"] for r in append_rows(2)],
    }
    assert sorted(metrics.tables) == ["sales.orders", "sales.returns"]
    # each table checkpoints in its own consumer file
    assert CheckpointStore.for_table(three_tables["sales.orders"], "etl").load() == 3
    assert CheckpointStore.for_table(three_tables["sales.returns"], "etl").load() == 2
    assert CheckpointStore.for_table(three_tables["db.events"], "etl").load() is None


def test_a_table_created_while_running_is_followed_from_its_first_snapshot(warehouse, cat, three_tables):
    async def main():
        async with WarehouseFeed(warehouse, start="latest", discovery_interval=3600) as feed:
            assert len(feed.tables()) == 3
            new = await asyncio.to_thread(tables.create_append_table, cat, "db.late")
            for n in (1, 2):
                await asyncio.to_thread(commit, new, n)
            batches = await take(feed, 1)
            while sum(b.snapshot_count for b in batches) < 2:
                batches += await take(feed, 1)
            return batches, feed.tables(), feed.metrics()

    batches, followed, metrics = asyncio.run(main())
    # found by push (the listing interval is an hour), from snapshot 1 on
    assert "db.late" in followed and metrics.tables_discovered == 1
    assert ids_by_table(batches) == {"db.late": [r["id"] for r in append_rows(1) + append_rows(2)]}


def test_a_dropped_table_ends_its_stream_with_a_log_line_and_a_count(warehouse, cat, three_tables, caplog):
    caplog.set_level(logging.WARNING, logger="paimon_feed.feed.warehouse")

    async def main():
        async with WarehouseFeed(warehouse, start="latest", discovery_interval=3600) as feed:
            await asyncio.to_thread(cat.drop_table, "sales.returns", False)
            async with asyncio.timeout(TIMEOUT):
                while "sales.returns" in feed.tables():
                    await asyncio.sleep(0.01)
            commit(three_tables["db.events"], 5)  # the others go on
            batches = await take(feed, 1)
            return batches, feed.metrics()

    batches, metrics = asyncio.run(main())
    assert [b.table for b in batches] == ["db.events"]
    assert metrics.tables_dropped == 1 and "sales.returns" not in metrics.tables
    assert any("sales.returns" in r.getMessage() and "dropped" in r.getMessage() for r in caplog.records)


def test_without_push_a_listing_finds_new_tables(warehouse, cat, three_tables):
    async def main():
        async with WarehouseFeed(warehouse, start="latest", notifier="poll", poll_interval=0.05,
                                 discovery_interval=0.1) as feed:
            new = await asyncio.to_thread(tables.create_append_table, cat, "db.polled")
            await asyncio.to_thread(commit, new, 3)
            return await take(feed, 1), feed.metrics()

    batches, metrics = asyncio.run(main())
    assert [b.table for b in batches] == ["db.polled"] and metrics.listings >= 2


def test_on_table_error_skip_stops_that_table_only(warehouse, cat, three_tables):
    async def main():
        # 'commit' exists in every table; a projection of a missing column fails one table.
        await asyncio.to_thread(
            cat.create_table, "db.other",
            tables.Schema.from_pyarrow_schema(tables.pa.schema([("x", tables.pa.int64())])), False,
        )
        async with WarehouseFeed(warehouse, start="latest", projection=["id"],
                                 on_table_error="skip") as feed:
            assert "db.other" not in feed.tables() and len(feed.tables()) == 3
            commit(three_tables["sales.orders"], 4)
            return await take(feed, 1), feed.metrics()

    batches, metrics = asyncio.run(main())
    assert [b.table for b in batches] == ["sales.orders"] and metrics.tables_failed == 1


def test_on_table_error_raise_surfaces_at_the_next_batch(warehouse, cat, three_tables):
    async def main():
        async with WarehouseFeed(warehouse, start="earliest", end=1) as feed:
            commit(three_tables["db.events"], 1)
            shutil.rmtree(os.path.join(table_dir(three_tables["db.events"]), "manifest"))
            async with asyncio.timeout(TIMEOUT):
                async for _ in feed:
                    pass

    with pytest.raises(Exception, match="db.events"):
        asyncio.run(main())


def test_one_notifier_serves_every_table_and_unknown_options_are_refused(warehouse, three_tables):
    with pytest.raises(ConfigurationError, match="unknown keyword argument 'consumer' .did you mean 'consumer_id'.."):
        WarehouseFeed(warehouse, consumer="typo")

    async def main():
        async with LocalNotifier() as notifier:
            async with WarehouseFeed(warehouse, notifier=notifier, start="latest") as feed:
                return sorted(notifier.subscribed_tables()), feed.tables()

    subscribed, followed = asyncio.run(main())
    assert len(subscribed) == len(followed) == 3


def test_sync_and_auto_commit(warehouse, three_tables):
    commit(three_tables["db.events"], 1)
    with WarehouseFeed(warehouse, tables="db.*", start="earliest", consumer_id="s",
                       auto_commit=True).sync() as feed:
        batch = next(feed)
        assert feed.tables() == ["db.events"]
        commit(three_tables["db.events"], 2)
        second = next(feed)  # asking for it commits the first
    assert (batch.snapshot_id, second.snapshot_id) == (1, 2)
    assert CheckpointStore.for_table(three_tables["db.events"], "s").load() == 2


def test_a_warehouse_that_cannot_be_watched_is_said_once_and_found_by_listing(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="paimon_feed")
    warehouse = str(tmp_path / "not-yet")  # no directory: inotify cannot watch it

    def said(level: int) -> list[logging.LogRecord]:
        return [r for r in caplog.records
                if r.getMessage().startswith("cannot watch warehouse") and r.levelno >= level]

    async def main():
        async with WarehouseFeed(warehouse, notifier=LocalNotifier(retry_interval=0.01, max_retry_interval=0.02),
                                 start="earliest", discovery_interval=0.1) as feed:
            async with asyncio.timeout(TIMEOUT):
                while len(said(logging.DEBUG)) < 3:  # three tries to watch it, at least
                    await asyncio.sleep(0.01)
            cat = await asyncio.to_thread(tables.catalog, warehouse)  # makes the directory
            table = await asyncio.to_thread(tables.create_append_table, cat)
            await asyncio.to_thread(commit, table, 1)
            return await take(feed, 1), feed.metrics()

    batches, metrics = asyncio.run(main())
    assert [(b.table, b.to_arrow().to_pylist()) for b in batches] == [("db.events", append_rows(1))]
    assert len(said(logging.DEBUG)) >= 3 and len(said(logging.WARNING)) == 1


def test_tables_are_watched_by_the_notifier_of_their_own_location():
    from paimon_feed.feed.notifying import SharedNotifiers
    from paimon_feed.notifiers import PollingNotifier

    async def main():
        notifiers = SharedNotifiers("auto", {"poll_interval": 0.5})
        local = notifiers.for_location("file:/data/wh/db.db/a")
        chosen = [local, notifiers.for_location("/data/wh/db.db/b"), notifiers.for_location("oss://b/wh/db.db/c")]
        await notifiers.close()
        return chosen, notifiers.opened()

    (first, second, remote), after_close = asyncio.run(main())
    assert isinstance(first, LocalNotifier) and second is first  # one notifier per kind
    assert isinstance(remote, PollingNotifier) and after_close == []
