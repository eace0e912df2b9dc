"""The watchfiles fallback of :class:`~paimon_feed.notifiers.local.LocalNotifier`: one watch per
table, where the shared inotify watcher is not available (macOS, Windows, ``force_polling``)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchfiles import Change, awatch

from paimon_feed._layout import SNAPSHOT_DIR, local_path, snapshot_id_from_name
from paimon_feed.notifiers.base import SnapshotHint

__all__ = ["watch_table"]

logger = logging.getLogger("paimon_feed.notifiers.local")

SOURCE = "local"


async def watch_table(
    key: str,
    dispatch: Callable[[SnapshotHint], Any],
    stop: asyncio.Event,
    watching: asyncio.Event,
    *,
    debounce_ms: int,
    step_ms: int,
    force_polling: bool,
    on_failure: Callable[[str], None],
) -> None:
    """Watch table ``key``'s ``snapshot/`` (its root until that exists) and ``dispatch`` a hint
    per committed snapshot file, until ``stop``; ``watching`` is set once the watch is up."""
    table_dir = Path(local_path(key))
    snapshot_dir = table_dir / SNAPSHOT_DIR
    try:
        while not stop.is_set():
            target = snapshot_dir if snapshot_dir.is_dir() else table_dir
            watching.set()
            moved = False
            async for changes in awatch(
                target, watch_filter=_snapshot_filter(str(snapshot_dir)),
                debounce=debounce_ms, step=step_ms, stop_event=stop,
                recursive=False, force_polling=force_polling,
            ):
                detected_at = time.time()
                for _, path in sorted(changes, key=lambda change: change[1]):
                    if path == str(snapshot_dir):
                        moved = target != snapshot_dir
                        continue
                    snapshot_id = snapshot_id_from_name(os.path.basename(path))
                    dispatch(SnapshotHint(key, snapshot_id, SOURCE, detected_at))
                if moved:
                    dispatch(SnapshotHint(key, None, SOURCE, detected_at))
                    break
            if not moved:
                return
    except asyncio.CancelledError:
        stop.set()
        raise
    except Exception:
        # A dead watcher must not take the feed down: the reconcile check still finds
        # every snapshot, only later. Say so loudly and report the notifier unhealthy.
        logger.exception("local watch of %s failed; feeds fall back to polling", table_dir)
        on_failure(f"watch of {table_dir} failed")
    finally:
        watching.set()


def _snapshot_filter(snapshot_dir: str) -> Callable[[Change, str], bool]:
    """Accept committed snapshot files, and the ``snapshot`` directory appearing."""

    def accept(change: Change, path: str) -> bool:
        if change == Change.deleted:
            return False
        return path == snapshot_dir or snapshot_id_from_name(os.path.basename(path)) is not None

    return accept
