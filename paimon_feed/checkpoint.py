"""Consumer checkpoints in Paimon's own consumer files.

A checkpoint is ``{table}/consumer/consumer-{id}`` holding ``{"nextSnapshot": N}``: the first
snapshot the consumer has *not* processed. Java Paimon reads the same file, so its snapshot
expiration keeps every snapshot from ``N`` on while the consumer exists. We write the bytes Java
writes (Jackson's default pretty printer), so the two are interchangeable.

Local files are written to a temp file and renamed, so a crash never leaves a torn checkpoint.

Two ways to write:

- :meth:`CheckpointStore.save` stores a position unconditionally (last writer wins; it may move
  the checkpoint backwards on purpose, to rewind a consumer). On S3 with the ``[s3]`` extra it
  is one ``PUT`` through boto3; through pyarrow's file system the same write takes five
  requests (a ``HEAD`` and a ``LIST`` of the directory, then a three-request multipart upload).
- :meth:`CheckpointStore.advance` only ever moves it forward, and is safe with concurrent writers
  of the same consumer (two Lambda invocations for one table, say): no writer loses another's
  progress and none moves the checkpoint backwards.

  - ``s3://`` / ``s3a://`` tables: compare-and-swap with S3 conditional writes. The consumer
    file is read with its ETag and written with ``If-Match: <etag>`` (``If-None-Match: *`` when
    it does not exist yet); a writer that lost the race (HTTP 412, or 409 while another
    conditional write is in flight) reads again and retries, and gives up with
    :class:`CheckpointConflictError` after ``max_attempts``. Needs the ``[s3]`` extra (boto3);
    the client is built from the catalog's ``fs.s3.*`` options (endpoint, region, credentials,
    ``path-style-access``), falling back to boto's default credential chain. The store must
    honour conditional writes: AWS S3 does (since 2024), as do moto and MinIO; a store that
    ignores ``If-Match`` degrades to last-writer-wins.
  - Local files: read, compare and rename under an exclusive ``flock`` of the consumer directory,
    so writers on one host (threads or processes) serialize. On a network file system without
    working ``flock``, or on Windows, it degrades to last-writer-wins.
  - Other stores (``oss://``, ``hdfs://``...): read, compare, overwrite; never backwards against
    a writer that finished before the read, last-writer-wins against one that raced it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import re
import tempfile
import time
from typing import Any, Iterator, Mapping
from urllib.parse import urlparse

from paimon_feed.batch import SnapshotMark
from paimon_feed.errors import (
    CheckpointConflictError,
    CheckpointError,
    InvalidConsumerIdError,
    MissingDependencyError,
    brief_repr,
)
from paimon_feed.s3_clients import file_io_options, s3_client_for_options
from paimon_feed.start import MAX_SNAPSHOT_ID

try:  # POSIX only; without it local advance() is last-writer-wins (see the module docstring)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CheckpointStore",
    "validate_consumer_id",
    "encode_checkpoint",
    "decode_checkpoint",
]

logger = logging.getLogger(__name__)

_CONSUMER_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")
_S3_SCHEMES = ("s3", "s3a", "s3n")
_CONFLICT_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
DEFAULT_MAX_ATTEMPTS = 5


def validate_consumer_id(consumer_id: str) -> str:
    """Return ``consumer_id`` if it makes a safe file name, else raise.

    >>> validate_consumer_id("orders-etl")
    'orders-etl'
    """
    if not isinstance(consumer_id, str) or not _CONSUMER_ID.fullmatch(consumer_id):
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
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CheckpointError(
            f"corrupt consumer file {where}: expected {{\"nextSnapshot\": N}}, got "
            f"{text[:80]!r}. Fix or delete the file (the consumer then starts from its start "
            f"position)"
        ) from exc
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SNAPSHOT_ID:
        raise CheckpointError(
            f"corrupt consumer file {where}: nextSnapshot must be an integer from 1 to "
            f"{MAX_SNAPSHOT_ID} (a Java long), got {value!r}"
        )
    return value


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
        self._s3_location = _s3_location(self.path)

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
        client = self._optional_client()
        if client is not None:
            return self._read_s3(client, *self._s3_location)[0]  # type: ignore[misc]
        if _local_path(self.path) is None:
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
            return self.file_io.read_file_utf8(self.path)
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise CheckpointError(f"cannot read consumer file {self.path}: {exc}") from exc

    def save(self, next_snapshot_id: int) -> None:
        """Store ``next_snapshot_id`` as the consumer's position, unconditionally.

        Last writer wins, and an older position overwrites a newer one: use this to rewind a
        consumer, and :meth:`advance` to record progress when other writers may exist.
        """
        text = self._encode(next_snapshot_id)
        try:
            self._write(self.path, text)
        except Exception as exc:
            raise CheckpointError(
                f"cannot write consumer file {self.path} (next snapshot {next_snapshot_id}): {exc}"
            ) from exc
        logger.debug("consumer %s: checkpoint at snapshot %d", self.consumer_id, next_snapshot_id)

    def _write(self, path: str, text: str) -> None:
        local = _local_path(path)
        client = self._optional_client() if local is None else None
        if local is not None:
            _atomic_write(local, text)
        elif client is not None:  # one PUT; pyarrow's writer sends five requests
            bucket, key = _s3_location(path)  # type: ignore[misc]
            client.put_object(Bucket=bucket, Key=key, Body=text.encode("utf-8"))
        else:
            self.file_io.overwrite_file_utf8(path, text)

    # the mark beside the consumer file ---------------------------------------------------
    @property
    def mark_path(self) -> str:
        """Our side file: the :class:`SnapshotMark` of the snapshot before the checkpoint.

        Java reads the consumer file, so what a restart needs to check the table's history
        lives beside it, under a name Java's consumer manager does not list (it lists
        ``consumer-*``).
        """
        return f"{self.path.rsplit('/', 1)[0]}/.paimon-feed-{self.consumer_id}.mark"

    def load_mark(self) -> tuple[int, SnapshotMark] | None:
        """``(next_snapshot_id, mark)`` as :meth:`save_mark` stored them, or ``None`` if there is
        no usable mark (none written yet, or unreadable: logged, and the check it serves is
        skipped, never the checkpoint)."""
        try:
            if not self.file_io.exists(self.mark_path):
                return None
            data = json.loads(self.file_io.read_file_utf8(self.mark_path))
            return int(data["nextSnapshot"]), SnapshotMark.from_json(data["snapshot"])
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - a side file must never block the consumer
            logger.warning(
                "consumer %s: ignoring unreadable mark file %s (%s); history continuity since "
                "the checkpoint cannot be checked", self.consumer_id, self.mark_path, exc,
            )
            return None

    def save_mark(self, next_snapshot_id: int, mark: SnapshotMark) -> None:
        """Record that the checkpoint ``next_snapshot_id`` follows the commit ``mark``."""
        text = json.dumps({"nextSnapshot": next_snapshot_id, "snapshot": mark.to_json()})
        try:
            self._write(self.mark_path, text)
        except Exception as exc:
            raise CheckpointError(f"cannot write mark file {self.mark_path}: {exc}") from exc

    def delete_mark(self) -> None:
        """Remove the mark file, if any (with the consumer it belongs to)."""
        local = _local_path(self.mark_path)
        try:
            if local is not None:
                os.unlink(local)
            elif self.file_io.exists(self.mark_path):
                self.file_io.delete(self.mark_path, False)
        except FileNotFoundError:
            pass

    def advance(self, next_snapshot_id: int) -> bool:
        """Move the checkpoint forward to ``next_snapshot_id``; never backwards.

        Returns ``True`` if this call stored ``next_snapshot_id``, ``False`` if the stored
        position was already at or past it (another writer got further; the caller may
        :meth:`load` it and skip ahead). Safe with concurrent writers (see the module
        docstring for the guarantee on each store). Raises :class:`CheckpointConflictError`
        when an S3 write keeps losing races after ``max_attempts`` tries, and
        :class:`CheckpointError` for a corrupt stored file or a failed read or write.
        """
        text = self._encode(next_snapshot_id)
        if self._s3_location is not None:
            return self._advance_s3(next_snapshot_id, text)
        local = _local_path(self.path)
        if local is not None:
            return self._advance_local(local, next_snapshot_id, text)
        return self._advance_other(next_snapshot_id)

    # writes ------------------------------------------------------------------------------
    def _encode(self, next_snapshot_id: int) -> str:
        if (
            isinstance(next_snapshot_id, bool)
            or not isinstance(next_snapshot_id, int)
            or not 1 <= next_snapshot_id <= MAX_SNAPSHOT_ID
        ):
            raise CheckpointError(
                f"consumer {self.consumer_id}: next snapshot id must be an integer from 1 to "
                f"{MAX_SNAPSHOT_ID} (Java Paimon reads it as a long), got "
                f"{brief_repr(next_snapshot_id)}"
            )
        return encode_checkpoint(next_snapshot_id)

    def _advance_local(self, local: str, next_snapshot_id: int, text: str) -> bool:
        directory = os.path.dirname(local)
        try:
            os.makedirs(directory, exist_ok=True)
            with _locked_directory(directory):
                try:
                    with open(local, encoding="utf-8") as handle:
                        stored = decode_checkpoint(handle.read(), self.path)
                except FileNotFoundError:
                    stored = None
                except UnicodeDecodeError as exc:  # load() refuses it too: never overwrite it
                    raise CheckpointError(
                        f"corrupt consumer file {self.path}: not UTF-8 ({exc.reason} at byte "
                        f"{exc.start}). Fix or delete the file"
                    ) from exc
                if stored is not None and stored >= next_snapshot_id:
                    return self._kept(stored, next_snapshot_id)
                _atomic_write(local, text)
        except CheckpointError:
            raise
        except OSError as exc:
            raise CheckpointError(
                f"cannot write consumer file {self.path} (next snapshot {next_snapshot_id}): {exc}"
            ) from exc
        logger.debug(
            "consumer %s: checkpoint advanced to snapshot %d", self.consumer_id, next_snapshot_id
        )
        return True

    def _advance_other(self, next_snapshot_id: int) -> bool:
        stored = self.load()
        if stored is not None and stored >= next_snapshot_id:
            return self._kept(stored, next_snapshot_id)
        self.save(next_snapshot_id)
        return True

    def _advance_s3(self, next_snapshot_id: int, text: str) -> bool:
        bucket, key = self._s3_location  # type: ignore[misc]
        client = self._client()
        body = text.encode("utf-8")
        for attempt in range(1, self.max_attempts + 1):
            stored, etag = self._read_s3(client, bucket, key)
            if stored is not None and stored >= next_snapshot_id:
                return self._kept(stored, next_snapshot_id)
            condition = {"IfMatch": etag} if etag is not None else {"IfNoneMatch": "*"}
            try:
                client.put_object(Bucket=bucket, Key=key, Body=body, **condition)
            except Exception as exc:
                code = _error_code(exc)
                # 404 on If-Match: the file was deleted since we read it; read again.
                deleted = etag is not None and code in _MISSING_CODES
                if code not in _CONFLICT_CODES and not deleted:
                    raise CheckpointError(
                        f"cannot write consumer file {self.path} (next snapshot "
                        f"{next_snapshot_id}): {exc}"
                    ) from exc
                logger.debug(
                    "consumer %s: checkpoint write of snapshot %d lost a race (%s, attempt %d/%d)",
                    self.consumer_id, next_snapshot_id, code, attempt, self.max_attempts,
                )
                if attempt < self.max_attempts:
                    time.sleep(random.uniform(0.0, 0.05 * 2 ** (attempt - 1)))
                continue
            logger.debug(
                "consumer %s: checkpoint advanced to snapshot %d",
                self.consumer_id, next_snapshot_id,
            )
            return True
        raise CheckpointConflictError(
            f"consumer {self.consumer_id}: checkpoint write of snapshot {next_snapshot_id} to "
            f"{self.path} lost {self.max_attempts} races in a row to other writers; the stored "
            f"position is unchanged by this call. Retry later, or run fewer concurrent writers "
            f"for this consumer"
        )

    def _read_s3(self, client: Any, bucket: str, key: str) -> tuple[int | None, str | None]:
        """The stored position and the ETag it was read at; ``(None, None)`` if absent."""
        try:
            response = client.get_object(Bucket=bucket, Key=key)
            text = response["Body"].read().decode("utf-8", errors="replace")
        except Exception as exc:
            if _error_code(exc) in _MISSING_CODES:
                return None, None
            raise CheckpointError(f"cannot read consumer file {self.path}: {exc}") from exc
        return decode_checkpoint(text, self.path), response["ETag"]

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
            self._s3_client = s3_client_for_options(self._catalog_options, "conditional checkpoint writes on S3")
        return self._s3_client

    def _kept(self, stored: int, next_snapshot_id: int) -> bool:
        logger.debug(
            "consumer %s: checkpoint already at snapshot %d, not moving it to %d",
            self.consumer_id, stored, next_snapshot_id,
        )
        return False


def _error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return None
    code = (response.get("Error") or {}).get("Code")
    if code:
        return str(code)
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return str(status) if status else None


# paths -----------------------------------------------------------------------------------
def _s3_location(path: str) -> tuple[str, str] | None:
    parsed = urlparse(path)
    if parsed.scheme.lower() not in _S3_SCHEMES:
        return None
    return parsed.netloc, parsed.path.lstrip("/")


def _local_path(path: str) -> str | None:
    if path.startswith("file://"):
        return path[len("file://"):]
    if "://" not in path:
        return path
    return None


@contextlib.contextmanager
def _locked_directory(directory: str) -> Iterator[None]:
    """An exclusive ``flock`` on ``directory`` (a no-op where ``fcntl`` does not exist).

    Locking the directory rather than a lock file leaves nothing behind for Java Paimon's
    consumer listing to trip over.
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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
