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
from collections.abc import Mapping
from typing import Any

from cachetools import TTLCache

from paimon_feed.aws.catch_up import Deadline, TableOutcome, run_table
from paimon_feed.aws.config import ENV_CATALOG_OPTIONS, ENV_TABLES, HandlerConfig
from paimon_feed.errors import (
    FeedError,
    InvocationFailedError,
)
from paimon_feed.notifiers.events import MalformedMessageError, parse_lambda_event
from paimon_feed.tables import check_reachable, open_catalog, open_table

__all__ = ["TableOutcome", "clear_caches", "handle_event"]



logger = logging.getLogger(__name__)

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
def handle_event(event: Any, context: Any, config: HandlerConfig) -> dict[str, Any]:
    """Deliver the batches of every table named by ``event`` (the rules:
    :mod:`paimon_feed.aws.lambda_handler`).

    Returns the SQS partial-batch response. Raises :class:`InvocationFailedError` when a direct
    (non-SQS) invocation has a failed table, and
    :class:`~paimon_feed.notifiers.events.MalformedMessageError` for a malformed direct event.
    """
    started = time.monotonic()
    deadline = Deadline(context, config.deadline_margin_ms)
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

    outcomes = {name: run_table(name, lambda: _table(config, name), config, deadline) for name in order}
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
