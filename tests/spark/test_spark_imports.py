"""What each Python process Spark starts for the source imports, in a fresh interpreter.

Spark runs the source in several processes: ``load()``'s schema in one, the pickling of the
reader for the executors in another, the query's offsets and planning in a third (a fresh
``python -m`` process per query), the reads in executor workers. Each process imports only what
its callbacks need: the slow imports are pypaimon's table and read modules, which import pandas,
polars and requests as they load, and the asyncio notifiers. Only planning and reading need
pypaimon's table; these tests keep the other processes free of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from spark_support import commit

# Runs one process's callbacks as Spark calls them, and prints the modules they imported
# beyond what PySpark's own worker module for that process had imported.
_PROCESS = textwrap.dedent(
    """
    import json, pickle, sys
    step, options = sys.argv[1], json.loads(sys.argv[2])
    import pyspark.sql.datasource, pyspark.sql.streaming.datasource
    from pyspark.sql.types import LongType, StructField, StructType
    before = set(sys.modules)
    import paimon_feed.spark.source as source
    data_source = source.PaimonFeedDataSource(options)
    schema = StructType([StructField("id", LongType(), False)])
    if step == "schema":  # load()
        data_source.schema()
    elif step == "pickle-reader":  # shipping read() to the executors
        pickle.dumps(data_source.streamReader(schema))
    elif step == "available-now":  # the query's offsets and planning
        from pyspark.sql.streaming.datasource import ReadAllAvailable
        reader = data_source.streamReader(schema)
        reader.prepareForTriggerAvailableNow()
        start = reader.initialOffset()
        end = reader.latestOffset(start, ReadAllAvailable())
        assert reader.partitions(start, end)
        reader.commit(end)
        reader.stop()
    print(json.dumps(sorted(set(sys.modules) - before)))
    """
)

#: Imported by pypaimon's table and read modules when they load (pandas through
#: ``pyarrow.dataset``), or by the asyncio feed and notifiers.
HEAVY = ("pandas", "polars", "requests", "asyncio", "pyarrow.dataset")
# paimon_feed.planner itself is light (its names are imported on first use); the planner is not.
TABLE_MODULES = ("pypaimon.table.file_store_table", "pypaimon.catalog.catalog", "paimon_feed.planner.planner")
FEED_MODULES = ("paimon_feed.feed", "paimon_feed.notifiers", "watchfiles")


def imported_by(step: str, options: dict) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROCESS, step, json.dumps(options)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.fixture
def options(paimon):
    table = paimon.create_append_table()
    commit(table, 1)
    return paimon.options(table)


def test_importing_the_source_imports_neither_pypaimon_nor_the_feed(options):
    modules = imported_by("import", options)
    assert not [m for m in modules if m.split(".")[0] in ("pypaimon", "pyarrow") or m in HEAVY]
    assert not modules & {*TABLE_MODULES, *FEED_MODULES, "paimon_feed.spark.driver"}


def test_the_schema_for_load_comes_from_the_schema_file_without_pypaimons_table(options):
    modules = imported_by("schema", options)
    # requests: pypaimon's local file IO imports it; asyncio: the notifier check builds the
    # (asyncio) notifier the query will use, to fail at load() if it cannot serve the table.
    assert not modules & {"pandas", "polars", "pyarrow.dataset", *TABLE_MODULES}
    assert "paimon_feed.spark.driver" not in modules


def test_pickling_the_reader_for_the_executors_imports_no_pypaimon(options):
    modules = imported_by("pickle-reader", options)
    assert not [m for m in modules if m.split(".")[0] == "pypaimon" or m in HEAVY]
    assert not modules & {*TABLE_MODULES, *FEED_MODULES, "paimon_feed.spark.driver"}


def test_an_available_now_query_plans_without_the_feed_or_a_notifier(options):
    # Planning needs pypaimon's table, and with it whatever its modules import; the feed and
    # the notifiers are for queries that keep following the table.
    modules = imported_by("available-now", options)
    assert "pypaimon.table.file_store_table" in modules
    assert not modules & set(FEED_MODULES)


_PLANNER = textwrap.dedent(
    """
    import json, sys
    before = set(sys.modules)
    import pypaimon.read.plan, pypaimon.read.scanner.changelog_follow_up_scanner
    theirs = set(sys.modules)
    from paimon_feed.planner import Planner, Timeline
    print(json.dumps(sorted(set(sys.modules) - theirs)))
    """
)


def test_the_planner_adds_no_heavy_import_to_pypaimons_scanner_modules():
    # Whatever pypaimon's modules import is theirs to trim; the planner's own module-level
    # code (Arrow constants built from Python lists make pyarrow import pandas) must add none.
    done = subprocess.run([sys.executable, "-c", _PLANNER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    added = set(json.loads(done.stdout.splitlines()[-1]))
    assert "paimon_feed.planner.planner" in added
    assert not added & set(HEAVY)
