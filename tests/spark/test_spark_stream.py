"""spark.readStream.format("paimon_feed"): AvailableNow, running queries with a concurrent
writer, restarts from a checkpoint, read limits and the consumer file.

The sink is foreachBatch, recording each micro-batch by its id. Spark's foreachBatch is
at-least-once per batch id (a batch interrupted by a stop runs again after the restart), so
the sink keeps one result per id, and checks that a replayed id brought the same rows.
"""

from __future__ import annotations

import pytest
from spark_support import (
    QUERY_TIMEOUT_S,
    BatchSink,
    WriterThread,
    commit,
    consumer_next_snapshot,
    data_progress,
    delivered_changes,
    driver_stats,
    expected_changes,
    latest_snapshot_id,
    start_query,
    wait_until,
)


def run_available_now(spark, options: dict, checkpoint: str) -> tuple[BatchSink, list]:
    sink = BatchSink()
    query = start_query(spark, options, sink, checkpoint, availableNow=True)
    assert query.awaitTermination(QUERY_TIMEOUT_S), "AvailableNow query did not finish"
    assert query.exception() is None
    return sink, data_progress(query)


def without_mark(offset: dict) -> dict:
    """An offset without the digest of its last commit (checked by the history tests)."""
    return {key: value for key, value in offset.items() if key != "mark"}


@pytest.fixture(params=["append", "primary-key"])
def table(request, paimon):
    if request.param == "append":
        return paimon.create_append_table()
    return paimon.create_pk_table()


# --- Trigger.AvailableNow ---------------------------------------------------------------


def test_available_now_delivers_exactly_the_committed_changes_with_row_kinds(
    spark, paimon, table, tmp_path
):
    for n in range(1, 6):
        commit(table, n)
    options = paimon.options(table, startingPosition="earliest", includeRowKind="true")
    sink, _ = run_available_now(spark, options, str(tmp_path / "checkpoint"))
    assert delivered_changes(sink.rows()) == expected_changes(table, range(1, 6))
    if table.is_primary_key_table:
        assert {row["_row_kind"] for row in sink.rows()} == {"+I", "+U", "-D"}


def test_snapshot_ids_order_the_changes_of_one_micro_batch(spark, paimon, tmp_path):
    table = paimon.create_pk_table()
    snapshot_of = {}
    for n in range(1, 7):
        commit(table, n)
        snapshot_of[n] = latest_snapshot_id(table)
    options = paimon.options(
        table, startingPosition="earliest", includeRowKind="true", includeSnapshotId="true"
    )
    sink, progress = run_available_now(spark, options, str(tmp_path / "checkpoint"))
    assert len(progress) == 1  # the six commits arrive together
    rows = sink.rows()
    assert list(rows[0])[:2] == ["_row_kind", "_snapshot_id"]
    assert {(row["commit"], row["_snapshot_id"]) for row in rows} == set(snapshot_of.items())
    # Applying the changes in snapshot order rebuilds the table (commit n updates key n-1 and
    # deletes key n-2, so an unordered fold of this one batch would not).
    state = {}
    for row in sorted(rows, key=lambda row: row["_snapshot_id"]):
        if row["_row_kind"] in ("+I", "+U"):
            state[row["id"]] = row["payload"]
        elif row["_row_kind"] == "-D":
            del state[row["id"]]
    current = spark.read.format("paimon_feed").options(**paimon.options(table)).load().collect()
    assert state == {row["id"]: row["payload"] for row in current}


def test_available_now_from_latest_full_delivers_the_state_then_nothing_more(
    spark, paimon, tmp_path
):
    table = paimon.create_pk_table()
    for n in range(1, 5):
        commit(table, n)
    sink, progress = run_available_now(spark, paimon.options(table), str(tmp_path / "checkpoint"))
    state = sorted((row["id"], row["payload"]) for row in sink.rows())
    assert state == [(3, "upd-4"), (4, "new-4")]  # commit 4 deleted key 2
    assert [without_mark(end) for _, _, end in progress] == [{"snapshot": 5, "full": 4}]


def test_max_snapshots_per_trigger_splits_an_available_now_backlog(spark, paimon, tmp_path):
    table = paimon.create_append_table()
    for n in range(1, 11):
        commit(table, n)
    options = paimon.options(table, startingPosition="earliest", maxSnapshotsPerTrigger=3)
    sink, progress = run_available_now(spark, options, str(tmp_path / "checkpoint"))
    assert [commits for _, commits in sink.commits_by_batch()] == [
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 9],
        [10],
    ]
    assert [without_mark(end) for _, _, end in progress] == [
        {"snapshot": 4, "first": 1},
        {"snapshot": 7, "first": 4},
        {"snapshot": 10, "first": 7},
        {"snapshot": 11, "first": 10},
    ]


