"""The ``foreach_batch`` runner's side of the shared :class:`~paimon_feed.spark.driver.StreamDriver`.

:class:`RunnerPlanner` asks the driver what the Structured Streaming source asks it (where to
start, the end of the next batch, the batch's planned :class:`~paimon_feed.batch.FeedBatch`
values), and adds what a runner without Spark's streaming engine needs: a blocking wait for
the next commit, a cut at each schema change (a batch never spans two schemas: the source
stops there instead, the runner hands ``fn`` a DataFrame of the new schema), and progress
stored through :mod:`paimon_feed.progress` when ``fn`` returned. Who reads a batch's rows
(this project's executors or Paimon's connector) is the ``reader`` option's choice
(:mod:`paimon_feed.spark.handoff`), made once per run.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paimon_feed.batch import FeedBatch
from paimon_feed.errors import HistoryRewrittenError, SnapshotExpiredError
from paimon_feed.planner.schemas import schema_fields
from paimon_feed.progress import RETRY
from paimon_feed.spark.driver import StreamDriver
from paimon_feed.spark.frames import batch_frame, task_slots, warm_workers
from paimon_feed.spark.handoff import ConnectorRead, ReaderChoice, choose_reader, connector_frame, connector_reads
from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import SourceOptions
from paimon_feed.spark.partitions import SplitGroup, pack_splits, table_token
from paimon_feed.spark.schema import spark_schema

__all__ = ["RunnerPlanner", "Planned", "runner_options"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Planned:
    """One batch for ``fn``: it ends at ``end``; ``groups`` is ``None`` when its snapshots hold
    no rows to read (a compaction): then nothing is called, only progress moves.
    ``connector``: the reads that hand the batch to Paimon's connector (``reader``), if any;
    then ``groups`` is empty (the connector plans its own splits)."""

    end: FeedOffset
    groups: Sequence[SplitGroup] | None
    schema_id: int
    connector: tuple[ConnectorRead, ...] | None = None


def runner_options(options: SourceOptions, table_url: str, follow: bool) -> SourceOptions:
    """The options the runner's driver runs with: ``notifier=auto`` on a local file system is
    inotify (the source checks on every trigger there, because Spark calls it in a loop; the
    runner waits instead, so it needs to be woken)."""
    from paimon_feed.spark.tracker import tracking_mode

    if follow and options.notifier == "auto" and tracking_mode("auto", table_url) != "auto":
        return dataclasses.replace(options, notifier="local")
    return options


class RunnerPlanner:
    """Plans the runner's batches with a :class:`StreamDriver` (see the module docstring)."""

    def __init__(self, spark: Any, options: SourceOptions, *, follow: bool) -> None:
        from paimon_feed.spark.table import load_schema

        _, table_url = load_schema(options)  # a wrong table or warehouse fails here, named
        self.spark = spark
        self.table_url = table_url
        self.options = runner_options(options, table_url, follow)
        self.driver = StreamDriver(self.options, follow=follow)
        self.table_name = self.driver.table_name
        try:
            self.reader: ReaderChoice = choose_reader(spark, self.options, self.driver.table, table_url)
        except BaseException:
            self.driver.close()
            raise
        logger.info("foreach_batch on %s: batches read by %s (%s)", self.table_name,
                    self.reader.reader, self.reader.reason)
        self._refusals: set[str] = set()

    # where and when ------------------------------------------------------------------------
    def initial_position(self) -> FeedOffset:
        return self.driver.initial_offset()

    @property
    def restarted(self) -> bool:
        """Whether ``on_expired``/``on_history_rewritten`` restarted the consumer elsewhere."""
        progress = self.driver.progress
        return progress.expired_restarts + progress.history_rewrites > 0

    def target(self) -> int:
        """The last snapshot of an ``available_now`` run: the latest one now."""
        return self.driver.prepare_available_now()

    def finished(self, position: FeedOffset, target: int | None) -> bool:
        """Whether nothing is left before ``end`` (or the ``available_now`` target)."""
        if position.pending_full_snapshot_id is not None:
            return False
        limits = [x for x in (target, self.options.end_snapshot) if x is not None]
        return bool(limits) and position.next_snapshot_id > min(limits)

    def next_end(self, position: FeedOffset) -> FeedOffset:
        return self.driver.next_end(position, self.options.max_snapshots_per_trigger)

    def wait(self, timeout: float) -> None:
        self.driver.tracker.wait(timeout)

    def interrupt(self) -> None:
        self.driver.tracker.interrupt()

    def warm(self) -> None:
        """Start a Python worker per task slot before the first commit comes (see
        :func:`~paimon_feed.spark.frames.warm_workers`): a following runner's first batches
        would otherwise pay for them, and every commit queued behind them."""
        started = time.monotonic()
        slots = task_slots(self.spark, self.options.min_partitions)
        schema_id = self.driver.table.table_schema.id
        frame_schema = self._frame_schema(schema_id)
        warm_workers(self.spark, self.options, frame_schema, schema_id, slots, table_token(self.driver.table))
        logger.info("foreach_batch on %s: %d Python workers warmed in %.1f s",
                    self.table_name, slots, time.monotonic() - started)

    # planning ------------------------------------------------------------------------------
    def plan(self, position: FeedOffset, end: FeedOffset) -> Planned:
        """The batch from ``position`` to ``end``, cut before the first snapshot of another
        schema (the rest is the next batch)."""
        batches = self.driver.plan_batches(position, end)
        if not batches:
            return Planned(end, None, self.driver.table.table_schema.id)
        schema_id = batches[0].schema_id
        other = next((b for b in batches if b.schema_id != schema_id), None)
        if other is not None and end.change_range is not None:
            last = other.first_snapshot_id - 1
            mark = self.driver.planner.snapshot_mark(last)
            end = position.after_changes(last, mark.digest() if mark is not None else None)
            batches = [b for b in batches if b.snapshot_id <= last]
        reads = self._hand_off(batches, schema_id)
        if reads is not None:  # the connector plans its own splits
            return Planned(end, (), schema_id, reads)
        return Planned(end, self._pack(batches, schema_id), schema_id)

    def _hand_off(self, batches: Sequence[FeedBatch], schema_id: int) -> tuple[ConnectorRead, ...] | None:
        """The connector reads of the batch when the connector reads this table and can give
        exactly its rows; otherwise ``None``, the reason logged once per kind of batch."""
        if self.reader.reader != "connector":
            return None
        reads = connector_reads(batches, schema_id, self.driver.table)
        if isinstance(reads, str):
            shape = reads.split(":")[0]
            if shape not in self._refusals:
                self._refusals.add(shape)
                logger.info("foreach_batch on %s: this batch is read by paimon-feed's executors, "
                            "not handed to Paimon's connector: %s", self.table_name, reads)
            return None
        return tuple(reads)

    def _pack(self, batches: Sequence[FeedBatch], schema_id: int) -> list[SplitGroup]:
        groups = pack_splits(
            self.driver.table,
            batches,
            min_partitions=self.options.min_partitions,
            max_partition_bytes=self.options.max_partition_bytes,
        )
        return [dataclasses.replace(group, schema_id=schema_id) for group in groups]

    def frame(self, planned: Planned) -> Any:
        """The DataFrame of a planned batch, in the schema its snapshots were written with."""
        schema = self._frame_schema(planned.schema_id)
        if planned.connector:
            return connector_frame(self.spark, self.table_url, planned.connector, schema,
                                   self.options.include_snapshot_id)
        return batch_frame(self.spark, self.options, planned.groups or (), schema)

    def _frame_schema(self, schema_id: int) -> Any:
        fields = schema_fields(self.driver.table, schema_id)
        return spark_schema(
            self.table_name,
            fields,
            include_row_kind=self.options.include_row_kind,
            include_snapshot_id=self.options.include_snapshot_id,
        )

    # progress ------------------------------------------------------------------------------
    def commit(self, end: FeedOffset) -> None:
        """``fn`` returned: store the consumer's position after ``end`` and its mark."""
        next_id = end.next_snapshot_id
        planner, progress = self.driver.planner, self.driver.progress
        mark = RETRY.call(lambda: planner.snapshot_mark(next_id - 1), self.table_name) if next_id > 1 else None
        RETRY.call(lambda: progress.commit(next_id, mark), self.table_name)

    def after_idle_rewrite(self, exc: HistoryRewrittenError) -> FeedOffset:
        """Where to go on after :meth:`next_end` found, with nothing new, that the commit before
        the position is another now: the driver applied ``on_history_rewritten`` already (the
        source cannot restart there, its offsets cannot go back); the runner can, at the table's
        full state now. Re-raises ``exc`` under ``error``."""
        if self.options.on_history_rewritten != "latest-full":
            raise exc
        latest = self.driver.planner.latest_snapshot_id()
        return FeedOffset.pending_full(latest) if latest is not None else FeedOffset.position(1)

    def restart(self, exc: SnapshotExpiredError | HistoryRewrittenError) -> FeedOffset:
        """Where ``on_expired``/``on_history_rewritten`` restart (or ``exc`` raised)."""
        resumed = self.driver.progress.restart_point(exc)
        if resumed.full_snapshot_id is not None:
            return FeedOffset.pending_full(resumed.full_snapshot_id)
        return FeedOffset.position(resumed.next_snapshot_id)

    def close(self) -> None:
        self.driver.close()
