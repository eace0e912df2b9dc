"""What the Spark source does on the driver and in executors, without PySpark types.

:class:`StreamDriver` is the stateful half of the streaming source. Spark keeps one instance per
running query, in the long-lived Python process that answers ``initialOffset``,
``latestOffset``, ``partitions`` and ``commit``; it owns the table, the :class:`Planner`, the
:class:`SnapshotTracker` (and through it the notifier thread) and the consumer checkpoint.
:func:`plan_batch` plans a bounded (batch) read, and :func:`read_splits` is the stateless
executor side: it rebuilds the table and reads the serialized splits of one partition.

Planning is deterministic: a micro-batch is planned from its end offset alone with
:meth:`Planner.full_batch` or :meth:`Planner.plan_range`, never from "whatever is latest", so a
restarted query re-reads a journaled batch identically.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa

from paimon_feed.batch import FeedBatch, SnapshotMark
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import (
    CheckpointError,
    FeedError,
    HistoryRewrittenError,
    InvalidStartError,
    SnapshotExpiredError,
)
from paimon_feed.planner import (
    Planner,
    _direct_read,
    _exact,
    _native_read,
    _read,
    _rows,
    _schemas,
)
from paimon_feed.planner.splits import (
    deserialize_split,
    divide_split,
    serialize_split,
    with_read_batch_rows,
)
from paimon_feed.progress import RETRY, Progress
from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import (
    DEFAULT_MAX_PARTITION_BYTES,
    DEFAULT_MIN_PARTITIONS,
    SourceOptions,
)
from paimon_feed.spark.schema import SNAPSHOT_ID_COLUMN, SchemaChangedError
from paimon_feed.spark.table import load_table
from paimon_feed.spark.tracker import SnapshotTracker, StorageCounter

__all__ = [
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

#: Each data file weighs at least this much when splits are packed into partitions (Spark's
#: ``spark.sql.files.openCostInBytes``), so many small files do not pile into one task.
OPEN_COST_BYTES = 4 * 1024 * 1024
#: Rows per Arrow batch handed to Spark (pypaimon's default, 1024, makes per-batch overhead
#: dominate); a table's own ``read.batch-size`` wins.
READ_BATCH_ROWS = 65536
_STATS_WRITE_INTERVAL_S = 0.5
_CONSUMER_CLOSE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SplitGroup:
    """The payload of one Spark partition: pypaimon splits in ``SplitSerializer`` v1 bytes.

    ``snapshot_ids`` holds, for each split, the snapshot whose changes it reads (for a full
    state, the snapshot it was read at). ``first_snapshot_id``/``last_snapshot_id``
    (inclusive) name the snapshots the splits came from, for logs and the Spark UI.
    ``schema_id`` is the table schema every split is read into: the query's, which is never
    older than the schema a split was written with. ``row_kinds`` is empty, or holds for each
    split ``None`` (a change read as it was written) or the row kind every row of the split's
    merged state gets (``-D``/``+I``: the rows an overwrite removed or added).
    """

    splits: tuple[bytes, ...]
    snapshot_ids: tuple[int, ...]
    first_snapshot_id: int
    kind: str
    schema_id: int = 0
    row_kinds: tuple[str | None, ...] = ()

    @property
    def last_snapshot_id(self) -> int:
        return self.snapshot_ids[-1]


def _weight(split: Any) -> int:
    return sum(max(f.file_size, OPEN_COST_BYTES) for f in split.files)


def pack_splits(
    table: Any,
    batches: Sequence[FeedBatch],
    *,
    min_partitions: int = DEFAULT_MIN_PARTITIONS,
    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES,
) -> list[SplitGroup]:
    """Serialize the batches' splits and pack them, in snapshot order, into partitions.

    Sized the way Spark sizes file partitions: at most ``max_partition_bytes`` each, less for
    small batches so that ``min_partitions`` tasks share the work (Spark divides by its default
    parallelism, which a Python source cannot see); large append-table splits are cut so their
    files are read in parallel. Primary-key splits stay whole (they are merged on read).
    """
    total = sum(_weight(split) for batch in batches for split, _ in _kinded_splits(batch))
    max_bytes = min(max_partition_bytes, max(OPEN_COST_BYTES, math.ceil(total / min_partitions)))
    schema_id = table.table_schema.id
    groups: list[SplitGroup] = []
    current: list[bytes] = []
    snapshot_ids: list[int] = []
    row_kinds: list[str | None] = []
    first = None
    kind = None
    size = 0

    def flush() -> None:
        nonlocal current, snapshot_ids, row_kinds, first, size
        if current:
            kinds = tuple(row_kinds) if any(row_kinds) else ()
            groups.append(SplitGroup(tuple(current), tuple(snapshot_ids), first, kind, schema_id, kinds))
        current, snapshot_ids, row_kinds, first, size = [], [], [], None, 0

    for batch in batches:
        for whole, row_kind in _kinded_splits(batch):
            for split in divide_split(table, whole, max_bytes, OPEN_COST_BYTES):
                weight = _weight(split)
                if current and size + weight > max_bytes:
                    flush()
                if first is None:
                    first = batch.first_snapshot_id
                kind = batch.kind
                current.append(serialize_split(split))
                snapshot_ids.append(batch.snapshot_id)
                row_kinds.append(row_kind)
                size += weight
    flush()
    return groups


def _kinded_splits(batch: FeedBatch) -> list[tuple[Any, str | None]]:
    """The splits of ``batch`` with the row kind their merged state is read as (overwrite
    batches: removed ``-D`` first, then added ``+I``), or ``None`` for a plain change read."""
    if batch.kind == "overwrite":
        return [(s, "-D") for s in batch.removed_splits] + [(s, "+I") for s in batch.splits]
    return [(s, None) for s in batch.splits]


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


def read_splits(
    options: SourceOptions, group: SplitGroup, conform: Any = None
) -> Iterator[Any]:
    """Read one partition's splits as Arrow record batches (executor side, stateless).

    With ``includeSnapshotId`` each batch gets a ``_snapshot_id`` column: splits are read in
    runs of one snapshot each. ``conform`` maps each batch to what the caller needs (Spark's
    Arrow schema).
    """
    latest = load_table(options)
    table = _schemas.table_at_schema(latest, group.schema_id) or latest
    table = _exact.readable_table(with_read_batch_rows(table, READ_BATCH_ROWS))
    chars = _exact.char_columns(table)[0]
    splits = [deserialize_split(data, table) for data in group.splits]
    read = table.new_stream_read_builder().with_include_row_kind(options.include_row_kind).new_read()
    row_kinds = group.row_kinds or (None,) * len(splits)
    keys = group.snapshot_ids if options.include_snapshot_id else (None,) * len(splits)
    runs = [
        (key, [split for _, split in run])
        for key, run in itertools.groupby(
            zip(zip(keys, row_kinds, strict=True), splits, strict=True), key=lambda pair: pair[0]
        )
    ]
    target = read.to_arrow([]).schema
    # Merged state (full batches, overwrites) with pypaimon-rust where it is exact, per split.
    natives = _NativeReads(table, options.include_row_kind)
    for (snapshot_id, row_kind), snapshot_splits in runs:
        # ORC pads CHAR(n) and Java's reader trims it: runs of all-ORC splits are trimmed
        for orc, run_splits in (
            _exact.orc_runs(snapshot_splits, options.table) if chars else [(False, snapshot_splits)]
        ):
            yield from _read_run(
                table, read, run_splits, row_kind, snapshot_id, options, target,
                chars if orc else (), conform, natives,
            )


class _NativeReads:
    """The partition's native readers (``planner._native_read``), built on first use: one for
    change reads (row kinds from the merge), one per row kind a state is read as."""

    def __init__(self, table: Any, include_row_kind: bool) -> None:
        self._table = table
        self._include_row_kind = include_row_kind
        self._readers: dict[str | None, Any] = {}
        self._state_target: Any = None

    def get(self, row_kind: str | None) -> Any:
        if row_kind not in self._readers:
            kind = row_kind if row_kind is not None else (
                _native_read.ROW_KIND_FROM_MERGE if self._include_row_kind else None
            )
            self._readers[row_kind] = _native_read.NativeRead.for_table(self._table, None, kind)
        return self._readers[row_kind]

    def state_target(self) -> Any:
        """The schema of :func:`_read.read_state`'s batches."""
        if self._state_target is None:
            schema = self._table.new_read_builder().new_read().to_arrow([]).schema
            self._state_target = pa.schema([pa.field(_rows.ROW_KIND_COLUMN, pa.string()), *schema])
        return self._state_target


