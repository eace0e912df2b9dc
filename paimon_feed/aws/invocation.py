"""One Lambda invocation: route the event's hints to tables, catch each table up, report.

:func:`handle_event` parses the event (:mod:`paimon_feed.notifiers.events`), maps each hinted
table URL to a ``db.table`` of the configured warehouse, and delivers every batch of each table
from its checkpoint to the newest snapshot on the consumer protocol every entry point shares
(:class:`~paimon_feed.progress.Progress`). Each table ends with a :class:`TableOutcome`; the
failed ones decide which SQS messages are reported as failed, and the invocation ends with one
JSON log line. What this promises (events, deadline, concurrency, the log line's fields) is
documented in :mod:`paimon_feed.aws.lambda_handler`.
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cachetools import TTLCache

from paimon_feed.aws.config import ENV_CATALOG_OPTIONS, ENV_TABLES, HandlerConfig
from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import (
    FeedError,
    HistoryRewrittenError,
    InvocationFailedError,
    SnapshotExpiredError,
    TableNotFoundError,
)
from paimon_feed.notifiers.events import MalformedMessageError, parse_lambda_event
from paimon_feed.planner import Planner, Timeline
from paimon_feed.progress import RETRY, Progress
from paimon_feed.tables import check_reachable, open_catalog, open_table

__all__ = ["TableOutcome", "clear_caches", "handle_event"]

logger = logging.getLogger(__name__)

DEFAULT_DEADLINE_MARGIN_MS = 10_000
DEFAULT_DEADLINE_FRACTION = 0.25
CACHE_TTL_SECONDS = 300.0


# warm-start caches ---------------------------------------------------------------------------
_cache_lock = threading.Lock()
_catalogs: TTLCache = TTLCache(maxsize=8, ttl=CACHE_TTL_SECONDS)
_tables: TTLCache = TTLCache(maxsize=256, ttl=CACHE_TTL_SECONDS)


def clear_caches() -> None:
    """Forget cached catalogs and tables (the next invocation opens them again)."""
    with _cache_lock:
        _catalogs.clear()
        _tables.clear()


def _catalog_key(config: HandlerConfig) -> tuple:
    return (config.warehouse, tuple(sorted(config.catalog_options.items())))


def _catalog(config: HandlerConfig) -> Any:
    key = _catalog_key(config)
    with _cache_lock:
        catalog = _catalogs.get(key)
    if catalog is None:
        # Seconds, not the minute pyarrow retries an unreachable endpoint for.
        check_reachable(
            config.warehouse, config.catalog_options,
            fix=f"fs.s3.endpoint in {ENV_CATALOG_OPTIONS} (or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL), the VPC's route to S3",
        )
        catalog = open_catalog(config.warehouse, config.catalog_options)
        with _cache_lock:
            _catalogs[key] = catalog
    return catalog


def _table(config: HandlerConfig, name: str) -> Any:
    key = (*_catalog_key(config), name)
    with _cache_lock:
        table = _tables.get(key)
    if table is None:
        table = open_table(config.warehouse, name, catalog=_catalog(config))
        with _cache_lock:
            _tables[key] = table
    return table


# the invocation ------------------------------------------------------------------------------
_Status = Literal["done", "failed", "unfinished", "skipped"]


@dataclass(frozen=True)
class TableOutcome:
    """What happened to one table in one invocation.

    ``status``: ``done`` (caught up), ``failed`` (an error stopped it), ``unfinished`` (the
    deadline came first) or ``skipped`` (the table no longer exists).
    """

    table: str
    status: _Status
    batches: int = 0
    next_snapshot_id: int | None = None
    error: str | None = None
    rows: int = 0
    snapshots: int = 0
    latencies_ms: tuple[float, ...] = field(default=(), repr=False)
    lag_snapshots: int | None = 0
    checkpoint_conflicts: int = 0

    @property
    def ok(self) -> bool:
        return self.status in ("done", "skipped")


class _Deadline:
    """When to stop taking new batches: ``margin_ms`` before the invocation times out."""

    def __init__(self, context: Any, margin_ms: int | None) -> None:
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        self._remaining = remaining if callable(remaining) else None
        if margin_ms is None:
            margin_ms = DEFAULT_DEADLINE_MARGIN_MS
            if self._remaining is not None:
                margin_ms = min(margin_ms, int(self._remaining() * DEFAULT_DEADLINE_FRACTION))
        self.margin_ms = margin_ms

    def remaining_ms(self) -> int | None:
        return int(self._remaining()) if self._remaining is not None else None

    def reached(self) -> bool:
        remaining = self.remaining_ms()
        return remaining is not None and remaining < self.margin_ms


def handle_event(event: Any, context: Any, config: HandlerConfig) -> dict[str, Any]:
    """Deliver the batches of every table named by ``event`` (the rules:
    :mod:`paimon_feed.aws.lambda_handler`).

    Returns the SQS partial-batch response. Raises :class:`InvocationFailedError` when a direct
    (non-SQS) invocation has a failed table, and
    :class:`~paimon_feed.notifiers.events.MalformedMessageError` for a malformed direct event.
    """
    started = time.monotonic()
    deadline = _Deadline(context, config.deadline_margin_ms)
    logger.debug("configuration: %s", config.describe())
    malformed: list[MalformedMessageError] = []
    try:
        pairs = parse_lambda_event(event, on_malformed=malformed.append)
    except MalformedMessageError as exc:
        logger.error("malformed Lambda event, nothing processed: %s", exc)
        raise
    failed_ids: list[str] = []
    for error in malformed:
        logger.error(
            "malformed message %s reported as failed (the queue's redrive policy will move it "
            "to the dead-letter queue): %s", error.message_id, error.reason,
        )
        if error.message_id is None:
            raise FeedError(
                f"malformed SQS record without a messageId cannot be reported alone, failing "
                f"the whole batch: {error}"
            )
        failed_ids.append(error.message_id)

    order: list[str] = []  # tables in order of first mention
    tables_of: dict[str | None, set[str]] = {}
    skipped: dict[str, str] = {}
    for message_id, hints in pairs:
        names = tables_of.setdefault(message_id, set())
        for hint in hints:
            name, reason = _table_of(hint.table_url, config)
            if name is None:
                skipped.setdefault(hint.table_url, reason)
                continue
            names.add(name)
            if name not in order:
                order.append(name)
    for url, reason in skipped.items():
        logger.info("skipping events for %s: %s", url, reason)

    outcomes = {name: _run_table(name, config, deadline) for name in order}
    failed_tables = {name for name, outcome in outcomes.items() if not outcome.ok}
    for message_id, names in tables_of.items():
        if names & failed_tables and message_id is not None and message_id not in failed_ids:
            failed_ids.append(message_id)

    _log_invocation(
        context, event, outcomes, messages=len(pairs) + len(malformed), failed=len(failed_ids),
        malformed=len(malformed), duration_ms=(time.monotonic() - started) * 1000,
    )
    if failed_tables and None in tables_of and tables_of[None] & failed_tables:
        details = "; ".join(
            f"{name}: {outcomes[name].status} ({outcomes[name].error or 'deadline'})"
            for name in sorted(failed_tables)
        )
        raise InvocationFailedError(f"tables not caught up, retry the event: {details}")
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed_ids]}


def _log_invocation(
    context: Any, event: Any, outcomes: Mapping[str, TableOutcome], *, messages: int,
    failed: int, malformed: int, duration_ms: float,
) -> None:
    """Write the invocation's one JSON line (its fields: :mod:`paimon_feed.aws.lambda_handler`).

    On stdout, not through ``logging``: Lambda's Python runtime keeps the root logger at
    WARNING unless the function configures it, and a line that is JSON alone is what Logs
    Insights parses into fields.
    """
    latencies = sorted(ms for outcome in outcomes.values() for ms in outcome.latencies_ms)
    lags = [outcome.lag_snapshots for outcome in outcomes.values()]
    record = {
        "paimon_feed": "invocation",
        "request_id": getattr(context, "aws_request_id", None),
        "duration_ms": round(duration_ms, 1),
        "messages": messages,
        "retried_messages": _retried_messages(event),
        "failed_messages": failed,
        "malformed_messages": malformed,
        "batches": sum(outcome.batches for outcome in outcomes.values()),
        "rows": sum(outcome.rows for outcome in outcomes.values()),
        "lag_snapshots": sum(lag for lag in lags if lag is not None),
        "latency_ms": {
            "p50": round(statistics.median(latencies), 1),
            "p99": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1),
            "max": round(latencies[-1], 1),
        } if latencies else None,
        "checkpoint_conflicts": sum(outcome.checkpoint_conflicts for outcome in outcomes.values()),
        "tables": {
            name: {
                "status": outcome.status,
                "batches": outcome.batches,
                "rows": outcome.rows,
                "snapshots": outcome.snapshots,
                "next_snapshot_id": outcome.next_snapshot_id,
                "lag_snapshots": outcome.lag_snapshots,
                "checkpoint_conflicts": outcome.checkpoint_conflicts,
                "error": outcome.error,
            }
            for name, outcome in outcomes.items()
        },
    }
    sys.stdout.write(json.dumps(record, separators=(", ", ": ")) + "\n")
    sys.stdout.flush()


def _retried_messages(event: Any) -> int:
    """SQS records this invocation got before (``ApproximateReceiveCount`` above 1)."""
    records = event.get("Records") if isinstance(event, dict) else None
    count = 0
    for record in records if isinstance(records, list) else ():
        attributes = record.get("attributes") if isinstance(record, dict) else None
        received = attributes.get("ApproximateReceiveCount") if isinstance(attributes, dict) else None
        if isinstance(received, (str, int)) and str(received).isdigit() and int(received) > 1:
            count += 1
    return count


def _table_of(table_url: str, config: HandlerConfig) -> tuple[str | None, str]:
    """``db.table`` for a hinted table URL, or ``None`` and why it is skipped."""
    from paimon_feed.routing import table_of_url

    name, reason = table_of_url(config.warehouse_url, table_url)
    if name is None:
        return None, reason
    if config.tables is not None and name not in config.tables:
        return None, f"table {name} is not in {ENV_TABLES}"
    return name, ""


def _run_table(name: str, config: HandlerConfig, deadline: _Deadline) -> TableOutcome:
    if deadline.reached():
        logger.warning(
            "table %s: not started, %s ms left is under the %d ms margin; its messages are "
            "reported as failed", name, deadline.remaining_ms(), deadline.margin_ms,
        )
        return TableOutcome(name, "unfinished", lag_snapshots=None)
    try:
        table = _table(config, name)
    except TableNotFoundError as exc:
        logger.warning("table %s: skipped, %s", name, exc)
        return TableOutcome(name, "skipped")  # nothing left to read: no lag
    except Exception as exc:  # reported as this table's failure; other tables go on
        logger.error("table %s: cannot open: %s", name, exc, exc_info=True)
        return TableOutcome(name, "failed", error=str(exc), lag_snapshots=None)
    delivered = _Delivered()
    try:
        return _catch_up(name, table, config, deadline, delivered)
    except Exception as exc:  # the processor may raise anything; report it, keep others going
        logger.error(
            "table %s: failed after %d batches, checkpoint at snapshot %s; its messages are "
            "reported as failed: %s",
            name, delivered.batches, delivered.next_snapshot_id, exc, exc_info=True,
        )
        return delivered.outcome(name, "failed", table, error=str(exc))


@dataclass
class _Delivered:
    """What one table's catch-up delivered so far in this invocation."""

    batches: int = 0
    next_snapshot_id: int | None = None
    rows: int = 0
    snapshots: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    checkpoint_conflicts: int = 0

    def deliver(self, batch: FeedBatch, processor: Callable[[FeedBatch], Any]) -> None:
        """Hand ``batch`` to the processor and count it (after it returns)."""
        handed_at_ms = time.time() * 1000
        processor(batch)
        self.batches += 1
        self.rows += sum(split.row_count for split in batch.splits)
        self.snapshots += batch.snapshot_count
        self.latencies_ms.append(max(0.0, handed_at_ms - batch.commit_time_ms))

    def outcome(
        self, name: str, status: _Status, table: Any = None, *, error: str | None = None
    ) -> TableOutcome:
        """The table's outcome; with ``table``, its lag is read from the latest snapshot id
        (a table that caught up without losing a checkpoint race has none by construction)."""
        return TableOutcome(
            name, status, self.batches, self.next_snapshot_id, error=error, rows=self.rows,
            snapshots=self.snapshots, latencies_ms=tuple(self.latencies_ms),
            lag_snapshots=_lag(name, table, self.next_snapshot_id) if table is not None else 0,
            checkpoint_conflicts=self.checkpoint_conflicts,
        )


