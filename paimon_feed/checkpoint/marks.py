"""Our side file beside a consumer file: what a restart needs to check the table's history.

Java reads the consumer file, so its bytes stay Java's (:mod:`paimon_feed.checkpoint.codec`).
What :mod:`paimon_feed.progress` needs to tell whether the table still continues what was
delivered (the :class:`~paimon_feed.batch.SnapshotMark` of the snapshot before the checkpoint)
lives in ``consumer/.paimon-feed-<id>.mark``, a name Java's consumer manager does not list (it
lists ``consumer-*``). The mark is only trusted while its ``nextSnapshot`` equals the
checkpoint's; an unreadable one is logged and skipped, never a reason to stop the consumer.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

from paimon_feed.batch import SnapshotMark
from paimon_feed.checkpoint.local import local_path
from paimon_feed.errors import CheckpointStorageError

__all__ = ["delete_mark", "load_mark", "mark_path", "save_mark"]

logger = logging.getLogger(__name__)


def mark_path(consumer_path: str, consumer_id: str) -> str:
    """The mark file beside the consumer file ``consumer_path``.

    >>> mark_path("s3://b/wh/db.db/t/consumer/consumer-etl", "etl")
    's3://b/wh/db.db/t/consumer/.paimon-feed-etl.mark'
    """
    return f"{consumer_path.rsplit('/', 1)[0]}/.paimon-feed-{consumer_id}.mark"


def load_mark(file_io: Any, path: str, consumer_id: str) -> tuple[int, SnapshotMark] | None:
    """``(next_snapshot_id, mark)`` as :func:`save_mark` stored them, or ``None`` if there is
    no usable mark (none written yet, or unreadable: logged, and the check it serves is
    skipped, never the checkpoint)."""
    try:
        if not file_io.exists(path):
            return None
        data = json.loads(file_io.read_file_utf8(path))
        return int(data["nextSnapshot"]), SnapshotMark.from_json(data["snapshot"])
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a side file must never block the consumer
        logger.warning(
            "consumer %s: ignoring unreadable mark file %s (%s); history continuity since "
            "the checkpoint cannot be checked", consumer_id, path, exc,
        )
        return None


def save_mark(
    write: Callable[[str, str], None], path: str, next_snapshot_id: int, mark: SnapshotMark
) -> None:
    """Record, with ``write(path, text)``, that the checkpoint ``next_snapshot_id`` follows
    the commit ``mark``."""
    text = json.dumps({"nextSnapshot": next_snapshot_id, "snapshot": mark.to_json()})
    try:
        write(path, text)
    except Exception as exc:
        raise CheckpointStorageError(f"cannot write mark file {path}: {exc}") from exc


def delete_mark(file_io: Any, path: str) -> None:
    """Remove the mark file, if any (with the consumer it belongs to)."""
    local = local_path(path)
    try:
        if local is not None:
            os.unlink(local)
        elif file_io.exists(path):
            file_io.delete(path, False)
    except FileNotFoundError:
        pass
