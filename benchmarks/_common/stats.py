"""Latency statistics the benchmarks report."""

from __future__ import annotations

import statistics

__all__ = ["arrivals", "latencies", "percentile"]


def percentile(values: list[float], fraction: float) -> float:
    """The value at ``fraction`` (0..1) of ``values`` sorted (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def arrivals(received: dict[int, float], first: int, last: int) -> tuple[dict[int, float], int]:
    """When each snapshot reached the consumer (a batch covering several delivers each of them
    when it arrives), and how many never did."""
    arrival, pending = {}, []
    for snapshot_id in range(first, last + 1):
        pending.append(snapshot_id)
        if snapshot_id in received:
            for waiting in pending:
                arrival[waiting] = received[snapshot_id]
            pending = []
    return arrival, len(pending)


def latencies(from_visible: list[float], from_commit: list[float]) -> dict[str, object]:
    """A run's commit-to-delivery latencies (ms) as the results record them: from the snapshot
    file's visibility and from its commit time, each with its median and p99."""
    return {
        "latency_ms_from_visible": from_visible,
        "latency_ms_from_commit": from_commit,
        "p50_ms": statistics.median(from_visible),
        "p99_ms": percentile(from_visible, 0.99),
        "p50_ms_from_commit": statistics.median(from_commit),
        "p99_ms_from_commit": percentile(from_commit, 0.99),
    }
