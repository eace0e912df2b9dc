"""CheckpointStore: one consumer's checkpoint of one table, on whatever store the table is on.

The store picks the write for the table's location: :mod:`~paimon_feed.checkpoint.local`
(``flock`` and rename), :mod:`~paimon_feed.checkpoint.s3` (conditional writes), or pypaimon's
FileIO for other stores. The guarantees of each are in :mod:`paimon_feed.checkpoint`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from paimon_feed._s3 import file_io_options, s3_client_for_options
from paimon_feed.batch import SnapshotMark
from paimon_feed.checkpoint import marks
from paimon_feed.checkpoint.codec import (
    check_next_snapshot_id,
    decode_checkpoint,
    encode_checkpoint,
    validate_consumer_id,
)
from paimon_feed.checkpoint.local import adopt_stray, advance_file, atomic_write, local_path
from paimon_feed.checkpoint.s3 import advance_object, read_object, s3_location
from paimon_feed.errors import CheckpointError, CheckpointStorageError, MissingDependencyError

__all__ = ["DEFAULT_MAX_ATTEMPTS", "SIDE_FILES", "CheckpointStore"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 5

#: The suffixes of a consumer's other side files (:meth:`CheckpointStore.side_path`), removed
#: with the consumer: ``batch``, the ``foreach_batch`` runner's batch in flight
#: (``paimon_feed.spark.batch_log``), which would otherwise be replayed by a new consumer of the
#: same id.
SIDE_FILES = ("batch",)


class CheckpointStore:
    """Reads and writes one consumer's checkpoint for one table.

    Args:
        file_io: the table's pypaimon ``FileIO`` (used by :meth:`load` and :meth:`save`).
        table_path: the table's root path or URL.
        consumer_id: names the file ``consumer/consumer-<id>``.
        catalog_options: catalog options (``fs.s3.*``) for the S3 client of :meth:`advance`;
            default: the options ``file_io`` was built with, when it exposes them.
        s3_client: a ready boto3 S3 client for :meth:`advance` (overrides ``catalog_options``).
        max_attempts: how many times :meth:`advance` tries before raising
            :class:`CheckpointConflictError`.
    """

    def __init__(
        self,
        file_io: Any,
        table_path: str,
        consumer_id: str,
        *,
        catalog_options: Mapping[str, Any] | None = None,
        s3_client: Any = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        self.consumer_id = validate_consumer_id(consumer_id)
        self.file_io = file_io
        self.path = f"{str(table_path).rstrip('/')}/consumer/consumer-{consumer_id}"
        if max_attempts < 1:
            raise CheckpointError(f"max_attempts must be >= 1, got {max_attempts}")
        self.max_attempts = max_attempts
        self._catalog_options = (
            dict(catalog_options) if catalog_options is not None else file_io_options(file_io)
        )
        self._s3_client = s3_client
        self._s3_location = s3_location(self.path)
        self._adopted = False

    def _adopt_stray(self) -> None:
        """Once per store: move a consumer file an older release wrote under the working
        directory beside the table (:func:`~paimon_feed.checkpoint.local.adopt_stray`)."""
        if not self._adopted:
            adopt_stray(self.path, self.mark_path, self.consumer_id)
            self._adopted = True

    @classmethod
    def for_table(
        cls,
        table: Any,
        consumer_id: str,
        *,
        catalog_options: Mapping[str, Any] | None = None,
        s3_client: Any = None,
    ) -> CheckpointStore:
        """The store of ``consumer_id`` for a pypaimon table.

        ``catalog_options`` add to (and override) the options the table's file IO was built
        with; they only matter for :meth:`advance` on S3.
        """
        options = file_io_options(table.file_io)
        options.update(catalog_options or {})
        return cls(
            table.file_io,
            table.table_path,
            consumer_id,
            catalog_options=options,
            s3_client=s3_client,
        )

    def load(self) -> int | None:
        """The stored next snapshot id, or ``None`` if the consumer has no checkpoint yet.

        On S3 the file is read with one GET (boto3, when the ``[s3]`` extra is installed):
        pyarrow reads a file as a HEAD for its size and then a ranged GET, so a read racing an
        overwrite can return the new text cut to the old length.
        """
        self._adopt_stray()
        client = self._optional_client()
        if client is not None:
            return self._read_s3(client, *self._s3_location)[0]  # type: ignore[misc]
        if local_path(self.path) is None:
            for attempt in range(1, 3):  # other remote stores: a torn read looks corrupt
                text = self._read_via_file_io()
                try:
                    return None if text is None else decode_checkpoint(text, self.path)
                except CheckpointError:
                    time.sleep(0.05 * attempt)
        text = self._read_via_file_io()
        return None if text is None else decode_checkpoint(text, self.path)

    def _read_via_file_io(self) -> str | None:
        try:
            if not self.file_io.exists(self.path):
                return None
            text: str = self.file_io.read_file_utf8(self.path)
            return text
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise CheckpointStorageError(f"cannot read consumer file {self.path}: {exc}") from exc

    def save(self, next_snapshot_id: int) -> None:
        """Store ``next_snapshot_id`` as the consumer's position, unconditionally.

        Last writer wins, and an older position overwrites a newer one: use this to rewind a
        consumer, and :meth:`advance` to record progress when other writers may exist.
        """
        text = self._encode(next_snapshot_id)
        self._adopt_stray()
        try:
            self._write(self.path, text)
        except Exception as exc:
            raise CheckpointStorageError(
                f"cannot write consumer file {self.path} (next snapshot {next_snapshot_id}): {exc}"
            ) from exc
        logger.debug("consumer %s: checkpoint at snapshot %d", self.consumer_id, next_snapshot_id)

    def _write(self, path: str, text: str) -> None:
        local = local_path(path)
        client = self._optional_client() if local is None else None
        if local is not None:
            atomic_write(local, text)
        elif client is not None:  # one PUT; pyarrow's writer sends five requests
            bucket, key = s3_location(path)  # type: ignore[misc]
            client.put_object(Bucket=bucket, Key=key, Body=text.encode("utf-8"))
        else:
            self.file_io.overwrite_file_utf8(path, text)

    # the mark beside the consumer file (paimon_feed.checkpoint.marks) --------------------
    @property
    def mark_path(self) -> str:
        """Our side file: the :class:`SnapshotMark` of the snapshot before the checkpoint
        (:mod:`paimon_feed.checkpoint.marks`)."""
        return marks.mark_path(self.path, self.consumer_id)

    def load_mark(self) -> tuple[int, SnapshotMark] | None:
        """``(next_snapshot_id, mark)`` as :meth:`save_mark` stored them, or ``None`` if there is
        no usable mark (none written yet, or unreadable: logged, and the check it serves is
        skipped, never the checkpoint)."""
        self._adopt_stray()
        return marks.load_mark(self.file_io, self.mark_path, self.consumer_id)

    def save_mark(self, next_snapshot_id: int, mark: SnapshotMark) -> None:
        """Record that the checkpoint ``next_snapshot_id`` follows the commit ``mark``."""
        marks.save_mark(self._write, self.mark_path, next_snapshot_id, mark)

    def delete_mark(self) -> None:
        """Remove the mark file and the other side files (:data:`SIDE_FILES`), if any: they go
        with the consumer they belong to."""
        marks.delete_mark(self.file_io, self.mark_path)
        for suffix in SIDE_FILES:
            marks.delete_mark(self.file_io, self.side_path(suffix))

    def side_path(self, suffix: str) -> str:
        """Another side file of this consumer, ``consumer/.paimon-feed-<id>.<suffix>`` (a name
        Java's consumer manager does not list)."""
        return f"{self.path.rsplit('/', 1)[0]}/.paimon-feed-{self.consumer_id}.{suffix}"

    def save_side(self, suffix: str, text: str) -> None:
        """Write the side file :meth:`side_path` ``(suffix)`` (one PUT on S3)."""
        path = self.side_path(suffix)
        try:
            self._write(path, text)
        except Exception as exc:
            raise CheckpointError(f"cannot write {path}: {exc}") from exc

    def load_side(self, suffix: str) -> str | None:
        """The text of the side file :meth:`side_path` ``(suffix)``, or ``None`` if absent."""
        path = self.side_path(suffix)
        try:
            if not self.file_io.exists(path):
                return None
            text: str = self.file_io.read_file_utf8(path)
            return text
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise CheckpointError(f"cannot read {path}: {exc}") from exc

    # compare-and-set -----------------------------------------------------------------------
    def advance(self, next_snapshot_id: int) -> bool:
        """Move the checkpoint forward to ``next_snapshot_id``; never backwards.

        Returns ``True`` if this call stored ``next_snapshot_id``, ``False`` if the stored
        position was already at or past it (another writer got further; the caller may
        :meth:`load` it and skip ahead). Safe with concurrent writers (see
        :mod:`paimon_feed.checkpoint` for the guarantee on each store). Raises
        :class:`CheckpointConflictError` when an S3 write keeps losing races after
        ``max_attempts`` tries, and :class:`CheckpointError` for a corrupt stored file or a
        failed read or write.
        """
        text = self._encode(next_snapshot_id)
        self._adopt_stray()
        if self._s3_location is not None:
            bucket, key = self._s3_location
            client = self._client()
            kept = advance_object(
                client, bucket, key, read=lambda: self._read_s3(client, bucket, key),
                where=self.path, consumer_id=self.consumer_id,
                next_snapshot_id=next_snapshot_id, text=text, max_attempts=self.max_attempts,
            )
        elif (local := local_path(self.path)) is not None:
            kept = advance_file(local, self.path, next_snapshot_id, text)
        else:
            # Other stores (oss://, hdfs://...): read, compare, overwrite.
            stored = self.load()
            kept = stored if stored is not None and stored >= next_snapshot_id else None
            if kept is None:
                self.save(next_snapshot_id)
        if kept is not None:
            logger.debug(
                "consumer %s: checkpoint already at snapshot %d, not moving it to %d",
                self.consumer_id, kept, next_snapshot_id,
            )
            return False
        logger.debug(
            "consumer %s: checkpoint advanced to snapshot %d", self.consumer_id, next_snapshot_id
        )
        return True

    def _read_s3(self, client: Any, bucket: str, key: str) -> tuple[int | None, str | None]:
        """The stored position and the ETag it was read at; ``(None, None)`` if absent."""
        return read_object(client, bucket, key, self.path)

    def _encode(self, next_snapshot_id: int) -> str:
        return encode_checkpoint(check_next_snapshot_id(self.consumer_id, next_snapshot_id))

    def _optional_client(self) -> Any:
        """The boto3 client of an S3 table, or ``None``: not on S3, or no ``[s3]`` extra."""
        if self._s3_location is None:
            return None
        try:
            return self._client()
        except MissingDependencyError:
            return None

    def _client(self) -> Any:
        if self._s3_client is None:
            self._s3_client = s3_client_for_options(
                self._catalog_options, "conditional checkpoint writes on S3"
            )
        return self._s3_client
