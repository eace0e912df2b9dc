"""Which reads took pyarrow's direct path (``_DirectParquet``) instead of pypaimon's reader."""

from __future__ import annotations

from paimon_feed.planner import _direct_read


def spy_direct_reads(monkeypatch, *, direct: bool) -> list[bool]:
    """Turn the direct read on or off; the returned list gets, per read the direct path was
    offered, whether it took it."""
    monkeypatch.setenv("PAIMON_FEED_DIRECT_READ", "1" if direct else "0")
    used: list[bool] = []
    original = _direct_read._DirectParquet.batches

    def spy(self, splits, target):
        batches = original(self, splits, target)
        used.append(batches is not None)
        return batches

    monkeypatch.setattr(_direct_read._DirectParquet, "batches", spy)
    return used
