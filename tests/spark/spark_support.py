"""Real pypaimon tables and a local Spark session for the Spark source tests.

Every row says which commit wrote it (``commit`` column), so a test checks what a query
delivered against what was written. The primary-key table uses ``rowkind.field=op`` so each
commit carries all three change kinds: commit n inserts key n, updates key n-1, deletes key n-2.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping

from pypaimon import CatalogFactory, Schema
from support.tables import (  # noqa: F401  the rows every table test writes
    APPEND_SCHEMA,
    PK_OPTIONS,
    PK_SCHEMA,
    commit,
    rows_for,
)


def new_spark_session(app_name: str, worker_env: Mapping[str, str] | None = None,
                      conf: Mapping[str, str] | None = None, *, register: bool = True):
    """A small local[2] session: no UI, two shuffle partitions, quiet logs, and ``conf``.

    Python workers talk to the JVM over TCP (Spark's default) unless ``conf`` says otherwise,
    set explicitly because PySpark carries a stopped session's settings into the next one.
    ``register=False`` leaves the source unregistered (Spark 3.5 has no Python data sources).

    ``worker_env`` is set in every Python worker of the session, the source's driver side
    included (as ``spark.executorEnv.*``, which the data source registration carries). Setting
    ``os.environ`` is not enough: the workers inherit the JVM's environment, and the JVM is
    started once per test process, by whichever module's session comes first.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import paimon_feed.spark

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.streaming.stopTimeout", "30s")
    )
    for name, value in (worker_env or {}).items():
        builder = builder.config(f"spark.executorEnv.{name}", value)
    for key, value in {paimon_feed.spark.UNIX_SOCKETS_CONF: "false", **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if register:  # the source; the foreach_batch runner needs no registration (Spark 3.5+)
        paimon_feed.spark.register(spark)
    return spark


class Warehouse:
    """A filesystem catalog in a temp dir, with helpers to create tables and commit."""

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self.catalog = CatalogFactory.create({"warehouse": self.path})
        self.catalog.create_database("db", True)

    def create_append_table(self, name: str = "db.events"):
        self.catalog.create_table(name, Schema.from_pyarrow_schema(APPEND_SCHEMA), False)
        return self.catalog.get_table(name)

    def create_pk_table(self, name: str = "db.orders"):
        schema = Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=PK_OPTIONS)
        self.catalog.create_table(name, schema, False)
        return self.catalog.get_table(name)

    def options(self, table, **extra) -> dict:
        """Reader options for ``table`` (values as strings, the way Spark passes them)."""
        options = {"warehouse": self.path, "table": table.identifier.get_full_name()}
        options.update({key: str(value) for key, value in extra.items()})
        return options


def latest_snapshot_id(table) -> int | None:
    snapshot = table.snapshot_manager().get_latest_snapshot()
    return snapshot.id if snapshot is not None else None


def consumer_next_snapshot(table, consumer_id: str) -> int | None:
    """What Paimon's consumer file ``consumer-<consumer_id>`` of ``table`` holds (None: no file)."""
    path = os.path.join(table.table_path, "consumer", f"consumer-{consumer_id}")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["nextSnapshot"]


def expected_changes(table, commits) -> list[tuple]:
    """``(row kind, id, commit, payload)`` of every change the commits wrote, sorted."""
    changes = []
    for n in commits:
        for row in rows_for(table, n):
            changes.append((row.get("op", "+I"), row["id"], row["commit"], row["payload"]))
    return sorted(changes)


def delivered_changes(rows) -> list[tuple]:
    return sorted((r["_row_kind"], r["id"], r["commit"], r["payload"]) for r in rows)


class WriterThread:
    """Commits ``first..last`` (inclusive) from a thread, pausing ``interval`` seconds between
    commits; ``committed`` lists ``(commit number, snapshot id, wall time)`` in order."""

    def __init__(self, table, first: int, last: int, interval: float = 0.2) -> None:
        self.table = table
        self.first, self.last, self.interval = first, last, interval
        self.committed: list[tuple[int, int, float]] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="paimon-writer", daemon=True)

    def start(self) -> WriterThread:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            for n in range(self.first, self.last + 1):
                commit(self.table, n)
                self.committed.append((n, latest_snapshot_id(self.table), time.time()))
                time.sleep(self.interval)
        except BaseException as exc:  # surfaced by join()
            self.error = exc

    def join(self, timeout: float = 120.0) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "writer thread did not finish"
        if self.error is not None:
            raise self.error


