"""Merged full-state reads: the feed with ``[native]`` (pypaimon-rust), without it, and
pypaimon's own batch read, same run, same tables, interleaved.

    python -m benchmarks.native_bench [--keys 1000000] [--commits 4] [--repeats 3]

A partial-update and an aggregation table (Parquet, 4 buckets) get ``--commits`` uncompacted
commits from pypaimon's writer, each a window of 60% of the keys (so every key has one to
three versions, with null columns for partial-update to fill in). Each run reads the
``latest-full`` batch (planning included): ``Planner.full_batch(latest).to_arrow()`` with
``PAIMON_FEED_NATIVE_READ=1`` and ``=0``, and pypaimon's ``ReadBuilder`` scan + ``to_arrow``.
The three results are compared (same rows, sorted by key) before anything is timed.

Prints a markdown table and writes ``benchmarks/results/native.json``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pypaimon import CatalogFactory, Schema

from paimon_feed import Planner
from paimon_feed.planner import _native_read
from paimon_feed.tables import commit_arrow

RESULTS = Path(__file__).resolve().parent / "results" / "native.json"
SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("n", pa.int64()),
    ("score", pa.float64()), ("at", pa.timestamp("us")),
])
TABLES = {
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                    "fields.score.aggregate-function": "max",
                    "fields.name.aggregate-function": "last_non_null_value"},
}


def write_table(catalog, name: str, options: dict, keys: int, commits: int) -> tuple[object, float]:
    catalog.create_table(name, Schema.from_pyarrow_schema(
        SCHEMA, primary_keys=["id"], options={"bucket": "4", **options}), False)
    table = catalog.get_table(name)
    window = int(keys * 0.6)
    step = (keys - window) // max(1, commits - 1)
    started = time.perf_counter()
    for c in range(commits):
        ids = pa.array(range(c * step, min(keys, c * step + window)), pa.int64())
        if c == commits - 1:
            ids = pa.array(range(c * step, keys), pa.int64())
        count = len(ids)
        parity = pc.equal(pc.bit_wise_and(ids, 1), c % 2)
        data = pa.table({
            "id": ids,
            "name": pc.if_else(parity, pa.scalar(f"c{c}"), pa.scalar(None, pa.string())),
            "n": pa.array([c + 1] * count, pa.int64()),
            "score": pc.if_else(parity, pa.scalar(None, pa.float64()), pc.multiply(pc.cast(ids, pa.float64()), 0.5)),
            "at": pa.array([1_700_000_000_000_000 + c] * count, pa.timestamp("us")),
        }, schema=SCHEMA)
        commit_arrow(table, data)
    return table, time.perf_counter() - started


def feed_read(table, native: bool) -> pa.Table:
    os.environ[_native_read.ENVIRONMENT_SWITCH] = "1" if native else "0"
    planner = Planner(table)
    return planner.full_batch(planner.latest_snapshot_id()).to_arrow()


def pypaimon_read(table) -> pa.Table:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def canonical(data: pa.Table) -> pa.Table:
    data = data.sort_by("id")
    return pa.Table.from_arrays(data.columns, schema=pa.schema([f.remove_metadata() for f in data.schema]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not _native_read._runtime_available():
        sys.exit("pypaimon-rust is not installed: pip install 'paimon-feed[native]'")

    warehouse = tempfile.mkdtemp(prefix="paimon-feed-native-bench-")
    results = {
        "keys": args.keys, "commits": args.commits, "repeats": args.repeats,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores", "python": platform.python_version(),
        "tables": {},
    }
    try:
        catalog = CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("db", True)
        for engine, options in TABLES.items():
            table, write_s = write_table(catalog, f"db.{engine.replace('-', '_')}", options, args.keys, args.commits)
            readers = {
                "feed [native]": lambda: feed_read(table, True),
                "feed without [native]": lambda: feed_read(table, False),
                "pypaimon batch read": lambda: pypaimon_read(table),
            }
            times: dict[str, list[float]] = {name: [] for name in readers}
            reference = None
            for repeat in range(args.repeats):
                for name, read in readers.items():
                    started = time.perf_counter()
                    data = read()
                    times[name].append(time.perf_counter() - started)
                    if repeat == 0:  # the same rows from all three, checked before the figures count
                        data = canonical(data)
                        if reference is None:
                            reference = data
                        assert data.equals(reference), f"{engine}: {name} differs from the native read"
                    del data
            splits = len(table.new_read_builder().new_scan().plan().splits())
            medians = {name: statistics.median(values) for name, values in times.items()}
            results["tables"][engine] = {
                "rows": reference.num_rows, "splits": splits, "write_s": round(write_s, 2),
                "median_s": {k: round(v, 3) for k, v in medians.items()},
                "runs_s": {k: [round(x, 3) for x in v] for k, v in times.items()},
                "speedup_vs_pypaimon": round(medians["pypaimon batch read"] / medians["feed [native]"], 1),
            }
            print(f"{engine}: {reference.num_rows:,} rows written in {write_s:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)
        os.environ.pop(_native_read.ENVIRONMENT_SWITCH, None)

    print(f"\nFull `latest-full` batch, {args.keys:,} keys, {args.commits} uncompacted commits, "
          f"median of {args.repeats} ({results['machine']})\n")
    print("| table | feed [native] | feed without [native] | pypaimon batch read | native vs pypaimon |")
    print("|---|---:|---:|---:|---:|")
    for engine, row in results["tables"].items():
        m = row["median_s"]
        print(f"| {engine} ({row['rows']:,} rows) | {m['feed [native]']:.2f} s | "
              f"{m['feed without [native]']:.2f} s | {m['pypaimon batch read']:.2f} s | "
              f"{row['speedup_vs_pypaimon']}x |")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
