"""Push on a federated namespace: ``viewfs://`` tables under two mount points, each on its own
nameservice (the mount table in ``HADOOP_CONF_DIR``), are pushed by one inotify stream per
nameservice, and a ``WarehouseFeed`` on a mount point finds a new table through its stream.
Oracles: the rows each commit wrote, pypaimon's own batch read, hdfs-native's view of the
nameservices, and the renames each stream saw."""

from __future__ import annotations

import asyncio
import os

import pytest
from hdfs_cluster import classpath
from hdfs_feeds import PUSH_ONLY, warehouse_finds_a_new_table
from hdfs_native import Client
from support.feeds import consume
from support.tables import catalog, commit, create_append_table, create_pk_table
from test_hdfs_follow import batch_read, fold_changelog

from paimon_feed import ChangeFeed, ConfigurationError
from paimon_feed.notifiers import HdfsNotifier, _hdfs_stream


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 150))


def test_viewfs_tables_on_two_nameservices_are_pushed_by_one_stream_each(hdfs_federated, monkeypatch):
    monkeypatch.setenv("HADOOP_CONF_DIR", hdfs_federated.conf_dir)
    name = f"wh-{os.getpid()}"
    mount0, mount1 = hdfs_federated.mounts
    events = create_append_table(catalog(f"{hdfs_federated.viewfs}{mount0}/{name}"))
    orders = create_pk_table(catalog(f"{hdfs_federated.viewfs}{mount1}/{name}"))
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())

    async def main():
        async with notifier, \
                ChangeFeed(events, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as a, \
                ChangeFeed(orders, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as b:
            streams = {stream.namespace: stream for stream in _hdfs_stream._shared.values()}
            delivered_a, delivered_b = [], []
            for n in range(2):
                commit(events, n)
                commit(orders, n)
                delivered_a.append(await consume(a, until=lambda d, n=n: n in d.commits))
                delivered_b.append(await consume(b, until=lambda d, n=n: n in d.commits))
            return streams, delivered_a, delivered_b, a.metrics(), b.metrics()

    streams, delivered_a, delivered_b, metrics_a, metrics_b = run(main())
    # One stream per nameservice, each serving the table on it.
    assert sorted(streams) == sorted(hdfs_federated.urls)
    for index, table in enumerate((events, orders)):
        renamed = [path for _, path in streams[hdfs_federated.urls[index]].renames]
        table_path = f"/shared/{name}/db.db/{table.table_path.rsplit('/', 1)[1]}"
        assert renamed == [f"{table_path}/snapshot/snapshot-1", f"{table_path}/snapshot/snapshot-2"]
        # The files are where the mount table says: hdfs-native on the nameservice itself.
        listed = Client(hdfs_federated.urls[index]).list_status(f"{table_path}/snapshot")
        assert {status.path.rsplit("/", 1)[-1] for status in listed} >= {"snapshot-1", "snapshot-2"}
    for n in range(2):
        delivered_a[n].assert_exactly(events, [n])
        delivered_b[n].assert_exactly(orders, [n])
    assert sorted((row for d in delivered_a for _, row in d.rows), key=lambda row: row["id"]) == batch_read(events)
    assert fold_changelog([row for d in delivered_b for _, row in d.rows]) == batch_read(orders)
    assert metrics_a.hints_by_source.get("hdfs", 0) >= 2 and metrics_b.hints_by_source.get("hdfs", 0) >= 2
    assert _hdfs_stream._shared == {}


def test_a_viewfs_warehouse_feed_finds_a_new_table_through_its_nameservice_stream(hdfs_federated, monkeypatch):
    monkeypatch.setenv("HADOOP_CONF_DIR", hdfs_federated.conf_dir)
    warehouse = f"{hdfs_federated.viewfs}{hdfs_federated.mounts[1]}/wh-new-{os.getpid()}"
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath())
    *_, namespaces = run(warehouse_finds_a_new_table(
        warehouse, notifier, on_found=lambda: [stream.namespace for stream in _hdfs_stream._shared.values()]))
    assert namespaces == [hdfs_federated.urls[1]]  # the stream of the nameservice the mount point leads to


def test_a_viewfs_table_whose_mount_table_is_not_in_hadoop_conf_dir_is_refused_by_name(hdfs_federated, monkeypatch):
    # pypaimon gets the mount table from a catalog option; the notifier reads HADOOP_CONF_DIR only.
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    warehouse = f"{hdfs_federated.viewfs}{hdfs_federated.mounts[0]}/wh-noconf-{os.getpid()}"
    table = create_append_table(catalog(warehouse, {"hdfs.conf-dir": hdfs_federated.conf_dir}))
    commit(table, 0)

    async def main():
        async with ChangeFeed(table, start="earliest", notifier=HdfsNotifier(required=True, hadoop_classpath=classpath())):
            pass

    with pytest.raises(ConfigurationError, match=r"notifier='hdfs' cannot read .*viewfs://feedfed: no mount point "
                                                 r"of the viewfs mount table in HADOOP_CONF_DIR"):
        run(main())
    assert _hdfs_stream._shared == {}
