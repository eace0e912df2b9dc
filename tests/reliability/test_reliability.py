"""Reduced runs of benchmarks/reliability.py: the invariants under crashes, chaos, faults,
expiry and load. The full runs (50+ kills, 10,000 snapshots) are the benchmark's."""

from __future__ import annotations

import importlib
import os
import tempfile

import pytest

reliability = importlib.import_module("benchmarks.reliability")


def test_sigkilled_consumers_lose_nothing_and_repeat_only_uncommitted_batches():
    outcome = reliability.run_crash(kills=6, seed=11)
    assert outcome.notes["kills"] == 6
    assert outcome.runs >= 4  # most kills land while streaming, not during start-up
    assert outcome.lost == 0
    assert outcome.out_of_order == 0
    assert outcome.duplicates_allowed, "a committed batch was delivered again"
    assert outcome.committed_batches > 0


def test_dropped_duplicated_reordered_delayed_hints_lose_and_repeat_nothing():
    outcome = reliability.run_chaos(commits=40, reconcile_interval=0.5, seed=7)
    stats = outcome.notes["chaos"]
    assert stats["dropped"] > 0 and stats["duplicated"] > 0 and stats["held_back"] > 0
    assert (outcome.lost, outcome.duplicated, outcome.out_of_order) == (0, 0, 0)
    assert outcome.notes["reconciles"] > 0  # the safety net found what chaos dropped


def test_transient_storage_faults_are_retried_and_the_feed_continues():
    outcome = reliability.run_faults(commits=30, rate=0.1)
    assert outcome.notes["injected_faults"] > 0 and outcome.notes["storage_retries"] > 0
    assert (outcome.lost, outcome.duplicated, outcome.out_of_order) == (0, 0, 0)


def test_a_permanent_storage_fault_reaches_the_consumer_and_leaves_the_checkpoint():
    outcome = reliability.run_permanent_fault()
    assert outcome.notes["error"].startswith("StorageError: table db.t")
    assert outcome.notes["checkpoint_untouched"]
    assert outcome.lost == 0


def test_a_consumer_file_protects_unread_snapshots_from_paimons_expiry_rule(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the run makes its warehouses
    outcome = reliability.run_expiry()
    assert outcome.notes["earliest_after_expiry_with_consumer"] == 3  # held at nextSnapshot
    assert (outcome.lost, outcome.duplicated) == (0, 0)
    assert "snapshot 3 expired before it was read" in outcome.notes["unprotected_error"]
    assert os.listdir(tmp_path) == []  # the run removed what it made


def test_soak_keeps_memory_descriptors_and_tasks_flat():
    outcome = reliability.run_soak(snapshots=400)
    start, end = outcome.notes["start"], outcome.notes["end"]
    assert (outcome.lost, outcome.duplicated, outcome.out_of_order) == (0, 0, 0)
    assert end["tasks"] == start["tasks"]
    assert end["open_fds"] <= start["open_fds"] + 4
    assert outcome.notes["rss_growth_mb_after_warm_up"] < 50


@pytest.mark.parametrize("lines, expected", [
    # a restart that resumes at the checkpoint, repeating only the uncommitted batch
    (['{"t":"start"}', '{"t":"batch","first":1,"last":1,"rows":[[0,0],[0,1]]}', '{"t":"commit","next":2}',
      '{"t":"batch","first":2,"last":2,"rows":[[1,10],[1,11]]}', '{"t":"start"}',
      '{"t":"batch","first":2,"last":2,"rows":[[1,10],[1,11]]}', '{"t":"commit","next":3}'], (0, 2, True, 0)),
    # a restart that skips ahead of the checkpoint is out of order, and its gap is lost rows
    (['{"t":"start"}', '{"t":"batch","first":1,"last":1,"rows":[[0,0],[0,1]]}', '{"t":"commit","next":2}',
      '{"t":"start"}', '{"t":"batch","first":3,"last":3,"rows":[[2,20],[2,21]]}'], (2, 0, True, 1)),
    # a committed batch delivered again is a disallowed duplicate
    (['{"t":"start"}', '{"t":"batch","first":1,"last":1,"rows":[[0,0],[0,1]]}', '{"t":"commit","next":2}',
      '{"t":"batch","first":2,"last":2,"rows":[[1,10],[1,11]]}', '{"t":"commit","next":3}', '{"t":"start"}',
      '{"t":"batch","first":1,"last":1,"rows":[[0,0],[0,1]]}'], (0, 2, False, 1)),
])
def test_the_crash_checker_catches_gaps_and_bad_repeats(tmp_path, lines, expected):
    sink = tmp_path / "sink.jsonl"
    sink.write_text("\n".join(lines) + "\n{torn")
    commits = range(3) if expected[0] else range(2)
    outcome = reliability.verify_sink(str(sink), commits)
    assert (outcome.lost, outcome.duplicated, outcome.duplicates_allowed, outcome.out_of_order) == expected
