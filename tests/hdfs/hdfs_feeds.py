"""What several HDFS push tests do alike: feeds woken by hints alone, and a ``WarehouseFeed`` that
can learn of a table created after its start only from the inotify stream."""

from __future__ import annotations

from support.feeds import consume
from support.tables import catalog, commit, create_append_table, create_pk_table

from paimon_feed import WarehouseFeed

__all__ = ["PUSH_ONLY", "warehouse_finds_a_new_table"]

# Only a hint can wake these feeds within a test: no polling, no safety check.
PUSH_ONLY = {"poll_interval": 3600, "reconcile_interval": 3600}


async def warehouse_finds_a_new_table(warehouse: str, notifier, on_found=None):
    """Follow ``warehouse`` (one table, ``db.events``, committed to), create ``db.orders`` and
    commit to it; the feed lists the warehouse only at its start, so only the stream can show
    the new table. Returns (the first delivery, the one with the new table, ``db.events``,
    ``db.orders``, what ``on_found()`` returned)."""
    cat = catalog(warehouse)
    events = create_append_table(cat)
    commit(events, 0)
    async with notifier, WarehouseFeed(warehouse, consumer_id="etl", start="earliest", notifier=notifier,
                                       discovery_interval=3600, **PUSH_ONLY) as feed:
        first = await consume(feed, until=lambda d: 0 in d.commits)
        orders = create_pk_table(cat)
        commit(orders, 0)
        found = await consume(feed, until=lambda d: any(b.table == "db.orders" for b in d.batches))
        extra = on_found() if on_found is not None else None
    first.assert_exactly(events, [0])
    assert [row["commit"] for index, row in found.rows if found.batches[index].table == "db.orders"] == [0]
    return first, found, events, orders, extra
