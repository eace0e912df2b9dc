"""The paimon-feed command, run as a subprocess the way users run it."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time

import pytest
from support.tables import commit, table_dir


def paimon_feed(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_tail_bounded_jsonl_prints_every_row_of_the_range(warehouse, append_table):
    for n in range(4):
        commit(append_table, n)
    result = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "4")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(row["commit"] for row in rows) == sorted([n for n in range(4) for _ in range(3)])
    assert set(rows[0]) == {"id", "commit", "payload"}


def test_tail_follows_new_commits_until_the_limit(warehouse, append_table, start_writer):
    commit(append_table, 0)
    process = subprocess.Popen(
        [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.events", "--limit", "9"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)  # let it start at "latest" before the writer commits
        writer = start_writer(append_table, 1, 3, interval=0.05)
        out, err = process.communicate(timeout=60)
        writer.wait()
    finally:
        process.kill()
    assert process.returncode == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["commit"] for row in rows] == [1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_tail_row_kind_columns_and_filters(warehouse, pk_table):
    for n in range(5):
        commit(pk_table, n)
    result = paimon_feed(
        "tail", warehouse, "db.orders", "--from", "earliest", "--to", "5",
        "--include-row-kind", "--columns", "id,payload", "-f", "commit>=3", "-f", "payload=upd*",
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == [
        {"_row_kind": "+U", "id": 2, "payload": "upd-3"},
        {"_row_kind": "+U", "id": 3, "payload": "upd-4"},
    ]


@pytest.mark.parametrize("fmt", ["csv", "table", "json"])
def test_tail_output_formats(warehouse, append_table, fmt):
    commit(append_table, 0)
    result = paimon_feed(
        "tail", warehouse, "db.events", "--from", "earliest", "--to", "1", "--format", fmt
    )
    assert result.returncode == 0, result.stderr
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert [row["payload"] for row in rows] == ["c0-r0", "c0-r1", "c0-r2"]
    elif fmt == "table":
        lines = result.stdout.splitlines()
        assert lines[0].startswith("+-") and "| id " in lines[1]
        assert sum("c0-r" in line for line in lines) == 3
    else:
        rows = json.loads(result.stdout)  # one array for the whole run
        assert [row["payload"] for row in rows] == ["c0-r0", "c0-r1", "c0-r2"]


def test_tail_with_consumer_id_resumes_where_it_stopped(warehouse, append_table):
    for n in range(3):
        commit(append_table, n)
    first = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "2", "--consumer-id", "cli")
    assert first.returncode == 0, first.stderr
    second = paimon_feed("tail", warehouse, "db.events", "--to", "3", "--consumer-id", "cli")
    assert second.returncode == 0, second.stderr
    assert {json.loads(line)["commit"] for line in second.stdout.splitlines()} == {2}


@pytest.mark.parametrize(
    "args, message",
    [
        (["db.missing"], "does not exist"),
        (["db.events", "--from", "yesterday"], "invalid start position"),
        (["db.events", "--consumer-id", "../../etc"], "invalid consumer id"),
        (["../db.events"], "invalid table name"),
        (["db.events", "-f", "nope=1"], "unknown column"),
        (["db.events", "-f", "id>abc"], "not a valid"),
        (["db.events", "--columns", "id,ghost"], "--columns: unknown column ghost; the table has id, commit, payload"),
        (["db.events", "--to", "0"], "snapshot ids start at 1"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message_and_writes_nothing(warehouse, append_table, args, message):
    commit(append_table, 0)
    before = sorted(os.listdir(table_dir(append_table)))
    result = paimon_feed("tail", warehouse, *args, timeout=60)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr
    assert result.stdout == ""
    assert sorted(os.listdir(table_dir(append_table))) == before


def test_corrupt_consumer_file_exits_2_and_is_left_as_it_was(warehouse, append_table):
    commit(append_table, 0)
    path = os.path.join(table_dir(append_table), "consumer", "consumer-bad")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write("garbage")
    result = paimon_feed("tail", warehouse, "db.events", "--consumer-id", "bad", timeout=60)
    assert result.returncode == 2
    assert "corrupt consumer file" in result.stderr
    with open(path) as handle:
        assert handle.read() == "garbage"


def test_demo_runs_end_to_end_and_prints_latency_and_a_summary(tmp_path):
    result = paimon_feed("demo", "--commits", "8", "--backlog", "15", "--interval", "0.05", timeout=180)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    caught_up = re.search(r"(\d+) snapshots caught up in one batch", out)
    assert caught_up and int(caught_up.group(1)) >= 15  # the backlog came as one batch
    assert out.count("commit→delivery") >= 8
    summary = out[out.index("summary"):]
    events_line = next(line for line in summary.splitlines() if "db.events" in line)
    assert "69 rows" in events_line and "latency p50" in events_line  # (15 + 8) commits x 3 rows
    assert "db.orders" in summary and "every commit delivered once" in summary


def test_a_second_demo_on_one_warehouse_resumes_its_consumer_and_delivers_every_commit(tmp_path):
    warehouse = str(tmp_path / "wh")
    demo = ("demo", "--commits", "5", "--backlog", "3", "--interval", "0.05", "--warehouse", warehouse)
    first = paimon_feed(*demo, timeout=180)
    assert first.returncode == 0, first.stderr
    second = paimon_feed(*demo, timeout=180)
    assert second.returncode == 0, second.stderr
    # Run 1 made snapshots 1-8 of db.events (3 backlog + 5) and 1-5 of db.orders; run 2 the same again.
    assert "consumer 'demo' of db.events resumes at snapshot 9, 3 snapshots behind" in second.stdout
    summary = second.stdout[second.stdout.index("summary"):]
    assert "db.events" in summary and "24 rows" in summary.splitlines()[1]  # 8 commits x 3 rows
    # The WarehouseFeed follows both tables from the writer's first commit: 5 x 3 event rows
    # and 1 + 2 + 3 + 3 + 3 order changes.
    warehouse_line = next(line for line in summary.splitlines() if "WarehouseFeed" in line)
    assert "db.*" in warehouse_line and "27 rows" in warehouse_line
    assert "every commit delivered once" in summary
    listing = paimon_feed("consumers", warehouse, "--format", "json")
    assert listing.returncode == 0, listing.stderr
    positions = {(c["table"], c["consumer_id"], c["next_snapshot_id"], c["lag_snapshots"]) for c in json.loads(listing.stdout)}
    assert positions == {("db.events", "demo", 17, 0), ("db.orders", "demo", 11, 0)}
