"""``paimon-feed tail`` on a table whose history was rewritten under its consumer: one line,
exit 1, nothing printed of the new history and the consumer file left where it was."""

from __future__ import annotations

import json

from support.tables import commit
from test_cli_errors import one_error_line, paimon_feed

from paimon_feed.checkpoint import CheckpointStore


def read_then_roll_back(warehouse, table, *target: str) -> None:
    """Consumer ``cli`` reads commits 0..4 (snapshots 1..5) of ``target``; then the table is
    rolled back to snapshot 2 and commits 100..103 re-use the ids 3..6."""
    for n in range(5):
        commit(table, n)
    first = paimon_feed("tail", warehouse, *target, "--from", "earliest", "--consumer-id", "cli",
                        "--format", "jsonl")
    assert first.returncode == 0, first.stderr
    assert sorted(json.loads(line)["commit"] for line in first.stdout.splitlines()) == [
        n for n in range(5) for _ in range(3)
    ]
    table.rollback_to(2)
    for n in range(100, 104):
        commit(table, n)


def test_a_rolled_back_table_is_one_line_exit_1_and_the_consumer_stays(warehouse, append_table):
    read_then_roll_back(warehouse, append_table, "db.events", "--to", "5")
    second = paimon_feed("tail", warehouse, "db.events", "--to", "6", "--consumer-id", "cli",
                         "--format", "jsonl")
    assert second.returncode == 1
    line = one_error_line(second)
    assert "table db.events: its history was rewritten after snapshot 5" in line
    assert second.stdout == ""
    assert CheckpointStore.for_table(append_table, "cli").load() == 6


def test_latest_full_prints_the_table_as_it_is_now_then_goes_on(warehouse, append_table):
    read_then_roll_back(warehouse, append_table, "db.events", "--to", "5")
    second = paimon_feed("tail", warehouse, "db.events", "--to", "6", "--consumer-id", "cli",
                         "--format", "jsonl", "--on-history-rewritten", "latest-full")
    assert second.returncode == 0, second.stderr
    printed = sorted(json.loads(line)["commit"] for line in second.stdout.splitlines())
    builder = append_table.new_read_builder()
    oracle = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    assert printed == sorted(row["commit"] for row in oracle)  # the table now: 0, 1, 100..103
    assert "history was rewritten" in second.stderr  # a note, not an error
    assert CheckpointStore.for_table(append_table, "cli").load() == 7


def test_warehouse_tail_takes_the_history_policy_too(warehouse, append_table):
    read_then_roll_back(warehouse, append_table, "db.*", "--limit", "15")
    refused = paimon_feed("tail", warehouse, "db.*", "--limit", "3", "--consumer-id", "cli",
                          "--format", "jsonl", "--notifier", "poll")
    assert refused.returncode == 1 and "history was rewritten after snapshot 5" in refused.stderr
    restarted = paimon_feed("tail", warehouse, "db.*", "--limit", "18", "--consumer-id", "cli",
                            "--format", "jsonl", "--notifier", "poll",
                            "--on-history-rewritten", "latest-full")
    assert restarted.returncode == 0, restarted.stderr
    printed = sorted(json.loads(line)["commit"] for line in restarted.stdout.splitlines())
    assert printed == sorted([0] * 3 + [1] * 3 + [n for n in range(100, 104) for _ in range(3)])
