"""Catch-up benchmark, parts 1 and 3: catch-up of a local backlog, planning alone, where its time
goes phase by phase, and ``to_arrow`` on the catch-up batch, pypaimon and paimon-feed taking
turns (run by :mod:`benchmarks.catchup_bench`)."""

from __future__ import annotations

import asyncio
import statistics
import time

from benchmarks._common.catchup_setup import ROWS_PER_COMMIT, interleaved
from benchmarks.core_bench import feed_catch_up, pypaimon_catch_up  # (shared catch-up runs)


def measure_catch_up(table, snapshots: int, repeats: int, counter=None) -> dict:
    """pypaimon's scan and a ChangeFeed (one catch-up batch) from snapshot 1 to ``snapshots``.
    With a ``counter`` (a callable giving the requests served so far), requests per run too."""
    expected = snapshots * ROWS_PER_COMMIT
    requests: dict[str, list[int]] = {"pypaimon": [], "paimon-feed": []}

    def counted(name, make):
        def run():
            before = counter() if counter else 0
            result = asyncio.run(make())
            if counter:
                requests[name].append(counter() - before)
            return result
        return run

    results = interleaved(
        {
            "pypaimon": counted("pypaimon", lambda: pypaimon_catch_up(table, snapshots, expected)),
            "paimon-feed": counted("paimon-feed", lambda: feed_catch_up(table, snapshots, 10)),
        },
        repeats,
    )
    for name, result in results.items():
        result["expected_rows"] = expected
        if counter:
            result["requests"] = statistics.median(requests[name])
    results["ratio"] = results["paimon-feed"]["median_s"] / results["pypaimon"]["median_s"]
    return results


def measure_planning(table, snapshots: int, repeats: int) -> dict:
    """Planning alone, no data read: pypaimon's catch-up plan (its ``_create_catch_up_plan``,
    what its scan does for a backlog) vs the feed's planner (snapshot files of the range
    read for the safety check, then the same scanners): where the catch-up ratio's floor is."""
    from paimon_feed import Planner

    def pypaimon_plan():
        started = time.perf_counter()
        scan = table.new_stream_read_builder().new_streaming_scan()
        latest = table.snapshot_manager().get_latest_snapshot()
        files = sum(len(split.files) for split in scan._create_catch_up_plan(1, latest).splits())
        return time.perf_counter() - started, files

    def feed_plan():
        started = time.perf_counter()
        batch = Planner(table).next_batches(1, limit=16).batches[0]
        return time.perf_counter() - started, sum(len(split.files) for split in batch.splits)

    results = interleaved({"pypaimon": pypaimon_plan, "paimon-feed": feed_plan}, repeats)
    results["ratio"] = results["paimon-feed"]["median_s"] / results["pypaimon"]["median_s"]
    return results


def catch_up_batch(table, snapshots: int):
    """The feed's catch-up batch from snapshot 1 to ``snapshots``."""
    caught = []
    asyncio.run(feed_catch_up(table, snapshots, 10, on_batch=lambda feed, batch: caught.append(batch)))
    return max(caught, key=lambda batch: batch.snapshot_id - batch.first_snapshot_id)


def measure_to_arrow(table, snapshots: int, repeats: int) -> dict:
    """``batch.to_arrow()`` vs pypaimon's ``TableRead.to_arrow`` on the same splits: rows/s."""
    batch = catch_up_batch(table, snapshots)
    splits = list(batch.splits)
    reader = table.new_stream_read_builder().new_read()

    def timed(read):
        def run():
            started = time.perf_counter()
            rows = read().num_rows
            return time.perf_counter() - started, rows
        return run

    results = interleaved(
        {"pypaimon": timed(lambda: reader.to_arrow(splits)), "paimon-feed": timed(batch.to_arrow)},
        repeats,
    )
    for result in results.values():
        result["rows_per_s"] = result["rows"] / result["median_s"]
    results["splits"] = len(splits)
    results["files"] = sum(len(split.files) for split in splits)
    results["ratio"] = results["paimon-feed"]["rows_per_s"] / results["pypaimon"]["rows_per_s"]
    return results


def measure_phases(table, snapshots: int, repeats: int) -> dict:
    """Where one local catch-up's time goes, phase by phase (medians of ``repeats``): resolving
    ``earliest``, reading the range's snapshot files for the safety check, the set-diff plan
    (snapshots already read), and reading the batch's rows."""
    from paimon_feed import Planner

    phases: dict[str, list[float]] = {"resolve_start": [], "snapshot_reads": [], "plan": [], "read": []}

    def timed(name, call):
        started = time.perf_counter()
        result = call()
        phases[name].append(time.perf_counter() - started)
        return result

    for _ in range(repeats):
        planner = Planner(table)
        timed("resolve_start", lambda: planner.resolve_start("earliest"))
        timed("snapshot_reads", lambda: planner.timeline.get_many(range(1, snapshots + 1)))
        batch = timed("plan", lambda: planner.next_batches(1, limit=16).batches[0])
        rows = timed("read", lambda: batch.to_arrow().num_rows)
        assert rows == snapshots * ROWS_PER_COMMIT, rows
    return {name: statistics.median(values) for name, values in phases.items()}
