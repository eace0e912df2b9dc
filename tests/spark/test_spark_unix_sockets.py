"""The session setting the README advises for latency: Python workers on Unix domain sockets
(``spark.python.unix.domain.socket.enabled``). Spark moves the same bytes over another kind of
socket; these tests check that the source still delivers every change, and that
``register`` stays quiet in such a session."""

from __future__ import annotations

import logging

import pytest
from spark_support import (
    QUERY_TIMEOUT_S,
    BatchSink,
    WriterThread,
    delivered_changes,
    expected_changes,
    new_spark_session,
    start_query,
    wait_until,
)

import paimon_feed.spark
from paimon_feed.spark import UNIX_SOCKETS_CONF


@pytest.fixture(scope="module")
def spark():
    session = new_spark_session("paimon-feed-unix-sockets", conf={UNIX_SOCKETS_CONF: "true"})
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


def test_the_session_runs_python_workers_on_unix_sockets_and_register_gives_no_hint(spark, caplog):
    assert spark.conf.get(UNIX_SOCKETS_CONF) == "true"
    with caplog.at_level(logging.INFO, logger="paimon_feed.spark"):
        paimon_feed.spark.register(spark)
    assert not [r for r in caplog.records if UNIX_SOCKETS_CONF in r.getMessage()]


@pytest.mark.parametrize("kind", ["append", "primary-key"])
def test_a_running_query_delivers_every_concurrent_commit_once(spark, paimon, tmp_path, kind):
    table = paimon.create_append_table() if kind == "append" else paimon.create_pk_table()
    sink = BatchSink()
    options = paimon.options(table, startingPosition="earliest", includeRowKind="true")
    query = start_query(spark, options, sink, str(tmp_path / "checkpoint"), processingTime="0 seconds")
    try:
        WriterThread(table, 1, 8, interval=0.15).start().join()
        expected = expected_changes(table, range(1, 9))
        wait_until(lambda: len(sink.rows()) >= len(expected), QUERY_TIMEOUT_S, "all 8 commits")
    finally:
        query.stop()
    assert query.exception() is None
    assert delivered_changes(sink.rows()) == expected
