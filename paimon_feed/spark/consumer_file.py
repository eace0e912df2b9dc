"""The query's consumer file, written off Spark's critical path."""

from __future__ import annotations

import logging
import threading

from paimon_feed.batch import SnapshotMark
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import CheckpointError

__all__ = ["ConsumerFileWriter", "CONSUMER_CLOSE_TIMEOUT_S"]

logger = logging.getLogger(__name__)

#: How long closing waits for the last write (seconds).
CONSUMER_CLOSE_TIMEOUT_S = 30.0


class ConsumerFileWriter:
    """Writes a query's consumer file off Spark's critical path.

    The driver learns that micro-batch N completed when Spark asks for batch N+1's end offset,
    between batches, so a write there (a PUT on S3) would delay every micro-batch. Here
    :meth:`submit` only records the position, and one thread writes the newest position
    submitted: the file only ever holds positions Spark committed (it never leads), and
    commits that come while a write is in flight cost one write. A failed write is logged and
    retried with the next position; :meth:`close` writes what is still unwritten (once).
    """

    def __init__(self, store: CheckpointStore, table_name: str) -> None:
        self._store = store
        self._table_name = table_name
        self._changed = threading.Condition()
        self._wanted: int | None = None
        self._wanted_mark: SnapshotMark | None = None
        self._submitted = 0  # submissions so far; the writer handles each count once
        self._handled = 0
        self._closing = False
        self._writing = False
        self._retried_at_close = False
        self.written: int | None = None  # the position last written successfully
        self._thread = threading.Thread(
            target=self._run, name=f"paimon-feed-consumer-{store.consumer_id}", daemon=True
        )
        self._thread.start()

    def submit(self, next_snapshot_id: int, mark: SnapshotMark | None = None) -> None:
        with self._changed:
            self._wanted = next_snapshot_id
            self._wanted_mark = mark
            self._submitted += 1
            self._changed.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until every submitted position was handled (written, or failed and left for
        the next one); ``False`` if that took longer than ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._handled == self._submitted and not self._writing, timeout
            )

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._closing or self._submitted != self._handled)
                new = self._submitted != self._handled
                if not new and (self._wanted is None or self._wanted == self.written):
                    return  # closing, everything written
                target, self._handled, last = self._wanted, self._submitted, self._closing
                assert target is not None  # a submission set it, or it returned above
                mark = self._wanted_mark
                self._writing = True
            try:
                self._store.save(target)
                if mark is not None and mark.snapshot_id == target - 1:
                    self._store.save_mark(target, mark)
                self.written = target
            except CheckpointError as exc:
                # Spark's checkpoint has the progress; the consumer file only protects unread
                # snapshots from expiry, and the next commit (or close) writes it again.
                logger.warning("%s; retrying at the next commit", exc)
                if last:
                    if self._retried_at_close:
                        return
                    self._retried_at_close = True
            finally:
                with self._changed:
                    self._writing = False
                    self._changed.notify_all()

    def close(self) -> None:
        """Write what is pending, then stop. Idempotent."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join(CONSUMER_CLOSE_TIMEOUT_S)
        if self._thread.is_alive():
            logger.warning(
                "table %s: the consumer file write still runs after %.0fs; the file may trail "
                "the query by more than one micro-batch", self._table_name, CONSUMER_CLOSE_TIMEOUT_S,
            )
