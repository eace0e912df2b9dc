"""The Lambda handler's one JSON line per invocation, against a real moto_server: its figures
are checked against what the test committed and what the processor received."""

from __future__ import annotations

import json

from support import tables
from test_lambda_handler import FakeContext, ids_for_tables, lake, processors  # noqa: F401 (fixtures)

from paimon_feed.aws.lambda_handler import handler

ROWS_PER_COMMIT = len(tables.append_rows(1))


def invocation_lines(capsys) -> list[dict]:
    """The JSON invocation lines written to stdout since the last call."""
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"paimon_feed": "invocation"')]


def test_one_json_line_per_invocation_counts_what_was_committed_and_delivered(
    lake, processors, monkeypatch, capsys
):
    monkeypatch.setenv("PAIMON_FEED_START", "earliest")
    events = lake.append_table("db.events")
    clicks = lake.append_table("db.clicks")
    for n in (1, 2, 3):
        tables.commit(events, n)
    tables.commit(clicks, 1)
    event = lake.sqs_event()
    capsys.readouterr()

    assert handler(event, FakeContext()) == {"batchItemFailures": []}
    [line] = invocation_lines(capsys)
    assert line["messages"] == len(event["Records"])
    assert line["failed_messages"] == line["malformed_messages"] == line["retried_messages"] == 0
    assert line["batches"] == 4 == len(processors.DELIVERED)
    delivered_rows = sum(len(d.rows) for d in processors.DELIVERED)
    assert line["rows"] == 4 * ROWS_PER_COMMIT == delivered_rows
    assert line["lag_snapshots"] == 0
    assert line["checkpoint_conflicts"] == 0
    assert 0 < line["latency_ms"]["p50"] <= line["latency_ms"]["p99"] <= line["latency_ms"]["max"]
    assert line["duration_ms"] > 0
    assert line["request_id"] == FakeContext.aws_request_id
    assert line["tables"] == {
        "db.events": {
            "status": "done", "batches": 3, "rows": 3 * ROWS_PER_COMMIT, "snapshots": 3,
            "next_snapshot_id": 4, "lag_snapshots": 0, "checkpoint_conflicts": 0, "error": None,
        },
        "db.clicks": {
            "status": "done", "batches": 1, "rows": ROWS_PER_COMMIT, "snapshots": 1,
            "next_snapshot_id": 2, "lag_snapshots": 0, "checkpoint_conflicts": 0, "error": None,
        },
    }

    # The same event again (SQS is at-least-once): nothing new, and the line says so.
    handler(event, FakeContext())
    [again] = invocation_lines(capsys)
    assert (again["batches"], again["rows"], again["latency_ms"]) == (0, 0, None)


def test_a_failed_table_shows_its_error_and_its_lag(lake, processors, monkeypatch, capsys):
    monkeypatch.setenv("PAIMON_FEED_START", "earliest")
    bad = lake.append_table("db.bad")
    good = lake.append_table("db.good")
    for n in (1, 2):
        tables.commit(bad, n)
        tables.commit(good, n)
    event = lake.sqs_event()
    processors.FAIL_TABLES.add("db.bad")
    capsys.readouterr()

    response = handler(event, FakeContext())
    [line] = invocation_lines(capsys)
    assert line["failed_messages"] == len(response["batchItemFailures"]) == len(ids_for_tables(event, {"db.bad"}))
    failed = line["tables"]["db.bad"]
    assert failed["status"] == "failed" and "processor refuses table db.bad" in failed["error"]
    assert (failed["batches"], failed["rows"], failed["lag_snapshots"]) == (0, 0, 2)
    assert line["tables"]["db.good"]["rows"] == 2 * ROWS_PER_COMMIT
    assert line["lag_snapshots"] == 2
    assert line["batches"] == 2


def test_redelivered_messages_are_counted_as_retried(lake, processors, capsys):
    table = lake.append_table("db.events")
    tables.commit(table, 1)
    sqs = lake.server.client("sqs")
    # Receive every message once, then hand them all back, as a failed invocation does.
    received = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=lake.queue.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0, VisibilityTimeout=60
        ).get("Messages", [])
        if not messages:
            break
        received += messages
    for message in received:
        sqs.change_message_visibility(
            QueueUrl=lake.queue.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    event = lake.sqs_event()  # the second receive of each message
    capsys.readouterr()

    handler(event, FakeContext())
    [line] = invocation_lines(capsys)
    assert line["retried_messages"] == len(event["Records"]) == len(received)
