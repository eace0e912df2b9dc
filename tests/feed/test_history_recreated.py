"""A table dropped and created again under a consumer is a rewritten history, however few commits
the new table has and whatever wakes the feed: a re-established watch (a hint naming no
snapshot), the safety check, or a restart after the new table expired past the old position.

Oracle: the table's own files (the new table's single snapshot, pypaimon's schema-0)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest
from pypaimon import Schema
from support.feeds import consume
from support.fixtures import python_env
from support.tables import APPEND_SCHEMA, commit, expire_snapshots

from paimon_feed import ChangeFeed, HistoryRewrittenError, WarehouseFeed
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.notifiers.base import Notifier, SnapshotHint


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def recreate(cat, commits: int):
    """Drop ``db.events``, create it again and commit ``commits`` times to the new table."""
    cat.drop_table("db.events", False)
    cat.create_table("db.events", Schema.from_pyarrow_schema(APPEND_SCHEMA), False)
    table = cat.get_table("db.events")
    for n in range(100, 100 + commits):
        commit(table, n)
    return table


class ScriptedNotifier(Notifier):
    """Push that announces every commit, but only hints what the test sends: nothing wakes the
    feed unless the test says so (or its safety check is due)."""

    source = "scripted"

    def rearm(self) -> None:
        """What a notifier sends when its watch is back: a hint naming no snapshot."""
        for key in self.subscribed_tables():
            self._dispatch(SnapshotHint(key, None, self.source))


async def next_rewritten_error(feed) -> HistoryRewrittenError:
    """The error the feed's next batch raises; a batch delivered instead fails the test."""
    with pytest.raises(HistoryRewrittenError) as caught:
        async for batch in feed:
            raise AssertionError(f"delivered {batch} of the new table")
    return caught.value


async def read_then_wait_for_error(feed, until_commit: int, rewrite) -> HistoryRewrittenError:
    await consume(feed, until=lambda d: until_commit in d.commits)
    await asyncio.to_thread(rewrite)
    return await next_rewritten_error(feed)


def test_a_rewatch_hint_naming_no_snapshot_checks_the_history(cat, append_table):
    for n in range(3):
        commit(append_table, n)  # snapshots 1..3

    async def main():
        notifier = ScriptedNotifier()
        async with notifier, ChangeFeed(
            append_table, consumer_id="etl", start="earliest", notifier=notifier,
            reconcile_interval=3600, poll_interval=3600,
        ) as feed:
            await consume(feed, until=lambda d: 2 in d.commits)
            await asyncio.to_thread(recreate, cat, 1)  # one commit: snapshot 1, nothing past 3
            notifier.rearm()
            return await next_rewritten_error(feed)

    error = run(main())
    assert error.snapshot_id == 3
    assert "snapshot 3 no longer exists and the latest snapshot is 1" in str(error)


def test_the_safety_check_checks_the_history_while_push_is_healthy(cat, append_table):
    for n in range(3):
        commit(append_table, n)

    async def main():
        notifier = ScriptedNotifier()  # never hints: only the safety check can see it
        async with notifier, ChangeFeed(
            append_table, consumer_id="etl", start="earliest", notifier=notifier,
            reconcile_interval=0.2, poll_interval=3600,
        ) as feed:
            error = await read_then_wait_for_error(feed, 2, lambda: recreate(cat, 1))
            return error, feed.metrics()

    error, metrics = run(main())
    assert error.snapshot_id == 3 and metrics.push_healthy


def test_a_warehouse_feed_raises_for_its_table_recreated_with_a_single_commit(warehouse, cat, append_table):
    for n in range(3):
        commit(append_table, n)

    async def main():
        notifier = ScriptedNotifier()  # no warehouse watch: the listing (hourly) sees nothing
        async with notifier, WarehouseFeed(
            warehouse, consumer_id="etl", start="earliest", notifier=notifier,
            discovery_interval=3600, reconcile_interval=3600, poll_interval=3600,
        ) as feed:
            seen = []
            async for batch in feed:
                seen += batch.to_arrow().column("commit").to_pylist()
                await feed.commit(batch)
                if 2 in seen:
                    break
            await asyncio.to_thread(recreate, cat, 1)
            notifier.rearm()
            return await next_rewritten_error(feed)

    error = run(main())
    assert error.table == "db.events" and error.snapshot_id == 3


@pytest.mark.parametrize("notifier", ["local", "poll"])
def test_a_table_recreated_with_a_single_commit_under_a_running_feed_is_an_error(
    cat, append_table, notifier
):
    for n in range(3):
        commit(append_table, n)

    async def main():
        # No safety check within the test: the notifier's own wake-ups must show it.
        async with ChangeFeed(
            append_table, consumer_id="etl", start="earliest", notifier=notifier,
            reconcile_interval=3600 if notifier == "local" else 0.2, poll_interval=0.05,
        ) as feed:
            return await read_then_wait_for_error(feed, 2, lambda: recreate(cat, 1))

    assert run(main()).snapshot_id == 3


def test_cli_tail_exits_1_when_its_table_is_recreated_with_a_single_commit(warehouse, cat, append_table):
    for n in range(3):
        commit(append_table, n)
    tail = subprocess.Popen(
        [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.events", "--from",
         "earliest", "--consumer-id", "cli", "--format", "jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=python_env(),
    )
    try:
        assert tail.stdout is not None
        printed = [json.loads(tail.stdout.readline())["commit"] for _ in range(9)]
        assert printed == [0] * 3 + [1] * 3 + [2] * 3
        store = CheckpointStore.for_table(append_table, "cli")
        while (store.load_mark() or (0,))[0] != 4:  # the last commit done: not raced by the drop
            time.sleep(0.05)
        recreate(cat, 1)
        out, err = tail.communicate(timeout=60)
    finally:
        if tail.poll() is None:
            tail.kill()
            tail.wait()
    assert tail.returncode == 1, err
    assert out == "" and "history was rewritten after snapshot 3" in err


def test_a_table_recreated_then_expired_past_the_anchor_is_an_error_not_an_expiry(cat, append_table):
    from paimon_feed.planner import Planner
    from paimon_feed.progress import Progress

    for n in range(3):
        commit(append_table, n)  # snapshots 1..3
    progress = Progress(Planner(append_table))
    progress.sleep = lambda _: None
    progress.anchor_at(3)  # the mark of snapshot 2
    recreated = recreate(cat, 6)  # snapshots 1..6 of another table
    expire_snapshots(recreated, keep_from=4)  # snapshot 2 is "older than the earliest" now
    progress.planner = Planner(recreated)
    with pytest.raises(HistoryRewrittenError) as caught:
        progress.verify()
    assert caught.value.snapshot_id == 2
    assert "schema-0 was written at" in str(caught.value)
    assert "dropped and created again" in str(caught.value)
