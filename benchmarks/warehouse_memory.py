"""What a followed table costs in memory: a started ``WarehouseFeed`` over 100, 500 and 1,000
tables of a local warehouse, each size in a fresh process.

    python -m benchmarks.warehouse_memory [--sizes 100 500 1000]

Per size: RSS after the imports and after ``start()`` (every table opened, its first safety check
done), and what ``tracemalloc`` traced in between, by the package that allocated it (Python
objects only: pyarrow's own buffers are not traced, hence RSS > traced). The slope between sizes
is the cost per table. Results in ``benchmarks/results/warehouse.json`` under ``memory``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc
from collections import Counter

from benchmarks.warehouse_bench import RESULTS, create_tables

_PACKAGES = ("pypaimon", "paimon_feed", "pyarrow", "asyncio", "fsspec", "pydantic")


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def package_of(filename: str) -> str:
    parts = filename.replace("\\", "/").split("/")
    for name in _PACKAGES:
        if name in parts:
            return name
    return "other"


async def measure(warehouse: str, names: list[str]) -> dict:
    import pypaimon  # noqa: F401

    import paimon_feed  # noqa: F401 - imported before the baseline
    from paimon_feed import WarehouseFeed

    before = rss_mb()
    tracemalloc.start(1)
    async with WarehouseFeed(warehouse, tables=names, start="latest", discovery_interval=3600,
                             reconcile_interval=3600) as feed:
        assert len(feed.tables()) == len(names)
        snapshot = tracemalloc.take_snapshot()
        after = rss_mb()
    by_package: Counter[str] = Counter()
    for stat in snapshot.statistics("filename"):
        by_package[package_of(stat.traceback[0].filename)] += stat.size
    return {"tables": len(names), "rss_before_mb": round(before, 1), "rss_after_mb": round(after, 1),
            "traced_mb": {k: round(v / 2**20, 2) for k, v in by_package.most_common()}}


def main() -> None:
    if sys.argv[1:2] == ["--measure"]:
        names = json.loads(sys.argv[3])
        print(json.dumps(asyncio.run(measure(sys.argv[2], names))), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as warehouse:
        names = create_tables(warehouse, max(args.sizes))
        for size in args.sizes:
            out = subprocess.run([sys.executable, "-m", __spec__.name, "--measure", warehouse,
                                  json.dumps(names[:size])], capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    low, high = rows[0], rows[-1]
    per_table_kb = ((high["rss_after_mb"] - high["rss_before_mb"]) - (low["rss_after_mb"] - low["rss_before_mb"])) \
        / (high["tables"] - low["tables"]) * 1024
    path = os.path.join(RESULTS, "warehouse.json")
    with open(path) as handle:
        data = json.load(handle)
    data["memory"] = {"rows": rows, "rss_kb_per_table": round(per_table_kb, 1)}
    with open(path, "w") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    print(json.dumps(data["memory"], indent=2))


if __name__ == "__main__":
    main()
