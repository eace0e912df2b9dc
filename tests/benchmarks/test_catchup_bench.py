"""The catch-up benchmark's own functions at tiny sizes: they run, read every row on both sides
and report what they measured (the figures themselves are measurements, never asserted)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

SNAPSHOTS = 12


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    module = importlib.import_module("benchmarks.catchup_bench")
    data = tmp_path_factory.mktemp("bench-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PAIMON_FEED_BENCH_DATA", str(data))
        yield module


@pytest.fixture(scope="module")
def warehouse(bench):
    return bench.kept_warehouse(SNAPSHOTS)


def test_a_kept_warehouse_is_written_once(bench, warehouse):
    table = bench.open_bench_table({"warehouse": warehouse})
    assert table.snapshot_manager().get_latest_snapshot().id == SNAPSHOTS
    marker = Path(warehouse) / "COMPLETE"
    written = marker.stat().st_mtime_ns
    assert bench.kept_warehouse(SNAPSHOTS) == warehouse and marker.stat().st_mtime_ns == written


def test_catch_up_planning_and_to_arrow_read_every_row_both_ways(bench, warehouse):
    table = bench.open_bench_table({"warehouse": warehouse})
    rows = SNAPSHOTS * bench.ROWS_PER_COMMIT
    local = bench.measure_catch_up(table, SNAPSHOTS, repeats=2)
    assert local["pypaimon"]["rows"] == local["paimon-feed"]["rows"] == rows
    assert len(local["pypaimon"]["runs_s"]) == 2 and local["ratio"] > 0
    arrow = bench.measure_to_arrow(table, SNAPSHOTS, repeats=1)
    assert arrow["pypaimon"]["rows"] == arrow["paimon-feed"]["rows"] == rows
    assert arrow["files"] == SNAPSHOTS
    planning = bench.measure_planning(table, SNAPSHOTS, repeats=1)
    assert planning["pypaimon"]["rows"] == planning["paimon-feed"]["rows"] == SNAPSHOTS  # files
    phases = bench.measure_phases(table, SNAPSHOTS, repeats=1)  # checks the rows it read
    assert set(phases) == {"resolve_start", "snapshot_reads", "plan", "read"}


def test_s3_catch_up_through_the_delaying_proxy_counts_requests(bench, warehouse):
    s3 = bench.measure_s3(warehouse, SNAPSHOTS, repeats=1, delay_ms=1)
    rows = SNAPSHOTS * bench.ROWS_PER_COMMIT
    assert s3["pypaimon"]["rows"] == s3["paimon-feed"]["rows"] == rows
    assert s3["pypaimon"]["requests"] > SNAPSHOTS and s3["paimon-feed"]["requests"] > SNAPSHOTS
    assert s3["objects"] >= 4 * SNAPSHOTS  # snapshot, two manifest lists, manifest, data file


def test_memory_is_sampled_in_a_fresh_process_with_the_caches_reported(bench, warehouse):
    memory = bench.measure_memory(warehouse, SNAPSHOTS, interval_s=0.01)
    assert set(memory) == set(bench.MEMORY_MODES)
    for result in memory.values():
        assert result["rows"] == result["expected_rows"] == SNAPSHOTS * bench.ROWS_PER_COMMIT
        assert result["samples"] >= 1 and result["peak_mib"] >= result["start_mib"] > 0
    per_snapshot = memory["per-snapshot"]
    assert per_snapshot["batches"] == SNAPSHOTS
    assert 0 < per_snapshot["manifest_cache_entries"] <= per_snapshot["manifest_cache_limits"][0]
    assert per_snapshot["snapshot_cache_entries"] <= per_snapshot["snapshot_cache_limit"]


def test_primary_key_changes_and_state_are_read_and_compared_both_ways(bench):
    pk = bench.measure_primary_key(snapshots=6, rows=50, repeats=1)
    assert pk["rows_compared"] == {"changes": True, "state": True}
    assert pk["changes"]["pypaimon"]["rows"] == pk["changes"]["paimon-feed"]["rows"] == 6 * 50
    assert pk["state"]["pypaimon"]["rows"] == pk["state"]["paimon-feed"]["rows"] == 3 * 50  # keys
    assert pk["changes"]["ratio"] > 0 and pk["state"]["ratio"] > 0
