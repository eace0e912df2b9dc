"""Latency statistics the benchmarks report."""

from __future__ import annotations

__all__ = ["arrivals", "percentile"]


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
