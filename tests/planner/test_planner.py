"""The synchronous planner: coverage, catch-up equivalence, determinism, storage cost."""

import pytest
from support.tables import commit, expire_snapshots, overwrite

from paimon_feed import InvalidStartError, Planner, SnapshotExpiredError


def rows(batches):
    return sorted(
        (row["commit"], row["id"]) for batch in batches for row in batch.to_arrow().to_pylist()
    )


def test_skipped_snapshots_are_covered_by_the_next_batch(append_table):
    commit(append_table, 0)
    overwrite(append_table, 1)  # snapshot 2: OVERWRITE, not read by a delta scan
    commit(append_table, 2)
    planner = Planner(append_table, catch_up_threshold=100)
    assert append_table.snapshot_manager().get_snapshot_by_id(2).commit_kind == "OVERWRITE"
    planned = planner.next_batches(1, limit=10)
    assert [(b.first_snapshot_id, b.snapshot_id) for b in planned.batches] == [(1, 1), (2, 3)]
    assert planned.next_snapshot_id == 4


def test_catch_up_reads_exactly_what_one_batch_per_snapshot_reads(append_table):
    for n in range(5):
        commit(append_table, n)
    overwrite(append_table, 5)  # a set-diff across this would lose rows 0-4 and add 5's
    for n in range(6, 20):
        commit(append_table, n)
    per_snapshot = Planner(append_table, catch_up_threshold=1000).next_batches(1, limit=100)
    catch_up = Planner(append_table, catch_up_threshold=3).next_batches(1, limit=100)
    assert [b.kind for b in catch_up.batches] == ["catch-up"]
    assert rows(catch_up.batches) == rows(per_snapshot.batches)
    assert catch_up.next_snapshot_id == per_snapshot.next_snapshot_id == 21


def test_catch_up_on_a_plain_append_range_uses_the_set_diff(append_table):
    for n in range(15):
        commit(append_table, n)
    planner = Planner(append_table, catch_up_threshold=3)
    first = planner.next_batches(3, limit=10).batches
    assert [b.kind for b in first] == ["catch-up"]
    assert rows(first) == sorted((n, n * 1000 + i) for n in range(2, 15) for i in range(3))


def test_catch_up_of_a_changelog_table_keeps_every_change(pk_table):
    for n in range(15):
        commit(pk_table, n)
    catch_up = Planner(pk_table, catch_up_threshold=3, include_row_kind=True).next_batches(1, limit=10)
    per_snapshot = Planner(pk_table, catch_up_threshold=1000, include_row_kind=True).next_batches(1, limit=100)
    assert [b.kind for b in catch_up.batches] == ["catch-up"]
    key = lambda b: sorted(  # noqa: E731
        (r["commit"], r["id"], r["_row_kind"]) for x in b for r in x.to_arrow().to_pylist()
    )
    assert key(catch_up.batches) == key(per_snapshot.batches)
    assert len(key(catch_up.batches)) == 1 + 2 + 3 * 13


def test_plan_range_is_deterministic(pk_table):
    for n in range(6):
        commit(pk_table, n)
    planner = Planner(pk_table)
    first = planner.plan_range(2, 5)
    commit(pk_table, 6)  # a newer snapshot must not change an older range
    second = Planner(pk_table).plan_range(2, 5)
    assert [(b.first_snapshot_id, b.snapshot_id) for b in first] == [(2, 2), (3, 3), (4, 4), (5, 5)]
    assert [(b.snapshot_id, len(b.splits)) for b in first] == [(b.snapshot_id, len(b.splits)) for b in second]
    assert rows(first) == rows(second)


def test_next_batches_respects_limit_and_end(append_table):
    for n in range(8):
        commit(append_table, n)
    planner = Planner(append_table, catch_up_threshold=1000)
    planned = planner.next_batches(2, limit=3)
    assert [b.snapshot_id for b in planned.batches] == [2, 3, 4] and planned.next_snapshot_id == 5
    bounded = planner.next_batches(5, limit=10, end=6)
    assert [b.snapshot_id for b in bounded.batches] == [5, 6] and bounded.next_snapshot_id == 7


def test_an_idle_check_costs_one_storage_call(append_table):
    commit(append_table, 0)
    planner = Planner(append_table)

    calls = []

    class Counting:
        def __getattr__(self, name):
            attribute = getattr(inner, name)
            if callable(attribute):
                def counted(*args, **kwargs):
                    calls.append(name)
                    return attribute(*args, **kwargs)
                return counted
            return attribute

    inner = append_table.file_io
    planner.timeline._manager.file_io = planner.files.file_io = Counting()
    read = planner.files.read
    planner.files.read = lambda path: calls.append("read") or read(path)
    planned = planner.next_batches(2, limit=8)
    assert planned.batches == () and planned.next_snapshot_id == 2
    assert calls == ["read"]  # one read, not an existence check and a read


def test_expiry_is_detected_only_when_asked_and_names_the_snapshot(append_table):
    for n in range(12):
        commit(append_table, n)
    expire_snapshots(append_table, keep_from=10)
    planner = Planner(append_table)
    assert planner.next_batches(4, limit=2).batches == ()
    with pytest.raises(SnapshotExpiredError, match="snapshot 4 expired"):
        planner.next_batches(4, limit=2, check_expiry=True)
    assert planner.earliest_snapshot_id() == 10
    with pytest.raises(SnapshotExpiredError):
        planner.plan_range(8, 11)