def _lag(name: str, table: Any, next_snapshot_id: int | None) -> int | None:
    """Snapshots after ``next_snapshot_id - 1`` that exist now; ``None`` if unknown."""
    if next_snapshot_id is None:
        return None
    try:
        latest = Timeline(table).latest_snapshot_id()
    except Exception as exc:  # only a figure for the log line; the outcome stands
        logger.warning("table %s: cannot read the latest snapshot id for its lag: %s", name, exc)
        return None
    return max(0, (latest or 0) - (next_snapshot_id - 1))


def _catch_up(
    name: str, table: Any, config: HandlerConfig, deadline: _Deadline, progress: _Delivered
) -> TableOutcome:
    """Deliver every batch from the checkpoint (or the start) to the newest snapshot, on the
    consumer protocol every entry point shares (:class:`~paimon_feed.progress.Progress`).

    If another invocation checkpoints the same position first, this one leaves the table to it
    (see :func:`_advance`).
    """
    planner = Planner(table)
    store = CheckpointStore.for_table(
        table, config.consumer_id, catalog_options=config.catalog_options
    )
    protocol = Progress(
        planner, store, on_expired=config.on_expired,
        on_history_rewritten=config.on_history_rewritten,
    )

    def storage(call: Callable[[], Any]) -> Any:
        return RETRY.call(call, name)

    def restart(exc: SnapshotExpiredError | HistoryRewrittenError) -> bool:
        """Apply the policy (or raise); ``False`` if another invocation took the table."""
        batch, next_id = storage(lambda: protocol.recover(exc))
        if batch is not None:
            progress.deliver(batch, config.processor)
        # Also pins the restart, so the next invocation does not resolve it again later.
        return _advance(protocol, name, next_id, progress)

    try:
        resumed = storage(lambda: protocol.resume(config.start))
    except (SnapshotExpiredError, HistoryRewrittenError) as exc:
        if not restart(exc):
            return progress.outcome(name, "done", table)
    else:
        if resumed is None:
            logger.info("table %s: no snapshot yet, nothing to deliver", name)
            return progress.outcome(name, "done")
        if resumed.from_checkpoint:
            progress.next_snapshot_id = resumed.next_snapshot_id
        else:
            if resumed.full_snapshot_id is not None:
                full_id = resumed.full_snapshot_id
                batch = storage(lambda: planner.full_batch(full_id))
                protocol.after_full(batch)
                progress.deliver(batch, config.processor)
            # Also pins a change-only start, so the next invocation does not resolve it again.
            if not _advance(protocol, name, resumed.next_snapshot_id, progress):
                return progress.outcome(name, "done", table)
    check_expiry = True
    while True:
        next_id = progress.next_snapshot_id
        assert next_id is not None  # set by the resume or restart above, and by every round
        if deadline.reached():
            logger.warning(
                "table %s: stopped at snapshot %d after %d batches, %s ms left is under the "
                "%d ms margin; its messages are reported as failed and a retry resumes here",
                name, next_id, progress.batches, deadline.remaining_ms(), deadline.margin_ms,
            )
            return progress.outcome(name, "unfinished", table)
        try:
            planned = storage(lambda: planner.next_batches(next_id, 1, check_expiry=check_expiry))
            storage(lambda: protocol.after_round(next_id, planned.next_snapshot_id, checked=check_expiry))
        except (SnapshotExpiredError, HistoryRewrittenError) as exc:
            if not restart(exc):
                return progress.outcome(name, "done", table)
            continue
        check_expiry = False
        if not planned.batches:
            if planned.next_snapshot_id > next_id:  # snapshots with nothing to read
                if not _advance(protocol, name, planned.next_snapshot_id, progress):
                    return progress.outcome(name, "done", table)
            return progress.outcome(name, "done")
        batch = planned.batches[0]
        progress.deliver(batch, config.processor)
        target = max(batch.next_snapshot_id, planned.next_snapshot_id)
        if not _advance(protocol, name, target, progress):
            return progress.outcome(name, "done", table)


def _advance(protocol: Progress, name: str, next_snapshot_id: int, progress: _Delivered) -> bool:
    """Advance the checkpoint; ``False`` if a concurrent invocation got there first.

    The checkpoint only reaches ``next_snapshot_id`` through a writer that was running after
    this invocation last read or wrote it; that writer goes on to the newest snapshot (which
    covers every event this invocation was given) or fails and has its own messages retried.
    So the table is left to it: continuing in lockstep would deliver every batch twice.
    """
    if protocol.commit(next_snapshot_id, protocol.anchor):
        progress.next_snapshot_id = next_snapshot_id
        return True
    stored = protocol.stored_position()
    progress.checkpoint_conflicts += 1
    progress.next_snapshot_id = max(next_snapshot_id, stored or 0)
    logger.info(
        "table %s: a concurrent invocation checkpointed snapshot %d first; leaving the table "
        "to it", name, progress.next_snapshot_id,
    )
    return False