def test_available_now_stops_at_what_existed_when_it_started(spark, paimon, tmp_path):
    table = paimon.create_append_table()
    for n in range(1, 4):
        commit(table, n)
    checkpoint = str(tmp_path / "checkpoint")
    options = paimon.options(table, startingPosition="earliest", maxSnapshotsPerTrigger=1)
    writer = WriterThread(table, 4, 8, interval=0.05).start()
    sink, _ = run_available_now(spark, options, checkpoint)
    writer.join()
    first_run = sink.commits()
    # Complete commits only, a prefix of what was written, at least what existed at start.
    assert first_run == sorted(n for n in range(1, max(first_run) + 1) for _ in range(3))
    assert max(first_run) >= 3
    rest, _ = run_available_now(spark, options, checkpoint)
    assert sorted(first_run + rest.commits()) == [n for n in range(1, 9) for _ in range(3)]


# --- running queries --------------------------------------------------------------------


@pytest.mark.parametrize("notifier", ["auto", "local"])  # a check per trigger; inotify push
def test_a_running_query_delivers_every_concurrent_commit_once_and_in_order(
    spark, paimon, table, notifier, tmp_path
):
    sink = BatchSink()
    # "earliest": every change, even if the writer's first commit beats the query's start
    # (with the default latest-full, that commit would come as part of a full state instead).
    options = paimon.options(
        table, startingPosition="earliest", includeRowKind="true", notifier=notifier
    )
    query = start_query(
        spark, options, sink, str(tmp_path / "checkpoint"), processingTime="100 milliseconds"
    )
    try:
        writer = WriterThread(table, 1, 12, interval=0.15).start()
        writer.join()
        expected = expected_changes(table, range(1, 13))
        wait_until(
            lambda: len(sink.rows()) >= len(expected), QUERY_TIMEOUT_S, "all 12 commits"
        )
        # Spark posts a batch's progress just after the sink ran.
        wait_until(
            lambda: len(data_progress(query)) >= len(sink.batches),
            QUERY_TIMEOUT_S,
            "progress of every batch",
        )
        progress = data_progress(query)
    finally:
        query.stop()
    assert query.exception() is None
    assert delivered_changes(sink.rows()) == expected

    batches = sink.commits_by_batch()
    assert [batch_id for batch_id, _ in batches] == list(range(len(batches)))
    for (_, earlier), (_, later) in zip(batches, batches[1:]):
        assert max(earlier) < min(later), f"commits out of order: {batches}"

    # The offsets tile the snapshot ids, and each commit came in the batch covering its snapshot.
    ends = {batch_id: end for batch_id, _, end in progress}
    assert sorted(ends) == [batch_id for batch_id, _ in batches]
    next_snapshot = 1
    for batch_id, commits in batches:
        end = ends[batch_id]
        assert end["first"] == next_snapshot
        covered = range(end["first"], end["snapshot"])
        for n, snapshot_id, _ in writer.committed:
            assert (n in commits) == (snapshot_id in covered)
        next_snapshot = end["snapshot"]


def test_a_restarted_query_loses_and_repeats_nothing(spark, paimon, table, tmp_path):
    checkpoint = str(tmp_path / "checkpoint")
    options = paimon.options(
        table, startingPosition="earliest", includeRowKind="true", maxSnapshotsPerTrigger=2
    )
    sink = BatchSink()
    writer = WriterThread(table, 1, 16, interval=0.1).start()
    first = start_query(spark, options, sink, checkpoint, processingTime="100 milliseconds")
    try:
        wait_until(lambda: len(set(sink.commits())) >= 4, QUERY_TIMEOUT_S, "a first few commits")
    finally:
        first.stop()  # the writer keeps committing while the query is down
    assert first.exception() is None
    second = start_query(spark, options, sink, checkpoint, processingTime="100 milliseconds")
    try:
        writer.join()
        for n in (17, 18):  # and two more once the restarted query is running
            commit(table, n)
        expected = expected_changes(table, range(1, 19))
        wait_until(lambda: len(sink.rows()) >= len(expected), QUERY_TIMEOUT_S, "all commits")
    finally:
        second.stop()
    assert second.exception() is None
    assert delivered_changes(sink.rows()) == expected


# --- consumer checkpoints ---------------------------------------------------------------


def test_commits_advance_the_paimon_consumer_file(spark, paimon, tmp_path):
    table = paimon.create_append_table()
    for n in range(1, 11):
        commit(table, n)
    options = paimon.options(
        table, startingPosition="earliest", maxSnapshotsPerTrigger=3, consumerId="to-delta"
    )
    _, progress = run_available_now(spark, options, str(tmp_path / "checkpoint"))
    ends = [end["snapshot"] for _, _, end in progress]
    assert ends == [4, 7, 10, 11]
    # When the query has stopped, the file holds the end of the last batch Spark committed.
    assert consumer_next_snapshot(table, "to-delta") == ends[-1]


