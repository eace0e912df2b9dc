"""What the Spark source does on the driver and in executors, without PySpark types.

:class:`StreamDriver` is the stateful half of the streaming source. Spark keeps one instance per
running query, in the long-lived Python process that answers ``initialOffset``,
``latestOffset``, ``partitions`` and ``commit``; it owns the table, the :class:`Planner`, the
:class:`SnapshotTracker` (and through it the notifier thread) and the consumer checkpoint.
:func:`plan_batch` plans a bounded (batch) read, and :func:`read_splits` is the stateless
executor side (in :mod:`paimon_feed.spark.partitions`, re-exported here with
:class:`SplitGroup`, :func:`pack_splits` and :class:`ConsumerFileWriter`).

Planning is deterministic: a micro-batch is planned from its end offset alone with
:meth:`Planner.full_batch` or :meth:`Planner.plan_range`, never from "whatever is latest", so a
restarted query re-reads a journaled batch identically.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Sequence
from typing import Any

from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import (
    ConfigurationError,
    FeedError,
    HistoryRewrittenError,
    InvalidStartError,
    SnapshotExpiredError,
)
from paimon_feed.planner import Planner
from paimon_feed.progress import RETRY, Progress
from paimon_feed.spark.consumer_file import CONSUMER_CLOSE_TIMEOUT_S, ConsumerFileWriter
from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import SourceOptions
from paimon_feed.spark.partitions import (
    OPEN_COST_BYTES,
    READ_BATCH_ROWS,
    SplitGroup,
    pack_splits,
    read_splits,
)
from paimon_feed.spark.schema import SchemaChangedError
from paimon_feed.spark.table import load_table
from paimon_feed.spark.tracker import SnapshotTracker

__all__ = [
    "DRIVER_HOOK_ENV",
    "ConsumerFileWriter",
    "SplitGroup",
    "StreamDriver",
    "load_table",
    "plan_batch",
    "pack_splits",
    "read_splits",
    "OPEN_COST_BYTES",
    "READ_BATCH_ROWS",
]

logger = logging.getLogger(__name__)

#: Names a ``module:function`` that every new :class:`StreamDriver` calls with itself, once its
#: ``table`` and ``planner`` exist and before its tracker first looks at storage. A place for
#: measurement outside the product: ``benchmarks/_common/spark_stats.py`` counts the driver's
#: storage calls and writes :meth:`StreamDriver.stats` to a file from there. Unset or blank:
#: nothing is called. Spark's Python workers inherit it from the environment (or from
#: ``spark.executorEnv.*``).
DRIVER_HOOK_ENV = "PAIMON_FEED_SPARK_DRIVER_HOOK"


def _driver_hook() -> Any:
    spec = os.environ.get(DRIVER_HOOK_ENV, "").strip()
    if not spec:
        return None
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name or "install")
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"{DRIVER_HOOK_ENV}={spec!r}: cannot load the driver hook ({exc}); give an "
            f"importable 'module:function' or unset it"
        ) from exc


def check_schema(table_name: str, query_schema: Any, batches: Sequence[FeedBatch]) -> None:
    """Raise :class:`SchemaChangedError` if a batch was written with a newer schema than the
    query's: Structured Streaming fixes a query's schema when it starts."""
    for batch in batches:
        if batch.schema_id > query_schema.id:
            old = ", ".join(f"{f.name} {f.type}" for f in query_schema.fields)
            new = ", ".join(f"{f.name}: {f.type}" for f in batch.schema) if batch.schema else "?"
            raise SchemaChangedError(
                f"table {table_name}: snapshot {batch.snapshot_id} was committed with schema "
                f"{batch.schema_id} ({new}), but this query reads schema {query_schema.id} "
                f"({old}). A streaming query's schema is fixed when it starts, so it stops here, "
                f"before reading anything of the new schema. Restart the query: it resumes "
                f"from its checkpoint exactly where it stopped, with the new schema"
            )


def _pack(options: SourceOptions, table: Any, batches: Sequence[FeedBatch]) -> list[SplitGroup]:
    return pack_splits(
        table,
        batches,
        min_partitions=options.min_partitions,
        max_partition_bytes=options.max_partition_bytes,
    )


def plan_batch(options: SourceOptions) -> list[SplitGroup]:
    """Plan a bounded read: the full state (``latest-full``, the default) or a snapshot range.

    With ``endSnapshot`` the full state is taken at that snapshot and a change range ends there;
    without it, at the latest snapshot.
    """
    table = load_table(options)
    planner = Planner(table, include_row_kind=options.include_row_kind, overwrite=options.overwrite)
    resolution = _resolve(planner, options)
    if resolution is None:
        return []
    if resolution.full_snapshot_id is not None:
        return _pack(options, table, [planner.full_batch(resolution.full_snapshot_id)])
    latest = planner.latest_snapshot_id()
    last = options.end_snapshot if options.end_snapshot is not None else latest
    if options.end_snapshot is not None and (latest is None or options.end_snapshot > latest):
        raise InvalidStartError(
            f"option endSnapshot: table {planner.table_name} has no snapshot "
            f"{options.end_snapshot} yet (latest: {latest}); a batch read ends at an existing "
            f"snapshot"
        )
    if last is None or last < resolution.next_snapshot_id:
        return []
    return _pack(options, table, planner.plan_range(resolution.next_snapshot_id, last))


def _resolve(planner: Planner, options: SourceOptions):
    try:
        return planner.resolve_start(options.starting_position, options.end_snapshot)
    except InvalidStartError as exc:
        raise InvalidStartError(f"option startingPosition/endSnapshot: {exc}") from exc


class StreamDriver:
    """The driver side of one streaming query (see the module docstring).

    Spark's checkpoint is the source of truth for restarts: after the first micro-batch it
    always passes back the offsets it journaled. ``consumerId`` matters twice: a new query
    (no Spark checkpoint) starts at the consumer's stored position if there is one, and every
    Spark commit writes the consumer file so Paimon's snapshot expiration keeps the snapshots
    the query has not read yet.
    """

    def __init__(self, options: SourceOptions, *, follow: bool = True) -> None:
        """``follow=False`` starts no notifier: for ``Trigger.AvailableNow``, which reads up to
        a target fixed at start and never needs to hear of later commits."""
        self.options = options
        self.table = load_table(options)
        self.planner = Planner(
            self.table, include_row_kind=options.include_row_kind, overwrite=options.overwrite
        )
        hook = _driver_hook()
        if hook is not None:
            hook(self)
        self.table_name = self.planner.table_name
        self.checkpoint = (
            CheckpointStore.for_table(self.table, options.consumer_id)
            if options.consumer_id
            else None
        )
        self.tracker = SnapshotTracker(
            self.table,
            self.planner.table_url,
            notifier=options.notifier if follow else None,
            reconcile_interval=options.reconcile_interval,
            poll_interval=options.poll_interval,
            sqs_queue_url=options.queue_url,
            files=self.planner.files,
        )
        self.progress = Progress(
            self.planner, self.checkpoint, end=options.end_snapshot,
            on_expired=options.on_expired,  # type: ignore[arg-type]
            on_history_rewritten=options.on_history_rewritten,  # type: ignore[arg-type]
        )
        self.tracker.start()
        self._available_now_target: int | None = None
        self._committed_next: int | None = None
        self._consumer_writer: ConsumerFileWriter | None = None
        self._closed = False
        logger.info(
            "paimon_feed source for %s started (notifier=%s, start=%s, end=%s, consumer=%s)",
            self.table_name, self.tracker.stats()["notifier"], options.starting_position,
            options.end_snapshot, options.consumer_id,
        )

    # offsets -----------------------------------------------------------------------------
    def initial_offset(self) -> FeedOffset:
        """Where a new query starts: the consumer's checkpoint if stored (checked against the
        table, see :mod:`paimon_feed.progress`), else the start spec. An expired checkpoint or
        a rewritten history raises, or restarts as ``onExpired``/``onHistoryRewritten`` say."""
        try:
            resumed = self._retrying(
                lambda: self.progress.resume(
                    self.options.starting_position, self.options.end_snapshot
                )
            )
        except InvalidStartError as exc:
            raise InvalidStartError(f"option startingPosition/endSnapshot: {exc}") from exc
        except (SnapshotExpiredError, HistoryRewrittenError) as exc:
            resumed = self.progress.restart_point(exc)
        if resumed is None:  # latest-full on an empty table: every change from the first
            return FeedOffset.position(1)
        if resumed.from_checkpoint:
            logger.info(
                "paimon_feed source for %s resumes consumer %s at snapshot %d",
                self.table_name, self.options.consumer_id, resumed.next_snapshot_id,
            )
        if resumed.full_snapshot_id is not None:
            return FeedOffset.pending_full(resumed.full_snapshot_id)
        anchor = self.progress.anchor
        return FeedOffset.position(resumed.next_snapshot_id, anchor.digest() if anchor else None)

    def latest_offset(self, start: FeedOffset, max_snapshots: int | None) -> FeedOffset:
        """The end of the next micro-batch from ``start`` (``start`` itself if nothing new).

        Answers from the tracker's memory; storage is touched only after a hint or when the
        safety interval elapsed. ``max_snapshots`` caps the snapshot ids per batch; a pending
        full state is always a batch of its own.
        """
        # Spark asks for the next batch's end only after the batch ending at ``start`` ran and
        # its commit log entry was written (a restarted query re-runs an uncommitted batch
        # without asking), so ``start`` is processed. Its own ``commit(start)`` comes a batch
        # later, when the next batch is journaled, and never for the last batch of a
        # ``Trigger.AvailableNow`` run: waiting for it left the consumer file a batch behind.
        self._processed(start)
        end = self.next_end(start, max_snapshots)
        if end == start and self._consumer_writer is not None:
            # Nothing new, so no micro-batch waits: finish the write now. Spark may end the
            # query after this answer (an AvailableNow run ends here) and stops this worker
            # without waiting for a background write.
            self._consumer_writer.flush(CONSUMER_CLOSE_TIMEOUT_S)
        return end

    def next_end(self, start: FeedOffset, max_snapshots: int | None) -> FeedOffset:
        """The end of the next batch from ``start`` (``start`` itself if nothing new), from the
        tracker's memory; unlike :meth:`latest_offset` it records no progress."""
        if start.pending_full_snapshot_id is not None:
            return start.after_full(self._digest(start.pending_full_snapshot_id))
        first = start.next_snapshot_id
        if self._available_now_target is not None:
            last = self._available_now_target  # fixed at start: no storage call needed
        else:
            last = self.tracker.latest() or 0
        if self.options.end_snapshot is not None:
            last = min(last, self.options.end_snapshot)
        if max_snapshots is not None:
            last = min(last, first + max_snapshots - 1)
        if last < first:
            self._check_unchanged(start)
            return start
        return start.after_changes(last, self._digest(last))

    def _check_unchanged(self, start: FeedOffset) -> None:
        """Nothing new: after a storage check, compare the commit before ``start`` (a table
        dropped and re-created with a single commit writes nothing past it, and would otherwise
        stall the query silently). Raises :class:`HistoryRewrittenError`: the offsets cannot
        go back to a shorter table, so ``onHistoryRewritten=latest-full`` cannot restart here
        either."""
        first = start.next_snapshot_id
        if start.mark is None or first <= 1 or not self.tracker.history_check_due():
            return
        mark = start.mark
        try:
            self._retrying(lambda: self.progress.check_digest(first - 1, mark))
        except HistoryRewrittenError as exc:
            self.progress.restart_point(exc)  # raises unless the policy restarts
            raise HistoryRewrittenError(
                self.table_name, exc.snapshot_id,
                f"{exc.change}; this query's offsets go on after snapshot {first - 1}, so it "
                f"cannot restart on the table as it is now: start a new checkpoint location",
            ) from exc

    def _digest(self, snapshot_id: int) -> str | None:
        """The digest of snapshot ``snapshot_id``'s commit, for the offset ending after it (the
        read is cached: planning the batch takes the snapshot from there)."""
        mark = self._retrying(lambda: self.planner.snapshot_mark(snapshot_id))
        return mark.digest() if mark is not None else None

    def latest_known_offset(self) -> FeedOffset | None:
        """The newest position known in memory (for Spark's progress reports; no storage)."""
        known = self.tracker.known_latest
        return FeedOffset.position(known + 1) if known is not None else None

    def prepare_available_now(self) -> int:
        """Fix the target of a ``Trigger.AvailableNow`` run: the latest snapshot right now."""
        self._available_now_target = self.tracker.refresh() or 0
        logger.info(
            "paimon_feed source for %s: Trigger.AvailableNow reads up to snapshot %d",
            self.table_name, self._available_now_target,
        )
        return self._available_now_target

    # planning ----------------------------------------------------------------------------
    def plan(self, start: FeedOffset, end: FeedOffset) -> list[SplitGroup]:
        """The partitions of the micro-batch ending at ``end``.

        Planned from ``end`` alone (see :mod:`paimon_feed.spark.offsets`): the full state at
        ``end.full``, or the changes of ``end.first..end.snapshot-1``.
        """
        batches = self.plan_batches(start, end)
        check_schema(self.table_name, self.table.table_schema, batches)
        return _pack(self.options, self.table, batches)

    def plan_batches(self, start: FeedOffset, end: FeedOffset) -> list[FeedBatch]:
        """The :class:`FeedBatch` values of the batch from ``start`` to ``end`` (see
        :meth:`plan`), with the history checked; not yet packed into partitions."""
        if start == end:
            return []
        if end.full_snapshot_id is not None:
            full = end.full_snapshot_id
            batches = self._retrying(lambda: [self.planner.full_batch(full)])
        elif end.change_range is not None:
            first, last = end.change_range
            if first != start.next_snapshot_id:
                logger.info(
                    "paimon_feed source for %s: replaying journaled batch %d..%d (start offset "
                    "%s was recomputed)", self.table_name, first, last, start.to_json(),
                )
            batches = self._retrying(lambda: self.planner.plan_range(first, last))
            try:
                self._check_history(start, end, first, last)
            except HistoryRewrittenError as exc:
                batches = self._restart(exc, last)
        else:
            return []
        return batches

    def _check_history(self, start: FeedOffset, end: FeedOffset, first: int, last: int) -> None:
        """Raise :class:`HistoryRewrittenError` if the range does not continue what the query
        read: the commit before it is another now (checked with a fresh read), or, for a
        journaled batch planned again, its last snapshot is another commit than it was."""
        if start.mark is not None and start.next_snapshot_id == first and first > 1:
            self._retrying(lambda: self.progress.check_digest(first - 1, start.mark))
        if end.mark is not None:
            planned = self._retrying(lambda: self.planner.snapshot_mark(last))
            if planned is not None and planned.digest() != end.mark:
                raise HistoryRewrittenError(
                    self.table_name, first - 1,
                    f"snapshots {first}..{last} of the journaled micro-batch are other commits "
                    f"now than when it was planned",
                )

    def _restart(self, exc: HistoryRewrittenError, last: int) -> list[FeedBatch]:
        """``onHistoryRewritten=latest-full``: the micro-batch becomes the full state at its
        last snapshot (the offsets go on after it); ``error``: the query stops with ``exc``."""
        self.progress.restart_point(exc)  # raises unless the policy restarts
        if self._retrying(lambda: self.planner.snapshot_mark(last)) is None:
            raise HistoryRewrittenError(
                self.table_name, exc.snapshot_id,
                f"{exc.change}; the table now ends before snapshot {last}, where this query's "
                f"journaled offsets go on, so it cannot restart there: start a new checkpoint "
                f"location",
            ) from exc
        return [self._retrying(lambda: self.planner.full_batch(last))]

    def _retrying(self, call):
        """``call()``, retried after transient storage errors as every entry point does
        (:data:`paimon_feed.progress.RETRY`)."""
        return RETRY.call(call, self.table_name)

    def commit(self, end: FeedOffset) -> None:
        """Spark processed everything up to ``end``: advance the consumer file (if any), in the
        background (:class:`ConsumerFileWriter`).

        Usually a no-op by now: :meth:`latest_offset` already advanced the file to ``end``
        when Spark asked for the batch after it."""
        self._processed(end)

    def _processed(self, end: FeedOffset) -> None:
        """Record that Spark processed everything before ``end``; positions only move forward."""
        if end.pending_full_snapshot_id is not None:
            return  # an initial offset: nothing was processed yet
        target = end.next_snapshot_id
        if self._committed_next is not None and target <= self._committed_next:
            return
        if self.checkpoint is not None:
            if self._consumer_writer is None:
                self._consumer_writer = ConsumerFileWriter(self.checkpoint, self.table_name)
            try:  # the mark of the commit before the position, for a restart's check
                mark = self.planner.snapshot_mark(target - 1) if target > 1 else None
            except FeedError as exc:
                logger.warning("%s; the consumer's mark is not updated", exc)
                mark = None
            self._consumer_writer.submit(target, mark)
        self._committed_next = target

    # diagnostics and shutdown ------------------------------------------------------------
    def stats(self) -> dict:
        """The tracker's counters with the query's positions (JSON-ready, no storage call)."""
        stats = self.tracker.stats()
        stats["table"] = self.table_name
        stats["committed_next_snapshot_id"] = self._committed_next
        writer = self._consumer_writer
        stats["consumer_file_next_snapshot_id"] = writer.written if writer is not None else None
        return stats

    def close(self) -> None:
        """Stop the notifier. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._consumer_writer is not None:
            self._consumer_writer.close()
        self.tracker.close()
        logger.info("paimon_feed source for %s stopped", self.table_name)

