"""Polling on HDFS spares the NameNode: one ``getFileInfo`` of ``snapshot/`` per table per
interval while a table is idle, counted by the NameNode itself (its per-method RPC metrics on
``/jmx``), and a commit still wakes the feed."""

from __future__ import annotations

import asyncio

from hdfs_cluster import calls_between, until
from support.feeds import consume
from support.tables import catalog, commit, create_append_table

from paimon_feed import ChangeFeed
from paimon_feed.notifiers import HdfsPollingNotifier, create_notifier

# The DataNode talks to the NameNode on the same port in a MiniDFSCluster; its calls are not
# the feed's.
DATANODE_CALLS = {"SendHeartbeat", "BlockReport", "BlockReceivedAndDeleted", "RegisterDatanode",
                  "VersionRequest", "CacheReport", "ErrorReport", "SendLifeline"}


def client_calls(hdfs) -> dict[str, int]:
    return {name: count for name, count in hdfs.rpc_calls().items() if name not in DATANODE_CALLS}


def test_auto_polls_hdfs_every_10_seconds_by_default(hdfs):
    notifier = create_notifier("auto", f"{hdfs.url}/wh/db.db/t")
    assert isinstance(notifier, HdfsPollingNotifier) and notifier.interval == 10.0


def test_an_idle_table_costs_one_namenode_call_per_probe_and_a_commit_wakes_the_feed(hdfs, hdfs_warehouse):
    table = create_append_table(catalog(hdfs_warehouse))
    commit(table, 0)
    notifier = HdfsPollingNotifier(interval=0.1)  # the default's 10 s, scaled down

    async def main():
        async with notifier, ChangeFeed(table, consumer_id="etl", start="earliest", notifier=notifier,
                                        poll_interval=0.05, reconcile_interval=3600) as feed:
            await consume(feed, until=lambda d: 0 in d.commits)
            # The feed's first short wait after the start is over: from now on only probes run.
            await until(lambda: feed.metrics().reconciles >= 1 and notifier.probes >= 2)
            before, probes_before = await asyncio.to_thread(client_calls, hdfs), notifier.probes
            await until(lambda: notifier.probes >= probes_before + 20)
            after, probes_after = await asyncio.to_thread(client_calls, hdfs), notifier.probes
            commit(table, 1)
            woken = await consume(feed, until=lambda d: 1 in d.commits)
            return calls_between(before, after), probes_after - probes_before, woken, feed.metrics()

    calls, probes, woken, metrics = asyncio.run(asyncio.wait_for(main(), 120))
    assert set(calls) == {"GetFileInfo"}, calls  # nothing but the probes while idle
    # A probe counted before its call: the reading brackets at most one in flight.
    assert probes - 1 <= calls["GetFileInfo"] <= probes + 1, (calls, probes)
    woken.assert_exactly(table, [1])
    assert metrics.hints_by_source.get("hdfs-poll", 0) >= 1, metrics.hints_by_source


def fallback_rounds(feed) -> int:
    return feed.metrics().hints_by_source.get("fallback-poll", 0)


def test_while_the_push_helper_is_down_feeds_poll_the_cheap_way(hdfs, hdfs_warehouse, monkeypatch):
    from hdfs_cluster import classpath

    from paimon_feed.notifiers import HdfsNotifier, _hdfs_stream

    monkeypatch.setattr(_hdfs_stream, "RESTART_BACKOFF", (3600.0, 3600.0))  # it stays down
    table = create_append_table(catalog(hdfs_warehouse))
    commit(table, 0)
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath(), interval=0.1)  # 10 s, scaled down

    async def main():
        # The generic fallback would plan every 0.05 s (poll_interval): several calls each time.
        async with notifier, ChangeFeed(table, consumer_id="etl", start="earliest", notifier=notifier,
                                        poll_interval=0.05, reconcile_interval=3600) as feed:
            (stream,) = _hdfs_stream._shared.values()
            await consume(feed, until=lambda d: 0 in d.commits)
            stream.process.kill()
            commit(table, 1)  # made while the helper is down: a probe finds it
            polled = await consume(feed, until=lambda d: 1 in d.commits)
            before, probes_before = await asyncio.to_thread(client_calls, hdfs), notifier.probes
            rounds_before = fallback_rounds(feed)
            # 20 looks, or 20 plan rounds of the generic fallback (what this replaced)
            await until(lambda: notifier.probes >= probes_before + 20 or fallback_rounds(feed) >= rounds_before + 20)
            after, probes_after = await asyncio.to_thread(client_calls, hdfs), notifier.probes
            return polled, calls_between(before, after), probes_after - probes_before, feed.metrics()

    polled, calls, probes, metrics = asyncio.run(asyncio.wait_for(main(), 150))
    polled.assert_exactly(table, [1])
    assert set(calls) == {"GetFileInfo"}, calls  # nothing but the looks at snapshot/ while idle
    assert probes - 1 <= calls["GetFileInfo"] <= probes + 1, (calls, probes)
    assert metrics.fallbacks >= 1 and metrics.hints_by_source.get("hdfs-poll", 0) >= 1, metrics
