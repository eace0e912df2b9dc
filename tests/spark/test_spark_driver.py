"""The driver side of the Spark source, without Spark: offsets, deterministic planning,
consumer checkpoints, and the executor read of serialized splits."""

from __future__ import annotations

import json
import os
import threading

import pyarrow as pa
import pytest
from spark_support import commit, expected_changes
from support.direct_read import spy_direct_reads

from paimon_feed.errors import CheckpointError, HistoryRewrittenError
from paimon_feed.planner import Planner
from paimon_feed.spark.driver import (
    ConsumerFileWriter,
    StreamDriver,
    pack_splits,
    plan_batch,
    read_splits,
)
from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import parse_options


def driver_for(paimon, table, **options) -> StreamDriver:
    return StreamDriver(parse_options(paimon.options(table, notifier="local", **options)))


def read_all(options, groups) -> pa.Table:
    batches = [batch for group in groups for batch in read_splits(options, group)]
    return pa.Table.from_batches(batches) if batches else pa.table({})


def changes(table: pa.Table) -> list[tuple]:
    return sorted(
        (r["_row_kind"], r["id"], r["commit"], r["payload"]) for r in table.to_pylist()
    )


def bare(offset: FeedOffset) -> dict:
    """An offset's JSON without its commit digest (checked by the history tests)."""
    return {key: value for key, value in offset.to_json().items() if key != "mark"}


@pytest.fixture
def pk_table(paimon):
    table = paimon.create_pk_table()
    for n in (1, 2, 3):
        commit(table, n)
    return table


def test_latest_full_starts_with_the_full_state_as_a_batch_of_its_own(paimon, pk_table):
    driver = driver_for(paimon, pk_table, maxSnapshotsPerTrigger=5)
    try:
        start = driver.initial_offset()
        assert bare(start) == {"snapshot": 4, "pendingFull": 3}
        end = driver.latest_offset(start, max_snapshots=5)
        assert bare(end) == {"snapshot": 4, "full": 3}
        commit(pk_table, 4)
        driver.tracker.refresh()
        assert bare(driver.latest_offset(end, max_snapshots=5)) == {"snapshot": 5, "first": 4}
    finally:
        driver.close()


def test_latest_offset_respects_max_snapshots_end_snapshot_and_available_now(paimon, pk_table):
    driver = driver_for(paimon, pk_table, startingPosition="earliest", endSnapshot=5)
    try:
        for n in (4, 5, 6):
            commit(pk_table, n)
        driver.tracker.refresh()
        start = driver.initial_offset()
        assert bare(start) == {"snapshot": 1}
        assert bare(driver.latest_offset(start, 2)) == {"snapshot": 3, "first": 1}
        assert bare(driver.latest_offset(start, None)) == {"snapshot": 6, "first": 1}  # end 5
        at_end = FeedOffset.position(1).after_changes(5)
        assert bare(driver.latest_offset(at_end, None)) == bare(at_end)  # nothing after the end snapshot
    finally:
        driver.close()
    driver = driver_for(paimon, pk_table, startingPosition="earliest")
    try:
        assert driver.prepare_available_now() == 6
        commit(pk_table, 7)
        driver.tracker.refresh()
        assert bare(driver.latest_offset(FeedOffset.position(1), None)) == {
            "snapshot": 7,
            "first": 1,
        }
    finally:
        driver.close()


def test_a_journaled_batch_is_planned_identically_again(paimon, pk_table):
    driver = driver_for(paimon, pk_table, startingPosition="earliest")
    try:
        start = driver.initial_offset()
        end = driver.latest_offset(start, None)
        first = driver.plan(start, end)
        again = driver.plan(start, end)
        assert [g.splits for g in first] == [g.splits for g in again]
        assert driver.plan(end, end) == []
    finally:
        driver.close()


def test_batch_zero_is_planned_from_its_end_offset_when_the_start_was_recomputed(paimon, pk_table):
    """Spark re-asks initialOffset() if the query died before batch 0 committed; the table may
    have moved on by then, but batch 0 must stay what the offset log says."""
    options = parse_options(paimon.options(pk_table, includeRowKind="true"))
    driver = StreamDriver(options)
    try:
        journaled_end = driver.latest_offset(driver.initial_offset(), None)  # full state at 3
        expected = read_all(options, driver.plan(FeedOffset.pending_full(3), journaled_end))
    finally:
        driver.close()
    commit(pk_table, 4)
    restarted = StreamDriver(options)
    try:
        recomputed_start = restarted.initial_offset()
        assert bare(recomputed_start) == {"snapshot": 5, "pendingFull": 4}
        replayed = read_all(options, restarted.plan(recomputed_start, journaled_end))
        assert changes(replayed) == changes(expected)
        assert sorted(replayed.column("id").to_pylist()) == [2, 3]  # key 4 (commit 4) absent
    finally:
        restarted.close()


