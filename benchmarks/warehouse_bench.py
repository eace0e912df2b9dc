"""Warehouse benchmark: many local tables followed by one process, and the same on S3 (moto).

    python -m benchmarks.warehouse_bench [--sizes 10 100 1000] [--commits 200] [--idle-seconds 20]
    python -m benchmarks.warehouse_bench --s3 [--sizes 10 100] [--commits 100] [--idle-seconds 120]
                                         [--discovery-interval 5] [--wiring prefix|eventbridge]

For each size, a warehouse of that many append tables, and two ways to follow them, each in
its own consumer process:

- ``warehouse``: one ``WarehouseFeed`` over the warehouse;
- ``changefeeds``: a ``ChangeFeed`` per table, all on one shared ``LocalNotifier``.

The consumer starts, settles, then idles for ``--idle-seconds`` (its CPU time over that window as
a share of one core; the window is shorter than ``reconcile_interval``, 60 s, so it shows the
notifier's own cost, not the safety checks, which are one read per table per interval). Then a
writer process commits ``--commits`` times to random tables at random intervals; commit → batch
latency runs from the moment the snapshot file appeared (its mtime) to the batch's delivery, and
separately from the writer's commit timestamp (``timeMillis``). Last, a new table is created and
committed to: the time from its first snapshot file to its first batch (``warehouse`` only).
Threads, file descriptors and inotify instances are counted while idle; peak RSS at the end.

With ``--s3`` the same shape runs on a local ``moto_server`` (S3 and SQS over real HTTP, as
``s3_bench.py``): N tables in one warehouse on one bucket, one SQS queue fed by the bucket's
notification configuration (``--wiring prefix``: S3 → SQS, one prefix rule per table on
``.../<table>/snapshot/snapshot-``, the wiring ``s3_bench.py`` measures; ``eventbridge``: the
bucket sends to EventBridge and one wildcard rule ``wh/*/snapshot/snapshot-*`` targets the queue,
which moto implements). The consumer process holds one ``SqsNotifier``; ``warehouse`` is one
``WarehouseFeed`` on it, ``changefeeds`` a ``ChangeFeed`` per table on it. Both commit every batch
(the consumer file is an S3 PUT). Latency runs from the snapshot's visibility (the ``eventTime``
moto stamps on its ``ObjectCreated`` event, read from a second, observing queue with the same
prefix rules) to the batch's delivery, and from the writer's commit timestamp. The idle window
should be at least ``reconcile_interval`` (60 s, the default) so it includes the per-table safety
checks; S3 and SQS requests are counted at the server over that window (moto's request log, one
line per HTTP request, as ``s3_bench.py`` counts them), per table and hour. A new table has no
prefix rule (and the notifier drops events of tables nobody follows), so it is found by the
listing every ``--discovery-interval`` seconds (short here; the default is 60 s); its figure
is from its snapshot's visibility to its first batch.

Prints a markdown table and writes ``benchmarks/results/warehouse.json``; a local run keeps the
file's S3 rows and an ``--s3`` run keeps its local rows. A measurement, not a test: nothing here
passes or fails on time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from benchmarks import warehouse_local, warehouse_s3
from benchmarks._common.warehouse_setup import MODES, markdown
from benchmarks._common.warehouse_setup import create_tables as create_tables  # (re-exported: warehouse_memory)
from benchmarks.warehouse_local import run_one
from benchmarks.warehouse_s3 import DEFAULT_PROVEN_INTERVAL, run_s3

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def main() -> None:
    if sys.argv[1:2] in (["--consume"], ["--write"]):  # the local part's processes
        return warehouse_local.main()
    if sys.argv[1:2] in (["--consume-s3"], ["--write-s3"]):  # the S3 part's processes
        return warehouse_s3.main()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--s3", action="store_true",
                        help="on a local moto_server (S3 + SQS) instead of local directories")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="table counts (default 10 100 1000; with --s3, 10 100)")
    parser.add_argument("--commits", type=int, default=None, help="default 200; with --s3, 100")
    parser.add_argument("--idle-seconds", type=float, default=None, help="default 20; with --s3, 120")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--discovery-interval", type=float, default=5.0,
                        help="--s3: WarehouseFeed's discovery_interval (default 5 s; the feed's own is 60)")
    parser.add_argument("--proven-interval", type=float, default=DEFAULT_PROVEN_INTERVAL,
                        help="--s3: SqsNotifier's proven_interval (default 1800 s); the idle window "
                             "should exceed it so each table's safety checks fall in it")
    parser.add_argument("--wiring", default="prefix", choices=("prefix", "eventbridge"),
                        help="--s3: S3 -> SQS prefix rule per table, or one EventBridge wildcard rule")
    args = parser.parse_args()
    args.sizes = args.sizes or ([10, 100] if args.s3 else [10, 100, 1000])
    args.commits = args.commits or (100 if args.s3 else 200)
    args.idle_seconds = args.idle_seconds or (120.0 if args.s3 else 20.0)
    path = os.path.join(RESULTS, "warehouse.json")
    data = {}
    if os.path.exists(path):
        with open(path) as handle:
            data = json.load(handle)
    data["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "system": platform.platform()}
    if args.s3:
        new = run_s3(args)
        key = lambda r: (r["tables"], r["mode"], r["wiring"])  # noqa: E731
        measured = {key(r) for r in new}
        kept = [r for r in data.get("s3", {}).get("rows", []) if key(r) not in measured]
        rows = sorted(kept + new, key=lambda r: (r["tables"], r["wiring"] != "prefix",
                                                 MODES.index(r["mode"])))
        table = markdown(warehouse_s3.COLUMNS, rows)
        data["s3"] = {"rows": rows, "markdown": table}
    else:
        rows = []
        for size in args.sizes:
            for mode in args.modes:
                row = run_one(mode, size, args.commits, args.idle_seconds)
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
        table = markdown(warehouse_local.COLUMNS, rows)
        data.update({"commits": args.commits, "idle_seconds": args.idle_seconds, "rows": rows,
                     "markdown": table})
    print(table)
    os.makedirs(RESULTS, exist_ok=True)
    with open(path, "w") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
