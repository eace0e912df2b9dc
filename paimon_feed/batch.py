"""FeedBatch: one unit of delivered change.

A batch covers the snapshot ids ``first_snapshot_id..snapshot_id`` (both inclusive). Batches of a
feed tile the id space: each one starts right after the previous one ends, so snapshots that carry
no change for the consumer (compactions under a delta scan, say) are covered by the next batch
that does. Committing a batch records ``next_snapshot_id`` (= ``snapshot_id + 1``) as the
consumer's position, the way Paimon's consumer files do.

A batch never spans two table schemas: ``schema_id`` is the schema its snapshots were committed
with, and ``schema`` the Arrow schema ``to_arrow()`` returns (with renamed columns under their new
names, added columns present, widened types exact). A schema change is a batch boundary.

Times: ``commit_time_ms`` is the writer's commit time (epoch milliseconds, from the snapshot
file); ``detected_at`` and ``planned_at`` are epoch seconds (``time.time()``) on this machine.

What a batch is: its fields are frozen, but it is not a plain value. It carries the plan
pypaimon made (``plan``, ``splits``) and the reader its planner bound to it, so ``to_arrow()``
reads exactly what was planned, with that snapshot's schema. It lives as long as the table's
files it names: read it before the snapshots it covers expire. ``to_dict()`` gives the part
that is a value (ids, kind, times) for logs and JSON; a batch is not rebuilt from that, it is
planned again (the Spark source plans from its offsets, which are values).
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from paimon_feed.errors import (
    FeedError,
    SnapshotExpiredError,
    StorageError,
    UnsupportedTableError,
    is_transient,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FeedBatch", "BatchKind", "SnapshotMark"]

BatchKind = Literal["full", "delta", "changelog", "catch-up", "overwrite"]


@dataclass(frozen=True)
class SnapshotMark:
    """What identifies one commit of a table, beyond its snapshot id.

    Snapshot ids are re-used after a rollback, and start again at 1 when a table is re-created;
    the commit behind an id is told apart by its commit time, committer and manifest lists (whose
    names hold a random UUID per commit). A consumer keeps the mark of the last snapshot it read
    and checks that the table still has it before it reads on (:mod:`paimon_feed.progress`).

    >>> mark = SnapshotMark(7, 1700000000000, "writer-1", 3, "manifest-list-a-0", "manifest-list-a-1")
    >>> SnapshotMark.from_json(mark.to_json()) == mark
    True
    """

    snapshot_id: int
    time_millis: int
    commit_user: str
    commit_identifier: int
    base_manifest_list: str
    delta_manifest_list: str

    @classmethod
    def of(cls, snapshot: Any) -> SnapshotMark:
        """The mark of a pypaimon ``Snapshot``."""
        return cls(
            snapshot.id, snapshot.time_millis, snapshot.commit_user, snapshot.commit_identifier,
            snapshot.base_manifest_list, snapshot.delta_manifest_list,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.snapshot_id, "timeMillis": self.time_millis, "commitUser": self.commit_user,
            "commitIdentifier": self.commit_identifier,
            "baseManifestList": self.base_manifest_list,
            "deltaManifestList": self.delta_manifest_list,
        }

    @classmethod
    def from_json(cls, data: Any) -> SnapshotMark:
        """A mark from :meth:`to_json`; ``ValueError`` if ``data`` is not one."""
        try:
            mark = cls(
                int(data["id"]), int(data["timeMillis"]), str(data["commitUser"]),
                int(data["commitIdentifier"]), str(data["baseManifestList"]),
                str(data["deltaManifestList"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a snapshot mark: {exc}") from exc
        return mark

    def digest(self) -> str:
        """A short digest of the mark, for places that hold strings (Spark offsets).

        >>> len(SnapshotMark(7, 1, "w", 3, "a", "b").digest())
        16
        """
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def differs(self, other: SnapshotMark) -> str | None:
        """How ``other`` (the table's snapshot of the same id now) differs, or ``None``."""
        if other == self:
            return None
        return (
            f"snapshot {self.snapshot_id} is another commit now: committed at "
            f"{_utc(other.time_millis)} by {other.commit_user!r}, where the one read was "
            f"committed at {_utc(self.time_millis)} by {self.commit_user!r}"
        )


def _utc(time_millis: int) -> str:
    """Epoch milliseconds as an ISO-8601 UTC time.

    >>> _utc(1700000000123)
    '2023-11-14T22:13:20.123Z'
    """
    moment = datetime.datetime.fromtimestamp(time_millis / 1000, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class FeedBatch:
    """Splits to read for a range of snapshots of one table, with when they were seen."""

    table: str
    snapshot_id: int
    first_snapshot_id: int
    kind: BatchKind
    plan: Any = field(repr=False, compare=False)
    splits: tuple[Any, ...] = field(repr=False, compare=False)
    commit_time_ms: int
    detected_at: float
    planned_at: float
    schema_id: int = 0
    schema: pa.Schema | None = field(default=None, repr=False, compare=False)
    removed_splits: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    """For ``overwrite`` batches: splits of the files the overwrite removed (read as ``-D``)."""
    mark: SnapshotMark | None = field(default=None, repr=False, compare=False)
    """The mark of snapshot ``snapshot_id``: committing the batch records it beside the
    consumer file, so a restart can tell whether the table still continues this history."""
    _reader: Any = field(default=None, repr=False, compare=False)

    @property
    def next_snapshot_id(self) -> int:
        """The consumer position after this batch: the first snapshot it does not cover."""
        return self.snapshot_id + 1

    @property
    def snapshot_count(self) -> int:
        """How many snapshot ids this batch covers."""
        return self.snapshot_id - self.first_snapshot_id + 1

    def _read(self) -> Any:
        if self._reader is None:
            raise TypeError(
                f"batch for table {self.table} snapshot {self.snapshot_id} has no reader: it "
                f"was made without a planner; read batches a Planner or a feed planned"
            )
        return self._reader

    def _removed(self) -> list[Any] | None:
        return list(self.removed_splits) if self.kind == "overwrite" else None

    def to_arrow(self) -> pa.Table:
        """Read every row of the batch into one Arrow table (with ``_row_kind`` if requested).

        Raises :class:`StorageError` for a storage failure (worth retrying) and
        :class:`UnsupportedTableError` for a data file pypaimon cannot read.
        """
        read = self._read()
        with self._reading():
            return read.to_arrow(list(self.splits), removed=self._removed())

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Stream the rows of the batch as Arrow record batches, for batches too big for memory."""
        read = self._read()
        with self._reading():
            batches = iter(read.to_batches(list(self.splits), removed=self._removed()))
        while True:
            with self._reading():
                batch = next(batches, None)
            if batch is None:
                return
            yield batch

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except FeedError:
            raise
        except Exception as exc:
            files = sorted({f.file_name for s in (*self.splits, *self.removed_splits) for f in s.files})
            where = (
                f"table {self.table}: reading snapshots {self.first_snapshot_id}..{self.snapshot_id} "
                f"(data files {', '.join(files[:5])}{', ...' if len(files) > 5 else ''})"
            )
            if isinstance(exc, FileNotFoundError):
                raise SnapshotExpiredError(
                    self.table, self.first_snapshot_id, None,
                    reason=f"a data file of snapshots {self.first_snapshot_id}..{self.snapshot_id} "
                    f"was deleted after the batch was planned: {exc}",
                ) from exc
            if is_transient(exc):
                raise StorageError(f"{where} failed: {type(exc).__name__}: {exc}") from exc
            raise UnsupportedTableError(
                f"{where}: pypaimon cannot read them: {type(exc).__name__}: {exc}"
            ) from exc

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready metadata of the batch (no splits, no data)."""
        return {
            "table": self.table,
            "snapshot_id": self.snapshot_id,
            "first_snapshot_id": self.first_snapshot_id,
            "kind": self.kind,
            "schema_id": self.schema_id,
            "splits": len(self.splits) + len(self.removed_splits),
            "commit_time_ms": self.commit_time_ms,
            "detected_at": self.detected_at,
            "planned_at": self.planned_at,
        }