def test_serialized_splits_read_back_the_rows_of_the_original_splits(paimon, pk_table):
    options = parse_options(paimon.options(pk_table, includeRowKind="true"))
    planner = Planner(pk_table, include_row_kind=True)
    batches = planner.plan_range(1, 3)
    shipped = read_all(options, pack_splits(pk_table, batches))
    direct = pa.concat_tables([batch.to_arrow() for batch in batches])
    assert changes(shipped) == changes(direct) == expected_changes(pk_table, (1, 2, 3))


def test_a_batch_read_returns_the_full_state_or_a_bounded_range(paimon, pk_table):
    full = read_all(*_planned(paimon, pk_table))
    # commit 3 deleted key 1 and updated key 2; key 3 is new
    assert sorted((r["id"], r["payload"]) for r in full.to_pylist()) == [(2, "upd-3"), (3, "new-3")]
    ranged = read_all(*_planned(paimon, pk_table, startingPosition="snapshot:2", endSnapshot=3))
    assert changes(ranged) == expected_changes(pk_table, (2, 3))


def _planned(paimon, table, **extra):
    options = parse_options(paimon.options(table, includeRowKind="true", **extra))
    return options, plan_batch(options)


def test_a_stored_consumer_checkpoint_is_where_a_new_query_starts(paimon, pk_table):
    driver = driver_for(paimon, pk_table, consumerId="etl", startingPosition="earliest")
    try:
        end = driver.latest_offset(driver.initial_offset(), 2)
        driver.commit(end)
    finally:
        driver.close()
    path = os.path.join(pk_table.table_path, "consumer", "consumer-etl")
    with open(path, encoding="utf-8") as handle:
        assert json.load(handle) == {"nextSnapshot": 3}
    again = driver_for(paimon, pk_table, consumerId="etl", startingPosition="latest-full")
    try:
        assert bare(again.initial_offset()) == {"snapshot": 3}
    finally:
        again.close()


class GatedStore:
    """A consumer store whose writes wait for the test to open a gate, and can fail."""

    consumer_id = "etl"

    def __init__(self, fail_first: int = 0) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.saved: list[int] = []
        self.fail_first = fail_first

    def save(self, next_snapshot_id: int) -> None:
        self.started.set()
        assert self.gate.wait(30)
        if self.fail_first:
            self.fail_first -= 1
            raise CheckpointError(f"cannot write consumer file (next snapshot {next_snapshot_id})")
        self.saved.append(next_snapshot_id)


def test_commits_do_not_wait_for_the_consumer_file_and_a_burst_costs_one_write():
    store = GatedStore()
    writer = ConsumerFileWriter(store, "db.orders")
    writer.submit(5)
    assert store.started.wait(30)  # the write of 5 is in flight, held at the gate ...
    writer.submit(6)  # ... and these return at once
    writer.submit(7)
    store.gate.set()
    writer.close()  # writes what is pending: only the newest position
    assert store.saved == [5, 7] and writer.written == 7


def test_a_failed_consumer_file_write_is_retried_with_the_next_commit_or_at_close():
    store = GatedStore(fail_first=1)
    writer = ConsumerFileWriter(store, "db.orders")
    writer.submit(3)
    assert store.started.wait(30)
    writer.submit(4)
    store.gate.set()  # 3 fails; 4 is written
    writer.close()
    assert store.saved == [4] and writer.written == 4

    store = GatedStore(fail_first=1)
    store.gate.set()
    writer = ConsumerFileWriter(store, "db.orders")
    writer.submit(3)  # fails, and no commit follows: close tries once more
    writer.close()
    assert store.saved == [3] and writer.written == 3


def test_the_consumer_file_never_leads_what_spark_committed(paimon, pk_table):
    commit(pk_table, 4)
    driver = driver_for(paimon, pk_table, consumerId="etl", startingPosition="earliest")
    path = os.path.join(pk_table.table_path, "consumer", "consumer-etl")
    try:
        start = driver.initial_offset()
        first = driver.latest_offset(start, 2)
        driver.commit(first)
        second = driver.latest_offset(first, 2)  # planned, not committed
        assert second.next_snapshot_id == 5
    finally:
        driver.close()
    with open(path, encoding="utf-8") as handle:
        assert json.load(handle) == {"nextSnapshot": 3}
    assert driver.stats()["consumer_file_next_snapshot_id"] == 3


def test_a_consumer_ahead_of_the_table_is_a_rewritten_history(paimon, pk_table):
    os.makedirs(os.path.join(pk_table.table_path, "consumer"), exist_ok=True)
    with open(os.path.join(pk_table.table_path, "consumer", "consumer-etl"), "w") as handle:
        handle.write('{"nextSnapshot": 42}')
    driver = driver_for(paimon, pk_table, consumerId="etl")
    try:
        with pytest.raises(HistoryRewrittenError, match="checkpoint is at snapshot 42"):
            driver.initial_offset()
    finally:
        driver.close()


