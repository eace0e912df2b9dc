"""What the Spark benchmarks share: their tables (schemas, writers), timing helpers (load
averages, interleaved rounds) and where results go."""

from __future__ import annotations

import glob
import json
import os
import random
import time

import pyarrow as pa
import pyarrow.compute as pc

from benchmarks._common import spark_stats
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(HERE, "results")

WIDE = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("commit", pa.int64()),
        ("payload", pa.string()),
        ("value", pa.float64()),
        ("ts", pa.timestamp("us")),
    ]
)
WIDE_DDL = "id bigint not null, commit bigint, payload string, value double, ts timestamp_ntz"
SMALL = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64())])
SMALL_DDL = "id bigint not null, commit bigint"
PK_OPTIONS = {"bucket": "2", "changelog-producer": "input"}
WARM_UP_COMMITS = 3


# --- tables ---------------------------------------------------------------------------------------


def create_table(catalog, name: str, schema: pa.Schema, primary_keys=None, options=None):
    from pypaimon import Schema

    catalog.create_table(name, Schema.from_pyarrow_schema(schema, primary_keys=primary_keys, options=options), False)
    return catalog.get_table(name)


def wide_rows(ids: range, commit: int) -> pa.Table:
    id_array = pa.array(ids, pa.int64())
    return pa.table(
        {
            "id": id_array,
            "commit": pa.array([commit] * len(ids), pa.int64()),
            "payload": pa.array([f"payload-{i:012d}" for i in ids]),
            "value": pc.multiply(id_array, 0.5),
            "ts": pc.multiply(id_array, 1000).cast(pa.timestamp("us")),
        },
        schema=WIDE,
    )


def fill_wide_table(table, rows: int, commits: int) -> None:
    per_commit = rows // commits
    for n in range(commits):
        commit_arrow(table, wide_rows(range(n * per_commit, (n + 1) * per_commit), n))


def fill_pk_table(table, rows: int, commits: int) -> None:
    """``commits`` commits of ``rows // commits`` rows; the second half rewrites the first half's
    keys, so the changelog holds ``rows`` changes and the table ``rows / 2`` keys."""
    per_commit, half = rows // commits, max(1, commits // 2)
    for n in range(commits):
        start = (n % half) * per_commit
        commit_arrow(table, wide_rows(range(start, start + per_commit), n))


def commit_small(table, n: int) -> None:
    commit_arrow(table, pa.table({"id": [n * 10 + i for i in range(10)], "commit": [n] * 10}, schema=SMALL))


def data_files(warehouse: str, name: str) -> list[str]:
    return sorted(glob.glob(os.path.join(warehouse, "db.db", name, "bucket-*", "*.parquet")))


# --- helpers --------------------------------------------------------------------------------------


#: The merged primary-key tables of ``spark_merged_bench`` and ``spark_handoff_bench``: merge
#: options per table, over :data:`WIDE`.
MERGED = {
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.commit.aggregate-function": "sum",
                    "fields.value.aggregate-function": "max",
                    "fields.payload.aggregate-function": "last_non_null_value"},
}


def fill_merged_table(table, keys: int, commits: int) -> None:
    """``commits`` windows of 60% of the keys; in each commit half the rows leave ``payload``
    null and the other half ``value``, alternating by commit."""
    window = int(keys * 0.6)
    step = (keys - window) // max(1, commits - 1)
    for c in range(commits):
        end = keys if c == commits - 1 else min(keys, c * step + window)
        ids = pa.array(range(c * step, end), pa.int64())
        parity = pc.equal(pc.bit_wise_and(ids, 1), c % 2)
        commit_arrow(table, pa.table({
            "id": ids,
            "commit": pa.array([c + 1] * len(ids), pa.int64()),
            "payload": pc.if_else(parity, pa.scalar(f"c{c}"), pa.scalar(None, pa.string())),
            "value": pc.if_else(parity, pa.scalar(None, pa.float64()), pc.multiply(pc.cast(ids, pa.float64()), 0.5)),
            "ts": pa.array([1_700_000_000_000_000 + c] * len(ids), pa.timestamp("us")),
        }, schema=WIDE))


def write_merged_tables(catalog, keys: int, commits: int) -> None:
    """Each :data:`MERGED` table as ``db.<engine>`` (``-`` as ``_``), two buckets, filled by
    :func:`fill_merged_table`."""
    for engine, options in MERGED.items():
        print(f"writing {engine}: {keys:,} keys in {commits} commits ...", flush=True)
        table = create_table(catalog, f"db.{engine.replace('-', '_')}", WIDE, primary_keys=["id"],
                             options={"bucket": "2", **options})
        fill_merged_table(table, keys, commits)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


#: Where the source's drivers write their counters (the driver hook in new_session's workers).
STATS_DIR = scratch_dir("paimon-feed-spark-stats-")


def driver_stats(table_uri: str):
    """A reader of the counters the source's driver for ``table_uri`` writes (``{}`` until it
    answered its first offsets); the last query's file is removed first."""
    spark_stats.stats_file(STATS_DIR, table_uri).unlink(missing_ok=True)
    return lambda: spark_stats.read_stats(STATS_DIR, table_uri)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def interleaved(cases: dict, repeats: int, warm_ups: int = 1) -> dict[str, list[float]]:
    """Seconds per case: ``warm_ups`` warm-up rounds (imports, Python workers, file caches),
    then ``repeats`` rounds that each run every case once, so drift in load hits all alike.

    Each round runs the cases in its own (seeded) order: a case that always followed the same
    one would always pay for its aftermath, and the Java connector's process goes on working
    (collecting garbage, cleaning up) after it has answered."""
    for _ in range(warm_ups):
        for run in cases.values():
            run()
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for round_index in range(repeats):
        print(f"  round {round_index + 1}/{repeats}, load {load()}", flush=True)
        order = list(cases)
        random.Random(round_index).shuffle(order)
        for name in order:
            started = time.perf_counter()
            cases[name]()
            seconds[name].append(time.perf_counter() - started)
    return seconds


def write_results(results: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    print(f"\nwrote {path}")