def _read_run(
    table: Any, read: Any, run_splits: list, row_kind: str | None, snapshot_id: int | None,
    options: SourceOptions, target: Any, chars: Any, conform: Any, natives: _NativeReads,
) -> Iterator[Any]:
    native = natives.get(row_kind)
    if row_kind is not None:
        state = functools.partial(_read.read_state, table, row_kind=row_kind)
        batches = (
            native.read(run_splits, natives.state_target(), state)
            if native is not None else state(run_splits)
        )
    else:  # plain append files straight from pyarrow where provably identical
        batches = _direct_read.direct_batches(table, run_splits, options.include_row_kind, target)
        if batches is None and native is not None:
            batches = native.read(run_splits, target, read.to_arrow_batch_reader)
        if batches is None:
            batches = read.to_arrow_batch_reader(run_splits)
    for batch in batches:
        if not batch.num_rows:
            continue
        if chars:
            batch = _exact.strip_char_padding(batch, chars)
        if snapshot_id is not None:
            ids = pa.repeat(pa.scalar(snapshot_id, pa.int64()), batch.num_rows)
            batch = batch.append_column(pa.field(SNAPSHOT_ID_COLUMN, pa.int64(), False), ids)
        yield conform(batch) if conform is not None else batch


class ConsumerFileWriter:
    """Writes a query's consumer file off Spark's critical path.

    The driver learns that micro-batch N completed when Spark asks for batch N+1's end offset,
    between batches, so a write there (a PUT on S3) would delay every micro-batch. Here
    :meth:`submit` only records the position, and one thread writes the newest position
    submitted: the file only ever holds positions Spark committed (it never leads), and
    commits that come while a write is in flight cost one write. A failed write is logged and
    retried with the next position; :meth:`close` writes what is still unwritten (once).
    """

    def __init__(self, store: CheckpointStore, table_name: str) -> None:
        self._store = store
        self._table_name = table_name
        self._changed = threading.Condition()
        self._wanted: int | None = None
        self._wanted_mark: SnapshotMark | None = None
        self._submitted = 0  # submissions so far; the writer handles each count once
        self._handled = 0
        self._closing = False
        self._writing = False
        self._retried_at_close = False
        self.written: int | None = None  # the position last written successfully
        self._thread = threading.Thread(
            target=self._run, name=f"paimon-feed-consumer-{store.consumer_id}", daemon=True
        )
        self._thread.start()

    def submit(self, next_snapshot_id: int, mark: SnapshotMark | None = None) -> None:
        with self._changed:
            self._wanted = next_snapshot_id
            self._wanted_mark = mark
            self._submitted += 1
            self._changed.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until every submitted position was handled (written, or failed and left for
        the next one); ``False`` if that took longer than ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._handled == self._submitted and not self._writing, timeout
            )

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._closing or self._submitted != self._handled)
                new = self._submitted != self._handled
                if not new and (self._wanted is None or self._wanted == self.written):
                    return  # closing, everything written
                target, self._handled, last = self._wanted, self._submitted, self._closing
                mark = self._wanted_mark
                self._writing = True
            try:
                self._store.save(target)
                if mark is not None and mark.snapshot_id == target - 1:
                    self._store.save_mark(target, mark)
                self.written = target
            except CheckpointError as exc:
                # Spark's checkpoint has the progress; the consumer file only protects unread
                # snapshots from expiry, and the next commit (or close) writes it again.
                logger.warning("%s; retrying at the next commit", exc)
                if last:
                    if self._retried_at_close:
                        return
                    self._retried_at_close = True
            finally:
                with self._changed:
                    self._writing = False
                    self._changed.notify_all()

    def close(self) -> None:
        """Write what is pending, then stop. Idempotent."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join(_CONSUMER_CLOSE_TIMEOUT_S)
        if self._thread.is_alive():
            logger.warning(
                "table %s: the consumer file write still runs after %.0fs; the file may trail "
                "the query by more than one micro-batch", self._table_name, _CONSUMER_CLOSE_TIMEOUT_S,
            )


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
        self.counter = StorageCounter()
        self.table = load_table(options)
        self.counter.instrument(self.table.file_io)
        self.planner = Planner(
            self.table, include_row_kind=options.include_row_kind, overwrite=options.overwrite
        )
        if self.planner.files.one_request:  # its S3 requests do not go through the FileIO
            self.counter.instrument(self.planner.files, methods=("read", "exists"))
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
            counter=self.counter,
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
        self._stats_written_at = 0.0
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
        try:
            end = self._next_end(start, max_snapshots)
        finally:
            self._maybe_write_stats()
        if end == start and self._consumer_writer is not None:
            # Nothing new, so no micro-batch waits: finish the write now. Spark may end the
            # query after this answer (an AvailableNow run ends here) and stops this worker
            # without waiting for a background write.
            self._consumer_writer.flush(_CONSUMER_CLOSE_TIMEOUT_S)
        return end

    def _next_end(self, start: FeedOffset, max_snapshots: int | None) -> FeedOffset:
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
            return start
        return start.after_changes(last, self._digest(last))

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
        check_schema(self.table_name, self.table.table_schema, batches)
        return _pack(self.options, self.table, batches)

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
        self._maybe_write_stats(force=True)

    # diagnostics and shutdown ------------------------------------------------------------
    def stats(self) -> dict:
        stats = self.tracker.stats()
        stats["table"] = self.table_name
        stats["committed_next_snapshot_id"] = self._committed_next
        writer = self._consumer_writer
        stats["consumer_file_next_snapshot_id"] = writer.written if writer is not None else None
        return stats

    def _maybe_write_stats(self, force: bool = False) -> None:
        path = self.options.stats_path
        if not path:
            return
        now = time.monotonic()
        if force or now - self._stats_written_at >= _STATS_WRITE_INTERVAL_S:
            self._stats_written_at = now
            try:
                self.tracker.write_stats(path, self.stats())
            except OSError as exc:  # diagnostics must never fail a query
                logger.warning("cannot write paimon_feed stats to %s: %s", path, exc)

    def close(self) -> None:
        """Stop the notifier. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._consumer_writer is not None:
            self._consumer_writer.close()
        self._maybe_write_stats(force=True)
        self.tracker.close()
        logger.info("paimon_feed source for %s stopped", self.table_name)

