"""History integrity: a rolled-back, re-created or damaged table is an error (or the chosen
policy), never a silent wrong history. Oracles: the rows each commit wrote, and pypaimon's own
batch read of the table after the event."""

from __future__ import annotations

import asyncio
import json
import os
import shutil

import fastavro
import pyarrow as pa
import pytest
from pypaimon import Schema
from support.feeds import consume
from support.tables import APPEND_SCHEMA, commit, table_dir

from paimon_feed import ChangeFeed, DamagedMetadataError, HistoryRewrittenError
from paimon_feed.checkpoint import CheckpointStore

NOTIFIERS = ["local", "poll"]


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def feed_of(table, notifier, **options):
    return ChangeFeed(
        table, notifier=notifier, poll_interval=0.05, reconcile_interval=0.5, **options
    )


def commits_upto(table, first, last):
    for n in range(first, last + 1):
        commit(table, n)


def table_rows(table) -> list[dict]:
    """pypaimon's own batch read of the table as it is now (the oracle after an event)."""
    builder = table.new_read_builder()
    splits = builder.new_scan().plan().splits()
    rows = builder.new_read().to_arrow(splits).to_pylist()
    return sorted(rows, key=lambda row: row["id"])


async def read_until_error(feed, delivered: list, error: type[BaseException]):
    with pytest.raises(error) as caught:
        async for batch in feed:
            delivered.append((batch.first_snapshot_id, batch.snapshot_id, batch.to_arrow().to_pylist()))
            await feed.commit(batch)
    return caught.value


@pytest.mark.parametrize("notifier", NOTIFIERS)
@pytest.mark.parametrize("new_commits", [2, 6], ids=["table-shorter", "table-longer"])
def test_a_rollback_under_a_running_feed_is_an_error(append_table, notifier, new_commits):
    commits_upto(append_table, 0, 6)  # snapshots 1..7

    async def main():
        async with feed_of(append_table, notifier, consumer_id="etl", start="earliest") as feed:
            seen = await consume(feed, until=lambda d: 6 in d.commits)
            seen.assert_exactly(append_table, range(7))
            append_table.rollback_to(3)
            # New commits re-use the ids 4, 5, ...: shorter or longer than what was read.
            commits_upto(append_table, 100, 100 + new_commits - 1)
            error = await read_until_error(feed, [], HistoryRewrittenError)
            return error, feed.metrics()

    error, metrics = run(main())
    assert error.table == "db.events" and error.snapshot_id == 7
    assert "snapshot 7" in str(error) and "on_history_rewritten" in str(error)
    assert metrics.last_delivered_snapshot_id == 7 and metrics.committed_next_snapshot_id == 8
    with open(CheckpointStore.for_table(append_table, "etl").path) as handle:
        assert json.load(handle) == {"nextSnapshot": 8}  # nothing committed past the rewrite


def test_a_restarted_consumer_refuses_a_history_rolled_back_under_it(append_table):
    commits_upto(append_table, 0, 6)

    async def first_run():
        async with feed_of(append_table, "poll", consumer_id="etl", start="earliest") as feed:
            await consume(feed, until=lambda d: 6 in d.commits)

    run(first_run())
    store = CheckpointStore.for_table(append_table, "etl")
    with open(store.path, "rb") as handle:
        assert handle.read() == b'{\n  "nextSnapshot" : 8\n}'  # Java's bytes, untouched
    append_table.rollback_to(3)
    commits_upto(append_table, 100, 105)  # snapshots 4..9: the table is longer than before

    async def second_run():
        async with feed_of(append_table, "poll", consumer_id="etl") as feed:
            return await read_until_error(feed, [], HistoryRewrittenError)

    error = run(second_run())
    assert error.snapshot_id == 7 and "another commit" in str(error)


def test_latest_full_policy_restarts_from_the_table_as_it_is_now(append_table):
    commits_upto(append_table, 0, 6)

    async def main():
        async with feed_of(
            append_table, "local", consumer_id="etl", start="earliest",
            on_history_rewritten="latest-full",
        ) as feed:
            await consume(feed, until=lambda d: 6 in d.commits)
            append_table.rollback_to(3)
            commits_upto(append_table, 100, 101)  # snapshots 4, 5
            oracle = table_rows(append_table)
            restarted = await consume(feed, until=lambda d: True)
            commit(append_table, 102)  # snapshot 6: delivered as a change after the full batch
            after = await consume(feed, until=lambda d: 102 in d.commits)
            return restarted, after, oracle, feed.metrics()

    restarted, after, oracle, metrics = run(main())
    (full,) = restarted.batches
    assert full.kind == "full" and full.snapshot_id == 5
    assert sorted((row for _, row in restarted.rows), key=lambda row: row["id"]) == oracle
    assert {row["commit"] for row in oracle} == {0, 1, 2, 100, 101}
    after.assert_exactly(append_table, [102])
    assert after.batches[0].first_snapshot_id == 6
    assert metrics.history_rewrites == 1
    # The checkpoint moved back to the new history (it was at 8) and a restart goes on there.
    assert CheckpointStore.for_table(append_table, "etl").load() == 7
    commit(append_table, 103)

    async def restarted_feed():
        async with feed_of(append_table, "poll", consumer_id="etl") as feed:
            return await consume(feed, until=lambda d: 103 in d.commits)

    run(restarted_feed()).assert_exactly(append_table, [103])


