"""How the planner reads snapshot files: each at most once over a run with nothing to read,
snapshot hints treated the way Java Paimon treats them, and only transient errors retried."""

from __future__ import annotations

import asyncio
import datetime
import os

import pyarrow as pa
import pytest
from pypaimon import Schema
from support.planning import plan_rounds
from support.tables import (
    catalog,
    commit,
    create_append_table,
    expire_snapshots,
    overwrite,
    table_dir,
)

from paimon_feed import (
    ChangeFeed,
    Planner,
    SnapshotExpiredError,
    StorageError,
    UnsupportedTableError,
)
from paimon_feed.tables import commit_arrow


class CountingReads:
    """Counts a planner's snapshot-file reads and existence checks: on the table's real FileIO
    (pypaimon's calls) and on the planner's metadata reader (which opens local files itself)."""

    def __init__(self, planner, monkeypatch):
        self.by_path: dict[str, int] = {}
        calls = [(planner.file_io, name) for name in ("read_file_utf8", "new_input_stream", "exists")]
        for owner, name in calls + [(planner.files, "read")]:
            original = getattr(owner, name)

            def counted(path, *args, _original=original, **kwargs):
                if "/snapshot/snapshot-" in str(path):
                    self.by_path[str(path)] = self.by_path.get(str(path), 0) + 1
                return _original(path, *args, **kwargs)

            monkeypatch.setattr(owner, name, counted)

    @property
    def total(self) -> int:
        return sum(self.by_path.values())


SKIPPED = 199


@pytest.fixture(scope="module")
def overwritten_table(tmp_path_factory):
    """Snapshot 1 appends, 2..200 overwrite (nothing for a delta feed), 201 appends."""
    table = create_append_table(catalog(str(tmp_path_factory.mktemp("overwrites"))))
    commit(table, 0)
    for n in range(1, SKIPPED + 1):
        overwrite(table, n)
    commit(table, SKIPPED + 1)
    return table


@pytest.mark.parametrize("threshold", [10, 1000], ids=["catch-up", "per-snapshot"])
def test_a_long_run_of_overwrites_costs_linear_reads(overwritten_table, monkeypatch, threshold):
    append_table, skipped = overwritten_table, SKIPPED
    planner = Planner(append_table, catch_up_threshold=threshold)
    reads = CountingReads(planner, monkeypatch)
    batches, position = plan_rounds(planner, 2)
    assert [(b.first_snapshot_id, b.snapshot_id) for b in batches] == [(2, skipped + 2)]
    assert position == skipped + 3
    assert planner.overwrites_skipped == skipped
    assert reads.total <= 3 * (skipped + 2) + 20, reads.total  # was ~60,000
    assert max(reads.by_path.values()) <= 3


def test_a_changelog_table_that_never_compacts_is_skipped_in_linear_reads(cat, monkeypatch):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    cat.create_table(
        "db.lookup",
        Schema.from_pyarrow_schema(
            schema, primary_keys=["id"], options={"bucket": "1", "changelog-producer": "lookup"}
        ),
        False,
    )
    table = cat.get_table("db.lookup")
    for n in range(150):  # pypaimon never compacts: no snapshot carries a changelog
        commit_arrow(table, pa.Table.from_pylist([{"id": n % 7, "v": n}], schema=schema))
    planner = Planner(table)
    reads = CountingReads(planner, monkeypatch)
    batches, position = plan_rounds(planner, 1)
    assert batches == [] and position == 151
    assert reads.total <= 3 * 150 + 20, reads.total  # was ~45,000 for 300


def _hint(table, name, content):
    path = os.path.join(table_dir(table), "snapshot", name)
    if content is None:
        if os.path.exists(path):
            os.remove(path)
    else:
        with open(path, "w") as handle:
            handle.write(content)


HINTS = {"missing": None, "empty": "", "garbage": "not-a-number\n", "zero": "0", "stale": "2",
         "ahead": "999"}


