"""Consumer checkpoints in Paimon's own consumer files.

A checkpoint is ``{table}/consumer/consumer-{id}`` holding ``{"nextSnapshot": N}``: the first
snapshot the consumer has *not* processed. Java Paimon reads the same file, so its snapshot
expiration keeps every snapshot from ``N`` on while the consumer exists. We write the bytes Java
writes (Jackson's default pretty printer), so the two are interchangeable.

Local files are written to a temp file and renamed, so a crash never leaves a torn checkpoint.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from typing import Any

from paimon_feed.errors import CheckpointError, InvalidConsumerIdError

__all__ = ["CheckpointStore", "validate_consumer_id", "encode_checkpoint", "decode_checkpoint"]

logger = logging.getLogger(__name__)

_CONSUMER_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$")


def validate_consumer_id(consumer_id: str) -> str:
    """Return ``consumer_id`` if it makes a safe file name, else raise.

    >>> validate_consumer_id("orders-etl")
    'orders-etl'
    """
    if not isinstance(consumer_id, str) or not _CONSUMER_ID.match(consumer_id):
        raise InvalidConsumerIdError(
            f"invalid consumer id {consumer_id!r}: use 1-200 letters, digits, '.', '_' or '-', "
            f"not starting with '.' or '-' (it names the file consumer/consumer-<id>)"
        )
    return consumer_id


def encode_checkpoint(next_snapshot_id: int) -> str:
    """The exact text Java Paimon writes for a consumer at ``next_snapshot_id``.

    >>> print(encode_checkpoint(42))
    {
      "nextSnapshot" : 42
    }
    """
    return '{\n  "nextSnapshot" : %d\n}' % next_snapshot_id


def decode_checkpoint(text: str, where: str) -> int:
    """Parse a consumer file's text; ``where`` names the file in errors."""
    try:
        value = json.loads(text)["nextSnapshot"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(
            f"corrupt consumer file {where}: expected {{\"nextSnapshot\": N}}, got "
            f"{text[:80]!r}. Fix or delete the file (the consumer then starts from its start "
            f"position)"
        ) from exc
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CheckpointError(
            f"corrupt consumer file {where}: nextSnapshot must be a positive integer, got "
            f"{value!r}"
        )
    return value


class CheckpointStore:
    """Reads and writes one consumer's checkpoint for one table."""

    def __init__(self, file_io: Any, table_path: str, consumer_id: str) -> None:
        self.consumer_id = validate_consumer_id(consumer_id)
        self.file_io = file_io
        self.path = f"{str(table_path).rstrip('/')}/consumer/consumer-{consumer_id}"

    @classmethod
    def for_table(cls, table: Any, consumer_id: str) -> CheckpointStore:
        return cls(table.file_io, table.table_path, consumer_id)

    def load(self) -> int | None:
        """The stored next snapshot id, or ``None`` if the consumer has no checkpoint yet."""
        try:
            if not self.file_io.exists(self.path):
                return None
            text = self.file_io.read_file_utf8(self.path)
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise CheckpointError(f"cannot read consumer file {self.path}: {exc}") from exc
        return decode_checkpoint(text, self.path)

    def save(self, next_snapshot_id: int) -> None:
        """Store ``next_snapshot_id`` as the consumer's position."""
        if isinstance(next_snapshot_id, bool) or not isinstance(next_snapshot_id, int) or next_snapshot_id < 1:
            raise CheckpointError(
                f"consumer {self.consumer_id}: next snapshot id must be a positive integer, "
                f"got {next_snapshot_id!r}"
            )
        text = encode_checkpoint(next_snapshot_id)
        try:
            local = _local_path(self.path)
            if local is not None:
                _atomic_write(local, text)
            else:
                self.file_io.overwrite_file_utf8(self.path, text)
        except Exception as exc:
            raise CheckpointError(
                f"cannot write consumer file {self.path} (next snapshot {next_snapshot_id}): {exc}"
            ) from exc
        logger.debug("consumer %s: checkpoint at snapshot %d", self.consumer_id, next_snapshot_id)


def _local_path(path: str) -> str | None:
    if path.startswith("file://"):
        return path[len("file://"):]
    if "://" not in path:
        return path
    return None


def _atomic_write(path: str, text: str) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".consumer-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
