"""Consumer files on a local file system: atomic writes, and compare-and-set under ``flock``.

A write goes to a temp file in the same directory and is renamed over the consumer file, so a
crash never leaves a torn checkpoint. :func:`advance_file` reads, compares and renames under an
exclusive ``flock`` of the consumer directory, so writers on one host (threads or processes)
serialize; on a network file system without working ``flock``, or on Windows, it degrades to
last-writer-wins.

Files are created the way Java Paimon creates them, with mode ``0666`` less the umask (``0644``
under umask 022), like every other file of the table; a file written as ``0600`` by an older
release gets that mode at its next write, because every write renames a new file over it.

Before ``file:/path`` table locations (one slash) were read as URLs, their consumer files were
written under the working directory (``<cwd>/file:/path/consumer/``), where Java's expiry never
looks; :func:`adopt_stray` moves such a file beside the table.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Iterator

from paimon_feed import _layout
from paimon_feed.checkpoint.codec import decode_checkpoint
from paimon_feed.errors import CheckpointError, CheckpointStorageError

try:  # POSIX only; without it advance_file() is last-writer-wins (see the module docstring)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["adopt_stray", "advance_file", "atomic_write", "local_path", "locked_directory"]

logger = logging.getLogger(__name__)


def local_path(path: str) -> str | None:
    """The file-system path of a local ``path`` (plain, ``file:/`` or ``file:///``); ``None``
    for a URL of another store.

    >>> local_path("file:///wh/t/consumer/consumer-a"), local_path("file:/wh/t"), local_path("s3://b/t")
    ('/wh/t/consumer/consumer-a', '/wh/t', None)
    """
    return _layout.local_path(path) if _layout.is_local(path) else None


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
    temp = os.path.join(directory, f".consumer-{uuid.uuid4().hex}.tmp")
    # 0666 less the umask, as Java writes it (mkstemp would make it 0600).
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
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


def stray_path(path: str) -> str | None:
    """Where releases that read ``file:/path`` (one slash) as a relative path put the file of
    ``path``: under the working directory. ``None`` for every other spelling.

    >>> os.path.relpath(stray_path("file:/wh/t/consumer/consumer-a"))
    'file:/wh/t/consumer/consumer-a'
    >>> stray_path("file:///wh/t/consumer/consumer-a"), stray_path("/wh/t/consumer/consumer-a")
    (None, None)
    """
    if not path.startswith("file:/") or path.startswith("file://"):
        return None
    return os.path.join(os.getcwd(), path)


def adopt_stray(path: str, mark: str, consumer_id: str) -> None:
    """Move consumer ``consumer_id``'s consumer file ``path`` and its ``mark`` from where older
    releases wrote them (:func:`stray_path`) beside the table, with a WARNING naming both places.

    A stray file equal to the table's is removed; one that differs from the table's is a
    :class:`CheckpointError` naming both files, since either may hold the consumer's position.
    """
    stray = stray_path(path)
    if stray is None or not os.path.exists(stray):
        return
    target = local_path(path)
    assert target is not None  # a file: URL is local
    try:
        with open(stray, encoding="utf-8") as handle:
            text = handle.read()
        try:
            with open(target, encoding="utf-8") as handle:
                existing: str | None = handle.read()
        except FileNotFoundError:
            existing = None
        if existing is not None and existing != text:
            raise CheckpointError(
                f"consumer {consumer_id} has two consumer files: {target} (beside the table) and "
                f"{stray} (written under the working directory by an older paimon-feed, which "
                f"read the table location {path.rsplit('/consumer/', 1)[0]} as a relative path). "
                "Keep the one holding the position to resume from: delete the other, or move it "
                "over the first"
            )
        if existing is None:
            atomic_write(target, text)
        os.unlink(stray)
        stray_mark, target_mark = stray_path(mark), local_path(mark)
        if stray_mark is not None and target_mark is not None and os.path.exists(stray_mark):
            if not os.path.exists(target_mark):
                with open(stray_mark, encoding="utf-8") as handle:
                    atomic_write(target_mark, handle.read())
            os.unlink(stray_mark)
    except OSError as exc:
        raise CheckpointError(
            f"cannot move consumer {consumer_id}'s file {stray} (written under the working "
            f"directory by an older paimon-feed) to {target}: {exc}. Move it by hand"
        ) from exc
    logger.warning(
        "consumer %s: moved its consumer file from %s, where an older paimon-feed wrote it "
        "(it read the table location as a relative path), to %s beside the table",
        consumer_id, stray, target,
    )
