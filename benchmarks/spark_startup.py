"""Spark benchmark, part 2: an ``AvailableNow`` query's start-up on a 10-row table, and what one
Python process of this source pays in imports before it can read (run by
:mod:`benchmarks.spark_bench`)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

from benchmarks._common.spark_readers import Readers
from benchmarks._common.spark_setup import SMALL_DDL, interleaved, load


def measure_startup(readers: Readers, repeats: int, workdir: str) -> dict:
    """An ``AvailableNow`` query of each reader on a 10-row table into ``noop``, in a session
    that is already up: from the stream DataFrame's creation (``load()``) through ``start()``
    to termination, with a fresh checkpoint each time. For the Java connector the clock runs in
    this process around the request to its worker (one round trip, ``ipc_round_trip_ms`` in
    the results, is included)."""
    runs = iter(range(1_000_000))

    def case(reader):
        def run():
            n = next(runs)
            read = readers.available_now(reader, "tiny", SMALL_DDL, "noop", "", os.path.join(workdir, f"startup-{n}"))
            assert read == 10, (reader, read)

        return run

    before = load()
    seconds = interleaved({reader: case(reader) for reader in readers.names()}, repeats, warm_ups=2)  # local[2]: two executor workers to warm
    return {"table_rows": 10, "repeats": repeats, "load_before": before, "load_after": load(),
            "cases": {reader: {"seconds": s, "median_s": statistics.median(s)} for reader, s in seconds.items()}}


IMPORT_PROBE = """
import sys, time
started = time.perf_counter()
import paimon_feed.spark.source
imported = time.perf_counter()
from paimon_feed.spark.driver import load_table
from paimon_feed.spark.options import parse_options
load_table(parse_options({"warehouse": sys.argv[1], "table": "db.tiny"}))
print(imported - started, time.perf_counter() - imported)
"""
#: What a planning process would still import if it left split planning to the executors and only
#: read snapshot, schema and consumer files with pypaimon's classes for them (the floor of that
#: design while it keeps pypaimon), after what every Python source and this source's module cost.
METADATA_PROBE = """
import sys, time
import pyspark.sql.datasource
import paimon_feed.spark.source
started = time.perf_counter()
from pypaimon.common.file_io import FileIO
from pypaimon.common.options import Options
from pypaimon.consumer.consumer_manager import ConsumerManager
from pypaimon.schema.schema_manager import SchemaManager
from pypaimon.snapshot.snapshot_manager import SnapshotManager
FileIO.get(sys.argv[1], Options({"warehouse": sys.argv[1]}))
print(time.perf_counter() - started)
"""
#: Modules whose import the probe reports (cumulative, as ``-X importtime`` gives it): what
#: every Python data source pays, what this source adds, and what pypaimon's table brings along.
PROBED_MODULES = ("pyspark.sql.datasource", "paimon_feed.spark.source", "pyarrow.dataset",
                  "pandas", "polars", "requests")


def measure_imports(warehouse: str, repeats: int) -> dict:
    """What one Python process of this source pays before it can read: importing the source
    and opening the table, with ``python -X importtime`` (a fresh interpreter each time; Spark
    starts one for ``load()``'s schema, one for the query's offsets, and the executors' workers)."""
    runs = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORT_PROBE, warehouse],
                              capture_output=True, text=True, check=True)
        imported_s, table_s = (float(x) for x in done.stdout.split())
        cumulative = {}
        for line in done.stderr.splitlines():
            parts = [part.strip() for part in line.split("|")]
            if len(parts) == 3 and parts[2] in PROBED_MODULES and parts[2] not in cumulative:
                cumulative[parts[2]] = int(parts[1]) / 1e6
        metadata = subprocess.run([sys.executable, "-c", METADATA_PROBE, warehouse],
                                  capture_output=True, text=True, check=True)
        runs.append({"import_source_s": imported_s, "open_table_s": table_s, "modules_s": cumulative,
                     "metadata_only_s": float(metadata.stdout)})
    return {
        "repeats": repeats,
        "metadata_only_s": statistics.median(r["metadata_only_s"] for r in runs),
        "import_source_s": statistics.median(r["import_source_s"] for r in runs),
        "open_table_s": statistics.median(r["open_table_s"] for r in runs),
        "modules_s": {m: statistics.median(r["modules_s"].get(m, 0.0) for r in runs) for m in PROBED_MODULES},
    }


# --- 3. latency -----------------------------------------------------------------------------------
