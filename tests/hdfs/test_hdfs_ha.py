"""Push on an HA nameservice: tables at ``hdfs://<nameservice>/...`` (two NameNodes, the client
conf in ``HADOOP_CONF_DIR``) keep being delivered exactly across a graceful failover and the
death of the active NameNode, and the inotify stream goes on from its last transaction: every
rename to a snapshot file seen once, in order. Oracles: the rows each commit wrote, pypaimon's
own batch read, and the renames the stream saw."""

from __future__ import annotations

import asyncio
import os
from urllib.parse import urlparse

from hdfs_cluster import classpath
from hdfs_feeds import PUSH_ONLY
from hdfs_native import Client
from support.feeds import consume
from support.tables import catalog, commit, create_append_table, create_pk_table
from test_hdfs_follow import batch_read, fold_changelog

from paimon_feed import ChangeFeed
from paimon_feed.notifiers import HdfsNotifier, _hdfs_stream


def test_hdfs_native_and_pypaimon_reach_the_nameservice_from_hadoop_conf_dir(hdfs_ha, monkeypatch):
    monkeypatch.setenv("HADOOP_CONF_DIR", hdfs_ha.conf_dir)
    warehouse = f"{hdfs_ha.url}/shared/wh-reach-{os.getpid()}"
    table = create_append_table(catalog(warehouse))
    commit(table, 0)
    client = Client(hdfs_ha.url)  # hdfs://minidfs-ns: resolved from HADOOP_CONF_DIR's hdfs-site.xml
    names = [status.path.rsplit("/", 1)[-1] for status in client.list_status(urlparse(table.table_path).path + "/snapshot")]
    assert "snapshot-1" in names
    assert batch_read(table) == sorted(({"id": n, "commit": 0, "payload": f"c0-r{n}"} for n in range(3)),
                                       key=lambda row: row["id"])


def test_push_on_an_ha_nameservice_goes_on_across_failovers(hdfs_ha, monkeypatch):
    monkeypatch.setenv("HADOOP_CONF_DIR", hdfs_ha.conf_dir)
    cat = catalog(f"{hdfs_ha.url}/shared/wh-failover-{os.getpid()}")
    events, orders = create_append_table(cat), create_pk_table(cat)
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())

    async def main():
        async with notifier, \
                ChangeFeed(events, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as a, \
                ChangeFeed(orders, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as b:
            (stream,) = _hdfs_stream._shared.values()
            assert stream.namespace == hdfs_ha.url
            delivered_a, delivered_b = [], []
            commit(events, 0)
            commit(orders, 0)
            delivered_a.append(await consume(a, until=lambda d: 0 in d.commits))
            delivered_b.append(await consume(b, until=lambda d: 0 in d.commits))
            # A graceful failover: the active NameNode becomes standby, the other active.
            failover = await asyncio.to_thread(hdfs_ha.command, "failover")
            commit(events, 1)
            commit(orders, 1)
            delivered_a.append(await consume(a, until=lambda d: 1 in d.commits))
            delivered_b.append(await consume(b, until=lambda d: 1 in d.commits))
            # The active NameNode dies; the standby takes over.
            killed = await asyncio.to_thread(hdfs_ha.command, "kill-active")
            commit(events, 2)
            commit(orders, 2)
            delivered_a.append(await consume(a, until=lambda d: 2 in d.commits))
            delivered_b.append(await consume(b, until=lambda d: 2 in d.commits))
            return failover, killed, delivered_a, delivered_b, stream, a.metrics(), b.metrics()

    failover, killed, delivered_a, delivered_b, stream, metrics_a, metrics_b = asyncio.run(
        asyncio.wait_for(main(), 240))
    assert failover["active"] != killed["active"]  # both NameNodes served as active
    for n, (got_a, got_b) in enumerate(zip(delivered_a, delivered_b)):
        got_a.assert_exactly(events, [n])
        got_b.assert_exactly(orders, [n])
    assert sorted((row for d in delivered_a for _, row in d.rows), key=lambda row: row["id"]) == batch_read(events)
    assert fold_changelog([row for d in delivered_b for _, row in d.rows]) == batch_read(orders)
    # Every commit was pushed by the stream (the feeds neither poll nor check within the test).
    assert metrics_a.hints_by_source.get("hdfs", 0) >= 3 and metrics_b.hints_by_source.get("hdfs", 0) >= 3
    # The stream went on from its last transaction: each rename seen once, in order, across
    # both failovers (whether its helper rode them out or was started again from its txid).
    for table in (events, orders):
        renamed = [path.rsplit("/", 1)[1] for _, path in stream.renames if path.startswith(
            urlparse(table.table_path).path + "/")]
        assert renamed == ["snapshot-1", "snapshot-2", "snapshot-3"], renamed
    txids = [txid for txid, _ in stream.renames]
    assert txids == sorted(txids) and len(set(txids)) == len(txids)
    assert all(start == -1 or start >= 0 for start in stream.started_from)
    assert stream.missed == 0
