"""Fuzzing the S3 / SNS / EventBridge envelope parser (shared by the SQS notifier and the Lambda
handler): any message body gives snapshot hints or a MalformedMessageError, and an envelope of
any route, for any bucket, table path and snapshot id, gives exactly the hint it names."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from paimon_feed.notifiers.base import SnapshotHint
from paimon_feed.notifiers.events import MalformedMessageError, hints_from_event, parse_message

from .envelopes import (
    any_bodies,
    eventbridge_event,
    json_values,
    mutated_bodies,
    s3_buckets,
    s3_encode,
    s3_event,
    snapshot_key,
    table_paths,
    valid_bodies,
)
from .fuzz_strategies import MAX_SNAPSHOT_ID


def _check_hints(hints: object, source: str) -> None:
    assert isinstance(hints, list)
    for hint in hints:
        assert isinstance(hint, SnapshotHint)
        assert hint.table_url.startswith("s3://") and hint.source == source
        assert type(hint.snapshot_id) is int and 1 <= hint.snapshot_id <= MAX_SNAPSHOT_ID


@given(any_bodies)
# int() of over 4300 digits raised ValueError
@example(json.dumps(s3_event("lake", "t/snapshot/snapshot-" + "9" * 5000)))
# urlparse raised ValueError: '[' in the bucket, and a fullwidth '#' (NFKC) in it
@example(json.dumps(s3_event("a[b", "t/snapshot/snapshot-1")))
@example(json.dumps(eventbridge_event("b\uff03c", "t/snapshot/snapshot-1")))
# past Java's long: gave a hint no Paimon snapshot can match
@example(json.dumps(s3_event("lake", "t/snapshot/snapshot-9223372036854775808")))
def test_any_body_gives_hints_or_a_malformed_message_error(body):
    try:
        hints = parse_message(body, detected_at=0.0)
    except MalformedMessageError as error:
        assert error.reason and len(error.reason) <= 200
        return
    _check_hints(hints, "sqs")


@given(st.one_of(json_values, mutated_bodies().map(lambda body: json.loads(body))))
def test_any_decoded_event_gives_hints_or_a_malformed_message_error(event):
    try:
        hints = hints_from_event(event, source="lambda", detected_at=0.0)
    except MalformedMessageError:
        return
    _check_hints(hints, "lambda")


@given(valid_bodies(), st.booleans())
def test_every_route_gives_exactly_the_hints_it_names(body_and_named, as_bytes):
    body, named = body_and_named
    hints = parse_message(body.encode("utf-8") if as_bytes else body, detected_at=1.5)
    assert [(hint.table_url, hint.snapshot_id) for hint in hints] == [
        (table_url, snapshot_id) for _, table_url, snapshot_id in named
    ]
    assert all(hint.source == "sqs" and hint.detected_at == 1.5 for hint in hints)


@given(valid_bodies(), st.sets(s3_buckets, max_size=2))
def test_a_bucket_filter_keeps_exactly_the_hints_of_its_buckets(body_and_named, extra):
    body, named = body_and_named
    allowed = {bucket for bucket, _, _ in named[::2]} | extra
    hints = parse_message(body, buckets=allowed, detected_at=0.0)
    assert [(hint.table_url, hint.snapshot_id) for hint in hints] == [
        (table_url, snapshot_id) for bucket, table_url, snapshot_id in named if bucket in allowed
    ]


not_ids = st.one_of(st.just(0), st.integers(min_value=MAX_SNAPSHOT_ID + 1, max_value=10**30))


@given(s3_buckets, table_paths, not_ids)
def test_snapshot_numbers_past_any_paimon_id_give_no_hint(bucket, path, number):
    key = s3_encode(snapshot_key(path, number), slash_encoded=False)
    body = json.dumps(s3_event(bucket, key))
    assert parse_message(body) == []
