"""``paimon_feed.spark.foreach_batch`` on a real local Spark session (classic): batches in
snapshot order with exactly their rows, push-driven following, schema boundaries, crash and
resume with the same batch id, stop() from another thread, history checks.

Oracles: the rows the writer wrote (every row names its commit) and pypaimon's batch read.
Marked ``spark_lines``: they run on every supported Spark line (3.5, 4.0, newest).
"""

from __future__ import annotations

import functools
import os
import signal
import threading

import pyarrow as pa
import pytest
import runner_support
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from runner_support import RUN_TIMEOUT_S, IdempotentSink, table_rows, tables_open
from spark_support import (
    WriterThread,
    commit,
    delivered_changes,
    expected_changes,
    new_spark_session,
    wait_until,
)

from paimon_feed.errors import HistoryRewrittenError, UnknownOptionError
from paimon_feed.spark import foreach_batch
from paimon_feed.spark.options import parse_options
from paimon_feed.tables import commit_arrow

pytestmark = [pytest.mark.spark, pytest.mark.spark_lines]


@pytest.fixture(scope="module")
def spark():
    session = new_spark_session("paimon-feed-runner", register=False)
    yield session
    session.stop()


def _committed(table, last: int):
    for n in range(1, last + 1):
        commit(table, n)
    return table


def _next_snapshot(table) -> int:
    return table.consumer_manager().consumer("etl").next_snapshot


def _run(spark, paimon, table, sink, **options):
    options.setdefault("consumer_id", "etl")
    return foreach_batch(
        spark, sink, warehouse=paimon.path, table=table.identifier.get_full_name(), **options
    )


def test_available_now_hands_the_full_state_then_stops(spark, paimon):
    table = _committed(paimon.create_append_table(), 3)
    sink = IdempotentSink()
    runner = _run(spark, paimon, table, sink, available_now=True)
    assert not runner.running
    assert sink.calls == [3]  # one full state, its id the snapshot it was read at
    assert sorted(r["id"] for r in sink.rows()) == sorted(r["id"] for r in table_rows(table, 3))
    metrics = runner.metrics()
    assert (metrics.batches, metrics.last_batch_id, metrics.lag_snapshots) == (1, 3, 0)
    assert _next_snapshot(table) == 4


def test_primary_key_changes_with_row_kinds_in_snapshot_order(spark, paimon):
    table = _committed(paimon.create_pk_table(), 5)
    sink = IdempotentSink()
    _run(spark, paimon, table, sink, start="earliest", available_now=True,
         includeRowKind=True, maxSnapshotsPerTrigger=2)
    assert sink.calls == [2, 4, 5]
    assert delivered_changes(sink.rows()) == expected_changes(table, range(1, 6))
    by_batch = {batch_id: {r["commit"] for r in rows} for batch_id, rows in sink.batches.items()}
    assert by_batch == {2: {1, 2}, 4: {3, 4}, 5: {5}}  # each batch holds its own snapshots only


def test_a_running_runner_follows_a_concurrent_writer_until_stopped(spark, paimon):
    table = paimon.create_append_table()
    commit(table, 1)
    threads_before = threading.active_count()
    sink = IdempotentSink()
    runner = _run(spark, paimon, table, sink)
    writer = WriterThread(table, 2, 6, interval=0.3).start()
    writer.join()
    wait_until(lambda: sink.commits() == sorted(c for c in range(1, 7) for _ in range(3)),
               RUN_TIMEOUT_S, "every commit handed to fn")
    assert sink.calls == sorted(sink.calls) and len(set(sink.calls)) == len(sink.calls)
    assert runner.metrics().push_healthy and runner.metrics().notifier != "storage-per-trigger"
    stopper = threading.Thread(target=runner.stop)  # stop() from another thread
    stopper.start()
    stopper.join(RUN_TIMEOUT_S)
    assert runner.await_termination(RUN_TIMEOUT_S) and not runner.running
    assert threading.active_count() == threads_before  # the runner's and notifier's threads ended
    assert _next_snapshot(table) == 7

    commit(table, 7)  # a later run continues where the consumer stopped
    later = IdempotentSink()
    _run(spark, paimon, table, later, available_now=True)
    assert later.commits() == [7, 7, 7] and later.calls == [7]


def test_a_schema_change_is_a_batch_boundary_and_fn_gets_the_new_schema(spark, paimon):
    table = _committed(paimon.create_append_table(), 2)
    paimon.catalog.alter_table("db.events", [SchemaChange.add_column("note", AtomicType("STRING"))])
    evolved = paimon.catalog.get_table("db.events")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64()),
                        ("payload", pa.string()), ("note", pa.string())])
    commit_arrow(evolved, pa.Table.from_pylist(
        [{"id": 9000 + i, "commit": 3, "payload": "p", "note": f"n{i}"} for i in range(2)], schema=schema))
    sink = IdempotentSink()
    _run(spark, paimon, table, sink, start="earliest", available_now=True)
    assert sink.calls == [2, 3]
    assert sink.columns[2] == ["id", "commit", "payload"]
    assert sink.columns[3] == ["id", "commit", "payload", "note"]
    assert sorted(r["note"] for r in sink.batches[3]) == ["n0", "n1"]
    assert {r["commit"] for r in sink.batches[2]} == {1, 2}


