"""What a user expects of a command line, through the real entry point (``python -m
paimon_feed.cli``, the module behind the ``paimon-feed`` script)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pyarrow as pa
import pytest
from pypaimon import Schema
from support.tables import commit, expire_snapshots, table_dir

from paimon_feed.tables import commit_arrow

CLI = [sys.executable, "-m", "paimon_feed.cli"]


def paimon_feed(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def commits_of(stdout: str) -> list[int]:
    return [json.loads(line)["commit"] for line in stdout.splitlines()]


def test_from_takes_a_relative_time_as_its_own_argument(warehouse, append_table):
    for n in range(3):
        commit(append_table, n)
    for args in (["--from", "-30m"], ["--from=-30m"], ["--from", "time:-1h"]):
        result = paimon_feed("tail", warehouse, "db.events", *args, "--to", "3")
        assert result.returncode == 0, result.stderr
        assert sorted(set(commits_of(result.stdout))) == [0, 1, 2]


@pytest.mark.parametrize(
    "where", [["-v", "tail", "W", "db.events"], ["tail", "W", "db.events", "-v"], ["tail", "-v", "W", "db.events"]]
)
def test_verbose_is_accepted_before_or_after_the_command(warehouse, append_table, where):
    commit(append_table, 0)
    args = [warehouse if arg == "W" else arg for arg in where]
    result = paimon_feed(*args, "--from", "earliest", "--to", "1")
    assert result.returncode == 0, result.stderr
    assert "INFO paimon_feed.cli: snapshot 1 (delta): 3 rows" in result.stderr
    assert " DEBUG " not in result.stderr


def test_verbose_counts_add_up_across_positions(warehouse, append_table):
    commit(append_table, 0)
    result = paimon_feed("-v", "tail", warehouse, "db.events", "--from", "earliest", "--to", "1", "-v")
    assert result.returncode == 0, result.stderr
    assert " DEBUG paimon_feed" in result.stderr


def test_version():
    result = paimon_feed("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("paimon-feed 0.1.0 (pypaimon 2.1.")


def test_bare_command_prints_the_help_on_stderr_and_exits_2():
    result = paimon_feed()
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("usage: paimon-feed")
    assert "tail" in result.stderr and "demo" in result.stderr and "Exit codes" in result.stderr


def test_expired_snapshot_is_one_message_with_cli_advice_and_on_expired_restarts(warehouse, append_table):
    for n in range(5):
        commit(append_table, n)
    expire_snapshots(append_table, keep_from=3)
    failed = paimon_feed("tail", warehouse, "db.events", "--from", "1", "--to", "5")
    assert failed.returncode == 1
    assert failed.stderr.count("expired before it was read") == 1, failed.stderr
    (line,) = failed.stderr.splitlines()
    assert "snapshot 1 expired before it was read (the earliest retained snapshot is 3)" in line
    assert "--on-expired earliest" in line and "on_expired=" not in line
    restarted = paimon_feed("tail", warehouse, "db.events", "--from", "1", "--to", "5", "--on-expired", "earliest")
    assert restarted.returncode == 0, restarted.stderr
    assert sorted(set(commits_of(restarted.stdout))) == [2, 3, 4]  # snapshots 3..5


def test_json_is_one_array_with_maps_as_objects(warehouse, cat):
    schema = pa.schema([("id", pa.int64()), ("attrs", pa.map_(pa.string(), pa.int64()))])
    cat.create_table("db.maps", Schema.from_pyarrow_schema(schema), False)
    table = cat.get_table("db.maps")
    commit_arrow(table, pa.Table.from_pylist([{"id": 1, "attrs": [("a", 1), ("b", 2)]}], schema=schema))
    commit_arrow(table, pa.Table.from_pylist([{"id": 2, "attrs": []}], schema=schema))
    result = paimon_feed("tail", warehouse, "db.maps", "--from", "earliest", "--to", "2", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"id": 1, "attrs": {"a": 1, "b": 2}}, {"id": 2, "attrs": {}}]
    empty = paimon_feed("tail", warehouse, "db.maps", "--from", "2", "--to", "2", "--format", "json", "-f", "id=7")
    assert json.loads(empty.stdout) == []


def test_a_stored_checkpoint_overriding_from_is_noted(warehouse, append_table):
    for n in range(3):
        commit(append_table, n)
    first = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "2", "--consumer-id", "c")
    assert first.returncode == 0 and "note:" not in first.stderr, first.stderr
    second = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "3", "--consumer-id", "c")
    assert second.returncode == 0, second.stderr
    assert set(commits_of(second.stdout)) == {2}
    assert (
        "paimon-feed: note: consumer c resumes at its checkpoint, snapshot 3; --from earliest applies "
        "only to a consumer without one" in second.stderr
    )


def test_a_limit_inside_a_batch_says_it_stays_uncommitted(warehouse, append_table):
    for n in range(2):
        commit(append_table, n)
    args = ("tail", warehouse, "db.events", "--from", "earliest", "--to", "2", "--consumer-id", "lim", "--limit", "2")
    runs = [paimon_feed(*args) for _ in range(2)]
    for result in runs:
        assert result.returncode == 0, result.stderr
        assert commits_of(result.stdout) == [0, 0]
        assert "--limit 2 stopped inside the batch of snapshots 1..1 (2 of 3 rows printed); it stays " \
               "uncommitted, so consumer lim starts with it again next time" in result.stderr
    assert not os.path.exists(os.path.join(table_dir(append_table), "consumer", "consumer-lim"))


def _default_sigint() -> None:
    # A child of a non-interactive shell may inherit SIGINT ignored; a terminal's does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint
    )


def _wait_for_line(stream, text: str) -> list[str]:
    seen = []
    for line in stream:
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"{text!r} never came; got {''.join(seen)}")


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_close_the_feed_and_exit_without_a_traceback(warehouse, append_table, signum, code):
    commit(append_table, 0)
    process = _start("tail", warehouse, "db.events", "--consumer-id", "sig", "--format", "json", "-v")
    try:
        before = _wait_for_line(process.stderr, "feed for db.events started")
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    err = "".join(before) + err
    assert process.returncode == code, err
    assert "feed for db.events closed" in err
    assert "Traceback" not in err and "CancelledError" not in err
    assert json.loads(out) == []  # the array is closed even when interrupted


def test_ctrl_c_in_the_demo_prints_no_cancelled_error(tmp_path):
    process = _start("demo", "--commits", "500", "--backlog", "0", "--interval", "0.05", "--warehouse", str(tmp_path))
    try:
        _wait_for_line(process.stdout, "commit→delivery")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130
    assert "CancelledError" not in err and "Traceback" not in err and "never retrieved" not in err, err


def test_abbreviated_options_are_refused_not_guessed(warehouse, append_table):
    """Before: '--form earliest' was taken as '--format', and '--consumer x' silently created
    consumer x, which then pinned snapshot expiry."""
    commit(append_table, 0)
    for args in (["--form", "earliest"], ["--consumer", "x"], ["--from", "earliest", "--to", "1", "--inc"]):
        result = paimon_feed("tail", warehouse, "db.events", *args)
        assert result.returncode == 2, result.stderr
        assert "unrecognized arguments: " + args[-2 if args[-1] != "--inc" else -1] in result.stderr
    assert not os.path.exists(os.path.join(table_dir(append_table), "consumer"))
    result = paimon_feed("consumers", warehouse, "db.events", "--form", "json")
    assert result.returncode == 2 and "unrecognized arguments: --form" in result.stderr
    result = paimon_feed("--vers")
    assert result.returncode == 2 and "unrecognized arguments: --vers" in result.stderr


def test_every_parser_refuses_abbreviations():
    import argparse

    from paimon_feed.cli.parser import build_parser

    parser = build_parser()
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    assert [parser.allow_abbrev, *(sub.allow_abbrev for sub in commands.choices.values())] == [False] * 6


def test_repeated_columns_accumulate(warehouse, append_table):
    """Before: '-c id -c payload' printed only payload."""
    commit(append_table, 0)
    result = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "1", "-c", "id", "-c", "payload,id")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"id": n, "payload": f"c0-r{n}"} for n in range(3)
    ]


def test_poll_interval_is_a_duration_and_a_bare_number_is_seconds(warehouse, append_table):
    """Before: a bare number of milliseconds, while the API and Spark took seconds; then a bare
    number was refused. Now one grammar everywhere: a bare number is seconds."""
    commit(append_table, 0)
    refused = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "1", "--poll-interval", "2x")
    assert refused.returncode == 2
    assert ("argument --poll-interval: invalid duration '2x': give a number and a unit, e.g. 500ms, 2s, 1m, 1h, "
            "1d or 1w (a bare number is in seconds") in refused.stderr
    for interval in ("200ms", "0.2s", "0.2", "1m"):
        result = paimon_feed(
            "tail", warehouse, "db.events", "--notifier", "poll", "--poll-interval", interval,
            "--from", "earliest", "--to", "1",
        )
        assert result.returncode == 0, result.stderr
        assert commits_of(result.stdout) == [0, 0, 0]


def test_a_missing_warehouse_or_database_is_named_with_what_exists(warehouse, append_table, tmp_path):
    """Before: 'table db.events does not exist in warehouse ...' whatever was missing."""
    cases = [
        (
            (str(tmp_path / "nowhere"), "db.events"),
            f"warehouse {tmp_path / 'nowhere'} does not exist (no directory or prefix there); check the path",
        ),
        ((warehouse, "sales.events"), f"database sales does not exist in warehouse {warehouse}; its databases: db"),
        ((warehouse, "db.ghost"), f"table db.ghost does not exist in warehouse {warehouse}; the tables of database db: db.events"),
    ]
    for (where, table), message in cases:
        for command in ("tail", "consumers"):
            result = paimon_feed(command, where, table)
            assert result.returncode == 2, result.stderr
            assert result.stderr == f"paimon-feed: error: {message}\n"
    assert not os.path.exists(tmp_path / "nowhere")