def wait_until(condition: Callable[[], bool], timeout: float, what: str, step: float = 0.1) -> None:
    """Poll ``condition`` until true; fail naming ``what`` after ``timeout`` seconds.

    Timeouts here only bound a hang; no test asserts on how long something took.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(step)


# --- streaming queries ------------------------------------------------------------------

QUERY_TIMEOUT_S = 180  # bounds a hang only; nothing asserts on durations


class BatchSink:
    """A foreachBatch sink keeping ``batch id -> rows`` (idempotent per batch id)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.batches: dict[int, list[dict]] = {}
        self.replayed: list[int] = []

    def __call__(self, df, batch_id: int) -> None:
        rows = [row.asDict() for row in df.collect()]
        with self._lock:
            if batch_id in self.batches:
                self.replayed.append(batch_id)
                assert _key(self.batches[batch_id]) == _key(rows), (
                    f"batch {batch_id} was replayed with different rows"
                )
            self.batches[batch_id] = rows

    def rows(self) -> list[dict]:
        with self._lock:
            return [row for batch_id in sorted(self.batches) for row in self.batches[batch_id]]

    def commits(self) -> list[int]:
        return sorted(row["commit"] for row in self.rows())

    def commits_by_batch(self) -> list[tuple[int, list[int]]]:
        with self._lock:
            return [
                (batch_id, sorted({row["commit"] for row in rows}))
                for batch_id, rows in sorted(self.batches.items())
            ]


def _key(rows: list[dict]) -> list:
    return sorted(tuple(sorted(row.items())) for row in rows)


def start_query(spark, options: dict, sink: BatchSink, checkpoint: str, **trigger):
    return (
        spark.readStream.format("paimon_feed")
        .options(**options)
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(**trigger)
        .start()
    )


def data_progress(query) -> list[tuple[int, dict | None, dict]]:
    """``(batch id, start offset, end offset)`` of the micro-batches that read data, offsets
    without the commit digest they carry (``mark``; the history tests check it)."""
    progress = []
    for update in query.recentProgress:
        source = update.sources[0]
        if source.endOffset and source.startOffset != source.endOffset:
            start = _bare(_offset(source.startOffset))
            progress.append((update.batchId, start, _bare(_offset(source.endOffset))))
    return sorted({p[0]: p for p in progress}.values())


def _offset(reported: str | None) -> dict | None:
    """An offset as a progress report shows it: JSON, or on Spark 4.0/4.1 the Python repr of
    the dict (and the string ``"None"`` for a first batch's start)."""
    if reported in (None, "", "None"):
        return None
    try:
        return json.loads(reported)
    except json.JSONDecodeError:
        return ast.literal_eval(reported)


def _bare(offset: dict | None) -> dict | None:
    if offset is None:
        return None
    return {key: value for key, value in offset.items() if key != "mark"}


def stats_worker_env(stats_dir) -> dict[str, str]:
    """Worker environment in which every streaming query's driver writes its counters to
    ``stats_dir`` (``benchmarks/_common/spark_stats.py``: measurement is not the product's)."""
    from benchmarks._common.spark_stats import worker_env

    return worker_env(stats_dir)


def driver_stats(spark, table) -> Callable[[], dict]:
    """A reader of what the source's driver for ``table`` last wrote of its counters (``{}``
    before it wrote any), in a session made with :func:`stats_worker_env`."""
    from benchmarks._common.spark_stats import STATS_DIR_ENV, read_stats
    from paimon_feed.planner._snapshots import table_url

    stats_dir = spark.conf.get(f"spark.executorEnv.{STATS_DIR_ENV}")
    url = table_url(table)
    return lambda: read_stats(stats_dir, url)
