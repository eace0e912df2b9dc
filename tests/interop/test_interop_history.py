"""Java Paimon rewrites a table's history under a running feed: ``rollbackTo`` a snapshot or a
tag, a dropped and re-created table, a branch fast-forwarded over main. The feed must raise
:class:`HistoryRewrittenError`, or with ``on_history_rewritten="latest-full"`` deliver the table
exactly as Java reads it after the event. Java's own read is the oracle."""

from __future__ import annotations

import asyncio

import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, py_table
from scenarios import COLUMNS, append_rows, pk_rows

from paimon_feed import ChangeFeed, HistoryRewrittenError
from paimon_feed.checkpoint import CheckpointStore

TABLES = {
    "primary-key-input": (pk_rows, dict(primary_keys=["id"], options={"bucket": "2", "changelog-producer": "input"})),
    "append": (append_rows, dict(options={"bucket": "2", "bucket-key": "id"})),
}


async def _read_all(feed, until_snapshot: int) -> list:
    batches = []
    async for batch in feed:
        batches.append((batch, await asyncio.to_thread(lambda: batch.to_arrow().to_pylist())))
        await feed.commit(batch)
        if batch.snapshot_id >= until_snapshot:
            return batches
    return batches


def _follow_then_rewrite(table, make_rows, rewrite, **feed_options):
    """Follow the table to its latest snapshot, run ``rewrite()`` (Java), then read on: what
    the feed raises or delivers next."""
    latest = max(table.write(make_rows(n)) for n in range(1, 8))

    async def run():
        async with ChangeFeed(
            py_table(table), consumer_id="etl", start="earliest", include_row_kind=True,
            **FEED_OPTIONS, **feed_options,
        ) as feed:
            await asyncio.wait_for(_read_all(feed, latest), 60)
            after = await asyncio.to_thread(rewrite)
            return await asyncio.wait_for(_read_all(feed, after), 60), feed.metrics()

    return latest, asyncio.run(run())


@pytest.mark.parametrize("make_rows, kind", TABLES.values(), ids=TABLES.keys())
@pytest.mark.parametrize("target", ["snapshot", "tag"])
def test_a_java_rollback_under_a_running_feed_is_an_error(java, warehouse, make_rows, kind, target):
    table = java.table(warehouse, "db.rolled").create(COLUMNS, **kind)

    def rollback():
        if target == "tag":
            table.create_tag("good", 3)
            table.rollback(tag="good")
        else:
            table.rollback(snapshot=3)
        # New commits re-use the ids 4.. and pass the position the feed had reached.
        return max(table.write(make_rows(n)) for n in range(100, 106))

    with pytest.raises(HistoryRewrittenError) as caught:
        _follow_then_rewrite(table, make_rows, rollback)
    # The last snapshot read before the rollback; the checkpoint did not move past it.
    assert caught.value.table == "db.rolled" and caught.value.snapshot_id > 3
    assert CheckpointStore.for_table(py_table(table), "etl").load() == caught.value.snapshot_id + 1


def test_latest_full_after_a_java_rollback_is_the_table_as_java_reads_it(java, warehouse):
    make_rows, kind = TABLES["primary-key-input"]
    table = java.table(warehouse, "db.rolled").create(COLUMNS, **kind)

    def rollback():
        table.rollback(snapshot=3)
        return max(table.write(make_rows(n)) for n in range(100, 103))  # snapshots 4..6

    _, (batches, metrics) = _follow_then_rewrite(
        table, make_rows, rollback, on_history_rewritten="latest-full"
    )
    (full, rows), = batches
    assert (full.kind, full.snapshot_id) == ("full", table.snapshot_info()["snapshot"])
    assert_same_rows([{k: v for k, v in r.items() if k != "_row_kind"} for r in rows], table.read())
    assert metrics.history_rewrites == 1


@pytest.mark.parametrize("commits", [1, 9], ids=["one-commit", "nine-commits"])
def test_a_table_java_dropped_and_recreated_is_an_error(java, warehouse, commits):
    make_rows, kind = TABLES["append"]
    table = java.table(warehouse, "db.recreated").create(COLUMNS, **kind)

    def recreate():
        table.drop()
        table.create([*COLUMNS, ("extra", "STRING")], **kind)
        # One commit writes no snapshot past the feed's position (7): only the history check
        # of a wake-up that names no newer snapshot can see it.
        return max(
            table.write([{**row, "extra": "x"} for row in make_rows(n)])
            for n in range(100, 100 + commits)
        )

    with pytest.raises(HistoryRewrittenError, match="after snapshot"):
        _follow_then_rewrite(table, make_rows, recreate)


def test_a_branch_java_fast_forwarded_over_main_is_an_error(java, warehouse):
    make_rows, kind = TABLES["append"]
    table = java.table(warehouse, "db.branched").create(COLUMNS, **kind)
    table.write(make_rows(1))
    table.write(make_rows(2))
    table.create_tag("base", 2)
    table.create_branch("fix", "base")
    branch = java.table(warehouse, "db.branched$branch_fix")

    def fast_forward():
        for n in range(100, 108):  # the branch's snapshots 3..10 pass main's position
            branch.write(make_rows(n))
        return table.fast_forward("fix")["snapshot"]

    latest = max(table.write(make_rows(n)) for n in range(3, 8))
    with pytest.raises(HistoryRewrittenError, match=f"after snapshot {latest}"):

        async def run():
            async with ChangeFeed(
                py_table(table), consumer_id="etl", start="earliest", **FEED_OPTIONS
            ) as feed:
                await asyncio.wait_for(_read_all(feed, latest), 60)
                after = await asyncio.to_thread(fast_forward)
                await asyncio.wait_for(_read_all(feed, after), 60)

        asyncio.run(run())
