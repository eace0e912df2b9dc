"""Offsets of the Spark source: JSON of primitives that describe the batch ending at them."""

from __future__ import annotations

import json

import pytest

from paimon_feed.spark.offsets import FeedOffset, InvalidOffsetError


@pytest.mark.parametrize(
    "offset",
    [
        FeedOffset.position(1),
        FeedOffset.position(7).after_changes(9),
        FeedOffset.pending_full(4),
        FeedOffset.pending_full(4).after_full(),
    ],
)
def test_offsets_round_trip_through_json_text(offset):
    text = json.dumps(offset.to_json())
    assert FeedOffset.from_json(json.loads(text)) == offset
    assert all(isinstance(value, int) for value in json.loads(text).values())


def test_a_change_batch_end_names_its_inclusive_range_and_the_next_snapshot():
    end = FeedOffset.position(5).after_changes(7)
    assert end.to_json() == {"snapshot": 8, "first": 5}
    assert end.change_range == (5, 7)
    assert end.snapshot_count == 3


def test_the_full_state_is_one_batch_before_the_changes_after_it():
    start = FeedOffset.pending_full(4)
    assert start.to_json() == {"snapshot": 5, "pendingFull": 4}
    end = start.after_full()
    assert end.to_json() == {"snapshot": 5, "full": 4}
    assert end.change_range is None and end.snapshot_count == 1
    assert end.after_changes(6).to_json() == {"snapshot": 7, "first": 5}


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"next": 3},
        {"snapshot": "3"},
        {"snapshot": True},
        {"snapshot": 0},
        {"snapshot": 3, "first": 3},
        {"snapshot": 3, "first": 1, "full": 2},
        {"snapshot": 3, "full": 7},
        {"snapshot": 3, "partition": 1},
        [3],
    ],
)
def test_offsets_this_source_did_not_write_are_rejected(data):
    with pytest.raises(InvalidOffsetError):
        FeedOffset.from_json(data)
