"""Scenarios 8, 9 and 11: Java's snapshot expiration against the feed's consumer files.

The README's promise: checkpoints are Paimon consumer files, so Java's expiration keeps
every snapshot a consumer has not read. Here Java itself expires (on every commit, through
``snapshot.num-retained.*``, and explicitly), reads the consumer files the feed wrote, and
writes consumer files the feed resumes from.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, feed_changes, follow, last_changed_snapshot, py_table
from scenarios import COLUMNS

from paimon_feed import ChangeFeed, FeedError, SnapshotExpiredError

# Every Java commit expires all but the last three snapshots, unless a consumer holds them.
RETAIN_THREE = {
    "snapshot.num-retained.min": "3",
    "snapshot.num-retained.max": "3",
}


ONE_BUCKET = {"bucket": "1", "bucket-key": "id"}


def rows(n: int) -> list[dict]:
    return [{"id": n * 10 + i, "commit": n, "payload": f"c{n}-{i}"} for i in range(3)]


def write_commits(table, commits) -> None:
    for n in commits:
        table.write(rows(n))


async def _drain(feed, seen, until_snapshot: int | None = None) -> None:
    """Take batches (rows included) until one reaches ``until_snapshot``; a feed error ends it."""
    async for batch in feed:
        rows = await asyncio.to_thread(lambda: batch.to_arrow().to_pylist())
        seen.rows.extend((len(seen.batches), row) for row in rows)
        seen.batches.append(batch)
        if until_snapshot is not None and batch.snapshot_id >= until_snapshot:
            return


async def _follow_to(table, *, java_writes=None, commit: bool = True, **feed_options):
    async with ChangeFeed(py_table(table), **{**FEED_OPTIONS, **feed_options}) as feed:
        return await follow(feed, java_writes, lambda: last_changed_snapshot(table), commit=commit)


def test_java_expiration_keeps_what_a_lagging_consumer_has_not_read(java, warehouse):
    table = java.table(warehouse, "db.events").create(COLUMNS, options={**ONE_BUCKET, **RETAIN_THREE})
    write_commits(table, range(1, 4))
    first = asyncio.run(_follow_to(table, consumer_id="etl", start="earliest"))
    checkpoint = first.batches[-1].snapshot_id + 1
    assert table.consumer("etl")["next_snapshot"] == checkpoint  # Java reads the feed's checkpoint

    # The consumer is away: Java commits nine times, expiring on each commit, then explicitly.
    write_commits(table, range(4, 13))
    table.expire_snapshots(1)
    info = table.snapshot_info()
    assert info["snapshot"] >= checkpoint + 9
    assert info["earliest"] == checkpoint, "Java expired a snapshot the consumer has not read"

    # Back, it resumes at its checkpoint and reads every row, while Java goes on committing.
    resumed = asyncio.run(_follow_to(table, consumer_id="etl", java_writes=lambda: write_commits(table, range(13, 16))))
    assert resumed.batches[0].first_snapshot_id == checkpoint
    last = resumed.batches[-1].snapshot_id
    assert_same_rows([row for _, row in resumed.rows], [r for n in range(4, 16) for r in rows(n)])
    assert table.consumer("etl")["next_snapshot"] == last + 1

    # Its progress releases the snapshots it read, and only those.
    table.expire_snapshots(1)
    assert table.snapshot_info()["earliest"] == min(last + 1, table.snapshot_info()["snapshot"])


@pytest.mark.parametrize(
    "notifier",
    ["local", "poll"],  # a poller hints only existing snapshots: the safety check finds expiry
)
def test_without_consumer_id_java_expiration_raises_snapshot_expired_naming_the_gap(java, warehouse, notifier):
    # write-only: commits neither compact nor expire; only the explicit expiry below does.
    table = java.table(warehouse, "db.events").create(COLUMNS, options={**ONE_BUCKET, "write-only": "true"})
    write_commits(table, range(1, 3))

    async def run():
        options = {**FEED_OPTIONS, "notifier": notifier}
        async with ChangeFeed(py_table(table), start="earliest", max_pending=1, catch_up_threshold=100, **options) as feed:
            seen = await follow(feed, None, lambda: 2)
            # The consumer pauses; Java commits and expires what the feed has not read. Done
            # on the event loop's thread: the feed cannot look before the expiry is complete.
            write_commits(table, range(3, 12))
            expired = table.expire_snapshots(3)
            with pytest.raises(SnapshotExpiredError) as caught:
                await asyncio.wait_for(_drain(feed, seen), 5)
            return seen, caught.value, expired

    seen, error, expired = asyncio.run(run())
    assert expired["earliest"] == error.earliest_snapshot_id == 9
    # No gap delivered: the error names the first snapshot it could not read, right after
    # the last batch, and every row before it came.
    assert error.snapshot_id == seen.batches[-1].snapshot_id + 1
    assert error.snapshot_id < error.earliest_snapshot_id
    assert f"snapshot {error.snapshot_id} expired" in str(error)
    delivered = {row["commit"] for _, row in seen.rows}
    assert delivered == set(range(1, max(delivered) + 1))


def test_a_batch_whose_files_java_expired_before_it_was_read_fails_with_a_feed_error(java, warehouse):
    table = java.table(warehouse, "db.events").create(COLUMNS, options={**ONE_BUCKET, "write-only": "true"})
    write_commits(table, range(1, 3))

    async def run():
        async with ChangeFeed(py_table(table), start="earliest", max_pending=1, notifier="local") as feed:
            await follow(feed, None, lambda: 2)
            await asyncio.to_thread(write_commits, table, [3])
            deadline = time.monotonic() + 10
            while feed.metrics().batches_planned <= feed.metrics().batches_delivered:
                assert time.monotonic() < deadline, "the feed never planned snapshot 3"
                await asyncio.sleep(0.02)
            # Snapshot 3's batch waits in the queue; Java compacts and expires its files.
            await asyncio.to_thread(table.compact, options={"write-only": "false"})
            await asyncio.to_thread(table.expire_snapshots, 1)
            batch = await asyncio.wait_for(feed.__anext__(), 5)
            assert batch.snapshot_id == 3
            with pytest.raises(SnapshotExpiredError, match=r"db\.events: snapshot 3 .*data file"):
                await asyncio.to_thread(batch.to_arrow)

    asyncio.run(run())


def test_java_consumer_expiration_removes_a_stale_feed_consumer_and_keeps_a_fresh_one(java, warehouse):
    table = java.table(warehouse, "db.events").create(COLUMNS, options={**ONE_BUCKET, **RETAIN_THREE})
    table.write(rows(1))
    asyncio.run(_follow_to(table, consumer_id="stale", start="earliest"))
    assert table.consumer("stale")["next_snapshot"] == 2
    time.sleep(1.5)
    write_commits(table, range(2, 7))
    assert table.snapshot_info()["earliest"] == 2, "the stale consumer holds expiration back"
    fresh = asyncio.run(_follow_to(table, consumer_id="fresh", start="latest-full")).batches[-1].snapshot_id + 1
    assert table.consumer("fresh")["next_snapshot"] == fresh

    # A commit with consumer.expiration-time expires consumers idle for longer than that, and
    # then snapshots as far as the retention and the remaining consumer allow.
    table.write(rows(7), options={"consumer.expiration-time": "1 s"})
    assert table.consumer("stale")["next_snapshot"] is None
    assert table.consumer("fresh")["next_snapshot"] == fresh
    info = table.snapshot_info()
    assert info["earliest"] == min(info["snapshot"] - 2, fresh) > 2, info


def test_java_consumer_manager_reads_feed_commits_and_the_feed_resumes_from_java_consumer(java, warehouse):
    table = java.table(warehouse, "db.events").create(COLUMNS, options={"bucket": "2", "bucket-key": "id"})
    write_commits(table, range(1, 6))
    delivered = asyncio.run(_follow_to(table, consumer_id="feed-made", start="earliest", catch_up_threshold=100))
    assert table.consumer("feed-made")["next_snapshot"] == delivered.batches[-1].snapshot_id + 1 == 6

    # A consumer file written by Java's ConsumerManager: the feed resumes exactly there,
    # whatever its start says.
    table.consumer("java-made", set=3)
    resumed = asyncio.run(_follow_to(table, consumer_id="java-made", start="latest"))
    assert resumed.batches[0].first_snapshot_id == 3
    assert_same_rows(feed_changes(resumed), table.changes(after=2, to=5)["rows"])
    assert table.consumer("java-made")["next_snapshot"] == 6


def test_changelog_retained_past_its_snapshot_is_read_or_refused_clearly(java, warehouse):
    """Scenario 11: ``changelog.num-retained.*`` above the snapshot retention keeps changelog
    files after their snapshots expired; Java's streaming read goes on from them."""
    options = {
        "bucket": "1",
        "changelog-producer": "input",
        **RETAIN_THREE,
        "changelog.num-retained.min": "1",
        "changelog.num-retained.max": "50",
        "changelog.time-retained": "1 h",
    }
    table = java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options)
    write_commits(table, range(1, 3))

    async def run():
        options = {**FEED_OPTIONS, "notifier": "local"}  # see POLL_NEVER_SEES_EXPIRY
        async with ChangeFeed(
            py_table(table), start="earliest", max_pending=1, catch_up_threshold=100, include_row_kind=True, **options
        ) as feed:
            seen = await follow(feed, None, lambda: 2)
            write_commits(table, range(3, 12))  # on the loop's thread: the feed waits meanwhile
            try:
                await asyncio.wait_for(_drain(feed, seen, until_snapshot=11), 10)
            except FeedError as exc:
                return seen, exc
            return seen, None

    seen, error = asyncio.run(run())
    info = table.snapshot_info()
    assert info["earliest_changelog"] is not None and info["earliest_changelog"] <= 3 < info["earliest"], info
    # Java's streaming read goes on through the changelog files of the expired snapshots.
    java_changes = [row for row in table.changes(after=2, to=info["snapshot"])["rows"] if row["commit"] <= 11]
    assert {row["commit"] for row in java_changes} == set(range(3, 12))
    if error is None:
        feed_rows = [row for row in feed_changes(seen) if 3 <= row["commit"] <= 11]
        assert_same_rows(feed_rows, java_changes, with_kind=True)
    else:
        # Today: the feed refuses, naming the first snapshot whose file is gone, with no gap.
        assert isinstance(error, SnapshotExpiredError), error
        assert error.snapshot_id == seen.batches[-1].snapshot_id + 1
        assert error.snapshot_id < error.earliest_snapshot_id
        delivered = {row["commit"] for _, row in seen.rows}
        assert delivered == set(range(1, max(delivered) + 1))
