"""The source on every Spark line CI runs: 3.5, 4.0 and 4.1 each in a virtualenv of its own
(``.ci/spark-lines``), the newest line in the main environment.

What each line can do is in :mod:`paimon_feed.spark.lines` and docs/spark.md; these tests pin
it on a real ``local[2]`` session of the line that runs them. Oracle: pypaimon's own batch read
of the table (the merged state of a primary-key table), against which the delivered changes,
folded in snapshot order, must land; and the rows the writer committed, each delivered once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pyarrow as pa
import pytest
from pypaimon import Schema
from spark_support import (
    QUERY_TIMEOUT_S,
    BatchSink,
    WriterThread,
    commit,
    consumer_next_snapshot,
    delivered_changes,
    expected_changes,
    latest_snapshot_id,
    new_spark_session,
    start_query,
    wait_until,
)

import paimon_feed.spark
from paimon_feed.errors import SparkVersionError, VersionMismatchError
from paimon_feed.spark.lines import installed_line
from paimon_feed.spark.options import parse_options
from paimon_feed.tables import commit_arrow

pytestmark = [pytest.mark.spark, pytest.mark.spark_lines]

LINE = installed_line()
assert LINE is not None  # tests/spark is skipped without PySpark (conftest)
needs_source = pytest.mark.skipif(
    not LINE.data_source,
    reason=f"Spark {LINE.name} has no Python data source; foreach_batch serves it (its own tests)",
)


@pytest.fixture(scope="module")
def spark():
    if not LINE.data_source:
        pytest.skip(f"Spark {LINE.name} has no Python data source")
    session = new_spark_session("paimon-feed-lines")
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


def pypaimon_state(table) -> list[dict]:
    """The table's rows as pypaimon itself reads them (merged for a primary-key table)."""
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda row: row["id"])


def folded(rows: list[dict]) -> list[dict]:
    """Changes applied in snapshot order: the state they lead to (row kind and snapshot id
    dropped)."""
    state: dict[int, dict] = {}
    for row in sorted(rows, key=lambda row: row["_snapshot_id"]):
        values = {k: v for k, v in row.items() if k not in ("_row_kind", "_snapshot_id")}
        if row["_row_kind"] in ("+I", "+U"):
            state[row["id"]] = values
        else:
            state.pop(row["id"], None)
    return sorted(state.values(), key=lambda row: row["id"])


def snapshots_by_batch(sink: BatchSink) -> list[list[int]]:
    with sink._lock:
        return [sorted({r["_snapshot_id"] for r in rows}) for _, rows in sorted(sink.batches.items())]


def committed(table, last: int):
    """``table`` with commits 1..``last`` (snapshots 1..``last``)."""
    for n in range(1, last + 1):
        commit(table, n)
    return table


def run_available_now(spark, options: dict, checkpoint: str) -> BatchSink:
    sink = BatchSink()
    query = start_query(spark, options, sink, checkpoint, availableNow=True)
    assert query.awaitTermination(QUERY_TIMEOUT_S), "AvailableNow query did not finish"
    assert query.exception() is None
    return sink


# --- the line and what register() does on it ----------------------------------------------


def test_the_line_is_read_from_pysparks_own_version():
    import pyspark

    assert LINE.version == pyspark.__version__
    assert LINE.data_source == (int(pyspark.__version__.split(".")[0]) >= 4)


@pytest.mark.skipif(LINE.data_source, reason="this line has the Python data source API")
def test_register_on_a_line_without_python_data_sources_points_to_foreach_batch():
    from pyspark.sql import SparkSession

    session = SparkSession.builder.master("local[1]").appName("paimon-feed-3.5").getOrCreate()
    try:
        with pytest.raises(SparkVersionError) as raised:
            paimon_feed.spark.register(session)
        message = str(raised.value)
        assert "paimon_feed.spark.foreach_batch" in message and "4.0" in message
        assert LINE.version in message
        with pytest.raises(SparkVersionError):
            paimon_feed.spark.PaimonFeedDataSource  # noqa: B018
    finally:
        session.stop()


# --- batch reads ----------------------------------------------------------------------


@needs_source
def test_a_batch_read_is_what_pypaimon_reads(spark, paimon):
    for table in (committed(paimon.create_append_table(), 5), committed(paimon.create_pk_table(), 5)):
        rows = spark.read.format("paimon_feed").options(**paimon.options(table)).load().collect()
        assert sorted((r.asDict() for r in rows), key=lambda r: r["id"]) == pypaimon_state(table)


@needs_source
def test_a_time_column_loads_from_spark_4_1_and_is_refused_at_load_before(spark, paimon):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("at", pa.time32("ms"))])
    paimon.catalog.create_table("db.times", Schema.from_pyarrow_schema(schema), False)
    table = paimon.catalog.get_table("db.times")
    at = dt.time(13, 45, 30, 125000)
    commit_arrow(table, pa.Table.from_pylist([{"id": 1, "at": at}], schema=schema))
    reader = spark.read.format("paimon_feed").options(**paimon.options(table))
    if LINE.filter_pushdown:  # 4.1+: Spark has TimeType
        assert [tuple(row) for row in reader.load().collect()] == [(1, at)]
    else:
        with pytest.raises(Exception) as raised:
            reader.load()
        assert "column 'at'" in str(raised.value) and "Spark 4.1" in str(raised.value)


