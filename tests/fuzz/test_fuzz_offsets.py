"""Fuzzing the Spark offset JSON: any dict Spark hands back is an offset this source wrote or an
InvalidOffsetError, and every offset round-trips through ``to_json``/``from_json`` and JSON text."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from paimon_feed.spark.offsets import FeedOffset, InvalidOffsetError

from . import fuzz_strategies
from .fuzz_strategies import MAX_SNAPSHOT_ID

KEYS = ("snapshot", "first", "full", "pendingFull")

json_values = fuzz_strategies.json_values(max_leaves=6)
offset_like = st.dictionaries(
    st.one_of(
        st.sampled_from(KEYS),
        st.sampled_from(["Snapshot", "snapshot ", "next", ""]),
        st.text(max_size=8),
        st.integers(),  # not from JSON text, but a dict is what from_json takes
    ),
    json_values,
    max_size=5,
)
# Spark keeps an offset as JSON text; what it hands back went through json.loads.
through_json = offset_like.map(lambda data: json.loads(json.dumps(data)))

below_max = st.integers(min_value=1, max_value=MAX_SNAPSHOT_ID - 1)
offsets = st.one_of(
    st.integers(min_value=1, max_value=MAX_SNAPSHOT_ID).map(FeedOffset.position),
    below_max.map(FeedOffset.pending_full),
    below_max.map(lambda snapshot_id: FeedOffset.pending_full(snapshot_id).after_full()),
    below_max.flatmap(
        lambda first: st.integers(min_value=first, max_value=MAX_SNAPSHOT_ID - 1).map(
            lambda last: FeedOffset.position(first).after_changes(last)
        )
    ),
)


@given(st.one_of(offset_like, through_json, json_values))
@example({"snapshot": 3, "first": 10**5000})  # the message's repr() raised ValueError
@example({"snapshot": 2**63})  # past any Paimon snapshot id: was accepted
@example({1: 2, "a": 3})  # sorting the unknown keys raised TypeError
@example({"snapshot": 5, "full": 2**70})
def test_any_offset_json_is_an_offset_or_an_invalid_offset_error(data):
    try:
        offset = FeedOffset.from_json(data)
    except InvalidOffsetError as error:
        assert str(error)
        return
    assert isinstance(offset, FeedOffset)
    assert 1 <= offset.next_snapshot_id <= MAX_SNAPSHOT_ID
    assert offset.to_json() == {key: value for key, value in data.items() if value is not None}
    assert FeedOffset.from_json(json.loads(json.dumps(offset.to_json()))) == offset


@given(offsets)
def test_offsets_round_trip_through_json(offset):
    data = offset.to_json()
    assert set(data) <= set(KEYS) and all(type(value) is int for value in data.values())
    assert FeedOffset.from_json(data) == offset
    assert FeedOffset.from_json(json.loads(json.dumps(data))) == offset
    if offset.change_range is not None:
        first, last = offset.change_range
        assert FeedOffset.position(first).after_changes(last) == offset
