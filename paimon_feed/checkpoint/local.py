"""Consumer files on a local file system: atomic writes, and compare-and-set under ``flock``.

A write goes to a temp file in the same directory and is renamed over the consumer file, so a
crash never leaves a torn checkpoint. :func:`advance_file` reads, compares and renames under an
exclusive ``flock`` of the consumer directory, so writers on one host (threads or processes)
serialize; on a network file system without working ``flock``, or on Windows, it degrades to
last-writer-wins.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

from paimon_feed.checkpoint.codec import decode_checkpoint
from paimon_feed.errors import CheckpointError, CheckpointStorageError

try:  # POSIX only; without it advance_file() is last-writer-wins (see the module docstring)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["advance_file", "atomic_write", "local_path", "locked_directory"]


def local_path(path: str) -> str | None:
    """The file-system path of a local ``path`` (plain or ``file://``); ``None`` for a URL of
    another store.

    >>> local_path("file:///wh/t/consumer/consumer-a"), local_path("s3://b/t")
    ('/wh/t/consumer/consumer-a', None)
    """
    if path.startswith("file://"):
        return path[len("file://"):]
    if "://" not in path:
        return path
    return None


def advance_file(local: str, where: str, next_snapshot_id: int, text: str) -> int | None:
    """Write ``text`` to ``local`` unless the stored position is already at or past
    ``next_snapshot_id``: ``None`` when written, else the stored position that was kept.
    ``where`` names the file in errors; a corrupt stored file is never overwritten."""
    directory = os.path.dirname(local)
    try:
        os.makedirs(directory, exist_ok=True)
        with locked_directory(directory):
            try:
                with open(local, encoding="utf-8") as handle:
                    stored = decode_checkpoint(handle.read(), where)
            except FileNotFoundError:
                stored = None
            except UnicodeDecodeError as exc:  # load() refuses it too: never overwrite it
                raise CheckpointError(
                    f"corrupt consumer file {where}: not UTF-8 ({exc.reason} at byte "
                    f"{exc.start}). Fix or delete the file"
                ) from exc
            if stored is not None and stored >= next_snapshot_id:
                return stored
            atomic_write(local, text)
    except CheckpointError:
        raise
    except OSError as exc:
        raise CheckpointStorageError(
            f"cannot write consumer file {where} (next snapshot {next_snapshot_id}): {exc}"
        ) from exc
    return None


@contextlib.contextmanager
def locked_directory(directory: str) -> Iterator[None]:
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


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file and a rename: readers see the old text or
    the new one, never a part."""
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
