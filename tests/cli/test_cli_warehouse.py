"""``paimon-feed tail WAREHOUSE [PATTERN...]`` and ``paimon-feed consumers WAREHOUSE``, run as
a subprocess the way users run them."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from support import tables
from support.tables import append_rows, commit


def paimon_feed(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def two_databases(cat):
    cat.create_database("sales", True)
    handles = {name: tables.create_append_table(cat, name) for name in ("sales.orders", "db.events", "db.audit")}
    for n, table in enumerate(handles.values()):
        commit(table, n)
    return handles


def test_tail_without_a_table_follows_every_table_and_labels_rows(warehouse, two_databases):
    result = paimon_feed("tail", warehouse, "--from", "earliest", "--limit", "9")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(list(row)[0] == "_table" for row in rows)
    by_table = {}
    for row in rows:
        by_table.setdefault(row["_table"], []).append(row["id"])
    assert by_table == {
        name: [r["id"] for r in append_rows(n)] for n, name in enumerate(two_databases)
    }


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_tail_patterns_select_tables_and_every_format_leads_with_table(warehouse, two_databases, fmt):
    result = paimon_feed("tail", warehouse, "sales.*", "db.audit", "--from", "earliest",
                         "--limit", "6", "--format", fmt, "--consumer-id", "cli")
    assert result.returncode == 0, result.stderr
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert result.stdout.startswith("_table,")
    elif fmt == "json":
        rows = json.loads(result.stdout)
        assert all(list(row)[0] == "_table" for row in rows)
    else:
        assert result.stdout.splitlines()[1].startswith("| _table")
        rows = [{"_table": line.split("|")[1].strip()} for line in result.stdout.splitlines()
                if line.startswith("| ") and not line.startswith("| _table")]
    assert sorted({row["_table"] for row in rows}) == ["db.audit", "sales.orders"]
    listed = paimon_feed("consumers", warehouse, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    consumers = json.loads(listed.stdout)
    assert sorted((c["table"], c["consumer_id"], c["next_snapshot_id"]) for c in consumers) == [
        ("db.audit", "cli", 2), ("sales.orders", "cli", 2),
    ]


def test_consumers_of_every_table_as_a_table_and_bad_uses(warehouse, two_databases):
    assert paimon_feed("tail", warehouse, "db.*", "--from", "earliest", "--limit", "3",
                       "--consumer-id", "ops").returncode == 0
    listed = paimon_feed("consumers", warehouse)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:2] == ["table", "consumer"] and any(line.split()[1] == "ops" for line in lines[1:])
    refused = paimon_feed("consumers", warehouse, "--expire-older-than", "1d")
    assert refused.returncode == 2 and "only lists" in refused.stderr
    missing = paimon_feed("tail", warehouse, "db.nope", "sales.*", timeout=60)
    assert missing.returncode == 2 and "db.nope does not exist" in missing.stderr
    filtered = paimon_feed("tail", warehouse, "db.*", "-f", "id=1", timeout=60)
    assert filtered.returncode == 2 and "name one table" in filtered.stderr


def test_warehouse_tail_takes_poll_interval_in_seconds_like_every_other_command(warehouse, two_databases):
    # Was read as milliseconds in warehouse mode: 500ms refused, the default 1s a 1 ms poll.
    result = paimon_feed("tail", warehouse, "db.*", "--from", "earliest", "--limit", "6",
                         "--notifier", "poll", "--poll-interval", "500ms")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 6
    too_short = paimon_feed("tail", warehouse, "--poll-interval", "0.5ms")
    assert too_short.returncode == 2 and "at least 1ms" in too_short.stderr
