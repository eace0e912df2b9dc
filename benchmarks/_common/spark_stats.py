"""The Spark source's driver-side counters, outside the product: a driver hook.

Set ``PAIMON_FEED_SPARK_DRIVER_HOOK`` (:data:`paimon_feed.spark.driver.DRIVER_HOOK_ENV`) to
:data:`HOOK` and ``PAIMON_FEED_STATS_DIR`` to a directory in the Python workers' environment
(:func:`worker_env` gives both, for ``spark.executorEnv.*``), and every streaming query's driver
counts its storage calls (:class:`~benchmarks._common.counting.StorageCounter` on the table's
FileIO and the planner's metadata reader) and writes :meth:`StreamDriver.stats` with
``storage_calls`` and ``storage_calls_by_method`` added to ``{dir}/{hash of the table URL}.json``:
at its first offset, at most every half second while Spark asks for offsets, after every
commit that moved it, and when it closes. :func:`read_stats` reads it from another process. Two
queries on the same table at once share one file: give them different tables.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._common.counting import StorageCounter

__all__ = ["HOOK", "STATS_DIR_ENV", "install", "read_stats", "stats_file", "worker_env"]

logger = logging.getLogger(__name__)

HOOK = "benchmarks._common.spark_stats:install"
STATS_DIR_ENV = "PAIMON_FEED_STATS_DIR"
_WRITE_INTERVAL_S = 0.5
_REPO_ROOT = str(Path(__file__).resolve().parents[2])


def worker_env(stats_dir: str | os.PathLike) -> dict[str, str]:
    """What a Spark session's Python workers need for the hook (as ``spark.executorEnv.*``):
    the hook, the stats directory, and the repository root on ``PYTHONPATH`` (Spark adds it to
    its own), so the workers can import ``benchmarks``."""
    from paimon_feed.spark.driver import DRIVER_HOOK_ENV

    return {DRIVER_HOOK_ENV: HOOK, STATS_DIR_ENV: str(stats_dir), "PYTHONPATH": _REPO_ROOT}


def stats_file(stats_dir: str | os.PathLike, table_url: str) -> Path:
    """Where a driver of the table at ``table_url`` writes its stats."""
    return Path(stats_dir) / f"{hashlib.sha256(table_url.encode()).hexdigest()[:16]}.json"


def read_stats(stats_dir: str | os.PathLike, table_url: str) -> dict:
    """The last stats a driver of ``table_url`` wrote (``{}`` before its first)."""
    path = stats_file(stats_dir, table_url)
    return json.loads(path.read_text()) if path.exists() else {}


def install(driver: Any) -> None:
    """The hook: count ``driver``'s storage calls and write its stats as they change."""
    stats_dir = os.environ.get(STATS_DIR_ENV)
    if not stats_dir:
        logger.warning("%s is not set: the driver's stats are not written", STATS_DIR_ENV)
        return
    counter = StorageCounter()
    counter.instrument(driver.table.file_io)
    files = driver.planner.files
    if files.one_request:  # its S3 requests do not go through the FileIO
        counter.instrument(files, methods=("read", "exists"))
    _StatsWriter(driver, counter, stats_file(stats_dir, driver.planner.table_url)).wrap()


class _StatsWriter:
    def __init__(self, driver: Any, counter: StorageCounter, path: Path) -> None:
        self._driver = driver
        self._counter = counter
        self._path = path
        self._written_at = 0.0
        self._lock = threading.Lock()

    def wrap(self) -> None:
        """Write after the driver's offset, commit and close calls (wrapped on the instance)."""
        driver = self._driver
        latest_offset, commit, close = driver.latest_offset, driver.commit, driver.close

        def committed() -> int | None:
            return driver.stats()["committed_next_snapshot_id"]

        def latest_offset_then_write(*args, **kwargs):
            before = committed()
            try:
                return latest_offset(*args, **kwargs)
            finally:
                self.write(force=committed() != before)

        def commit_then_write(*args, **kwargs):
            before = committed()
            commit(*args, **kwargs)
            self.write(force=committed() != before)

        def write_then_close():
            self.write(force=True)  # while the notifier still runs: its health as the query saw it
            close()

        driver.latest_offset = latest_offset_then_write
        driver.commit = commit_then_write
        driver.close = write_then_close

    def write(self, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._written_at < _WRITE_INTERVAL_S:
                return
            self._written_at = now
        stats = self._driver.stats()
        stats["storage_calls"] = self._counter.total
        stats["storage_calls_by_method"] = self._counter.by_method()
        stats["written_at"] = time.time()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".stats-", suffix=".tmp", dir=self._path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(stats, handle)
            os.replace(temp, self._path)
        except OSError as exc:  # a measurement must never fail the query
            logger.warning("cannot write the driver's stats to %s: %s", self._path, exc)
