"""ChangeFeed end to end on real pypaimon tables, with writers committing concurrently."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from support.feeds import consume, has_commit
from support.tables import commit, expire_snapshots, table_dir

from paimon_feed import (
    ChangeFeed,
    CheckpointError,
    ConfigurationError,
    HistoryRewrittenError,
    InvalidConsumerIdError,
    InvalidStartError,
    LocalNotifier,
    SnapshotExpiredError,
)
from paimon_feed.notifiers import SnapshotHint


def run(coroutine):
    return asyncio.run(coroutine)


def consumer_file(table, consumer_id):
    return os.path.join(table_dir(table), "consumer", f"consumer-{consumer_id}")


# --- exactly once, in order, while another process commits -------------------------------------


@pytest.mark.parametrize("row_kind", [False, True])
def test_every_committed_row_is_delivered_once_in_order_while_a_writer_process_commits(
    any_table, start_writer, row_kind
):
    commit(any_table, 0)
    last = 60

    async def main():
        async with ChangeFeed(any_table, include_row_kind=row_kind, max_pending=4) as feed:
            writer = start_writer(any_table, 1, last, interval=0.005)
            delivered = await consume(feed, until=has_commit(last))
            writer.wait()
            return delivered, feed.metrics()

    delivered, metrics = run(main())
    delivered.assert_exactly(any_table, range(0, last + 1), row_kind=row_kind)
    assert delivered.batches[0].kind == "full"
    expected_kind = "changelog" if any_table.is_primary_key_table else "delta"
    assert {b.kind for b in delivered.batches[1:]} <= {expected_kind, "catch-up"}
    assert metrics.hints_by_source.get("local", 0) > 0
    assert metrics.last_delivered_snapshot_id == delivered.batches[-1].snapshot_id


def test_primary_key_changelog_carries_updates_and_deletes_with_row_kinds(pk_table):
    for n in range(3):
        commit(pk_table, n)

    async def main():
        async with ChangeFeed(pk_table, start="earliest", include_row_kind=True) as feed:
            return await consume(feed, until=has_commit(2))

    delivered = run(main())
    delivered.assert_exactly(pk_table, [0, 1, 2], row_kind=True)
    kinds = {row["_row_kind"] for _, row in delivered.rows}
    assert kinds == {"+I", "+U", "-D"}


# --- start and end positions --------------------------------------------------------------------


def _run_positions(table, start, end=None, until=None):
    async def main():
        async with ChangeFeed(table, start=start, end=end) as feed:
            if until is None:
                return await consume(feed, until=lambda d: False)
            return await consume(feed, until=until)

    return run(main())


def test_latest_full_starts_with_the_whole_table_then_changes(append_table):
    for n in range(3):
        commit(append_table, n)
    delivered = _run_positions(append_table, "latest-full", end=3, until=None)
    assert delivered.batches[0].kind == "full"
    assert sorted(set(delivered.commits)) == [0, 1, 2]


def test_latest_skips_what_was_committed_before_the_feed_started(append_table):
    commit(append_table, 0)
    commit(append_table, 1)

    async def main():
        async with ChangeFeed(append_table, start="latest") as feed:
            commit(append_table, 2)
            return await consume(feed, until=has_commit(2))

    delivered = run(main())
    delivered.assert_exactly(append_table, [2])


def test_earliest_and_snapshot_positions_read_changes_from_that_snapshot(append_table):
    for n in range(5):
        commit(append_table, n)  # commit n is snapshot n + 1
    earliest = _run_positions(append_table, "earliest", end=5)
    earliest.assert_exactly(append_table, range(5))
    from_three = _run_positions(append_table, "snapshot:3", end=5)
    from_three.assert_exactly(append_table, [2, 3, 4])
    assert from_three.batches[0].first_snapshot_id == 3
    bare_int = _run_positions(append_table, 4, end=4)
    bare_int.assert_exactly(append_table, [3])


def test_end_is_inclusive_and_the_feed_stops_by_itself(append_table):
    for n in range(6):
        commit(append_table, n)
    delivered = _run_positions(append_table, "snapshot:2", end=4)
    delivered.assert_exactly(append_table, [1, 2, 3])
    assert delivered.batches[-1].snapshot_id == 4


def test_time_positions_start_after_the_instant(append_table):
    commit(append_table, 0)
    commit(append_table, 1)
    time.sleep(0.05)
    middle = time.time()
    time.sleep(0.05)
    commit(append_table, 2)
    commit(append_table, 3)
    instant = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(middle)) + f".{int(middle % 1 * 1000):03d}Z"
    after_middle = _run_positions(append_table, f"time:{instant}", end=4)
    after_middle.assert_exactly(append_table, [2, 3])
    last_hour = _run_positions(append_table, "time:-1h", end=4)
    last_hour.assert_exactly(append_table, [0, 1, 2, 3])


def test_an_empty_table_waits_for_its_first_commit(append_table):
    async def main():
        async with ChangeFeed(append_table, reconcile_interval=30) as feed:
            await asyncio.sleep(0.3)
            assert feed.metrics().batches_planned == 0
            commit(append_table, 0)
            return await consume(feed, until=has_commit(0))

    delivered = run(main())
    delivered.assert_exactly(append_table, [0])
    assert delivered.batches[0].kind == "full"


def test_a_consumer_far_behind_gets_one_catch_up_batch(any_table):
    for n in range(30):
        commit(any_table, n)

    async def main():
        async with ChangeFeed(
            any_table, start="earliest", catch_up_threshold=10, include_row_kind=True
        ) as feed:
            return await consume(feed, until=has_commit(29))

    delivered = run(main())
    delivered.assert_exactly(any_table, range(30), row_kind=True)
    assert delivered.batches[0].kind == "catch-up"
    assert delivered.batches[0].first_snapshot_id == 1
    assert delivered.batches[0].snapshot_id == 30
    assert len(delivered.batches) == 1


@pytest.mark.parametrize(
    "start",
    ["yesterday", "snapshot:abc", "snapshot:0", "time:not-a-date", -3, 3.5, "snapshot:-1"],
)
def test_bad_start_specs_fail_at_construction(append_table, start):
    with pytest.raises(InvalidStartError):
        ChangeFeed(append_table, start=start)


def test_a_start_snapshot_ahead_of_the_table_is_rejected_with_the_latest_id(append_table):
    commit(append_table, 0)

    async def main():
        async with ChangeFeed(append_table, start="snapshot:99") as feed:
            await feed.__anext__()

    with pytest.raises(InvalidStartError, match="latest snapshot .1."):
        run(main())


# --- checkpoints --------------------------------------------------------------------------------


def test_restart_with_the_same_consumer_resumes_without_a_gap(append_table):
    for n in range(5):
        commit(append_table, n)

    async def first_run():
        async with ChangeFeed(append_table, consumer_id="etl", start="earliest", catch_up_threshold=100) as feed:
            batches = []
            async for batch in feed:
                batches.append(batch)
                if len(batches) == 3:
                    return batches  # third batch delivered, never committed
                await feed.commit(batch)

    first = run(first_run())
    with open(consumer_file(append_table, "etl")) as handle:
        assert json.load(handle) == {"nextSnapshot": 3}
    commit(append_table, 5)

    async def second_run():
        async with ChangeFeed(append_table, consumer_id="etl", start="latest") as feed:
            return await consume(feed, until=has_commit(5))

    second = run(second_run())
    assert second.batches[0].snapshot_id == first[-1].snapshot_id  # the uncommitted one repeats
    second.assert_exactly(append_table, [2, 3, 4, 5])
    with open(consumer_file(append_table, "etl")) as handle:
        assert json.load(handle) == {"nextSnapshot": 7}


def test_consumer_file_has_the_bytes_java_paimon_writes(append_table):
    commit(append_table, 0)

    async def main():
        async with ChangeFeed(append_table, consumer_id="java-compatible") as feed:
            await consume(feed, until=lambda d: True)

    run(main())
    with open(consumer_file(append_table, "java-compatible"), "rb") as handle:
        assert handle.read() == b'{\n  "nextSnapshot" : 2\n}'
    # pypaimon's own ConsumerManager (the Java format's Python port) reads it back
    assert append_table.consumer_manager().consumer("java-compatible").next_snapshot == 2


def test_auto_commit_commits_a_batch_when_the_next_is_requested(append_table):
    for n in range(3):
        commit(append_table, n)

    async def main():
        async with ChangeFeed(
            append_table, consumer_id="auto", start="earliest", end=3, auto_commit=True
        ) as feed:
            seen = []
            async for batch in feed:
                seen.append(batch.snapshot_id)
                if len(seen) == 2:
                    with open(consumer_file(append_table, "auto")) as handle:
                        assert json.load(handle) == {"nextSnapshot": 2}
            return seen

    assert run(main()) == [1, 2, 3]
    with open(consumer_file(append_table, "auto")) as handle:
        assert json.load(handle) == {"nextSnapshot": 4}


def test_a_checkpoint_never_moves_backwards(append_table):
    for n in range(3):
        commit(append_table, n)

    async def main():
        async with ChangeFeed(append_table, consumer_id="mono", start="earliest", end=3) as feed:
            batches = [batch async for batch in feed]
            await feed.commit(batches[2])
            await feed.commit(batches[0])
            return feed.metrics()

    metrics = run(main())
    assert metrics.committed_next_snapshot_id == 4
    with open(consumer_file(append_table, "mono")) as handle:
        assert json.load(handle) == {"nextSnapshot": 4}


@pytest.mark.parametrize("consumer_id", ["../escape", "a/b", "", ".hidden", "x" * 300, "sp ace"])
def test_invalid_consumer_ids_are_rejected_before_anything_is_written(append_table, consumer_id):
    with pytest.raises(InvalidConsumerIdError):
        ChangeFeed(append_table, consumer_id=consumer_id)
    assert not os.path.exists(os.path.join(table_dir(append_table), "consumer"))


def test_a_corrupt_consumer_file_is_a_clear_error_and_is_left_untouched(append_table):
    commit(append_table, 0)
    path = consumer_file(append_table, "broken")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write("{not json")

    async def main():
        async with ChangeFeed(append_table, consumer_id="broken") as feed:
            await feed.__anext__()

    with pytest.raises(CheckpointError, match="corrupt consumer file"):
        run(main())
    with open(path) as handle:
        assert handle.read() == "{not json"


def test_a_checkpoint_ahead_of_the_table_is_a_rewritten_history(append_table):
    commit(append_table, 0)
    path = consumer_file(append_table, "future")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write('{"nextSnapshot": 50}')

    async def main():
        async with ChangeFeed(append_table, consumer_id="future") as feed:
            await feed.__anext__()

    with pytest.raises(HistoryRewrittenError, match="latest snapshot is 1: rolled back, or dropped and re-created"):
        run(main())


# --- expiry -------------------------------------------------------------------------------------


def _expired_setup(table):
    for n in range(12):
        commit(table, n)
    path = consumer_file(table, "lagging")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write('{"nextSnapshot": 3}')
    expire_snapshots(table, keep_from=10)


def test_an_expired_next_snapshot_is_an_error_naming_it(append_table):
    _expired_setup(append_table)

    async def main():
        async with ChangeFeed(append_table, consumer_id="lagging") as feed:
            await feed.__anext__()

    with pytest.raises(SnapshotExpiredError) as info:
        run(main())
    assert info.value.snapshot_id == 3
    assert info.value.earliest_snapshot_id == 10
    assert "snapshot 3" in str(info.value) and "db.events" in str(info.value)


def test_on_expired_earliest_restarts_at_the_earliest_retained_snapshot(append_table):
    _expired_setup(append_table)

    async def main():
        async with ChangeFeed(append_table, consumer_id="lagging", on_expired="earliest") as feed:
            delivered = await consume(feed, until=has_commit(11))
            return delivered, feed.metrics()

    delivered, metrics = run(main())
    delivered.assert_exactly(append_table, [9, 10, 11])
    assert metrics.expired_restarts == 1


def test_on_expired_latest_full_restarts_with_the_whole_table(append_table):
    _expired_setup(append_table)

    async def main():
        async with ChangeFeed(append_table, consumer_id="lagging", on_expired="latest-full") as feed:
            return await consume(feed, until=lambda d: True)

    delivered = run(main())
    assert delivered.batches[0].kind == "full"
    assert delivered.batches[0].snapshot_id == 12


def test_a_snapshot_start_before_the_earliest_retained_is_expired(append_table):
    for n in range(12):
        commit(append_table, n)
    expire_snapshots(append_table, keep_from=10)

    async def main():
        async with ChangeFeed(append_table, start="snapshot:2") as feed:
            await feed.__anext__()

    with pytest.raises(SnapshotExpiredError):
        run(main())


# --- notifications: lost, duplicated, reordered ---------------------------------------------------


class DroppingNotifier(LocalNotifier):
    """Loses every event: only the reconcile safety check can find new snapshots."""

    def _dispatch(self, hint):
        self.dropped = getattr(self, "dropped", 0) + 1
        return 0


class NoisyNotifier(LocalNotifier):
    """Delivers each event three times, plus stale and future snapshot ids."""

    def _dispatch(self, hint):
        for snapshot_id in (hint.snapshot_id, 1, (hint.snapshot_id or 0) + 5, hint.snapshot_id):
            super()._dispatch(SnapshotHint(hint.table_url, snapshot_id, hint.source))
        return 1


def test_lost_notifications_still_deliver_within_the_reconcile_interval(append_table, start_writer):
    commit(append_table, 0)

    async def main():
        notifier = DroppingNotifier()
        async with notifier, ChangeFeed(append_table, notifier=notifier, reconcile_interval=0.3) as feed:
            writer = start_writer(append_table, 1, 10, interval=0.01)
            delivered = await consume(feed, until=has_commit(10), timeout=60)
            writer.wait()
            return delivered, feed.metrics(), notifier.dropped

    delivered, metrics, dropped = run(main())
    delivered.assert_exactly(append_table, range(11))
    assert dropped >= 1
    assert metrics.hints_by_source.get("local", 0) == 0
    assert metrics.reconciles >= 1


def test_duplicated_and_reordered_notifications_never_duplicate_batches(append_table, start_writer):
    commit(append_table, 0)

    async def main():
        notifier = NoisyNotifier()
        async with notifier, ChangeFeed(append_table, notifier=notifier) as feed:
            writer = start_writer(append_table, 1, 20, interval=0.01)
            delivered = await consume(feed, until=has_commit(20))
            writer.wait()
            return delivered

    run(main()).assert_exactly(append_table, range(21))


def test_one_notifier_serves_several_feeds(cat, start_writer):
    from support.tables import create_append_table

    first = create_append_table(cat, "db.first")
    second = create_append_table(cat, "db.second")
    commit(first, 0)
    commit(second, 0)

    async def main():
        async with LocalNotifier() as notifier:
            async with ChangeFeed(first, notifier=notifier) as feed_a, ChangeFeed(
                second, notifier=notifier
            ) as feed_b:
                writer_a = start_writer(first, 1, 5)
                writer_b = start_writer(second, 1, 8)
                got_a, got_b = await asyncio.gather(
                    consume(feed_a, until=has_commit(5)), consume(feed_b, until=has_commit(8))
                )
                writer_a.wait()
                writer_b.wait()
                return got_a, got_b

    got_a, got_b = run(main())
    got_a.assert_exactly(first, range(6))
    got_b.assert_exactly(second, range(9))
    assert {b.table for b in got_a.batches} == {"db.first"}


def test_polling_notifier_delivers_too(append_table, start_writer):
    commit(append_table, 0)

    async def main():
        async with ChangeFeed(append_table, notifier="poll", poll_interval=0.05) as feed:
            writer = start_writer(append_table, 1, 10)
            delivered = await consume(feed, until=has_commit(10))
            writer.wait()
            return delivered, feed.metrics()

    delivered, metrics = run(main())
    delivered.assert_exactly(append_table, range(11))
    assert metrics.notifier == "poll"


# --- flow control, errors, sync use --------------------------------------------------------------


def test_a_slow_consumer_bounds_how_far_planning_runs_ahead(append_table):
    for n in range(25):
        commit(append_table, n)

    async def main():
        async with ChangeFeed(
            append_table, start="earliest", max_pending=3, catch_up_threshold=1000
        ) as feed:
            first = await feed.__anext__()
            await asyncio.sleep(0.5)  # the consumer stalls; planning must stop at the bound
            stalled = feed.metrics()
            rest = await consume(feed, until=has_commit(24))
            return first, stalled, rest

    first, stalled, rest = run(main())
    assert stalled.batches_planned <= 1 + 3 + 1  # delivered + queue + one waiting to be put
    assert stalled.queue_depth == 3
    assert first.snapshot_id == 1 and rest.batches[-1].snapshot_id == 25


def test_projection_predicate_and_buckets_pass_through(pk_table):
    for n in range(6):
        commit(pk_table, n)
    predicate = pk_table.new_read_builder().new_predicate_builder().greater_or_equal("commit", 3)

    async def main():
        async with ChangeFeed(
            pk_table, start="earliest", end=6, projection=["id", "commit"], predicate=predicate
        ) as feed:
            return await consume(feed, until=lambda d: False)

    delivered = run(main())
    rows = [row for _, row in delivered.rows]
    assert rows and all(set(row) == {"id", "commit"} for row in rows)
    assert {row["commit"] for row in rows} == {3, 4, 5}

    async def one_bucket(bucket):
        async with ChangeFeed(pk_table, start="earliest", end=6, buckets=[bucket]) as feed:
            return await consume(feed, until=lambda d: False)

    zero, one = run(one_bucket(0)), run(one_bucket(1))
    assert zero.rows and one.rows
    assert all(split.bucket == 0 for batch in zero.batches for split in batch.splits)
    ids = lambda d: sorted((row["commit"], row["id"], row["op"]) for _, row in d.rows)  # noqa: E731
    everything = run(one_bucket_all(pk_table))
    assert sorted(ids(zero) + ids(one)) == ids(everything)


async def one_bucket_all(table):
    async with ChangeFeed(table, start="earliest", end=6) as feed:
        return await consume(feed, until=lambda d: False)


def test_unknown_projection_column_is_a_configuration_error(append_table):
    with pytest.raises(ConfigurationError, match="projection"):
        ChangeFeed(append_table, projection=["nope"])


@pytest.mark.parametrize(
    "options",
    [
        {"notifier": "carrier-pigeon"},
        {"reconcile_interval": 0},
        {"poll_interval": -1},
        {"max_pending": 0},
        {"on_expired": "ignore"},
        {"catch_up_threshold": 0},
        {"end": "soon"},
    ],
)
def test_bad_options_fail_at_construction_naming_the_option(append_table, options):
    with pytest.raises(ConfigurationError) as info:
        ChangeFeed(append_table, **options)
    name = next(iter(options))
    assert name.split("_")[0] in str(info.value) or "position" in str(info.value)


def test_sync_iterator_for_non_async_code(append_table, start_writer):
    commit(append_table, 0)
    seen = []
    with ChangeFeed(append_table, consumer_id="sync").sync() as feed:
        writer = start_writer(append_table, 1, 5)
        for batch in feed:
            seen.extend(batch.to_arrow().column("commit").to_pylist())
            feed.commit(batch)
            if 5 in seen:
                break
        writer.wait()
        assert feed.metrics().committed_next_snapshot_id == 7
    assert sorted(set(seen)) == list(range(6))


def test_close_is_idempotent_and_iteration_after_close_fails(append_table):
    commit(append_table, 0)

    async def main():
        feed = ChangeFeed(append_table)
        await feed.start()
        await feed.close()
        await feed.close()
        with pytest.raises(Exception, match="closed"):
            await feed.__anext__()

    run(main())
