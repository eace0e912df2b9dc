"""A rolled-back or re-created table stops a Spark query (or restarts it as
``onHistoryRewritten`` says), in the driver and in a real local Spark session."""

from __future__ import annotations

import pytest
from spark_support import (
    QUERY_TIMEOUT_S,
    BatchSink,
    commit,
    delivered_changes,
    expected_changes,
    start_query,
    wait_until,
)

from paimon_feed.errors import HistoryRewrittenError
from paimon_feed.spark.driver import StreamDriver, read_splits
from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import parse_options


def driver_for(paimon, table, **options) -> StreamDriver:
    return StreamDriver(parse_options(paimon.options(table, notifier="local", **options)))


def rows_of(driver, groups) -> list[dict]:
    return [row for group in groups for batch in read_splits(driver.options, group) for row in batch.to_pylist()]


def table_rows(table) -> list[dict]:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()


@pytest.fixture
def events(paimon):
    table = paimon.create_append_table()
    for n in range(1, 8):  # snapshots 1..7
        commit(table, n)
    return table


def test_a_rollback_between_micro_batches_stops_the_query(paimon, events):
    driver = driver_for(paimon, events, startingPosition="earliest", includeRowKind="true")
    try:
        start = driver.initial_offset()
        first = driver.latest_offset(start, None)
        assert rows_of(driver, driver.plan(start, first))  # snapshots 1..7 delivered
        driver.commit(first)
        events.rollback_to(3)
        for n in range(100, 106):  # snapshots 4..9 re-use the ids
            commit(events, n)
        driver.tracker.refresh()
        second = driver.latest_offset(first, None)
        assert second.change_range == (8, 9)
        with pytest.raises(HistoryRewrittenError, match="after snapshot 7"):
            driver.plan(first, second)
    finally:
        driver.close()


def test_a_restart_from_the_spark_checkpoint_checks_the_journaled_offsets(paimon, events):
    """A new driver (a restarted query) gets the journaled offsets back: their marks still
    tell that the table's snapshots are other commits now."""
    options = dict(startingPosition="earliest", includeRowKind="true")
    driver = driver_for(paimon, events, **options)
    try:
        start = FeedOffset.from_json(driver.initial_offset().to_json())
        end = FeedOffset.from_json(driver.latest_offset(start, 3).to_json())  # 1..3, journaled
        after = FeedOffset.from_json(driver.latest_offset(end, None).to_json())  # 4..7
    finally:
        driver.close()
    events.rollback_to(5)
    commit(events, 100)  # a new snapshot 6
    commit(events, 101)
    commit(events, 102)  # ... up to 8
    restarted = driver_for(paimon, events, **options)
    try:
        assert rows_of(restarted, restarted.plan(start, end))  # 1..3 are still those commits
        with pytest.raises(HistoryRewrittenError, match="other commits now"):
            restarted.plan(end, after)  # replaying 4..7: 6 and 7 are other commits
    finally:
        restarted.close()


def test_latest_full_policy_turns_the_micro_batch_into_the_tables_state(paimon, events):
    driver = driver_for(
        paimon, events, startingPosition="earliest", onHistoryRewritten="latest-full",
        consumerId="etl",
    )
    try:
        start = driver.initial_offset()
        first = driver.latest_offset(start, None)
        driver.plan(start, first)
        driver.commit(first)
        events.rollback_to(3)
        for n in range(100, 106):  # snapshots 4..9
            commit(events, n)
        driver.tracker.refresh()
        second = driver.latest_offset(first, None)
        rows = rows_of(driver, driver.plan(first, second))
        assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in table_rows(events))
        assert driver.progress.history_rewrites == 1
    finally:
        driver.close()


def test_a_consumer_resumed_after_a_rollback_is_refused(paimon, events):
    driver = driver_for(paimon, events, startingPosition="earliest", consumerId="etl")
    try:
        start = driver.initial_offset()
        end = driver.latest_offset(start, None)
        driver.plan(start, end)
        driver.commit(end)
    finally:
        driver.close()  # writes the consumer file (8) and its mark
    events.rollback_to(3)
    for n in range(100, 106):
        commit(events, n)
    again = driver_for(paimon, events, consumerId="etl")
    try:
        with pytest.raises(HistoryRewrittenError, match="snapshot 7 is another commit"):
            again.initial_offset()
    finally:
        again.close()


def test_a_running_query_stops_with_the_error_after_a_rollback(spark, paimon, tmp_path):
    table = paimon.create_append_table()
    for n in range(1, 5):
        commit(table, n)
    options = paimon.options(
        table, startingPosition="earliest", includeRowKind="true", notifier="poll",
        pollInterval="0.1",
    )
    sink = BatchSink()
    query = start_query(spark, options, sink, str(tmp_path / "checkpoint"), processingTime="0.2 seconds")
    try:
        wait_until(lambda: 4 in sink.commits(), QUERY_TIMEOUT_S, "the first commits")
        assert delivered_changes(sink.rows()) == expected_changes(table, range(1, 5))
        table.rollback_to(2)
        for n in range(100, 104):  # snapshots 3..6: the table passes the query's position
            commit(table, n)
        wait_until(lambda: query.exception() is not None or not query.isActive, QUERY_TIMEOUT_S,
                   "the query to stop")
        assert "HistoryRewrittenError" in str(query.exception())
        assert not any(n >= 100 for n in sink.commits())  # nothing of the new history read as changes
    finally:
        if query.isActive:
            query.stop()


def test_a_table_recreated_with_a_single_commit_stops_the_query_at_the_next_check(paimon, events):
    """Nothing past the position exists in the new table, so no micro-batch would ever be
    planned: the storage check that finds nothing compares the commit before the position."""
    driver = driver_for(paimon, events, startingPosition="earliest")
    try:
        start = driver.initial_offset()
        first = driver.latest_offset(start, None)
        driver.plan(start, first)
        driver.commit(first)
        assert driver.latest_offset(first, None) == first  # idle: nothing new, nothing wrong
        paimon.catalog.drop_table("db.events", False)
        recreated = paimon.create_append_table()
        commit(recreated, 100)  # snapshot 1 of another table
        driver.tracker.refresh()  # what a hint or the safety check does
        with pytest.raises(HistoryRewrittenError, match="snapshot 7 no longer exists"):
            driver.latest_offset(first, None)
    finally:
        driver.close()