def test_a_large_append_split_is_cut_into_partitions_that_read_the_same_rows(paimon):
    table = paimon.create_append_table()
    for n in range(1, 7):
        commit(table, n)
    planner = Planner(table, include_row_kind=True)
    full = planner.full_batch(6)
    assert len(full.splits) == 1 and len(full.splits[0].files) == 6
    options = parse_options(paimon.options(table, includeRowKind="true"))
    groups = pack_splits(table, [full])
    assert len(groups) > 1
    assert changes(read_all(options, groups)) == changes(full.to_arrow())


def _append_files(paimon, files: int):
    """An append table of ``files`` commits (a file each, weighing 4 MiB of open cost), its full
    batch, the source's options and the batch's changes."""
    table = paimon.create_append_table()
    for n in range(1, files + 1):
        commit(table, n)
    full = Planner(table, include_row_kind=True).full_batch(files)
    options = parse_options(paimon.options(table, includeRowKind="true"))
    return table, full, options, changes(full.to_arrow())


def test_min_partitions_and_max_partition_bytes_set_how_many_tasks_share_a_batch(paimon):
    table, full, options, expected = _append_files(paimon, 8)
    by_setting = {}
    for setting in ({"min_partitions": 1}, {"min_partitions": 2}, {"min_partitions": 4},
                    {"min_partitions": 1, "max_partition_bytes": 8 * 1024 * 1024}):
        groups = pack_splits(table, [full], **setting)
        by_setting[tuple(setting.values())] = len(groups)
        assert changes(read_all(options, groups)) == expected, setting
    assert by_setting == {(1,): 1, (2,): 2, (4,): 4, (1, 8 * 1024 * 1024): 4}


def test_a_batch_is_cut_into_a_multiple_of_min_partitions_groups_of_equal_size(paimon):
    table, full, options, expected = _append_files(paimon, 9)
    # over 4 slots: 4 groups, not "9 MiB at most" (2 + 2 + 2 + 2 + 1 files: a second round)
    by_slots = {}
    for slots in (2, 3, 4):
        groups = pack_splits(table, [full], min_partitions=slots)
        by_slots[slots] = [len(group.splits) for group in groups]  # one file a split
        assert changes(read_all(options, groups)) == expected, slots
    assert by_slots == {2: [4, 5], 3: [3, 3, 3], 4: [2, 2, 3, 2]}


def test_primary_key_splits_stay_whole(paimon, pk_table):
    planner = Planner(pk_table)
    full = planner.full_batch(3)
    groups = pack_splits(pk_table, [full])
    assert sum(len(group.splits) for group in groups) == len(full.splits)


def _read_splits_with(monkeypatch, options, groups, *, direct: bool) -> tuple[pa.Table, list[bool]]:
    """``read_splits`` of every group, pyarrow's direct read on or off, and whether each run
    was read directly."""
    used = spy_direct_reads(monkeypatch, direct=direct)
    batches = [batch for group in groups for batch in read_splits(options, group)]
    monkeypatch.undo()
    return pa.Table.from_batches(batches), used


@pytest.mark.parametrize("extra", [{}, {"includeRowKind": "true"}, {"includeSnapshotId": "true"},
                                   {"startingPosition": "earliest", "endSnapshot": "5"}])
def test_executors_read_plain_append_splits_directly_with_pypaimons_result(paimon, monkeypatch, extra):
    table = paimon.create_append_table()
    for n in range(1, 7):
        commit(table, n)
    options = parse_options(paimon.options(table, **extra))
    groups = plan_batch(options)
    direct, used = _read_splits_with(monkeypatch, options, groups, direct=True)
    oracle, _ = _read_splits_with(monkeypatch, options, groups, direct=False)
    assert used and all(used)
    assert direct.schema == oracle.schema
    assert sorted(direct.to_pylist(), key=repr) == sorted(oracle.to_pylist(), key=repr)
    assert direct.num_rows > 0


@pytest.mark.parametrize("extra", [{"startingPosition": "earliest"}, {}])  # changes; merged state
def test_executors_read_primary_key_splits_directly_with_pypaimons_result(paimon, pk_table, monkeypatch, extra):
    """A primary-key table's change splits hold their rows as stored, and its full state is the
    deduplicate engine's merge: read with pyarrow, both equal pypaimon's read row for row, kinds
    and order included."""
    commit(pk_table, 1)  # the same keys again: updates
    options = parse_options(paimon.options(pk_table, includeRowKind="true", **extra))
    groups = plan_batch(options)
    direct, used = _read_splits_with(monkeypatch, options, groups, direct=True)
    oracle, _ = _read_splits_with(monkeypatch, options, groups, direct=False)
    assert used and all(used)
    assert direct.schema == oracle.schema
    assert direct.to_pylist() == oracle.to_pylist()
    assert direct.num_rows > 0
