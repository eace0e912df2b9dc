"""Prometheus metrics for change feeds (the ``[metrics]`` extra).

A :class:`FeedCollector` reads each feed's :meth:`~paimon_feed.ChangeFeed.metrics` when
Prometheus scrapes, so the figures live in one place, the feed. The one exception is the
delivery latency histogram: a histogram counts every batch, so the collector listens to
deliveries (:meth:`~paimon_feed.ChangeFeed.on_delivery`) from the moment a feed is added.

::

    from prometheus_client import REGISTRY, start_http_server

    collector = FeedCollector([orders_feed, events_feed])
    REGISTRY.register(collector)
    start_http_server(9464)            # or serve_metrics(collector, 9464)

Every series has the labels ``table`` (``db.table``) and ``consumer`` (the consumer id, empty
without one); :data:`METRICS` lists the names. A feed's counters start at zero when the feed
starts, as Prometheus counters do after a restart.

>>> FeedCollector().collect()
[]
>>> sorted(METRICS)[:3]
['paimon_feed_batches_delivered_total', 'paimon_feed_batches_planned_total', 'paimon_feed_committed_next_snapshot_id']
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from paimon_feed.errors import ConfigurationError, MissingDependencyError, install_hint

if TYPE_CHECKING:
    from paimon_feed.feed import ChangeFeed, FeedMetrics
    from paimon_feed.feed.warehouse import WarehouseFeed

__all__ = ["FeedCollector", "METRICS", "LATENCY_BUCKETS_SECONDS", "serve_metrics"]

logger = logging.getLogger(__name__)

_INSTALL_HINT = install_hint("metrics")

# Delivery latency runs from a few milliseconds (inotify) through a second (polling) to
# minutes (a catch-up after downtime).
LATENCY_BUCKETS_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

#: Every metric name, with its type and help text.
METRICS: dict[str, tuple[str, str]] = {
    "paimon_feed_lag_snapshots": (
        "gauge", "Snapshots known to exist that the consumer has not been handed yet"),
    "paimon_feed_lag_seconds": (
        "gauge", "Age of the oldest batch planned but not yet handed to the consumer (0 when none waits)"),
    "paimon_feed_batches_planned_total": ("counter", "Batches planned"),
    "paimon_feed_batches_delivered_total": ("counter", "Batches handed to the consumer"),
    "paimon_feed_snapshots_delivered_total": ("counter", "Snapshot ids covered by delivered batches"),
    "paimon_feed_delivery_latency_seconds": (
        "histogram", "From a batch's commit time to its delivery to the consumer"),
    "paimon_feed_wakeups_total": (
        "counter", "Wake-ups by source: local, sqs, poll, reconcile (safety check), fallback-poll"),
    "paimon_feed_fallbacks_total": ("counter", "Times the push source failed and the feed fell back to polling"),
    "paimon_feed_push_healthy": ("gauge", "1 while push works, 0 while the feed polls as a fallback"),
    "paimon_feed_storage_retries_total": ("counter", "Transient storage errors retried"),
    "paimon_feed_schema_changes_total": ("counter", "Schema changes delivered (each is a batch boundary)"),
    "paimon_feed_overwrites_skipped_total": ("counter", "OVERWRITE snapshots skipped (overwrite='skip')"),
    "paimon_feed_expired_restarts_total": (
        "counter", "Restarts after the next snapshot expired unread (on_expired='earliest'/'latest-full')"),
    "paimon_feed_history_rewrites_total": (
        "counter", "Restarts after the table's history was rewritten (on_history_rewritten='latest-full')"),
    "paimon_feed_queue_depth": ("gauge", "Batches planned and waiting for the consumer"),
    "paimon_feed_latest_snapshot_id": ("gauge", "Newest snapshot id the feed knows of"),
    "paimon_feed_delivered_snapshot_id": ("gauge", "Last snapshot id handed to the consumer"),
    "paimon_feed_committed_next_snapshot_id": (
        "gauge", "The consumer's committed position: the first snapshot id not processed"),
}
_LABELS = ("table", "consumer")


def _prometheus() -> Any:
    try:
        import prometheus_client
        import prometheus_client.core  # noqa: F401 - the metric families
    except ImportError as exc:
        raise MissingDependencyError(
            f"Prometheus metrics need prometheus-client; {_INSTALL_HINT}"
        ) from exc
    return prometheus_client


class _Histogram:
    """Cumulative bucket counts and a sum, safe to read from the scrape thread."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self._counts = [0] * (len(bounds) + 1)  # the last one is +Inf
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self._lock:
            self._counts[bisect.bisect_left(self._bounds, value)] += 1
            self._sum += value

    def buckets(self) -> tuple[list[tuple[str, int]], float]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        cumulative, running = [], 0
        for bound, count in zip((*map(repr, self._bounds), "+Inf"), counts):
            running += count
            cumulative.append((bound, running))
        return cumulative, total