def test_a_table_dropped_and_recreated_under_a_running_feed_is_an_error(cat, append_table):
    commits_upto(append_table, 0, 2)  # snapshots 1..3

    async def main():
        async with feed_of(append_table, "local", consumer_id="etl", start="earliest") as feed:
            await consume(feed, until=lambda d: 2 in d.commits)
            cat.drop_table("db.events", False)
            wider = APPEND_SCHEMA.append(pa.field("extra", pa.string()))
            cat.create_table("db.events", Schema.from_pyarrow_schema(wider), False)
            recreated = cat.get_table("db.events")
            for n in range(5):  # the new table's 1..5 pass the old position
                commit_wider(recreated, n, wider)
            return await read_until_error(feed, [], HistoryRewrittenError)

    error = run(main())
    assert error.snapshot_id == 3


def commit_wider(table, n, schema):
    from paimon_feed.tables import commit_arrow

    rows = [{"id": n, "commit": n, "payload": "new", "extra": "x"}]
    commit_arrow(table, pa.Table.from_pylist(rows, schema=schema))


def test_a_snapshot_file_holding_another_snapshot_is_an_error(append_table):
    commits_upto(append_table, 0, 2)  # snapshots 1..3
    snapshot_dir = os.path.join(table_dir(append_table), "snapshot")
    shutil.copy(os.path.join(snapshot_dir, "snapshot-3"), os.path.join(snapshot_dir, "snapshot-4"))

    async def main():
        delivered: list = []
        async with feed_of(append_table, "poll", consumer_id="etl", start="earliest") as feed:
            error = await read_until_error(feed, delivered, DamagedMetadataError)
        return delivered, error

    delivered, error = run(main())
    assert [(first, last) for first, last, _ in delivered] == [(1, 1), (2, 2), (3, 3)]
    assert "snapshot-4 holds snapshot 3" in str(error)
    assert CheckpointStore.for_table(append_table, "etl").load() == 4


def _empty_avro_like(path: str) -> None:
    """Rewrite ``path`` as a valid Avro file of the same schema with no records."""
    with open(path, "rb") as handle:
        schema = fastavro.reader(handle).writer_schema
    with open(path, "wb") as handle:
        fastavro.writer(handle, schema, [])


