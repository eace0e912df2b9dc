"""Push when the NameNode purged the edits the inotify stream had yet to read: the helper is down
while tables change and a checkpoint purges the old edit log segments; started again from its
last transaction, it starts at the current one instead, says so in a WARNING, and every table
gets a history check: an advanced table delivers its commits, a table dropped and re-created
meanwhile is a HistoryRewrittenError. Oracles: the rows each commit wrote, the NameNode's
transaction ids, and the renames the stream saw."""

from __future__ import annotations

import asyncio
import logging
import threading

from hdfs_cluster import classpath, until
from hdfs_feeds import PUSH_ONLY
from support.feeds import consume
from support.tables import catalog, commit, create_append_table, create_pk_table
from test_hdfs_follow import read_until_rewritten

from paimon_feed import ChangeFeed
from paimon_feed.notifiers import HdfsNotifier, _hdfs_stream


def test_purged_edits_start_the_stream_at_the_current_transaction_and_check_every_table(
        hdfs, hdfs_warehouse, monkeypatch, caplog):
    cat = catalog(hdfs_warehouse)
    events, orders = create_append_table(cat), create_pk_table(cat)
    # The helper's second start waits for the test: the edits are purged before it reads again.
    compile_helper = _hdfs_stream.helper_classes
    starts, restart = [], threading.Event()

    def gated(classpath_: str):
        starts.append(classpath_)
        if len(starts) > 1:
            restart.wait(120)
        return compile_helper(classpath_)

    monkeypatch.setattr(_hdfs_stream, "helper_classes", gated)
    # While the helper is down the tables are looked at once (and woken), then not for an hour.
    notifier = HdfsNotifier(required=True, hadoop_classpath=classpath(), interval=3600)

    relisted = []  # a WarehouseFeed's on_change: the gap may hold new tables

    async def main():
        async with notifier, \
                ChangeFeed(events, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as a, \
                ChangeFeed(orders, consumer_id="etl", start="earliest", notifier=notifier, **PUSH_ONLY) as b:
            (stream,) = _hdfs_stream._shared.values()
            notifier.watch_warehouse(hdfs_warehouse, lambda: relisted.append(stream.missed))
            commit(events, 0)
            commit(orders, 0)
            await consume(a, until=lambda d: 0 in d.commits)
            await consume(b, until=lambda d: 0 in d.commits)
            await until(lambda: len(stream.renames) >= 2)
            woken = a.metrics().wakeups, b.metrics().wakeups
            stream.process.kill()
            await until(lambda: notifier.probes >= 2)  # the one look at each table while down
            await until(lambda: (a.metrics().wakeups, b.metrics().wakeups) > woken)
            left_at = stream.last_txid
            commit(events, 1)
            commit(events, 2)
            cat.drop_table("db.orders", False)
            recreated = create_pk_table(cat)
            commit(recreated, 100)
            commit(recreated, 101)  # its snapshots 1..2 pass the old position
            purged = await asyncio.to_thread(hdfs.command, "purge")
            restart.set()
            advanced = await consume(a, until=lambda d: 2 in d.commits)
            rewritten = await read_until_rewritten(b)
            await until(lambda: stream.missed == 1)
            return left_at, purged, advanced, rewritten, stream, a.metrics()

    with caplog.at_level(logging.WARNING, logger="paimon_feed"):
        left_at, purged, advanced, rewritten, stream, metrics = asyncio.run(asyncio.wait_for(main(), 200))
    advanced.assert_exactly(events, [1, 2])
    assert rewritten.snapshot_id == 1 and "db.orders" in str(rewritten)
    assert metrics.hints_by_source.get("hdfs-missed", 0) >= 1
    assert relisted == [1]  # the warehouse is listed again once, for the gap, and for nothing else
    # Started again from where it left off, found those edits purged, and went on from the
    # current transaction: past the checkpoint, not back at the old one.
    assert stream.started_from == [-1, left_at]
    assert stream.missed == 1 and stream.last_txid >= purged["txid"]
    warnings = [record.getMessage() for record in caplog.records
                if "no longer has the edits" in record.getMessage()]
    assert len(warnings) == 1, [record.getMessage() for record in caplog.records]
    assert f"from transaction {left_at + 1} on" in warnings[0]
    assert "starts at the current transaction" in warnings[0] and "history check" in warnings[0]
    # Nothing in the gap was replayed: the stream saw only the renames before the helper died.
    assert [path.rsplit("/", 1)[1] for _, path in stream.renames] == ["snapshot-1", "snapshot-1"]