@pytest.mark.parametrize("hint", sorted(HINTS))
def test_a_bad_earliest_hint_falls_back_to_listing(append_table, hint):
    for n in range(8):
        commit(append_table, n)
    expire_snapshots(append_table, keep_from=4)  # snapshots 4..8 remain
    _hint(append_table, "EARLIEST", HINTS[hint])
    planner = Planner(append_table)
    assert planner.earliest_snapshot_id() == 4
    assert planner.resolve_start("earliest").next_snapshot_id == 4
    with pytest.raises(SnapshotExpiredError) as caught:
        planner.check_not_expired(2)
    assert caught.value.earliest_snapshot_id == 4

    async def main():
        async with ChangeFeed(append_table, start="earliest", end=8, notifier="poll") as feed:
            return [row["commit"] for batch in [b async for b in feed] for row in batch.to_arrow().to_pylist()]

    assert sorted(set(asyncio.run(main()))) == [3, 4, 5, 6, 7]  # snapshot n holds commit n-1


@pytest.mark.parametrize("hint", sorted(HINTS))
def test_a_bad_latest_hint_falls_back_to_listing(append_table, hint):
    for n in range(5):
        commit(append_table, n)
    _hint(append_table, "LATEST", HINTS[hint])
    planner = Planner(append_table)
    assert planner.latest_snapshot_id() == 5
    assert planner.resolve_start("latest").next_snapshot_id == 6
    full = planner.first_batch("latest-full")[0]
    assert full.snapshot_id == 5 and full.to_arrow().num_rows == 15


def test_a_time_start_works_with_a_garbage_earliest_hint(append_table):
    for n in range(4):
        commit(append_table, n)
    third = append_table.snapshot_manager().get_snapshot_by_id(3)
    _hint(append_table, "EARLIEST", "garbage")
    instant = datetime.datetime.fromtimestamp(third.time_millis / 1000, datetime.timezone.utc)
    iso = "time:" + instant.isoformat(timespec="milliseconds")
    planner = Planner(append_table)
    assert planner.resolve_start(iso).next_snapshot_id == 4
    assert planner.resolve_start("time:-1d").next_snapshot_id == 1


def _corrupt(path):
    with open(path, "wb") as handle:
        handle.write(b"\x00not avro, not json\x00" * 8)


def test_an_unparsable_manifest_fails_at_once_naming_table_snapshot_and_file(append_table):
    commit(append_table, 0)
    commit(append_table, 1)
    snapshot = append_table.snapshot_manager().get_snapshot_by_id(2)
    _corrupt(os.path.join(table_dir(append_table), "manifest", snapshot.delta_manifest_list))

    async def main():
        async with ChangeFeed(append_table, start=2, notifier="poll") as feed:
            try:
                async for _ in feed:
                    pass
            finally:
                metrics = feed.metrics()
        return metrics

    with pytest.raises(UnsupportedTableError) as caught:
        asyncio.run(main())
    message = str(caught.value)
    assert "db.events" in message and "snapshot 2" in message
    assert snapshot.delta_manifest_list in message
    assert not isinstance(caught.value, StorageError)  # not retried as a storage error


def test_an_unparsable_snapshot_file_fails_at_once(append_table):
    commit(append_table, 0)
    commit(append_table, 1)
    path = os.path.join(table_dir(append_table), "snapshot", "snapshot-2")
    with open(path, "w") as handle:
        handle.write("{ truncated")
    planner = Planner(append_table, catch_up_threshold=100)
    # Snapshot 1, planned before the damage, is delivered first; the next round fails.
    planned = planner.next_batches(1, limit=8)
    assert [b.snapshot_id for b in planned.batches] == [1] and planned.more
    with pytest.raises(UnsupportedTableError, match=r"db\.events.*snapshot 2.*snapshot-2"):
        planner.next_batches(planned.next_snapshot_id, limit=8)


def test_a_transient_error_is_still_a_storage_error(append_table, monkeypatch):
    commit(append_table, 0)
    planner = Planner(append_table)

    def unreachable(path, *args, **kwargs):
        raise ConnectionResetError("connection reset by peer")

    monkeypatch.setattr(planner.files, "read", unreachable)
    with pytest.raises(StorageError, match="connection reset"):
        planner.next_batches(1, limit=8)


def test_an_unreadable_data_file_is_reported_with_its_name(append_table):
    commit(append_table, 0)
    batch = Planner(append_table).full_batch(1)
    data_file = batch.splits[0].files[0]
    bucket_dir = os.path.join(table_dir(append_table), "bucket-0")
    _corrupt(os.path.join(bucket_dir, data_file.file_name))
    with pytest.raises(UnsupportedTableError, match=rf"db\.events.*{data_file.file_name}"):
        batch.to_arrow()
    with pytest.raises(UnsupportedTableError, match=data_file.file_name):
        list(batch.to_batches())