def test_available_now_leaves_the_consumer_file_after_the_last_batch_and_a_rerun_reads_nothing(
    spark, paimon, tmp_path
):
    table = paimon.create_append_table()
    for n in range(1, 13):
        commit(table, n)
    options = paimon.options(
        table, startingPosition="earliest", maxSnapshotsPerTrigger=5, consumerId="nightly"
    )
    sink, progress = run_available_now(spark, options, str(tmp_path / "monday"))
    assert [end["snapshot"] for _, _, end in progress] == [6, 11, 13]
    assert sink.commits() == [n for n in range(1, 13) for _ in range(3)]
    assert consumer_next_snapshot(table, "nightly") == 13

    # The next scheduled run: a new query (checkpoint) with the same consumer id.
    sink, progress = run_available_now(spark, options, str(tmp_path / "tuesday"))
    assert sink.commits() == []
    assert all(end["snapshot"] == 13 for _, _, end in progress)  # it started there
    assert consumer_next_snapshot(table, "nightly") == 13


def test_a_new_query_resumes_from_the_consumer_file_not_the_starting_position(
    spark, paimon, tmp_path
):
    table = paimon.create_append_table()
    for n in range(1, 7):
        commit(table, n)
    options = paimon.options(
        table, startingPosition="earliest", maxSnapshotsPerTrigger=2, consumerId="etl"
    )
    run_available_now(spark, options, str(tmp_path / "first"))
    assert consumer_next_snapshot(table, "etl") == latest_snapshot_id(table) + 1 == 7
    commit(table, 7)
    commit(table, 8)
    # A new checkpoint location (a new query) with the same consumer id: 7 and 8, not 1..8.
    sink, progress = run_available_now(spark, options, str(tmp_path / "second"))
    assert sink.commits() == [n for n in (7, 8) for _ in range(3)]
    assert progress[0][2]["first"] == 7


# --- push: triggers are answered from memory ----------------------------------------------


def follow_at_zero_trigger(spark, paimon, tmp_path, **options):
    """A query following a new append table (commit 1 in it) from the earliest snapshot at a 0 s
    trigger: the table, the sink, the query and a reader of the source driver's counters."""
    table = paimon.create_append_table()
    commit(table, 1)
    stats = driver_stats(spark, table)
    options = paimon.options(table, startingPosition="earliest", **options)
    sink = BatchSink()
    query = start_query(
        spark, options, sink, str(tmp_path / "checkpoint"), processingTime="0 seconds"
    )
    return table, sink, query, stats


def test_an_idle_running_query_answers_triggers_from_memory(spark, paimon, tmp_path):
    table, sink, query, stats = follow_at_zero_trigger(
        spark, paimon, tmp_path, reconcileInterval="1h", notifier="local"
    )
    try:
        wait_until(lambda: sink.commits() == [1, 1, 1], QUERY_TIMEOUT_S, "commit 1")
        seen = stats().get("latest_calls", 0)
        # A few idle triggers later, everything batch 0 needed from storage is behind us.
        wait_until(lambda: stats()["latest_calls"] >= seen + 20, QUERY_TIMEOUT_S, "idle triggers")
        idle_from = stats()
        wait_until(
            lambda: stats()["latest_calls"] >= idle_from["latest_calls"] + 100,
            QUERY_TIMEOUT_S,
            "100 more idle triggers",
        )
        idle_to = stats()
        assert idle_to["storage_calls"] == idle_from["storage_calls"]
        assert idle_from["notifier"] == "local" and idle_from["push_healthy"]

        commit(table, 2)
        wait_until(lambda: sink.commits() == [1, 1, 1, 2, 2, 2], QUERY_TIMEOUT_S, "commit 2")
        wait_until(lambda: stats()["hints"].get("local", 0) >= 1, QUERY_TIMEOUT_S, "the hint")
    finally:
        query.stop()
    assert query.exception() is None


def test_auto_on_a_local_table_checks_storage_on_every_trigger(spark, paimon, tmp_path):
    """A local check is a stat, so ``auto`` runs no notifier there: every trigger looks."""
    table, sink, query, stats = follow_at_zero_trigger(
        spark, paimon, tmp_path, includeRowKind="true"
    )
    try:
        wait_until(lambda: sink.commits() == [1, 1, 1], QUERY_TIMEOUT_S, "commit 1")
        idle_from = stats()
        wait_until(
            lambda: stats()["latest_calls"] >= idle_from["latest_calls"] + 50,
            QUERY_TIMEOUT_S,
            "50 more idle triggers",
        )
        idle_to = stats()
        assert idle_from["notifier"] == "storage-per-trigger" and idle_from["hints"] == {}
        calls = idle_to["latest_calls"] - idle_from["latest_calls"]
        assert idle_to["snapshot_probes"] - idle_from["snapshot_probes"] >= calls

        commit(table, 2)
        wait_until(lambda: sink.commits() == [1, 1, 1, 2, 2, 2], QUERY_TIMEOUT_S, "commit 2")
    finally:
        query.stop()
    assert query.exception() is None
    assert delivered_changes(sink.rows()) == expected_changes(table, [1, 2])