@pytest.mark.parametrize("fail_before_sink", [False, True], ids=["after-sink", "before-sink"])
def test_a_crash_in_fn_brings_the_batch_again_with_the_same_id(spark, paimon, fail_before_sink):
    table = _committed(paimon.create_append_table(), 3)
    sink = IdempotentSink(fail_on=5, fail_before_sink=fail_before_sink)
    _run(spark, paimon, table, sink, start="earliest", available_now=True, maxSnapshotsPerTrigger=2)
    assert sink.calls == [2, 3]
    for n in range(4, 7):
        commit(table, n)
    with pytest.raises(RuntimeError, match="batch 5"):
        _run(spark, paimon, table, sink, available_now=True, maxSnapshotsPerTrigger=2)
    assert _next_snapshot(table) == 4  # not past the crash
    commit(table, 7)  # the table moves on; the batch in flight must not grow
    _run(spark, paimon, table, sink, available_now=True, maxSnapshotsPerTrigger=2)
    assert sink.calls == [2, 3, 5, 5, 7]
    assert sink.replays == ([] if fail_before_sink else [5])
    assert {r["commit"] for r in sink.batches[5]} == {4, 5}
    assert sink.commits() == sorted(c for c in range(1, 8) for _ in range(3))  # exactly once


def test_a_rolled_back_table_stops_the_runner_or_restarts_as_the_policy_says(spark, paimon):
    table = _committed(paimon.create_append_table(), 5)
    sink = IdempotentSink()
    _run(spark, paimon, table, sink, available_now=True)
    table.rollback_to(2)
    for n in range(100, 102):  # snapshots 3..4 re-use the ids
        commit(table, n)
    with pytest.raises(HistoryRewrittenError):
        _run(spark, paimon, table, IdempotentSink(), available_now=True)
    restarted = IdempotentSink()
    runner = _run(spark, paimon, table, restarted, available_now=True, onHistoryRewritten="latest-full")
    assert restarted.calls == [6]  # the table's state at snapshot 4, yet ids never go back
    assert sorted(r["id"] for r in restarted.rows()) == sorted(r["id"] for r in table_rows(table))
    assert runner.metrics().last_batch_id == 6
    assert _next_snapshot(table) == 5


def test_end_stops_a_following_runner(spark, paimon):
    table = _committed(paimon.create_append_table(), 4)
    sink = IdempotentSink()
    runner = _run(spark, paimon, table, sink, start="earliest", end=3)
    assert runner.await_termination(RUN_TIMEOUT_S)
    assert sink.commits() == sorted(c for c in range(1, 4) for _ in range(3))


def test_ctrl_c_in_await_termination_stops_the_runner(spark, paimon):
    table = _committed(paimon.create_append_table(), 2)
    sink = IdempotentSink()
    runner = _run(spark, paimon, table, sink)
    # Idle (PySpark's own SIGINT handler cancels the Spark jobs of a batch in flight, which
    # then comes again with its id on the next run)
    wait_until(lambda: runner.metrics().next_snapshot_id == 3, RUN_TIMEOUT_S, "the first batch")
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        runner.await_termination(RUN_TIMEOUT_S)
    assert not runner.running and _next_snapshot(table) == 3


def test_a_misspelt_option_fails_at_the_call_naming_the_option(paimon):
    table = paimon.create_append_table()
    with pytest.raises(UnknownOptionError, match="did you mean 'includeRowKind'"):
        foreach_batch(None, print, warehouse=paimon.path, table=table.identifier.get_full_name(),
                      consumer_id="etl", includeRowKinds=True)


def test_a_following_runner_restarts_on_a_table_rolled_back_under_it(spark, paimon):
    table = _committed(paimon.create_append_table(), 5)
    sink = IdempotentSink()
    runner = _run(spark, paimon, table, sink, onHistoryRewritten="latest-full", reconcileInterval="0.5")
    wait_until(lambda: runner.metrics().next_snapshot_id == 6, RUN_TIMEOUT_S, "the full state at 5")
    table.rollback_to(4)
    commit(table, 100)  # another snapshot 5, and nothing past it
    wait_until(lambda: len(sink.calls) == 2, RUN_TIMEOUT_S, "the restart's full state")
    runner.stop()
    assert runner.await_termination(RUN_TIMEOUT_S)
    assert sink.calls == [5, 6]  # the full state at the new snapshot 5, with a larger id
    assert sorted(r["id"] for r in sink.batches[6]) == sorted(r["id"] for r in table_rows(table))
    assert _next_snapshot(table) == 6


def test_a_following_runner_reads_in_workers_it_warmed_a_worker_per_slot(spark, paimon, tmp_path):
    """Before its first wait the runner starts a Python worker per task slot, each with the
    table open: the tasks of a later batch do not start (import, open) workers of their own.
    Oracle: two tasks held together, so each runs in a worker of its own, find the table open."""
    from pyspark import cloudpickle

    table = _committed(paimon.create_append_table(), 1)
    sink = IdempotentSink()
    runner = _run(spark, paimon, table, sink, start="latest")
    WriterThread(table, 2, 2).start().join()  # one data file: a batch of one task
    wait_until(lambda: 2 in sink.batches, RUN_TIMEOUT_S, "the batch of snapshot 2")  # the warm-up was before
    runner.stop()
    slots = spark.sparkContext.defaultParallelism
    rendezvous = tmp_path / "rendezvous"
    rendezvous.mkdir()
    options = parse_options({"warehouse": paimon.path, "table": "db.events"})
    key = (options.warehouse, options.table, options.catalog)
    cloudpickle.register_pickle_by_value(runner_support)
    try:
        probe = functools.partial(tables_open, key, str(rendezvous), slots)
        rows = spark.range(0, slots, 1, slots).mapInArrow(probe, "pid long, open boolean").collect()
    finally:
        cloudpickle.unregister_pickle_by_value(runner_support)
    assert len({row.pid for row in rows}) == slots
    assert [row.open for row in rows] == [True] * slots
