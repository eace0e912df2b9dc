"""The ``paimon_feed`` data source over Spark Connect (the ``connect`` fixture: a local Connect
server): ``register`` puts it on the server, whose Python workers plan and read; batch reads,
``AvailableNow`` and a query following a writer, as on a classic session.

Oracles: pypaimon's own read of the table and the rows the writer wrote.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from runner_support import RUN_TIMEOUT_S, table_rows
from spark_support import WriterThread, commit, delivered_changes, expected_changes, wait_until

import paimon_feed.spark
from paimon_feed.errors import SparkVersionError
from paimon_feed.spark.lines import parse_line

pytestmark = [pytest.mark.spark]


@pytest.fixture(scope="module")
def registered(connect):
    paimon_feed.spark.register(connect)
    return connect


def _sorted(rows):
    return sorted(rows, key=lambda row: (row["id"], row["commit"]))


def test_a_batch_read_over_connect_is_what_pypaimon_reads(registered, paimon):
    for table in (paimon.create_append_table(), paimon.create_pk_table()):
        for n in range(1, 5):
            commit(table, n)
        rows = registered.read.format("paimon_feed").options(**paimon.options(table)).load().collect()
        assert _sorted(row.asDict() for row in rows) == _sorted(table_rows(table))


def test_an_available_now_stream_over_connect_reads_every_change(registered, paimon, tmp_path):
    table = paimon.create_pk_table()
    for n in range(1, 6):
        commit(table, n)
    stream = (registered.readStream.format("paimon_feed").options(**paimon.options(table))
              .option("startingPosition", "earliest").option("includeRowKind", "true").load())
    query = (stream.writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination(RUN_TIMEOUT_S)
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert delivered_changes(rows) == expected_changes(table, range(1, 6))


def test_a_query_over_connect_follows_a_writer(registered, paimon, tmp_path):
    table = paimon.create_pk_table()
    commit(table, 1)
    stream = (registered.readStream.format("paimon_feed").options(**paimon.options(table))
              .option("startingPosition", "latest").option("includeRowKind", "true").load())
    query = (stream.writeStream.format("memory").queryName("followed")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        wait_until(lambda: query.lastProgress is not None, RUN_TIMEOUT_S, "the query's first trigger")
        WriterThread(table, 2, 4).start().join()
        expected = expected_changes(table, range(2, 5))

        def delivered():
            return delivered_changes(row.asDict() for row in registered.sql("select * from followed").collect())

        wait_until(lambda: len(delivered()) >= len(expected), RUN_TIMEOUT_S, "commits 2-4 in the memory sink")
        assert delivered() == expected
    finally:
        query.stop()


def test_a_connect_server_older_than_spark_4_is_refused_naming_the_version_it_needs():
    with pytest.raises(SparkVersionError) as raised:
        parse_line("3.5.6").require_data_source("the Spark Connect server runs Spark")
    assert "needs Spark 4.0" in str(raised.value)
    assert "the Spark Connect server runs Spark 3.5.6" in str(raised.value)
