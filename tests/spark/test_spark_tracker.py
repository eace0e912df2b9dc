"""SnapshotTracker: the driver answers "what is latest?" from memory, woken by push."""

from __future__ import annotations

import pytest
from spark_support import commit, wait_until

from benchmarks._common.counting import StorageCounter
from paimon_feed.planner._snapshots import table_url
from paimon_feed.spark.tracker import SnapshotTracker, tracking_mode


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tracker_for(table, counter: StorageCounter | None = None, **kwargs) -> SnapshotTracker:
    """A started tracker; with ``counter``, every storage call through the table's FileIO is
    counted (the counter lives with the benchmarks: measurement is not the product's)."""
    if counter is not None:
        counter.instrument(table.file_io)
    tracker = SnapshotTracker(table, table_url(table), **kwargs)
    tracker.start()
    return tracker


@pytest.fixture
def table(paimon):
    return paimon.create_append_table()


def test_idle_table_costs_no_storage_call_between_safety_checks(table):
    commit(table, 1)
    counter = StorageCounter()
    tracker = tracker_for(table, counter, notifier="local", reconcile_interval=60.0)
    try:
        assert tracker.latest() == 1
        before = counter.total
        for _ in range(500):
            assert tracker.latest() == 1
        assert counter.total == before
    finally:
        tracker.close()


def test_a_commit_wakes_the_tracker_which_then_finds_it_in_storage(table):
    tracker = tracker_for(table, notifier="local", reconcile_interval=3600.0)
    try:
        assert tracker.latest() is None
        for n in (1, 2, 3):
            commit(table, n)
        wait_until(lambda: tracker.latest() == 3, 30, "the tracker to see snapshot 3")
        assert tracker.stats()["hints"].get("local", 0) >= 1
    finally:
        tracker.close()


def test_the_safety_check_finds_a_snapshot_no_hint_announced(table):
    clock = FakeClock()
    # The polling notifier with an hour's interval stays healthy and never hints in this test,
    # so only the reconcile interval can find the commit.
    tracker = tracker_for(
        table, notifier="poll", poll_interval=3600.0, reconcile_interval=60.0, clock=clock
    )
    try:
        commit(table, 1)
        assert tracker.latest() is None
        clock.now += 59.0
        assert tracker.latest() is None
        clock.now += 1.0
        assert tracker.latest() == 1
    finally:
        tracker.close()


def test_without_push_every_question_checks_storage(table):
    commit(table, 1)
    counter = StorageCounter()
    tracker = tracker_for(table, counter, notifier="storage-per-trigger")
    try:
        before = counter.total
        for _ in range(10):
            assert tracker.latest() == 1
        assert counter.total - before == 10  # one existence check of snapshot-2 each
    finally:
        tracker.close()


@pytest.mark.parametrize(
    ("notifier", "url", "mode"),
    [
        ("auto", "file:///data/wh/db.db/t", "storage-per-trigger"),  # a stat: no notifier
        ("auto", "/data/wh/db.db/t", "storage-per-trigger"),
        ("auto", "s3://bucket/wh/db.db/t", "auto"),  # sqs with a queue, else poll
        ("local", "file:///data/wh/db.db/t", "local"),  # inotify when asked for
        ("poll", "file:///data/wh/db.db/t", "poll"),
        (None, "s3://bucket/wh/db.db/t", "storage-per-trigger"),
    ],
)
def test_auto_checks_every_trigger_on_a_local_file_system_and_pushes_elsewhere(notifier, url, mode):
    assert tracking_mode(notifier, url) == mode


def test_auto_on_a_local_table_runs_no_notifier_and_checks_on_every_question(table):
    commit(table, 1)
    tracker = tracker_for(table, notifier="auto")
    try:
        assert tracker.stats()["notifier"] == "storage-per-trigger" and not tracker.push_healthy
        before = tracker.stats()["snapshot_probes"]
        for _ in range(5):
            assert tracker.latest() == 1
        commit(table, 2)  # through the same FileIO: count probes, not its storage calls
        assert tracker.latest() == 2  # no hint, no interval: the next question finds it
        assert tracker.stats()["snapshot_probes"] - before == 5 + 2  # snapshot-2 each, then -3
    finally:
        tracker.close()


def test_a_stopped_notifier_falls_back_to_polling_at_the_poll_interval(table):
    clock = FakeClock()
    tracker = tracker_for(
        table, notifier="local", poll_interval=1.0, reconcile_interval=3600.0, clock=clock
    )
    try:
        tracker._notifier.close()  # the push source is gone
        assert not tracker.push_healthy
        commit(table, 1)
        clock.now += 1.0
        assert tracker.latest() == 1
    finally:
        tracker.close()


def test_probing_follows_the_contiguous_run_of_snapshots(table):
    tracker = tracker_for(table, notifier="storage-per-trigger")
    try:
        for n in range(1, 6):
            commit(table, n)
        before = tracker.stats()["snapshot_probes"]
        assert tracker.latest() == 5
        assert tracker.stats()["snapshot_probes"] - before == 6  # 1..5 found, 6 missing
    finally:
        tracker.close()
