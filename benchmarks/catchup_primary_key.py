"""Catch-up benchmark, part 5: a primary-key table's backlog, its changes with row kinds and its
merged state, pypaimon and paimon-feed, rows compared before anything is timed (run by
:mod:`benchmarks.catchup_bench`)."""

from __future__ import annotations

import asyncio
import time

import pyarrow as pa

from benchmarks._common.catchup_setup import interleaved
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks.core_bench import feed_catch_up, pypaimon_catch_up  # (shared catch-up runs)
from paimon_feed.tables import commit_arrow

PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64()), ("payload", pa.string())])


def build_pk_table(path: str, snapshots: int, rows: int):
    """``db.pk``: ``snapshots`` commits of ``rows`` rows; the second half rewrites the first
    half's keys, so the changelog holds updates and the state ``snapshots / 2 * rows`` keys."""
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": path})
    catalog.create_database("db", True)
    options = {"bucket": "2", "changelog-producer": "input"}
    catalog.create_table("db.pk", Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=options), True)
    table = catalog.get_table("db.pk")
    half = max(1, snapshots // 2)
    for n in range(snapshots):
        ids = range((n % half) * rows, (n % half + 1) * rows)
        commit_arrow(table, pa.table({"id": list(ids), "commit": [n] * rows,
                                      "payload": [f"p{n}-{i}" for i in ids]}, schema=PK_SCHEMA))
    return table


def pypaimon_state(table) -> pa.Table:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def feed_state(table) -> pa.Table:
    from paimon_feed import Planner

    planner = Planner(table)
    return planner.full_batch(planner.latest_snapshot_id()).to_arrow()


def _sorted_rows(tables: list[pa.Table], keys: list[str]) -> pa.Table:
    data = pa.concat_tables(tables)
    return data.sort_by([(key, "ascending") for key in keys])


def measure_primary_key(snapshots: int, rows: int, repeats: int) -> dict:
    """Changes (with row kinds) and merged state of a primary-key table, pypaimon vs the feed,
    interleaved; the two sides' rows are checked equal first."""
    table = build_pk_table(scratch_dir("paimon-feed-catchup-pk-"), snapshots, rows)
    expected = snapshots * rows
    seen: dict[str, list[pa.Table]] = {"pypaimon": [], "paimon-feed": []}

    def collect_feed(feed, batch):
        seen["paimon-feed"].append(batch.to_arrow())

    def pypaimon_changes(**options):
        return pypaimon_catch_up(table, snapshots, expected, include_row_kind=True, **options)

    asyncio.run(pypaimon_changes(diff_catch_up=False, on_rows=seen["pypaimon"].append))
    default_scan: list[pa.Table] = []  # what pypaimon's scan delivers as it comes
    asyncio.run(pypaimon_changes(on_rows=default_scan.append))
    default_rows = pa.concat_tables(default_scan)
    default_kinds = {entry["values"]: entry["counts"]
                     for entry in default_rows.column("_row_kind").value_counts().to_pylist()}
    asyncio.run(feed_catch_up(table, snapshots, 10**9, on_batch=collect_feed, include_row_kind=True))
    order = ["commit", "id", "_row_kind"]
    changes_equal = _sorted_rows(seen["pypaimon"], order).equals(_sorted_rows(seen["paimon-feed"], order))
    state_equal = pypaimon_state(table).sort_by("id").equals(feed_state(table).sort_by("id"))
    if not (changes_equal and state_equal):
        raise RuntimeError(f"the feed's rows differ from pypaimon's (changes equal: {changes_equal}, "
                           f"state equal: {state_equal})")
    changes = interleaved({
        "pypaimon": lambda: asyncio.run(pypaimon_changes(diff_catch_up=False)),
        "paimon-feed": lambda: asyncio.run(feed_catch_up(table, snapshots, 10**9, include_row_kind=True)),
    }, repeats)

    def timed(read):
        def run():
            started = time.perf_counter()
            data = read(table)
            return time.perf_counter() - started, data.num_rows
        return run

    state = interleaved({"pypaimon": timed(pypaimon_state), "paimon-feed": timed(feed_state)}, repeats)
    for result in (*changes.values(), *state.values()):
        result["rows_per_s"] = result["rows"] / result["median_s"]
    return {
        "snapshots": snapshots, "rows_per_commit": rows, "table": "primary key, changelog-producer=input, 2 buckets",
        "changes": {**changes, "ratio": changes["paimon-feed"]["rows_per_s"] / changes["pypaimon"]["rows_per_s"]},
        "state": {**state, "ratio": state["paimon-feed"]["rows_per_s"] / state["pypaimon"]["rows_per_s"]},
        "rows_compared": {"changes": changes_equal, "state": state_equal},
        "pypaimon_default_scan": {"rows": default_rows.num_rows, "row_kinds": default_kinds,
                                  "plans": len(default_scan), "changes": expected},
    }
