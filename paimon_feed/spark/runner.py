"""``foreach_batch``: a push-driven runner with ``foreachBatch`` semantics, on Spark 3.5+ and
Spark Connect.

::

    from paimon_feed.spark import foreach_batch

    def upsert(df, batch_id):
        df.write.mode("append").parquet(f"/data/out/batch={batch_id}")

    runner = foreach_batch(spark, upsert, warehouse="/data/wh", table="shop.orders",
                           consumer_id="orders-to-parquet")
    runner.await_termination()       # Ctrl-C stops it after the batch in flight

It drives the same :class:`~paimon_feed.spark.driver.StreamDriver` (planner, tracker,
:mod:`paimon_feed.progress`) as the ``paimon_feed`` Structured Streaming source, without a
``StreamingQuery``: one thread of the caller's process waits for a commit (pushed by inotify,
SQS or the polling notifier), plans the batch, and calls ``fn(df, batch_id)`` with a DataFrame
read in the executors (:mod:`paimon_feed.spark.frames`).

Guarantees:

- ``fn`` is called once per batch, in snapshot order; a batch never spans two table schemas,
  so after a schema change ``fn`` gets a DataFrame of the new schema. Snapshots that hold no
  rows (a compaction) advance the consumer without a call.
- Progress (the Paimon consumer file and its mark) is stored only after ``fn`` returns. The
  batch in flight when the process died comes again with the same ``batch_id`` and the same
  rows; ids only grow (:mod:`paimon_feed.spark.batch_log`). A sink that records the batch id
  is exactly-once.
- A following runner starts one Python worker per task slot before it waits for the first
  commit (one tiny job, :func:`~paimon_feed.spark.frames.warm_workers`), so that the first
  batches do not wait for workers to start.
- ``available_now=True`` reads what the table holds when it starts and returns. Otherwise the
  runner follows the table until :meth:`BatchRunner.stop` (the batch in flight finishes
  first), Ctrl-C in :meth:`BatchRunner.await_termination`, ``end``, or an error (raised by
  :meth:`BatchRunner.await_termination`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paimon_feed.errors import HistoryRewrittenError, SnapshotExpiredError
from paimon_feed.spark.batch_log import BatchLog, BatchRecord, next_batch_id
from paimon_feed.spark.options import SourceOptions, parse_options
from paimon_feed.spark.planning import RunnerPlanner

__all__ = ["foreach_batch", "BatchRunner", "RunnerMetrics"]

logger = logging.getLogger(__name__)

#: How long an idle runner sleeps at most between looks at its stop flag and the tracker.
_IDLE_WAIT_S = 60.0


@dataclass(frozen=True)
class RunnerMetrics:
    """What a runner did so far. ``lag_snapshots``: snapshots known but not yet handed to
    ``fn``; ``lag_ms``: for how long the runner has been behind (0 when caught up);
    ``next_snapshot_id``: the position stored after the last batch (``None`` before any)."""

    table: str
    consumer_id: str
    running: bool
    batches: int
    last_batch_id: int | None
    next_snapshot_id: int | None
    latest_known_snapshot_id: int | None
    lag_snapshots: int
    lag_ms: float
    notifier: str
    push_healthy: bool

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _option_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def session_parallelism(spark: Any) -> int | None:
    """The session's ``defaultParallelism`` (its task slots), or ``None`` where a session does
    not tell it (Spark Connect has no ``SparkContext``)."""
    try:
        context = spark.sparkContext
    except (AttributeError, NotImplementedError):  # Connect: PySparkNotImplementedError
        return None
    value = getattr(context, "defaultParallelism", None)
    return value if isinstance(value, int) and value > 0 else None


def foreach_batch(
    spark: Any,
    fn: Callable[[Any, int], Any],
    *,
    warehouse: str,
    table: str,
    consumer_id: str,
    start: str = "latest-full",
    end: int | None = None,
    available_now: bool = False,
    **options: Any,
) -> BatchRunner:
    """Call ``fn(df, batch_id)`` for each batch of ``table``'s changes (see the module docstring).

    ``options`` are the ``paimon_feed`` source's own options (``includeRowKind=True``,
    ``maxSnapshotsPerTrigger=10``, ``notifier="sqs"``, ...) and catalog options
    (``**{"catalog.fs.s3.endpoint": ...}``), with the same names and meanings, but for the
    default of ``minPartitions``: the session's ``defaultParallelism`` where it tells it. With
    ``available_now=True`` it returns when what the table held at the start was handed to
    ``fn``; otherwise it returns the running :class:`BatchRunner` at once.
    """
    raw = {key: _option_text(value) for key, value in options.items() if value is not None}
    raw.update(warehouse=warehouse, table=table, consumerId=consumer_id, startingPosition=start)
    parallelism = session_parallelism(spark)
    if parallelism is not None and not any(key.lower() == "minpartitions" for key in raw):
        raw["minPartitions"] = str(parallelism)
    if end is not None:
        raw["endSnapshot"] = str(end)
    runner = BatchRunner(spark, fn, parse_options(raw), available_now=available_now)
    runner.start()
    if available_now:
        runner.await_termination()
    return runner


class BatchRunner:
    """The handle of one ``foreach_batch`` run: :meth:`stop`, :meth:`await_termination`,
    :meth:`metrics`. Not a ``StreamingQuery``: the Spark UI shows its jobs, not the runner."""

    def __init__(
        self, spark: Any, fn: Callable[[Any, int], Any], options: SourceOptions, *, available_now: bool
    ) -> None:
        self.fn = fn
        self.available_now = available_now
        self._planner = RunnerPlanner(spark, options, follow=not available_now)
        self.table = self._planner.table_name
        self.consumer_id = options.consumer_id or ""
        self._log = BatchLog.for_driver(self._planner.driver)
        self._stopping = threading.Event()
        self._error: BaseException | None = None
        self._batches = 0
        self._last_batch_id: int | None = None
        self._next_snapshot_id: int | None = None
        self._behind_since: float | None = None
        self._thread: threading.Thread | None = None

    # lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the runner's thread (once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, name=f"paimon-feed-foreach-batch-{self.table}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the batch in flight (its ``fn`` call and progress) and release the
        runner's threads. Idempotent; from any thread but ``fn``'s own."""
        self._stopping.set()
        self._planner.interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def await_termination(self, timeout: float | None = None) -> bool:
        """Wait for the runner to end; ``False`` if still running after ``timeout`` seconds.
        Re-raises the error that ended it. Ctrl-C here stops the runner (after the batch in
        flight) and re-raises ``KeyboardInterrupt``."""
        thread = self._thread
        try:
            if thread is not None:
                thread.join(timeout)
        except KeyboardInterrupt:
            logger.warning("foreach_batch on %s: interrupted, stopping after the batch in flight", self.table)
            self.stop()
            raise
        if thread is not None and thread.is_alive():
            return False
        if self._error is not None:
            raise self._error
        return True

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> BatchRunner:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def metrics(self) -> RunnerMetrics:
        """Counters and lag, from memory (no storage call)."""
        stats = self._planner.driver.tracker.stats()
        latest = stats["known_latest_snapshot_id"]
        delivered = (self._next_snapshot_id or 1) - 1
        behind = self._behind_since
        return RunnerMetrics(
            table=self.table,
            consumer_id=self.consumer_id,
            running=self.running,
            batches=self._batches,
            last_batch_id=self._last_batch_id,
            next_snapshot_id=self._next_snapshot_id,
            latest_known_snapshot_id=latest,
            lag_snapshots=max(0, (latest or 0) - delivered),
            lag_ms=(time.monotonic() - behind) * 1000 if behind is not None else 0.0,
            notifier=str(stats["notifier"]),
            push_healthy=bool(stats["push_healthy"]),
        )

    # the loop ----------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # parked for await_termination, never lost
            self._error = exc
            logger.error("foreach_batch on %s stopped: %s", self.table, exc)
        finally:
            self._planner.close()

    def _loop(self) -> None:
        planner = self._planner
        position = planner.initial_position()
        record = self._log.load()
        self._last_batch_id = record.batch_id if record is not None else None
        in_flight = record is not None and record.continues(position) and not planner.restarted
        replay = record.end if in_flight and record is not None else None
        if replay is not None:
            logger.info(
                "foreach_batch on %s: batch %d was in flight when the last run stopped; it comes "
                "again", self.table, record.batch_id,  # type: ignore[union-attr]
            )
        target = planner.target() if self.available_now else None
        if not self.available_now:
            planner.warm()
        while not self._stopping.is_set():
            if position.pending_full_snapshot_id is None:
                self._next_snapshot_id = position.next_snapshot_id
            if planner.finished(position, target):
                return
            try:
                end = replay if replay is not None else planner.next_end(position)
            except HistoryRewrittenError as exc:
                position = planner.after_idle_rewrite(exc)
                continue
            if end == position:
                self._behind_since = None
                planner.wait(_IDLE_WAIT_S)
                continue
            if self._behind_since is None:
                self._behind_since = time.monotonic()
            try:
                planned = planner.plan(position, end)
            except SnapshotExpiredError as exc:
                position = planner.restart(exc)
                replay = None
                continue
            batch_id = (
                record.batch_id if replay is not None and record is not None
                else next_batch_id(planned.end, self._last_batch_id)
            )
            replay = None
            if planned.groups is not None:
                self._log.save(BatchRecord(batch_id, planned.end))
                self.fn(planner.frame(planned), batch_id)
                self._batches += 1
                self._last_batch_id = batch_id
            planner.commit(planned.end)
            position = planned.end

