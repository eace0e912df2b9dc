"""``paimon-feed tail --to``: every position the start grammar allows, resolved when the command
starts; an end before the start is an error whatever the form of either. Run as users run it,
on real local tables; oracle: the ``commit`` column the test wrote (snapshot n holds commit n-1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.tables import commit, table_dir


def paimon_feed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", *args], capture_output=True, text=True, timeout=120, check=False
    )


def commits_of(result: subprocess.CompletedProcess) -> list[int]:
    assert result.returncode == 0, result.stderr
    return sorted({json.loads(line)["commit"] for line in result.stdout.splitlines()})


def snapshot_time(table, snapshot_id: int) -> int:
    with open(os.path.join(table_dir(table), "snapshot", f"snapshot-{snapshot_id}")) as handle:
        return json.load(handle)["timeMillis"]


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


@pytest.fixture
def four_snapshots(append_table):
    for n in range(4):
        commit(append_table, n)
    return append_table


def test_to_latest_reads_up_to_now_and_exits(warehouse, four_snapshots):
    """Before: 'invalid snapshot id in position 'latest'', with 'latest' listed as valid."""
    assert commits_of(paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "latest")) == [0, 1, 2, 3]
    assert commits_of(paimon_feed("tail", warehouse, "db.events", "--from", "3", "--to", "latest")) == [2, 3]


def test_to_latest_with_a_consumer_reads_what_is_new_each_run(warehouse, four_snapshots):
    args = ("tail", warehouse, "db.events", "--from", "earliest", "--to", "latest", "--consumer-id", "cron")
    assert commits_of(paimon_feed(*args)) == [0, 1, 2, 3]
    assert commits_of(paimon_feed(*args)) == []  # caught up: nothing to read, not an error
    commit(four_snapshots, 4)
    assert commits_of(paimon_feed(*args)) == [4]


def test_to_takes_earliest_a_tag_and_times(warehouse, four_snapshots):
    four_snapshots.create_tag("v2", snapshot_id=2)
    t2 = snapshot_time(four_snapshots, 2)
    for end, commits in (
        ("earliest", [0]),
        ("snapshot:2", [0, 1]),
        ("tag:v2", [0, 1]),
        (f"time:{iso(t2)}", [0, 1]),  # the last snapshot committed at or before that time
        ("-0s", [0, 1, 2, 3]),
    ):
        result = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", end)
        assert commits_of(result) == commits, end


@pytest.mark.parametrize(
    "start, end, message",
    [
        # Before: nothing printed and exit 0 (the time starts after snapshot 4).
        ("time:2030-01-01", "4", "--to 4 is before the start: --from time:2030-01-01 starts at snapshot 5"),
        ("time:2030-01-01", "latest", "--to latest (snapshot 4) is before the start"),
        ("3", "2", "--to 2 is before the start: --from 3 starts at snapshot 3"),
        ("3", "earliest", "--to earliest (snapshot 1) is before the start"),
        ("tag:v3", "2", "--to 2 is before the start: --from tag:v3 starts at snapshot 3"),
        ("earliest", "time:2000-01-01", "--to time:2000-01-01: table db.events has no snapshot committed by then"),
        ("earliest", "time:2999-01-01", "--to time:2999-01-01 is in the future"),
        ("earliest", "latest-full", "--to latest-full: an end is a snapshot, not a full read; use --to latest"),
        ("earliest", "soon", (
            "--to: invalid position 'soon': use a snapshot id ('42' or 'snapshot:42'), 'latest', "
            "'earliest', 'tag:<name>', 'time:<ISO-8601>' or a relative time such as '-1h'"
        )),
    ],
)
def test_an_end_before_the_start_is_an_error_whatever_its_form(warehouse, four_snapshots, start, end, message):
    four_snapshots.create_tag("v3", snapshot_id=3)
    result = paimon_feed("tail", warehouse, "db.events", "--from", start, "--to", end)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("paimon-feed: error: ") and message in line
    assert "StartPosition(" not in line


def test_an_end_before_a_consumers_checkpoint_is_an_error(warehouse, four_snapshots):
    assert commits_of(paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "4", "--consumer-id", "c")) == [0, 1, 2, 3]
    result = paimon_feed("tail", warehouse, "db.events", "--to", "2", "--consumer-id", "c")
    assert result.returncode == 2
    assert "--to 2 is before the start: consumer c has read up to snapshot 4 already" in result.stderr


def test_to_latest_on_a_table_without_snapshots_is_an_error(warehouse, append_table):
    result = paimon_feed("tail", warehouse, "db.events", "--to", "latest")
    assert result.returncode == 2
    assert "--to latest: table db.events has no snapshot yet" in result.stderr