# --- streaming ------------------------------------------------------------------------


@needs_source
def test_a_capped_running_query_restarted_from_its_checkpoint_rebuilds_what_pypaimon_reads(
    spark, paimon, tmp_path
):
    table = paimon.create_pk_table()
    options = paimon.options(
        table, startingPosition="earliest", includeRowKind="true", includeSnapshotId="true",
        maxSnapshotsPerTrigger=2,
    )
    checkpoint = str(tmp_path / "cp")
    sink = BatchSink()

    def delivered_through(last: int) -> bool:
        return {r["_snapshot_id"] for r in sink.rows()} >= set(range(1, last + 1))

    writer = WriterThread(table, 1, 6, interval=0.1).start()
    first = start_query(spark, options, sink, checkpoint, processingTime="100 milliseconds")
    try:
        writer.join()
        wait_until(lambda: delivered_through(latest_snapshot_id(table)), QUERY_TIMEOUT_S, "1..6")
    finally:
        first.stop()
    for n in range(7, 12):
        commit(table, n)
    # On 4.0/4.1 Spark hands a restarted source its last journaled offset only through an
    # empty partitions(offset, offset); the cap then counts from there.
    second = start_query(spark, options, sink, checkpoint, processingTime="100 milliseconds")
    try:
        wait_until(lambda: delivered_through(latest_snapshot_id(table)), QUERY_TIMEOUT_S, "7..11")
    finally:
        second.stop()
    assert first.exception() is None and second.exception() is None
    batches = [b for b in snapshots_by_batch(sink) if b]
    assert all(len(b) <= 2 for b in batches), batches  # the cap, on every line
    assert sum(batches, []) == list(range(1, 12))  # in order, each once
    assert delivered_changes(sink.rows()) == expected_changes(table, range(1, 12))
    assert folded(sink.rows()) == pypaimon_state(table)


@needs_source
def test_available_now_reads_everything_committed_before_it_started(spark, paimon, tmp_path):
    table = committed(paimon.create_pk_table(), 6)
    options = paimon.options(
        table, startingPosition="earliest", includeRowKind="true", includeSnapshotId="true"
    )
    sink = run_available_now(spark, options, str(tmp_path / "cp"))
    assert delivered_changes(sink.rows()) == expected_changes(table, range(1, 7))
    assert folded(sink.rows()) == pypaimon_state(table)


@needs_source
def test_available_now_with_a_snapshot_cap_as_each_line_runs_it(spark, paimon, tmp_path):
    table = committed(paimon.create_append_table(), 6)
    options = paimon.options(
        table, startingPosition="earliest", maxSnapshotsPerTrigger=2, consumerId="nightly"
    )
    checkpoint = str(tmp_path / "cp")
    sink = run_available_now(spark, options, checkpoint)
    if LINE.read_limits:  # 4.2+: the backlog in capped batches, and the consumer file after it
        assert [commits for _, commits in sink.commits_by_batch()] == [[1, 2], [3, 4], [5, 6]]
        assert consumer_next_snapshot(table, "nightly") == 7
        return
    # 4.0/4.1 run one micro-batch (docs/spark.md): the cap bounds the run, the next run with
    # the same checkpoint goes on, and Spark's checkpoint leads the consumer file by that batch.
    assert [commits for _, commits in sink.commits_by_batch()] == [[1, 2]]
    assert consumer_next_snapshot(table, "nightly") == 1
    sink = run_available_now(spark, options, checkpoint)
    assert [commits for _, commits in sink.commits_by_batch()] == [[3, 4]]
    assert consumer_next_snapshot(table, "nightly") == 3


# --- driver and executors -------------------------------------------------------------


def test_an_executor_with_other_versions_refuses_the_split_naming_both(paimon):
    from paimon_feed.spark.driver import plan_batch
    from paimon_feed.spark.partitions import component_versions, read_splits

    table = paimon.create_append_table()
    commit(table, 1)
    options = parse_options(paimon.options(table))
    [group] = plan_batch(options)
    assert group.versions == component_versions()  # the driver stamps what it runs
    rows = [row for batch in read_splits(options, group) for row in batch.to_pylist()]
    assert sorted(rows, key=lambda row: row["id"]) == pypaimon_state(table)

    planned_elsewhere = dataclasses.replace(group, versions=("0.0.9", "2.0.7"))
    with pytest.raises(VersionMismatchError) as raised:
        next(iter(read_splits(options, planned_elsewhere)))
    message = str(raised.value)
    feed, pypaimon = component_versions()
    assert f"paimon-feed {feed} with pypaimon {pypaimon}" in message  # the executor's
    assert "paimon-feed 0.0.9 with pypaimon 2.0.7" in message  # the driver's
    assert "db.events" in message

    # foreach_batch's descriptors are checked before anything is unpickled
    from paimon_feed.spark.frames import read_groups

    with pytest.raises(VersionMismatchError, match="paimon-feed 0.0.9 with pypaimon 2.0.7"):
        next(read_groups(options, None, ("0.0.9", "2.0.7"), iter(())))
