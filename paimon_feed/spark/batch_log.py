"""The ``foreach_batch`` runner's record of its batch in flight, beside the consumer file.

Before the runner calls ``fn(df, batch_id)`` it writes ``consumer/.paimon-feed-<id>.batch``:
``{"batchId": N, "end": <end offset>}`` (the batch's end offset, as
:class:`~paimon_feed.spark.offsets.FeedOffset` journals it for Spark). Only after ``fn``
returns does the consumer file move past the batch. A runner that starts again finds the
record: if the consumer file still stands at the batch's start, the batch was in flight, and it
is planned again from its end offset alone, the same rows with the same ``batch_id``, however
far the table moved since. The record also keeps the last id handed out, so ids only grow, even
after a restart on a rewritten history (which may start at a lower snapshot id).

Batch ids are the id of the batch's last snapshot (the full state at snapshot S: S), or one
more than the previous id if that is larger: a sink that records the batch id it committed
(Delta's ``txnAppId``/``txnVersion``) skips a batch it already has, and is exactly-once.

>>> record = BatchRecord(7, FeedOffset.position(5).after_changes(7))
>>> BatchRecord.from_json(record.to_json(), "t") == record
True
>>> record.continues(FeedOffset.position(5)), record.continues(FeedOffset.position(8))
(True, False)
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import CheckpointError, InvalidOffsetError
from paimon_feed.spark.offsets import FeedOffset

__all__ = ["BatchRecord", "BatchLog", "next_batch_id"]

logger = logging.getLogger(__name__)

SUFFIX = "batch"  # one of checkpoint.store.SIDE_FILES: deleted with the consumer


@dataclass(frozen=True)
class BatchRecord:
    """The last batch handed to ``fn``: its id and its end offset."""

    batch_id: int
    end: FeedOffset

    def to_json(self) -> str:
        return json.dumps({"batchId": self.batch_id, "end": self.end.to_json()}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: str) -> BatchRecord:
        try:
            data = json.loads(text)
            batch_id = data["batchId"]
            if isinstance(batch_id, bool) or not isinstance(batch_id, int) or batch_id < 0:
                raise ValueError(f"batchId {batch_id!r} is not a batch id")
            return cls(batch_id, FeedOffset.from_json(data["end"]))
        except (ValueError, KeyError, TypeError, InvalidOffsetError) as exc:
            raise CheckpointError(
                f"{where}: not a batch record of the foreach_batch runner ({exc}); delete it to "
                f"start the consumer without replaying its batch in flight"
            ) from exc

    def continues(self, position: FeedOffset) -> bool:
        """Whether this batch starts at ``position`` (it was in flight when the runner stopped):
        the changes from ``position``, or a pending full state (nothing committed yet)."""
        if self.end.full_snapshot_id is not None:
            return position.pending_full_snapshot_id is not None
        return self.end.first_snapshot_id == position.next_snapshot_id


def next_batch_id(end: FeedOffset, previous: int | None) -> int:
    """The id of the batch ending at ``end``: its last snapshot id, and always more than
    ``previous``.

    >>> next_batch_id(FeedOffset.position(3).after_changes(9), 4), next_batch_id(FeedOffset.position(3).after_changes(9), 12)
    (9, 13)
    """
    derived = end.next_snapshot_id - 1
    return derived if previous is None or derived > previous else previous + 1


class BatchLog:
    """Reads and writes the batch record of one consumer (see the module docstring)."""

    def __init__(self, store: CheckpointStore) -> None:
        self._store = store
        self.path = store.side_path(SUFFIX)

    def load(self) -> BatchRecord | None:
        text = self._store.load_side(SUFFIX)
        return None if text is None else BatchRecord.from_json(text, self.path)

    def save(self, record: BatchRecord) -> None:
        self._store.save_side(SUFFIX, record.to_json())

    @staticmethod
    def for_driver(driver: Any) -> BatchLog:
        if driver.checkpoint is None:  # foreach_batch always has a consumer id
            raise CheckpointError(f"table {driver.table_name}: the runner needs a consumer id")
        return BatchLog(driver.checkpoint)