@pytest.mark.parametrize("damage", ["list-empty", "manifest-empty", "manifest-cut"])
def test_damaged_manifests_are_an_error_after_what_was_planned_before(append_table, damage):
    commits_upto(append_table, 0, 3)  # snapshots 1..4; snapshot 3 is damaged
    snapshot = append_table.snapshot_manager().get_snapshot_by_id(3)
    manifest_dir = os.path.join(table_dir(append_table), "manifest")
    damaged = os.path.join(manifest_dir, snapshot.delta_manifest_list)
    if damage != "list-empty":
        with open(damaged, "rb") as handle:
            (record,) = list(fastavro.reader(handle))
        damaged = os.path.join(manifest_dir, record["_FILE_NAME"])
    if damage == "manifest-cut":
        size = os.path.getsize(damaged)
        with open(damaged, "r+b") as handle:
            handle.truncate(size * 2 // 3)
    else:
        _empty_avro_like(damaged)

    async def main():
        delivered: list = []
        # One round plans 1 and 2, then meets the damage: 1 and 2 are delivered first.
        async with feed_of(append_table, "poll", consumer_id="etl", start="earliest") as feed:
            error = await read_until_error(feed, delivered, DamagedMetadataError)
        return delivered, error

    delivered, error = run(main())
    assert [(first, last) for first, last, _ in delivered] == [(1, 1), (2, 2)]
    assert [row["commit"] for _, _, rows in delivered for row in rows] == [0, 0, 0, 1, 1, 1]
    message = str(error)
    assert "db.events" in message and "snapshot 3" in message
    assert os.path.basename(damaged) in message and "bytes where" in message
    assert CheckpointStore.for_table(append_table, "etl").load() == 3  # never past the damage


def test_a_rollback_to_after_the_position_rewrites_nothing_read(append_table):
    """Snapshots after the last one read were never delivered: rolling them back is no error."""
    commits_upto(append_table, 0, 2)  # snapshots 1..3

    async def main():
        async with feed_of(append_table, "poll", consumer_id="etl", start="earliest", end=2) as feed:
            await consume(feed, until=lambda d: 1 in d.commits)
        append_table.rollback_to(2)
        commits_upto(append_table, 100, 101)  # snapshots 3, 4
        async with feed_of(append_table, "poll", consumer_id="etl") as feed:
            return await consume(feed, until=lambda d: 101 in d.commits)

    delivered = run(main())
    delivered.assert_exactly(append_table, [100, 101])


def test_the_mark_file_is_beside_the_consumer_file_and_not_a_consumer(append_table):
    commits_upto(append_table, 0, 1)

    async def main():
        async with feed_of(append_table, "poll", consumer_id="etl", start="earliest") as feed:
            await consume(feed, until=lambda d: 1 in d.commits)

    run(main())
    consumer_dir = os.path.join(table_dir(append_table), "consumer")
    assert sorted(os.listdir(consumer_dir)) == [".paimon-feed-etl.mark", "consumer-etl"]
    marked = CheckpointStore.for_table(append_table, "etl").load_mark()
    snapshot = append_table.snapshot_manager().get_snapshot_by_id(2)
    assert marked is not None and marked[0] == 3
    assert marked[1].snapshot_id == 2 and marked[1].delta_manifest_list == snapshot.delta_manifest_list


def test_snapshots_read_ahead_before_a_rollback_are_not_planned_from_the_cache(append_table):
    """A rollback to a snapshot at or after the position rewrites nothing read, so no history
    check fires; snapshots the planner had read ahead must not stand in for the new ones."""
    from paimon_feed.planner import Planner

    commits_upto(append_table, 0, 4)  # snapshots 1..5
    planner = Planner(append_table, catch_up_threshold=100)
    planned = planner.next_batches(1, limit=3)
    assert [b.snapshot_id for b in planned.batches] == [1, 2, 3]
    assert planner.snapshot_mark(5) is not None  # read ahead, cached
    append_table.rollback_to(3)
    commits_upto(append_table, 100, 101)  # new snapshots 4, 5
    planned = planner.next_batches(planned.next_snapshot_id, limit=8)
    commits = [row["commit"] for batch in planned.batches for row in batch.to_arrow().to_pylist()]
    assert [b.snapshot_id for b in planned.batches] == [4, 5]
    assert commits == [100] * 3 + [101] * 3


def test_a_partial_column_commit_of_a_data_evolution_table_is_refused_not_delivered_as_rows(cat):
    """pypaimon reads a file of only some columns as rows with the others null; the feed
    refuses that batch, after delivering the full-row commit before it."""
    from pypaimon import Schema

    from paimon_feed import UnsupportedTableError
    from paimon_feed.tables import commit_arrow

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
    cat.create_table("db.evolving", Schema.from_pyarrow_schema(schema, options=options), False)
    table = cat.get_table("db.evolving")
    commit_arrow(table, pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write().with_write_type(["v"]), builder.new_commit()
    writer.write_arrow(pa.table({"v": ["A", "B"]}))
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()

    async def main():
        delivered: list = []
        async with feed_of(table, "poll", start="earliest") as feed:
            error = await read_until_error(feed, delivered, UnsupportedTableError)
        return delivered, error

    delivered, error = run(main())
    assert [rows for _, _, rows in delivered] == [[{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]]
    assert "snapshot 2 writes only the columns v" in str(error)


def test_an_expired_anchor_passes_at_once_and_a_vanished_one_is_read_again_first(append_table):
    from support.tables import expire_snapshots

    from paimon_feed.planner import Planner
    from paimon_feed.progress import Progress

    commits_upto(append_table, 0, 6)  # snapshots 1..7
    progress = Progress(Planner(append_table))
    pauses: list[float] = []
    progress.sleep = pauses.append
    progress.anchor_at(3)  # the mark of snapshot 2
    expire_snapshots(append_table, keep_from=4)
    progress.verify()  # expired: nothing to compare, and nothing to wait for
    assert pauses == []
    progress.anchor_at(6)  # snapshot 5, then gone inside the retained range 4..7
    os.remove(os.path.join(table_dir(append_table), "snapshot", "snapshot-5"))
    with pytest.raises(HistoryRewrittenError, match="snapshot 5 no longer exists, though snapshots 4..7 do"):
        progress.verify()
    assert len(pauses) == 3  # read again over ~1 s before it counts as gone