class FeedCollector:
    """A Prometheus collector for one or many :class:`~paimon_feed.ChangeFeed`\\ s.

    Register it with a ``prometheus_client`` registry; add feeds before iterating them, so the
    latency histogram sees every delivery. Two feeds with the same table and consumer id would
    give the same series, so the second is refused.
    """

    def __init__(self, feeds: Iterable[ChangeFeed] = ()) -> None:
        _prometheus()  # fail with the install hint before anything else
        self._lock = threading.Lock()
        self._feeds: dict[tuple[str, str], tuple[ChangeFeed, _Histogram, Any]] = {}
        self._warehouses: list[tuple[WarehouseFeed, dict[str, _Histogram], Any]] = []
        for feed in feeds:
            self.add(feed)

    def add(self, feed: ChangeFeed | WarehouseFeed) -> None:
        """Report ``feed`` from now on: a :class:`~paimon_feed.ChangeFeed`, or a
        :class:`~paimon_feed.WarehouseFeed` (a series per table it follows, as tables come and
        go)."""
        if hasattr(feed, "table_feeds"):  # a WarehouseFeed: only it has table_feeds
            self._add_warehouse(cast("WarehouseFeed", feed))
            return
        key = (feed.table_name, feed.consumer_id or "")
        histogram = _Histogram(LATENCY_BUCKETS_SECONDS)
        with self._lock:
            if key in self._feeds:
                raise ConfigurationError(
                    f"a feed of table {key[0]} with consumer id {key[1]!r} is already collected; "
                    f"give each feed its own consumer_id, or use a collector each"
                )
            remove = feed.on_delivery(lambda _batch, seconds: histogram.observe(seconds))
            self._feeds[key] = (feed, histogram, remove)

    def _add_warehouse(self, warehouse: WarehouseFeed) -> None:
        histograms: dict[str, _Histogram] = {}

        def observe(batch: Any, seconds: float) -> None:
            histogram = histograms.get(batch.table)
            if histogram is None:
                histogram = histograms[batch.table] = _Histogram(LATENCY_BUCKETS_SECONDS)
            histogram.observe(seconds)

        with self._lock:
            if any(entry[0] is warehouse for entry in self._warehouses):
                return
            self._warehouses.append((warehouse, histograms, warehouse.on_delivery(observe)))

    def _entries(self) -> list[Any]:
        """(table, consumer), (feed, histogram) of every single feed and warehouse table."""
        with self._lock:
            entries = [(key, (feed, histogram)) for key, (feed, histogram, _) in self._feeds.items()]
            warehouses = list(self._warehouses)
        for warehouse, histograms, _ in warehouses:
            for name, feed in sorted(warehouse.table_feeds().items()):
                histogram = histograms.get(name) or _Histogram(LATENCY_BUCKETS_SECONDS)
                entries.append(((name, feed.consumer_id or ""), (feed, histogram)))
        return entries

    def remove(self, feed: ChangeFeed | WarehouseFeed) -> None:
        """Stop reporting ``feed`` (its series disappear from the next scrape)."""
        with self._lock:
            for entry in list(self._warehouses):
                if entry[0] is feed:
                    self._warehouses.remove(entry)
                    entry[2]()
                    return
            key = (feed.table_name, feed.consumer_id or "")
            single = self._feeds.get(key)
            if single is None or single[0] is not feed:
                return
            del self._feeds[key]
        single[2]()

    def describe(self) -> list[Any]:
        """Nothing: the series depend on the feeds added, so the registry must not cache them."""
        return []

    def collect(self) -> list[Any]:
        """Read every feed's :meth:`~paimon_feed.ChangeFeed.metrics` into metric families."""
        entries = self._entries()
        if not entries:
            return []
        core = _prometheus().core
        families = {
            name: _family(core, name, kind, text, ("source",) if name == "paimon_feed_wakeups_total" else ())
            for name, (kind, text) in METRICS.items()
        }
        for (table, consumer), (feed, histogram) in entries:
            labels = [table, consumer]
            m: FeedMetrics = feed.metrics()
            gauges = {
                "paimon_feed_lag_snapshots": m.lag_snapshots,
                "paimon_feed_lag_seconds": m.lag_ms / 1000,
                "paimon_feed_push_healthy": 1 if m.push_healthy else 0,
                "paimon_feed_queue_depth": m.queue_depth,
                "paimon_feed_latest_snapshot_id": m.latest_known_snapshot_id,
                "paimon_feed_delivered_snapshot_id": m.last_delivered_snapshot_id,
                "paimon_feed_committed_next_snapshot_id": m.committed_next_snapshot_id,
                "paimon_feed_batches_planned_total": m.batches_planned,
                "paimon_feed_batches_delivered_total": m.batches_delivered,
                "paimon_feed_snapshots_delivered_total": m.snapshots_delivered,
                "paimon_feed_fallbacks_total": m.fallbacks,
                "paimon_feed_storage_retries_total": m.storage_retries,
                "paimon_feed_schema_changes_total": m.schema_changes,
                "paimon_feed_overwrites_skipped_total": m.overwrites_skipped,
                "paimon_feed_expired_restarts_total": m.expired_restarts,
                "paimon_feed_history_rewrites_total": m.history_rewrites,
            }
            for name, value in gauges.items():
                if value is not None:  # a snapshot id not known yet is absent, not 0
                    families[name].add_metric(labels, value)
            for source, count in sorted(m.hints_by_source.items()):
                families["paimon_feed_wakeups_total"].add_metric([*labels, source], count)
            buckets, total = histogram.buckets()
            families["paimon_feed_delivery_latency_seconds"].add_metric(labels, buckets, total)
        return list(families.values())


def _family(core: Any, name: str, kind: str, text: str, extra_labels: tuple[str, ...]) -> Any:
    labels = [*_LABELS, *extra_labels]
    if kind == "counter":
        return core.CounterMetricFamily(name.removesuffix("_total"), text, labels=labels)
    if kind == "histogram":
        return core.HistogramMetricFamily(name, text, labels=labels)
    return core.GaugeMetricFamily(name, text, labels=labels)


def serve_metrics(collector: FeedCollector, port: int, address: str = "0.0.0.0") -> tuple[Any, Any]:
    """Serve ``collector`` (and nothing else) on ``http://address:port/metrics`` from a thread.

    ``port=0`` picks a free port (``server.server_port`` says which). Returns prometheus_client's
    ``(server, thread)``; stop with ``server.shutdown(); server.server_close()``.
    """
    prometheus = _prometheus()
    registry = prometheus.CollectorRegistry(auto_describe=False)
    registry.register(collector)
    server: tuple[Any, Any] = prometheus.start_http_server(port, addr=address, registry=registry)
    return server
