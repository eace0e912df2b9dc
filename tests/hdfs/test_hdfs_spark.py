"""Spark on HDFS: ``paimon_feed.spark.foreach_batch`` and ``spark.readStream.format("paimon_feed")``
follow an ``hdfs://`` table on the MiniDFSCluster, woken by the NameNode's inotify stream.

Oracles: the rows each commit wrote (every row names its commit), pypaimon's own batch read of
the table, and the source driver's counters (which notifier woke it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spark"))
from hdfs_cluster import classpath  # noqa: E402
from runner_support import RUN_TIMEOUT_S, IdempotentSink, table_rows  # noqa: E402
from spark_support import (  # noqa: E402
    QUERY_TIMEOUT_S,
    BatchSink,
    commit,
    driver_stats,
    new_spark_session,
    start_query,
    stats_worker_env,
    wait_until,
)
from support.tables import catalog, create_append_table, create_pk_table  # noqa: E402

from paimon_feed.notifiers._hdfs_stream import CLASSPATH_ENV  # noqa: E402
from paimon_feed.spark import foreach_batch  # noqa: E402

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark(hdfs, tmp_path_factory):
    """One local[2] session whose Python workers (where the source's driver runs) find the
    Hadoop client for the push helper, and write the driver's counters."""
    env = {CLASSPATH_ENV: classpath(), **stats_worker_env(tmp_path_factory.mktemp("driver-stats"))}
    session = new_spark_session("paimon-feed-hdfs", worker_env=env)
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


def by_id(rows) -> list[tuple]:
    return sorted((row["id"], row["commit"], row["payload"]) for row in rows)


def test_foreach_batch_follows_an_hdfs_table_pushed_by_the_inotify_stream(spark, hdfs_warehouse, monkeypatch):
    monkeypatch.setenv(CLASSPATH_ENV, classpath())  # the runner's driver runs in this process
    table = create_append_table(catalog(hdfs_warehouse))
    commit(table, 1)
    sink = IdempotentSink()
    runner = foreach_batch(spark, sink, warehouse=hdfs_warehouse, table="db.events", consumer_id="etl",
                           start="earliest", notifier="hdfs", reconcileInterval="1h")
    try:
        wait_until(lambda: 1 in sink.commits(), RUN_TIMEOUT_S, "the first commit handed to fn")
        for n in (2, 3):  # only the stream can wake the runner within the test (no safety check)
            commit(table, n)
        wait_until(lambda: 3 in sink.commits(), RUN_TIMEOUT_S, "commits 2 and 3 handed to fn")
        metrics = runner.metrics()
    finally:
        runner.stop()
    assert runner.await_termination(RUN_TIMEOUT_S)
    assert by_id(sink.rows()) == by_id(table_rows(table))
    assert metrics.notifier == "hdfs" and metrics.push_healthy
    assert table.consumer_manager().consumer("etl").next_snapshot == 4  # the consumer file, on HDFS


def test_read_stream_follows_an_hdfs_table_with_row_kinds(spark, hdfs_warehouse, tmp_path):
    table = create_pk_table(catalog(hdfs_warehouse))
    commit(table, 1)
    options = {"warehouse": hdfs_warehouse, "table": "db.orders", "startingPosition": "latest-full",
               "notifier": "auto", "reconcileInterval": "1h", "includeRowKind": "true"}
    sink = BatchSink()
    query = start_query(spark, options, sink, str(tmp_path / "checkpoint"), processingTime="200 milliseconds")
    stats = driver_stats(spark, table)
    try:
        wait_until(lambda: sink.rows(), QUERY_TIMEOUT_S, "the full state at snapshot 1")
        commit(table, 2)
        commit(table, 3)
        wait_until(lambda: 3 in {row["commit"] for row in sink.rows()}, QUERY_TIMEOUT_S, "commit 3")
        wait_until(lambda: stats().get("hints", {}).get("hdfs", 0) >= 1, QUERY_TIMEOUT_S, "a hint")
        counters = stats()
    finally:
        query.stop()
    assert query.exception() is None
    # Folding the changelog (commit n inserts key n, updates n-1, deletes n-2) gives the table.
    state: dict[int, dict] = {}
    for row in sink.rows():
        if row["_row_kind"] == "-D":
            state.pop(row["id"], None)
        else:
            state[row["id"]] = row
    assert by_id(state.values()) == by_id(table_rows(table))
    assert counters["notifier"] == "hdfs" and counters["push_healthy"]
