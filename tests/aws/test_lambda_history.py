"""The Lambda handler after a rollback: the table's messages fail and the log says why, or, with
``PAIMON_FEED_ON_HISTORY_REWRITTEN=latest-full``, the table as it is now is delivered in full.
Real moto_server, real S3 events on a real queue."""

from __future__ import annotations

import json
import logging
from collections import Counter

from support import tables
from test_lambda_handler import (  # noqa: F401  (fixtures)
    FakeContext,
    failures,
    ids_for_tables,
    lake,
    processors,
)

from paimon_feed.aws.lambda_handler import handler


def _caught_up_then_rolled_back(lake, processors):
    table = lake.append_table("db.events")
    for n in range(1, 6):  # snapshots 1..5
        tables.commit(table, n)
    assert handler(lake.sqs_event(), FakeContext()) == {"batchItemFailures": []}
    assert lake.checkpoint(table) == 6
    processors.reset()
    table.rollback_to(2)
    for n in (100, 101, 102):  # snapshots 3..5 again: the table is as long as before
        tables.commit(table, n)
    return table


def test_a_rollback_fails_the_tables_messages_and_says_why(lake, processors, caplog, capsys):
    table = _caught_up_then_rolled_back(lake, processors)
    event = lake.sqs_event()
    with caplog.at_level(logging.INFO, logger="paimon_feed"):
        response = handler(event, FakeContext())
    assert failures(response) == ids_for_tables(event, {"db.events"}) != set()
    assert processors.DELIVERED == []
    assert lake.checkpoint(table) == 6  # left where it was: nothing committed past the rewrite
    assert "history was rewritten after snapshot 5" in caplog.text
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])  # the invocation log
    outcome = line["tables"]["db.events"]
    assert outcome["status"] == "failed" and "rewritten after snapshot 5" in outcome["error"]


def test_latest_full_policy_delivers_the_table_as_it_is_now(lake, processors, monkeypatch):
    monkeypatch.setenv("PAIMON_FEED_ON_HISTORY_REWRITTEN", "latest-full")
    table = _caught_up_then_rolled_back(lake, processors)
    assert handler(lake.sqs_event(), FakeContext()) == {"batchItemFailures": []}
    assert [(d.kind, d.snapshot_id) for d in processors.DELIVERED] == [("full", 5)]
    delivered = Counter(row for d in processors.DELIVERED for row in d.rows)
    builder = table.new_read_builder()
    oracle = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    assert delivered == Counter(tuple(sorted(row.items())) for row in oracle)
    assert lake.checkpoint(table) == 6
    tables.commit(table, 103)  # and the new history goes on from there
    processors.reset()
    assert handler(lake.sqs_event(), FakeContext()) == {"batchItemFailures": []}
    assert [(d.kind, d.snapshot_id) for d in processors.DELIVERED] == [("delta", 6)]
