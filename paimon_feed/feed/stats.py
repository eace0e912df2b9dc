"""A feed's counters and latency window, and the :class:`FeedMetrics` snapshot built from them.

Plain attributes written on the feed's event loop; :meth:`ChangeFeed.metrics` may read them from
any thread (a snapshot, not a transaction).
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paimon_feed.batch import FeedBatch

__all__ = ["FeedMetrics", "FeedStats"]

_LATENCY_WINDOW = 1024


@dataclass(frozen=True)
class FeedMetrics:
    """A snapshot of a feed's state. Times in milliseconds; counters since the feed started."""

    table: str
    consumer_id: str | None
    mode: str
    notifier: str
    push_healthy: bool
    batches_planned: int
    batches_delivered: int
    snapshots_delivered: int
    last_delivered_snapshot_id: int | None
    committed_next_snapshot_id: int | None
    latest_known_snapshot_id: int | None
    lag_snapshots: int
    lag_ms: float
    latency_ms_p50: float | None
    latency_ms_p99: float | None
    queue_depth: int
    hints_by_source: dict[str, int] = field(default_factory=dict)
    wakeups: int = 0
    reconciles: int = 0
    safety_checks_deferred: int = 0
    fallbacks: int = 0
    storage_retries: int = 0
    expired_restarts: int = 0
    history_rewrites: int = 0
    schema_changes: int = 0
    current_schema_id: int | None = None
    overwrites_skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class FeedStats:
    """What one feed counted since it started (see :class:`FeedMetrics` for the meanings)."""

    def __init__(self) -> None:
        self.batches_planned = 0
        self.batches_delivered = 0
        self.snapshots_delivered = 0
        self.hints: Counter[str] = Counter()
        self.wakeups = 0
        self.reconciles = 0
        self.safety_checks_deferred = 0
        self.fallbacks = 0
        self.storage_retries = 0
        self.schema_changes = 0
        self.latest_known: int | None = None
        self.in_fallback = False
        self.latencies_ms: deque[float] = deque(maxlen=_LATENCY_WINDOW)

    def note_latest(self, snapshot_id: int | None) -> None:
        """A snapshot id known to exist: the newest so far is the feed's idea of the latest."""
        if snapshot_id is not None and (self.latest_known is None or snapshot_id > self.latest_known):
            self.latest_known = snapshot_id

    def latency_percentiles(self) -> tuple[float | None, float | None]:
        """p50 and p99 of the recent commit-to-delivery latencies, in milliseconds."""
        latencies = sorted(self.latencies_ms)
        if not latencies:
            return None, None
        return statistics.median(latencies), latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]

    def metrics(
        self,
        *,
        table: str,
        consumer_id: str | None,
        notifier: str,
        delivered: FeedBatch | None,
        committed_next: int | None,
        lag_ms: float,
        queue_depth: int,
        expired_restarts: int,
        history_rewrites: int,
        overwrites_skipped: int,
    ) -> FeedMetrics:
        """These counters with what the feed's other roles know, as a :class:`FeedMetrics`."""
        delivered_id = delivered.snapshot_id if delivered else None
        latest = self.latest_known
        lag_snapshots = max(0, (latest or 0) - (delivered_id or 0)) if latest is not None else 0
        p50, p99 = self.latency_percentiles()
        return FeedMetrics(
            table=table,
            consumer_id=consumer_id,
            mode="fallback-poll" if self.in_fallback else "push",
            notifier=notifier,
            push_healthy=not self.in_fallback,
            batches_planned=self.batches_planned,
            batches_delivered=self.batches_delivered,
            snapshots_delivered=self.snapshots_delivered,
            last_delivered_snapshot_id=delivered_id,
            committed_next_snapshot_id=committed_next,
            latest_known_snapshot_id=latest,
            lag_snapshots=lag_snapshots,
            lag_ms=lag_ms,
            latency_ms_p50=p50,
            latency_ms_p99=p99,
            queue_depth=queue_depth,
            hints_by_source=dict(self.hints),
            wakeups=self.wakeups,
            reconciles=self.reconciles,
            safety_checks_deferred=self.safety_checks_deferred,
            fallbacks=self.fallbacks,
            storage_retries=self.storage_retries,
            expired_restarts=expired_restarts,
            history_rewrites=history_rewrites,
            schema_changes=self.schema_changes,
            current_schema_id=delivered.schema_id if delivered else None,
            overwrites_skipped=overwrites_skipped,
        )