def test_resolve_start(append_table):
    planner = Planner(append_table)
    assert planner.resolve_start("latest-full") is None  # empty: wait for the first commit
    assert planner.resolve_start("latest").next_snapshot_id == 1
    for n in range(3):
        commit(append_table, n)
    full = planner.resolve_start("latest-full")
    assert (full.full_snapshot_id, full.next_snapshot_id) == (3, 4)
    assert planner.resolve_start("latest-full", end=2).full_snapshot_id == 2
    assert planner.resolve_start("earliest").next_snapshot_id == 1
    assert planner.resolve_start("snapshot:4").next_snapshot_id == 4
    with pytest.raises(InvalidStartError, match="ahead of the latest snapshot .3."):
        planner.resolve_start("snapshot:5")
    with pytest.raises(InvalidStartError, match="before the start"):
        planner.resolve_start("snapshot:3", end=1)
    assert planner.resolve_start("time:-1h").next_snapshot_id == 1
    assert planner.resolve_start("time:2100-01-01").next_snapshot_id == 4


def test_a_hint_saves_the_look_ahead_probe_and_hands_its_batch_over_first(append_table):
    for n in range(3):
        commit(append_table, n)
    planner = Planner(append_table, catch_up_threshold=1)
    calls = []
    inner = append_table.file_io

    class Counting:
        def __getattr__(self, name):
            attribute = getattr(inner, name)
            if callable(attribute):
                def counted(*args, **kwargs):
                    calls.append((name, args[0].rsplit("/", 1)[-1]))
                    return attribute(*args, **kwargs)
                return counted
            return attribute

    planner.timeline._manager.file_io = planner.files.file_io = Counting()
    read = planner.files.read
    planner.files.read = lambda path: calls.append(("read", path.rsplit("/", 1)[-1])) or read(path)
    planned = planner.next_batches(2, limit=8, hinted_snapshot_id=2)
    assert [b.snapshot_id for b in planned.batches] == [2]
    assert planned.more and planned.next_snapshot_id == 3
    snapshot_calls = [c for c in calls if c[1].startswith("snapshot-")]
    assert snapshot_calls == [("read", "snapshot-2")]  # no probe of 3, none of 2 + 1
    # without the hint, the same round probes ahead and plans the rest as a catch-up
    assert [b.kind for b in Planner(append_table, catch_up_threshold=1).next_batches(2, limit=8).batches] == ["catch-up"]


def test_a_storage_error_that_pypaimon_reports_as_missing_is_not_taken_for_an_expiry(
    append_table, monkeypatch
):
    """pypaimon's ``exists()`` answers False for some storage errors (a message holding "133"
    or "not exist"); the expiry check reads the snapshot instead, so such an error cannot make
    a retained snapshot look expired."""
    for n in range(8):
        commit(append_table, n)
    planner = Planner(append_table)
    real = append_table.file_io
    lying_path = planner.timeline.path(5)

    class MisreportingExists:
        def __getattr__(self, name):
            return getattr(real, name)

        def exists(self, path):
            return False if path == lying_path else real.exists(path)

    lying = MisreportingExists()
    monkeypatch.setattr(append_table, "file_io", lying)
    monkeypatch.setattr(planner.timeline._manager, "file_io", lying)
    assert not planner.file_io.exists(lying_path)
    planner.check_not_expired(5)  # snapshot 5 is there: no SnapshotExpiredError
    planned = planner.next_batches(5, limit=8, check_expiry=True)
    assert [batch.snapshot_id for batch in planned.batches][:1] == [5]


def test_a_snapshot_skipped_at_the_end_of_a_round_is_covered_by_the_next_rounds_batch(append_table):
    commit(append_table, 0)
    overwrite(append_table, 1)  # snapshot 2: nothing for a delta feed, and the newest for now
    planner = Planner(append_table, catch_up_threshold=100)
    first = planner.next_batches(1, limit=10)
    assert [(b.first_snapshot_id, b.snapshot_id) for b in first.batches] == [(1, 1)]
    assert (first.next_snapshot_id, first.covered_from) == (3, 2)
    commit(append_table, 2)
    second = planner.next_batches(first.next_snapshot_id, limit=10, covered_from=first.covered_from)
    assert [(b.first_snapshot_id, b.snapshot_id) for b in second.batches] == [(2, 3)]


def test_a_running_feed_tiles_snapshots_skipped_between_rounds(append_table):
    import asyncio

    from paimon_feed import ChangeFeed

    async def main():
        async with ChangeFeed(append_table, start="latest", notifier="poll", poll_interval=0.05) as feed:
            batches = []
            for step in (lambda: commit(append_table, 0), lambda: overwrite(append_table, 1),
                         lambda: commit(append_table, 2)):
                step()
                await asyncio.sleep(0.3)  # each commit planned in a round of its own
            async for batch in feed:
                batches.append((batch.first_snapshot_id, batch.snapshot_id))
                if batch.snapshot_id == 3:
                    return batches

    assert asyncio.run(asyncio.wait_for(main(), 60)) == [(1, 1), (2, 3)]
