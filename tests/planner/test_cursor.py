"""The Cursor: one consumer's planning state carried from round to round (position,
covered-from, hints, the expiry-check rule)."""

import pytest
from support.tables import commit, expire_snapshots, overwrite

from paimon_feed import SnapshotExpiredError
from paimon_feed.planner import Cursor, Planner


def spans(batches):
    return [(b.first_snapshot_id, b.snapshot_id) for b in batches]


def test_a_snapshot_skipped_at_the_end_of_a_round_is_covered_by_the_next_rounds_batch(append_table):
    commit(append_table, 0)
    overwrite(append_table, 1)  # snapshot 2: nothing for a delta feed, and the newest for now
    cursor = Cursor(Planner(append_table, catch_up_threshold=100), 1)
    first = cursor.advance(10)
    assert spans(first.batches) == [(1, 1)] and not first.more
    assert (cursor.next_snapshot_id, cursor.covered_from) == (3, 2)
    commit(append_table, 2)
    assert spans(cursor.advance(10).batches) == [(2, 3)]
    assert (cursor.next_snapshot_id, cursor.covered_from) == (4, 4)


def test_the_first_round_checks_for_expiry_and_nothing_moves_when_planning_fails(append_table):
    for n in range(12):
        commit(append_table, n)
    expire_snapshots(append_table, keep_from=10)
    cursor = Cursor(Planner(append_table), 4)
    with pytest.raises(SnapshotExpiredError, match="snapshot 4 expired"):
        cursor.advance(2)
    assert (cursor.next_snapshot_id, cursor.covered_from, cursor.check_expiry) == (4, 4, True)
    cursor.restart(10)
    round_ = cursor.advance(2)
    assert spans(round_.batches) == [(10, 10), (11, 11)]
    assert (round_.first_snapshot_id, round_.next_snapshot_id, round_.checked_expiry) == (10, 12, True)


def test_a_round_cut_by_the_limit_checks_for_expiry_next_and_an_override_wins(append_table):
    for n in range(5):
        commit(append_table, n)
    cursor = Cursor(Planner(append_table, catch_up_threshold=100), 1)
    cursor.check_expiry = False
    cut = cursor.advance(2)
    assert cut.more and not cut.checked_expiry and cursor.check_expiry
    assert not cursor.advance(2, check_expiry=False).checked_expiry


def test_a_hinted_round_hands_its_batch_over_then_probes_on_without_an_expiry_check(append_table):
    for n in range(3):
        commit(append_table, n)
    cursor = Cursor(Planner(append_table, catch_up_threshold=100), 1)
    cursor.check_expiry = False
    cursor.hint(2, detected_at=123.0)
    assert (cursor.hinted_snapshot_id, cursor.check_expiry) == (2, True)
    hinted = cursor.advance(8)
    assert spans(hinted.batches) == [(1, 1), (2, 2)] and hinted.more
    assert {b.detected_at for b in hinted.batches} == {123.0}
    assert (cursor.hinted_snapshot_id, cursor.detected_at, cursor.check_expiry) == (None, None, False)
    rest = cursor.advance(8)
    assert spans(rest.batches) == [(3, 3)] and not rest.more and not rest.checked_expiry


def test_hints_keep_the_newest_snapshot_and_the_first_detection(append_table):
    commit(append_table, 0)
    cursor = Cursor(Planner(append_table), 1)
    cursor.hint(3, detected_at=1.0)
    cursor.hint(2, detected_at=2.0)
    cursor.hint(None, detected_at=None)
    assert (cursor.hinted_snapshot_id, cursor.detected_at) == (3, 1.0)


def test_a_hint_older_than_the_position_is_dropped_and_asks_for_a_history_check(append_table):
    commit(append_table, 0)
    cursor = Cursor(Planner(append_table), 5)
    cursor.check_expiry = False
    cursor.hint(3, detected_at=1.0)
    assert (cursor.hinted_snapshot_id, cursor.check_expiry) == (None, True)


def test_a_wake_replaces_the_hint_state(append_table):
    commit(append_table, 0)
    cursor = Cursor(Planner(append_table), 5)
    cursor.hint(9, detected_at=1.0)
    cursor.woke(None, None)
    assert (cursor.hinted_snapshot_id, cursor.detected_at, cursor.check_expiry) == (None, None, False)
    cursor.woke(None, None, safety_check=True)
    assert cursor.check_expiry
    cursor.woke(4, 2.0)  # older than the position: a rewritten id
    assert (cursor.hinted_snapshot_id, cursor.detected_at, cursor.check_expiry) == (None, 2.0, True)
    cursor.woke(6, 3.0)
    assert (cursor.hinted_snapshot_id, cursor.check_expiry) == (6, True)


def test_a_cursor_stops_at_its_end_snapshot(append_table):
    for n in range(4):
        commit(append_table, n)
    cursor = Cursor(Planner(append_table, catch_up_threshold=100), 1, end=2)
    assert not cursor.done
    assert spans(cursor.advance(8).batches) == [(1, 1), (2, 2)]
    assert cursor.done and cursor.next_snapshot_id == 3
