"""FeedBatch: one unit of delivered change.

A batch covers the snapshot ids ``first_snapshot_id..snapshot_id`` (both inclusive). Batches of a
feed tile the id space: each one starts right after the previous one ends, so snapshots that carry
no change for the consumer (compactions under a delta scan, say) are covered by the next batch
that does. Committing a batch records ``next_snapshot_id`` (= ``snapshot_id + 1``) as the
consumer's position, the way Paimon's consumer files do.

Times: ``commit_time_ms`` is the writer's commit time (epoch milliseconds, from the snapshot
file); ``detected_at`` and ``planned_at`` are epoch seconds (``time.time()``) on this machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FeedBatch", "BatchKind"]

BatchKind = Literal["full", "delta", "changelog", "catch-up"]


@dataclass(frozen=True)
class FeedBatch:
    """Splits to read for a range of snapshots of one table, with when they were seen."""

    table: str
    snapshot_id: int
    first_snapshot_id: int
    kind: BatchKind
    plan: Any = field(repr=False, compare=False)
    splits: tuple = field(repr=False, compare=False)
    commit_time_ms: int
    detected_at: float
    planned_at: float
    _reader: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    @property
    def next_snapshot_id(self) -> int:
        """The consumer position after this batch: the first snapshot it does not cover."""
        return self.snapshot_id + 1

    @property
    def snapshot_count(self) -> int:
        """How many snapshot ids this batch covers."""
        return self.snapshot_id - self.first_snapshot_id + 1

    def _table_read(self):
        if self._reader is None:
            raise TypeError(
                f"batch for table {self.table} snapshot {self.snapshot_id} has no reader "
                f"(it was rebuilt from JSON); plan it again with a Planner to read data"
            )
        return self._reader()

    def to_arrow(self) -> pa.Table:
        """Read every row of the batch into one Arrow table (with ``_row_kind`` if requested)."""
        return self._table_read().to_arrow(list(self.splits))

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Stream the rows of the batch as Arrow record batches, for batches too big for memory."""
        if not self.splits:
            return iter(())
        return iter(self._table_read().to_arrow_batch_reader(list(self.splits)))

    def to_dict(self) -> dict:
        """JSON-ready metadata of the batch (no splits, no data)."""
        return {
            "table": self.table,
            "snapshot_id": self.snapshot_id,
            "first_snapshot_id": self.first_snapshot_id,
            "kind": self.kind,
            "splits": len(self.splits),
            "commit_time_ms": self.commit_time_ms,
            "detected_at": self.detected_at,
            "planned_at": self.planned_at,
        }
