"""Push on HDFS: the NameNode's inotify stream, read by one JVM helper per process and namespace,
wakes every feed; without superuser rights ``auto`` says so once and polls, ``hdfs`` refuses; a
helper that dies is started again from its last transaction. Oracles: the rows each commit
wrote, the helper processes that run, and the renames the stream saw."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from hdfs_cluster import classpath, until
from hdfs_feeds import PUSH_ONLY, warehouse_finds_a_new_table
from support.feeds import consume
from support.tables import catalog, commit, create_append_table, create_pk_table

from paimon_feed import ChangeFeed, ConfigurationError
from paimon_feed.notifiers import HdfsNotifier, _hdfs_stream
from paimon_feed.notifiers._hdfs_stream import CLASSPATH_ENV, THREAD_PREFIX


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 150))


def test_one_stream_pushes_every_commit_of_every_table(hdfs_warehouse):
    cat = catalog(hdfs_warehouse)
    events, orders = create_append_table(cat), create_pk_table(cat)
    commit(events, 0)
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())

    async def main():
        async with notifier, \
                ChangeFeed(events, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as a, \
                ChangeFeed(orders, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as b:
            helpers = [stream.process.pid for stream in _hdfs_stream._shared.values()]
            first = await consume(a, until=lambda d: 0 in d.commits)
            commit(events, 1)
            commit(orders, 0)
            pushed_a = await consume(a, until=lambda d: 1 in d.commits)
            pushed_b = await consume(b, until=lambda d: 0 in d.commits)
            return helpers, first, pushed_a, pushed_b, a.metrics(), b.metrics(), notifier.metrics()

    helpers, first, pushed_a, pushed_b, metrics_a, metrics_b, stream = run(main())
    assert len(helpers) == 1  # one helper JVM for the namespace, both tables
    first.assert_exactly(events, [0])
    pushed_a.assert_exactly(events, [1])
    pushed_b.assert_exactly(orders, [0])
    assert metrics_a.hints_by_source.get("hdfs", 0) >= 1 and metrics_b.hints_by_source.get("hdfs", 0) >= 1
    assert stream["pushing"] and stream["renames"] >= 2 and stream["probes"] == 0
    assert _hdfs_stream._shared == {}  # the last user's close stopped the helper


def test_without_superuser_auto_warns_once_and_polls(hdfs_warehouse, monkeypatch, caplog):
    table = create_append_table(catalog(hdfs_warehouse))
    commit(table, 0)
    monkeypatch.setenv("HADOOP_USER_NAME", "analyst")  # the helper's HDFS user: not the superuser
    notifier = HdfsNotifier(hadoop_classpath=classpath(), interval=0.2)

    async def main():
        async with notifier, ChangeFeed(table, start="earliest", notifier=notifier, **PUSH_ONLY) as feed:
            await consume(feed, until=lambda d: 0 in d.commits, commit=False)
            commit(table, 1)
            polled = await consume(feed, until=lambda d: 1 in d.commits, commit=False)
            return polled, feed.metrics()

    with caplog.at_level(logging.WARNING, logger="paimon_feed"):
        polled, metrics = run(main())
    polled.assert_exactly(table, [1])
    assert metrics.hints_by_source.get("hdfs-poll", 0) >= 1
    warnings = [record for record in caplog.records if "HDFS push is not available" in record.getMessage()]
    assert len(warnings) == 1, [record.getMessage() for record in caplog.records]
    message = warnings[0].getMessage()
    assert "superuser" in message and "18000 NameNode calls per table-hour" in message, message


def test_without_superuser_the_hdfs_notifier_by_name_is_a_configuration_error(hdfs_warehouse, monkeypatch):
    table = create_append_table(catalog(hdfs_warehouse))
    monkeypatch.setenv("HADOOP_USER_NAME", "analyst")
    monkeypatch.setenv(CLASSPATH_ENV, classpath())

    async def main():
        async with ChangeFeed(table, start="earliest", notifier="hdfs"):
            pass

    with pytest.raises(ConfigurationError, match=r"notifier='hdfs' cannot read the NameNode's inotify stream.*superuser"):
        run(main())
    assert _hdfs_stream._shared == {}  # no helper left behind


def test_a_helper_that_dies_resumes_from_its_last_transaction(hdfs_warehouse):
    table = create_append_table(catalog(hdfs_warehouse))
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())

    async def main():
        async with notifier, ChangeFeed(table, consumer_id="etl", start="earliest", notifier=notifier,
                                        poll_interval=0.5, reconcile_interval=3600) as feed:
            (stream,) = _hdfs_stream._shared.values()
            commit(table, 0)
            before = await consume(feed, until=lambda d: 0 in d.commits)
            await until(lambda: len(stream.renames) >= 1)
            last_txid = stream.last_txid
            stream.process.kill()  # the helper dies mid-way
            commit(table, 1)
            commit(table, 2)
            after = await consume(feed, until=lambda d: 2 in d.commits)
            await until(lambda: len(stream.started_from) == 2 and len(stream.renames) >= 3)
            return before, after, last_txid, stream, feed.metrics()

    before, after, last_txid, stream, metrics = run(main())
    before.assert_exactly(table, [0])
    after.assert_exactly(table, [1, 2])
    assert stream.started_from[0] == -1 and stream.started_from[1] >= last_txid
    renamed = [path.rsplit("/", 1)[1] for _, path in stream.renames]
    assert renamed == ["snapshot-1", "snapshot-2", "snapshot-3"]  # none lost, none twice
    assert metrics.fallbacks >= 1  # the feed polled while the helper was down, and said so
    # Closed: no helper JVM and no thread reading its pipes is left.
    assert stream.process.poll() is not None
    readers = [thread for thread in threading.enumerate() if thread.name.startswith(THREAD_PREFIX)]
    for thread in readers:  # they end at the pipes' EOF, which the helper's exit brings
        thread.join(30)
    assert not [thread for thread in readers if thread.is_alive()]


def test_a_warehouse_feed_is_pushed_and_finds_a_new_table_through_the_stream(hdfs_warehouse):
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())
    run(warehouse_finds_a_new_table(hdfs_warehouse, notifier))
