"""Fuzzing the Lambda handler's event entry: any invocation event is split into messages or
refused with a MalformedMessageError, and the handler answers it (a partial-batch response
naming exactly the malformed messages) or raises a FeedError; it never crashes.

The handler runs for real with an allow-list that admits no table, so every event stops
before a catalog is opened: what is fuzzed is parsing and routing, not delivery."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from paimon_feed.aws.lambda_handler import HandlerConfig, _table_of, handle_event
from paimon_feed.errors import FeedError
from paimon_feed.notifiers.events import MalformedMessageError, parse_lambda_event

from . import fuzz_strategies
from .envelopes import (
    any_bodies,
    eventbridge_event,
    mutated_bodies,
    s3_buckets,
    s3_event,
    valid_bodies,
)

json_values = fuzz_strategies.json_values()
table_names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_$-]{0,12}", fullmatch=True)


def _refuse_delivery(batch):
    raise AssertionError(f"no table is allowed, yet a batch was delivered: {batch}")


def _config(tables: frozenset[str] | None = frozenset()) -> HandlerConfig:
    return HandlerConfig(
        warehouse="s3://lake/wh",
        catalog_options={},
        consumer_id="fuzz",
        processor=_refuse_delivery,
        processor_spec="tests:refuse",
        tables=tables,
    )


def sqs_event(*bodies: dict) -> dict:
    return {
        "Records": [
            {"eventSource": "aws:sqs", "messageId": f"m-{index}", "body": json.dumps(body)}
            for index, body in enumerate(bodies)
        ]
    }


def _body_text(body: str | bytes) -> str:
    return body.decode("utf-8", "replace") if isinstance(body, bytes) else body


@st.composite
def lambda_events(draw):
    """An SQS or SNS batch (record fields mutated at times), a direct event, or anything."""
    kind = draw(st.sampled_from(["sqs", "sns", "direct", "anything"]))
    if kind == "anything":
        return draw(st.one_of(json_values, any_bodies))
    if kind == "direct":
        return json.loads(draw(valid_bodies(routes=("s3", "eventbridge")))[0])
    records = []
    for index in range(draw(st.integers(min_value=0, max_value=4))):
        generated = valid_bodies().map(lambda pair: pair[0])
        body = _body_text(draw(st.one_of(generated, mutated_bodies())))
        message_id = draw(st.one_of(st.just(f"m-{index}"), json_values))
        if kind == "sqs":
            record = {"messageId": message_id, "eventSource": "aws:sqs", "body": body}
        else:
            record = {"EventSource": "aws:sns", "Sns": {"MessageId": message_id, "Message": body}}
        if draw(st.integers(min_value=0, max_value=4)) == 0:
            field = draw(st.sampled_from(sorted(record)))
            record[field] = draw(st.one_of(json_values, st.just(None)))
        records.append(record if draw(st.integers(min_value=0, max_value=9)) else draw(json_values))
    return {"Records": records}


@given(lambda_events())
@example(sqs_event(s3_event("a[b", "t/snapshot/snapshot-1")))  # raised ValueError (urlparse)
@example(sqs_event(s3_event("lake", "t/snapshot/snapshot-" + "9" * 5000)))  # ValueError (int)
def test_any_lambda_event_is_split_into_messages_or_refused(event):
    malformed: list[MalformedMessageError] = []
    try:
        pairs = parse_lambda_event(event, detected_at=0.0, on_malformed=malformed.append)
    except MalformedMessageError:
        return
    assert isinstance(pairs, list)
    records = event.get("Records") if isinstance(event, dict) else None
    if malformed or any(message_id is not None for message_id, _ in pairs):
        assert len(pairs) + len(malformed) == len(records)
    for error in malformed:
        assert error.message_id is None or isinstance(error.message_id, str)
    for message_id, hints in pairs:
        assert message_id is None or isinstance(message_id, str)
        assert all(1 <= hint.snapshot_id <= 2**63 - 1 for hint in hints)
    if not malformed:  # without on_malformed, the same answer
        assert parse_lambda_event(event, detected_at=0.0) == pairs


@given(lambda_events())
def test_the_handler_answers_any_event_or_raises_a_feed_error(event):
    try:
        response = handle_event(event, None, _config())
    except FeedError:
        return
    failures = response["batchItemFailures"]
    assert isinstance(failures, list)
    assert all(isinstance(item["itemIdentifier"], str) for item in failures)
    # Only malformed messages fail: no table was allowed, so none was run.
    malformed: list[MalformedMessageError] = []
    parse_lambda_event(event, on_malformed=malformed.append)
    failed_ids = [item["itemIdentifier"] for item in failures]
    assert failed_ids == [error.message_id for error in malformed]


@given(s3_buckets, st.lists(st.text(max_size=8), max_size=4).map("/".join), st.integers(1, 10**6))
def test_any_hinted_table_is_of_the_warehouse_or_skipped_with_a_reason(bucket, path, snapshot_id):
    [hint] = parse_lambda_event(
        eventbridge_event(bucket, f"{path}/snapshot/snapshot-{snapshot_id}"), detected_at=0.0
    )[0][1] or [None]
    if hint is None:
        return
    name, reason = _table_of(hint.table_url, _config(tables=None))
    assert (name is None) != (reason == "")


@given(table_names, table_names, st.integers(1, 2**63 - 1))
def test_snapshot_events_of_warehouse_tables_name_the_table(database, table, snapshot_id):
    event = eventbridge_event("lake", f"wh/{database}.db/{table}/snapshot/snapshot-{snapshot_id}")
    [(message_id, [hint])] = parse_lambda_event(event, detected_at=0.0)
    assert message_id is None and hint.snapshot_id == snapshot_id
    assert _table_of(hint.table_url, _config(tables=None)) == (f"{database}.{table}", "")
    name, reason = _table_of(hint.table_url, _config(tables=frozenset({"other.table"})))
    assert name is None and "PAIMON_FEED_TABLES" in reason
