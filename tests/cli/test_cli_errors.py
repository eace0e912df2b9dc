"""Every failure of the ``paimon-feed`` command (run as a subprocess) is one line on stderr with
the documented exit code; ``-vv`` adds the traceback."""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import sys

import pytest
from support.tables import commit, table_dir


def paimon_feed(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(("paimon-feed: error: ", "paimon-feed tail: error: ")), result.stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_s3_endpoint_is_one_line_naming_it():
    endpoint = f"http://127.0.0.1:{closed_port()}"
    # Before: pyarrow retried for ~90 s, then a 40-line RuntimeError traceback.
    result = paimon_feed(
        "tail", "s3://bucket/wh", "db.events", "--catalog-option", f"fs.s3.endpoint={endpoint}",
        "--catalog-option", "fs.s3.accessKeyId=test", "--catalog-option", "fs.s3.accessKeySecret=test",
        timeout=60,
    )
    assert result.returncode == 1
    line = one_error_line(result)
    assert f"cannot reach the S3 endpoint {endpoint} (set by fs.s3.endpoint) of warehouse s3://bucket/wh" in line
    assert result.stdout == ""


def test_vv_adds_the_traceback_before_the_one_line(warehouse, append_table):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    result = paimon_feed("tail", "s3://bucket/wh", "db.events", "--catalog-option", f"fs.s3.endpoint={endpoint}", "-vv")
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("paimon-feed: error: cannot reach the S3 endpoint")


def test_a_corrupt_data_file_is_one_line_naming_it_rc_1(warehouse, append_table):
    commit(append_table, 0)
    (data_file,) = glob.glob(os.path.join(table_dir(append_table), "bucket-*", "*.parquet"))
    with open(data_file, "wb") as handle:
        handle.write(b"garbage")
    result = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "1")
    assert result.returncode == 1
    line = one_error_line(result)
    # an UnsupportedTableError: named file, said to be unreadable, not retried
    assert os.path.basename(data_file) in line and "pypaimon cannot read" in line


def test_a_corrupt_schema_file_is_one_line_rc_1(warehouse, append_table):
    commit(append_table, 0)
    (schema_file,) = glob.glob(os.path.join(table_dir(append_table), "schema", "schema-*"))
    with open(schema_file, "w") as handle:
        handle.write("{not json")
    result = paimon_feed("tail", warehouse, "db.events", "--from", "earliest", "--to", "1")
    assert result.returncode == 1
    assert "Failed to load schema" in one_error_line(result)


@pytest.mark.parametrize(
    "args, message",
    [
        # Before: "required: warehouse, TABLE", though TABLE is optional (every table by default)
        (["tail"], "the following arguments are required: warehouse (see paimon-feed tail --help)"),
        (["tail", "WH", "db.events", "--catalog-option", "novalue"], "invalid catalog option 'novalue'"),
        (["tail", "WH", "db.events", "--limit", "many"], "argument --limit: invalid int value"),
        (["tail", "WH", "db.events", "--format", "xml"], "argument --format: invalid choice"),
        (["tail", "WH", "db.events", "--limit", "0"], "--limit must be >= 1"),
        (["tail", "WH", "db.events", "--from", "soon"], "invalid start position 'soon'"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["tail", "WH", "db.events$snapshots"], "db.events$snapshots is the system table 'snapshots'"),
        (["tail", "WH", "db.events$audit_log", "--from", "latest"], "is the system table 'audit_log'"),
    ],
)
def test_usage_errors_are_one_line_rc_2(warehouse, append_table, args, message):
    result = paimon_feed(*[warehouse if arg == "WH" else arg for arg in args])
    assert result.returncode == 2
    assert message in one_error_line(result)
    assert result.stdout == ""


def test_resetting_a_consumer_past_the_latest_snapshot_speaks_of_the_reset(warehouse, append_table, capsys):
    """Before: 'start snapshot 999 is ahead of the latest snapshot (2); start at most at 3'."""
    from paimon_feed.cli import main

    commit(append_table, 0)
    commit(append_table, 1)
    assert main(["consumers", warehouse, "db.events", "reset", "job", "--to", "999", "--create", "--yes"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "paimon-feed: error: table db.events: cannot reset consumer job to snapshot 999: it is ahead of "
        "the latest snapshot (2); reset it at most to 3 (the next snapshot to be committed: 'latest'), or "
        "to an earlier snapshot, a tag or a time"
    )
    assert "start" not in line


def test_a_checkpoint_write_failing_on_a_full_disk_exits_1_as_a_storage_error(
    warehouse, append_table, capsys, monkeypatch
):
    """Before: exit 2 (bad input), against docs/cli.md; a full disk is storage failing."""
    import errno

    from paimon_feed.checkpoint import local
    from paimon_feed.cli import main

    def full_disk(path: str, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", path)

    commit(append_table, 0)
    monkeypatch.setattr(local, "atomic_write", full_disk)  # the file-system boundary of checkpoints
    code = main(["tail", warehouse, "db.events", "--from", "earliest", "--to", "1", "--consumer-id", "job"])
    err = capsys.readouterr().err.splitlines()
    assert code == 1, err
    assert err[-1].startswith("paimon-feed: error: cannot write consumer file ")
    assert "No space left on device" in err[-1]
    assert not glob.glob(os.path.join(table_dir(append_table), "consumer", "consumer-job"))
