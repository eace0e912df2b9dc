"""What the catch-up benchmark's parts share (:mod:`benchmarks.catchup_bench`): the kept
warehouse of N append snapshots (written once, reused by later runs), opening its table, and
taking turns between two runs."""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time

import pyarrow as pa

from paimon_feed.tables import commit_arrow

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
ROWS_PER_COMMIT = 5


def data_dir() -> str:
    """Where written tables are kept between runs."""
    default = os.path.join(os.path.expanduser("~"), ".cache", "paimon-feed-bench")
    return os.environ.get("PAIMON_FEED_BENCH_DATA", default)


# --- tables ---------------------------------------------------------------------------------------


def build_warehouse(path: str, snapshots: int) -> str:
    """A local warehouse whose table ``db.bench`` has ``snapshots`` append snapshots of
    ``ROWS_PER_COMMIT`` rows each. Written to a temp name and renamed, so an interrupted build
    is never reused."""
    from pypaimon import CatalogFactory, Schema

    if os.path.exists(os.path.join(path, "COMPLETE")):
        return path
    building = path + ".building"
    shutil.rmtree(building, ignore_errors=True)
    os.makedirs(building)
    catalog = CatalogFactory.create({"warehouse": building})
    catalog.create_database("db", True)
    catalog.create_table("db.bench", Schema.from_pyarrow_schema(SCHEMA), True)
    table = catalog.get_table("db.bench")
    started = time.monotonic()
    for n in range(snapshots):
        ids = range(n * ROWS_PER_COMMIT, (n + 1) * ROWS_PER_COMMIT)
        commit_arrow(table, pa.table({"id": list(ids), "payload": [f"r{n}"] * ROWS_PER_COMMIT}, schema=SCHEMA))
        if n and n % 1000 == 0:
            print(f"  {n} commits written ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    open(os.path.join(building, "COMPLETE"), "w").close()
    shutil.rmtree(path, ignore_errors=True)
    os.rename(building, path)
    return path


def kept_warehouse(snapshots: int) -> str:
    """The kept warehouse of ``snapshots`` commits, written on first use."""
    return build_warehouse(os.path.join(data_dir(), f"append-{snapshots}"), snapshots)


def open_bench_table(options: dict):
    from pypaimon import CatalogFactory

    return CatalogFactory.create(options).get_table("db.bench")


def interleaved(runs: dict, repeats: int) -> dict:
    """Each run of ``runs`` (name -> callable returning ``(seconds, rows)``) ``repeats`` times,
    taking turns (the order flips every round, so neither always goes first): the median."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    rows: dict[str, int] = {}
    names = list(runs)
    for round_ in range(repeats):
        for name in names if round_ % 2 == 0 else names[::-1]:
            elapsed, rows[name] = runs[name]()
            times[name].append(elapsed)
    return {
        name: {"median_s": statistics.median(t), "runs_s": t, "rows": rows[name]}
        for name, t in times.items()
    }
