"""``paimon-feed consumers``: a table's consumer files as an operator sees them, on local and
``s3://`` (moto) tables, through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from s3_support import commit_rows, create_table, paimon_catalog, s3_catalog_options
from support.tables import commit, expire_snapshots, table_dir

from paimon_feed.checkpoint import CheckpointStore


def consumers(warehouse: str, table: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "consumers", warehouse, table, *args],
        capture_output=True, text=True, timeout=120,
    )


def listed(result: subprocess.CompletedProcess) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr
    return {entry["consumer_id"]: entry for entry in json.loads(result.stdout)}


def test_lists_next_snapshot_lag_age_and_who_holds_expiry(warehouse, append_table):
    for n in range(5):
        commit(append_table, n)
    for consumer_id, next_id in (("etl", 3), ("stale", 2), ("done", 6)):
        CheckpointStore.for_table(append_table, consumer_id).save(next_id)
    entries = listed(consumers(warehouse, "db.events", "--format", "json"))
    assert {name: (e["next_snapshot_id"], e["lag_snapshots"], e["holds_expiry"]) for name, e in entries.items()} == {
        "etl": (3, 3, False),
        "stale": (2, 4, True),  # the smallest next snapshot with unread commits pins expiry
        "done": (6, 0, False),
    }
    assert entries["done"]["oldest_unread_commit_ms"] is None
    assert entries["stale"]["oldest_unread_commit_ms"] <= entries["etl"]["oldest_unread_commit_ms"]
    table = consumers(warehouse, "db.events")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["consumer", "next", "snapshot", "lag", "oldest", "unread", "last", "written", "holds", "expiry"]
    stale = next(line for line in lines if line.startswith("stale"))
    assert stale.split()[1:3] == ["2", "4"] and stale.rstrip().endswith("yes")


def test_reset_moves_a_consumer_backwards_or_forwards_and_tail_resumes_there(warehouse, append_table):
    for n in range(4):
        commit(append_table, n)
    CheckpointStore.for_table(append_table, "etl").save(4)
    reset = consumers(warehouse, "db.events", "reset", "etl", "--to", "2", "--format", "json")
    assert listed(reset)["etl"]["next_snapshot_id"] == 2
    assert "consumer etl now reads snapshot 2 next" in reset.stderr
    tail = subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.events", "--consumer-id", "etl", "--to", "4"],
        capture_output=True, text=True, timeout=120,
    )
    assert sorted({json.loads(line)["commit"] for line in tail.stdout.splitlines()}) == [1, 2, 3]
    latest = consumers(warehouse, "db.events", "reset", "etl", "--to", "latest", "--format", "json")
    assert listed(latest)["etl"]["next_snapshot_id"] == 5
    refused = consumers(warehouse, "db.events", "reset", "etl", "--to", "latest-full")
    assert refused.returncode == 2 and "not a full read" in refused.stderr


def test_delete_and_expire_older_than(warehouse, append_table):
    commit(append_table, 0)
    for consumer_id in ("keep", "old", "gone"):
        CheckpointStore.for_table(append_table, consumer_id).save(1)
    ten_days_ago = time.time() - 10 * 86400
    os.utime(os.path.join(table_dir(append_table), "consumer", "consumer-old"), (ten_days_ago, ten_days_ago))
    deleted = consumers(
        warehouse, "db.events", "delete", "gone", "--expire-older-than", "7d", "--format", "json", "--yes"
    )
    assert set(listed(deleted)) == {"keep"}
    assert "deleted consumer old: not written for over 7d" in deleted.stderr
    missing = consumers(warehouse, "db.events", "delete", "gone", "--yes")
    assert missing.returncode == 2 and "no consumer 'gone'" in missing.stderr
    bad = consumers(warehouse, "db.events", "--expire-older-than", "soon")
    assert bad.returncode == 2 and "invalid duration 'soon'" in bad.stderr


def test_delete_and_expire_remove_the_consumers_mark_file_too(warehouse, append_table):
    for n in range(3):
        commit(append_table, n)
    consumer_dir = os.path.join(table_dir(append_table), "consumer")
    for consumer_id in ("gone", "old", "keep"):  # a real run writes the mark beside the checkpoint
        tail = subprocess.run(
            [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.events",
             "--consumer-id", consumer_id, "--from", "earliest", "--to", "3"],
            capture_output=True, text=True, timeout=120,
        )
        assert tail.returncode == 0, tail.stderr
    ten_days_ago = time.time() - 10 * 86400
    os.utime(os.path.join(consumer_dir, "consumer-old"), (ten_days_ago, ten_days_ago))
    assert sorted(os.listdir(consumer_dir)) == [
        ".paimon-feed-gone.mark", ".paimon-feed-keep.mark", ".paimon-feed-old.mark",
        "consumer-gone", "consumer-keep", "consumer-old",
    ]
    deleted = consumers(warehouse, "db.events", "delete", "gone", "--expire-older-than", "7d", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert sorted(os.listdir(consumer_dir)) == [".paimon-feed-keep.mark", "consumer-keep"]
    assert CheckpointStore.for_table(append_table, "keep").load_mark() is not None


def test_a_table_without_consumers_says_so(warehouse, append_table):
    result = consumers(warehouse, "db.events")
    assert result.returncode == 0 and result.stdout == "table db.events has no consumers\n"


def test_list_and_reset_on_s3(moto_server):
    bucket = moto_server.create_bucket(f"consumers-{os.getpid()}")
    table = create_table(paimon_catalog(moto_server, bucket), "db.t")
    for ids in ([1], [2], [3]):
        commit_rows(table, ids)
    CheckpointStore.for_table(table, "etl").save(2)
    options = s3_catalog_options(moto_server, bucket)
    warehouse = options.pop("warehouse")
    flags = [arg for key, value in options.items() for arg in ("--catalog-option", f"{key}={value}")]
    entries = listed(consumers(warehouse, "db.t", "--format", "json", *flags))
    assert (entries["etl"]["next_snapshot_id"], entries["etl"]["lag_snapshots"]) == (2, 2)
    assert entries["etl"]["last_modified_ms"] is not None
    reset = listed(consumers(warehouse, "db.t", "reset", "etl", "--to", "earliest", "--format", "json", *flags))
    assert reset["etl"]["next_snapshot_id"] == 1
    assert CheckpointStore.for_table(table, "etl").load() == 1


def consumer_files(table) -> list[str]:
    directory = os.path.join(table_dir(table), "consumer")
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def test_reset_of_an_unknown_consumer_refuses_unless_create(warehouse, append_table):
    """Before: 'reset nosuch --to 3' silently created a consumer, which then pinned expiry."""
    for n in range(3):
        commit(append_table, n)
    CheckpointStore.for_table(append_table, "etl").save(2)
    refused = consumers(warehouse, "db.events", "reset", "nosuch", "--to", "3")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        "paimon-feed: error: table db.events has no consumer nosuch (its consumers: etl); add "
        "--create to create it: a consumer keeps Paimon from expiring the snapshots it has not "
        "read, until it is deleted"
    ]
    assert consumer_files(append_table) == ["consumer-etl"]
    created = consumers(warehouse, "db.events", "reset", "nosuch", "--to", "3", "--create", "--format", "json")
    assert listed(created)["nosuch"]["next_snapshot_id"] == 3
    assert "created consumer nosuch: it reads snapshot 3 next" in created.stderr
    assert CheckpointStore.for_table(append_table, "nosuch").load() == 3


def test_delete_prints_what_it_would_do_and_deletes_only_with_yes(warehouse, append_table):
    commit(append_table, 0)
    CheckpointStore.for_table(append_table, "etl").save(1)
    dry = consumers(warehouse, "db.events", "delete", "etl", "--format", "json")
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.splitlines() == [
        "paimon-feed: note: would delete consumer etl",
        "paimon-feed: note: nothing changed: add --yes to delete it",
    ]
    assert set(listed(dry)) == {"etl"} and consumer_files(append_table) == ["consumer-etl"]
    done = consumers(warehouse, "db.events", "delete", "etl", "--yes", "--format", "json")
    assert listed(done) == {} and consumer_files(append_table) == []
    assert "paimon-feed: note: deleted consumer etl" in done.stderr


def test_expire_older_than_is_a_dry_run_without_yes_and_takes_weeks(warehouse, append_table):
    """Before: '--expire-older-than 1s' deleted every consumer at once, and '1w' was refused."""
    commit(append_table, 0)
    for consumer_id in ("fresh", "old", "older"):
        CheckpointStore.for_table(append_table, consumer_id).save(1)
    for consumer_id, days in (("old", 8), ("older", 30)):
        then = time.time() - days * 86400
        os.utime(os.path.join(table_dir(append_table), "consumer", f"consumer-{consumer_id}"), (then, then))
    dry = consumers(warehouse, "db.events", "--expire-older-than", "1w", "--format", "json")
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.splitlines() == [
        "paimon-feed: note: would delete consumer old: not written for over 1w",
        "paimon-feed: note: would delete consumer older: not written for over 1w",
        "paimon-feed: note: nothing changed: add --yes to delete them",
    ]
    assert set(listed(dry)) == {"fresh", "old", "older"}
    assert consumer_files(append_table) == ["consumer-fresh", "consumer-old", "consumer-older"]
    done = consumers(warehouse, "db.events", "--expire-older-than", "1w", "--yes", "--format", "json")
    assert set(listed(done)) == {"fresh"}
    assert consumer_files(append_table) == ["consumer-fresh"]


def test_reset_back_onto_expired_snapshots_needs_yes(warehouse, append_table):
    for n in range(5):
        commit(append_table, n)
    CheckpointStore.for_table(append_table, "etl").save(5)
    expire_snapshots(append_table, keep_from=3)
    dry = consumers(warehouse, "db.events", "reset", "etl", "--to", "1", "--format", "json")
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.splitlines() == [
        "paimon-feed: note: would move consumer etl from snapshot 5 to 1, but snapshots 1 to 2 "
        "expired (the earliest retained is 3): its next read would fail with 'snapshot expired' "
        "unless it runs with --on-expired",
        "paimon-feed: note: nothing changed: add --yes to move it anyway",
    ]
    assert CheckpointStore.for_table(append_table, "etl").load() == 5
    # Back onto retained snapshots needs no confirmation.
    kept = consumers(warehouse, "db.events", "reset", "etl", "--to", "earliest", "--format", "json")
    assert listed(kept)["etl"]["next_snapshot_id"] == 3
    done = consumers(warehouse, "db.events", "reset", "etl", "--to", "1", "--yes", "--format", "json")
    assert listed(done)["etl"]["next_snapshot_id"] == 1
    assert CheckpointStore.for_table(append_table, "etl").load() == 1


def test_create_and_yes_go_with_the_commands_they_confirm(warehouse, append_table):
    commit(append_table, 0)
    for args, message in (
        (["--create"], "--create goes with reset"),
        (["delete", "x", "--create", "--yes"], "--create goes with reset"),
        (["--yes"], "--yes confirms delete, reset or --expire-older-than"),
    ):
        result = consumers(warehouse, "db.events", *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
    assert consumer_files(append_table) == []
