"""Tables on a real HDFS (Hadoop's MiniDFSCluster), reached through pypaimon's hdfs-native
client: followed exactly, checkpointed on HDFS, and refused when their history is rewritten.
Oracles: the rows each commit wrote, pypaimon's own batch read, and hdfs-native's view of the
consumer file."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from urllib.parse import urlparse

import pytest
from hdfs_native import Client
from support.feeds import consume
from support.fixtures import python_env
from support.tables import catalog, commit, create_append_table, create_pk_table

from paimon_feed import ChangeFeed, HistoryRewrittenError

POLL = {"notifier": "poll", "poll_interval": 0.05, "reconcile_interval": 0.5}


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def batch_read(table) -> list[dict]:
    """pypaimon's own batch read of the table as it is now."""
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda row: row["id"])


def fold_changelog(rows: list[dict]) -> list[dict]:
    """The table a primary-key changelog leaves: the last +I/+U per key, -D removes it."""
    state: dict[int, dict] = {}
    for row in rows:
        if row["op"] == "-D":
            state.pop(row["id"], None)
        else:
            state[row["id"]] = row
    return [state[key] for key in sorted(state)]


def hdfs_file(url: str) -> bytes:
    """A file's bytes as hdfs-native (not the feed) reads them."""
    parsed = urlparse(url)
    with Client(f"hdfs://{parsed.netloc}").read(parsed.path) as reader:
        return reader.read()


def rollback_to(table, snapshot_id: int) -> None:
    """``table.rollback_to`` on HDFS: pypaimon 2.1 lists ``tag/`` on the way and its HDFS
    ``list_status`` raises FileNotFoundError when the table has no tag (docs/hdfs.md); an empty
    ``tag/`` directory is what a table that once had tags has, so create it first."""
    table.file_io.mkdirs(f"{table.table_path}/tag")
    table.rollback_to(snapshot_id)


@pytest.mark.parametrize("kind", ["append", "pk"])
def test_a_table_on_hdfs_is_followed_exactly_and_checkpointed_on_hdfs(hdfs_warehouse, kind):
    cat = catalog(hdfs_warehouse)
    table = create_append_table(cat) if kind == "append" else create_pk_table(cat)
    for n in range(3):
        commit(table, n)

    async def main():
        async with ChangeFeed(table, consumer_id="etl", start="earliest", **POLL) as feed:
            first = await consume(feed, until=lambda d: 2 in d.commits)
            commit(table, 3)  # a commit while the feed runs
            later = await consume(feed, until=lambda d: 3 in d.commits)
            return first, later

    first, later = run(main())
    first.assert_exactly(table, [0, 1, 2])
    later.assert_exactly(table, [3])
    delivered = [row for _, row in first.rows + later.rows]
    if kind == "append":
        assert sorted(delivered, key=lambda row: row["id"]) == batch_read(table)
    else:
        assert fold_changelog(delivered) == batch_read(table)
    consumer_file = f"{table.table_path}/consumer/consumer-etl"
    assert json.loads(hdfs_file(consumer_file)) == {"nextSnapshot": 5}


def test_tail_to_latest_prints_an_hdfs_table_and_exits(hdfs_warehouse):
    table = create_append_table(catalog(hdfs_warehouse))
    for n in range(2):
        commit(table, n)
    tail = subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "tail", hdfs_warehouse, "db.events", "--from", "earliest",
         "--to", "latest", "--consumer-id", "cli", "--format", "jsonl"],
        capture_output=True, text=True, timeout=120, env=python_env(),
    )
    assert tail.returncode == 0, tail.stderr
    printed = sorted((json.loads(line) for line in tail.stdout.splitlines()), key=lambda row: row["id"])
    assert [{key: row[key] for key in ("id", "commit", "payload")} for row in printed] == batch_read(table)
    assert json.loads(hdfs_file(f"{table.table_path}/consumer/consumer-cli")) == {"nextSnapshot": 3}


async def read_until_rewritten(feed) -> HistoryRewrittenError:
    with pytest.raises(HistoryRewrittenError) as caught:
        async for batch in feed:
            await feed.commit(batch)
    return caught.value


def test_a_rollback_on_hdfs_is_a_history_rewritten_error(hdfs_warehouse):
    table = create_append_table(catalog(hdfs_warehouse))
    for n in range(4):  # snapshots 1..4
        commit(table, n)

    async def main():
        async with ChangeFeed(table, consumer_id="etl", start="earliest", **POLL) as feed:
            await consume(feed, until=lambda d: 3 in d.commits)
            rollback_to(table, 2)
            for n in range(100, 103):  # re-use the ids 3..5
                commit(table, n)
            return await read_until_rewritten(feed)

    error = run(main())
    assert error.snapshot_id == 4 and "db.events" in str(error)


def test_a_table_recreated_on_hdfs_is_a_history_rewritten_error(hdfs_warehouse):
    cat = catalog(hdfs_warehouse)
    table = create_append_table(cat)
    for n in range(2):  # snapshots 1..2
        commit(table, n)

    async def main():
        async with ChangeFeed(table, consumer_id="etl", start="earliest", **POLL) as feed:
            await consume(feed, until=lambda d: 1 in d.commits)
            cat.drop_table("db.events", False)
            recreated = create_append_table(cat)  # same name, same schema: a new history
            for n in range(200, 203):  # its snapshots 1..3 pass the old position
                commit(recreated, n)
            return await read_until_rewritten(feed)

    assert run(main()).snapshot_id == 2


def test_tail_with_the_hdfs_notifier_and_no_superuser_rights_exits_2_naming_the_remedy(hdfs, hdfs_warehouse):
    from hdfs_cluster import classpath

    from paimon_feed.notifiers._hdfs_stream import CLASSPATH_ENV

    table = create_append_table(catalog(hdfs_warehouse))
    commit(table, 0)
    tail = subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "tail", hdfs_warehouse, "db.events", "--from", "earliest",
         "--to", "latest", "--notifier", "hdfs", "--format", "jsonl"],
        capture_output=True, text=True, timeout=120,
        env=python_env(HADOOP_USER_NAME="analyst", **{CLASSPATH_ENV: classpath()}),
    )
    assert tail.returncode == 2, tail.stderr
    assert tail.stdout == ""  # refused before the first batch
    assert "notifier='hdfs' cannot read the NameNode's inotify stream" in tail.stderr
    assert "superuser" in tail.stderr and "notifier='auto'" in tail.stderr
