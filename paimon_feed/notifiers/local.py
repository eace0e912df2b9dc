"""LocalNotifier: inotify (through watchfiles) on a table's snapshot directory.

Only committed ``snapshot-N`` files wake a feed: Paimon writes ``.snapshot-N.<uuid>.tmp`` and
renames it, then rewrites ``LATEST``; the temp file and the hint files are filtered out in Rust
before they reach Python. watchfiles' defaults batch changes for up to 1.6 s; here a batch ends
after ``step_ms`` of quiet (default 2 ms), which is what makes local push take milliseconds.

A table without a ``snapshot/`` directory yet (created, never committed) is watched at its root
until the directory appears, then the watch moves to it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path

from watchfiles import Change, awatch

from paimon_feed.notifiers.base import (
    Notifier,
    SnapshotHint,
    Subscription,
    cancel_and_wait,
    snapshot_id_from_name,
)

__all__ = ["LocalNotifier"]

logger = logging.getLogger(__name__)


def _local_dir(table_url: str) -> Path:
    return Path(table_url[len("file://"):] if table_url.startswith("file://") else table_url)


class _SnapshotFilter:
    """Accept committed snapshot files, and the ``snapshot`` directory appearing."""

    def __init__(self, snapshot_dir: str) -> None:
        self.snapshot_dir = snapshot_dir

    def __call__(self, change: Change, path: str) -> bool:
        if change == Change.deleted:
            return False
        if path == self.snapshot_dir:
            return True
        return snapshot_id_from_name(os.path.basename(path)) is not None


class LocalNotifier(Notifier):
    """Push for local tables (``file://`` or plain paths) via inotify/FSEvents.

    Args:
        step_ms: how long the watcher waits for more changes before reporting a batch.
        debounce_ms: the longest a batch of changes may be held back while they keep coming.
        force_polling: poll the directory instead of kernel events (network file systems).
    """

    source = "local"

    def __init__(self, *, step_ms: int = 2, debounce_ms: int = 50, force_polling: bool = False):
        super().__init__()
        if step_ms < 1 or debounce_ms < step_ms:
            raise ValueError(
                f"need 1 <= step_ms <= debounce_ms, got step_ms={step_ms}, debounce_ms={debounce_ms}"
            )
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.force_polling = force_polling
        self._watchers: dict[str, tuple[asyncio.Task, asyncio.Event]] = {}
        self._watching: dict[str, asyncio.Event] = {}

    def _on_subscribe(self, subscription: Subscription) -> None:
        key = subscription.table_url
        if key in self._watchers:
            return
        stop = asyncio.Event()
        watching = asyncio.Event()
        self._watching[key] = watching
        task = asyncio.get_running_loop().create_task(
            self._watch(key, stop, watching), name=f"paimon-feed-local-{key}"
        )
        self._watchers[key] = (task, stop)

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        key = subscription.table_url
        if key in self._subscriptions or key not in self._watchers:
            return
        task, stop = self._watchers.pop(key)
        self._watching.pop(key, None)
        stop.set()
        task.cancel()

    async def ready(self) -> None:
        for watching in list(self._watching.values()):
            await watching.wait()
        await asyncio.sleep(0)

    async def _close(self) -> None:
        watchers = list(self._watchers.values())
        self._watchers.clear()
        for _, stop in watchers:
            stop.set()
        await cancel_and_wait(task for task, _ in watchers)

    async def _watch(self, key: str, stop: asyncio.Event, watching: asyncio.Event) -> None:
        table_dir = _local_dir(key)
        snapshot_dir = table_dir / "snapshot"
        try:
            while not stop.is_set():
                target = snapshot_dir if snapshot_dir.is_dir() else table_dir
                moved = await self._watch_dir(key, target, snapshot_dir, stop, watching)
                if not moved:
                    return
        except asyncio.CancelledError:
            stop.set()
            raise
        except Exception:
            # A dead watcher must not take the feed down: the reconcile check still finds
            # every snapshot, only later. Say so loudly and report the notifier unhealthy.
            logger.exception("local watch of %s failed; feeds fall back to polling", table_dir)
            self._set_healthy(False, f"watch of {table_dir} failed")
        finally:
            watching.set()

    async def _watch_dir(
        self,
        key: str,
        target: Path,
        snapshot_dir: Path,
        stop: asyncio.Event,
        watching: asyncio.Event,
    ) -> bool:
        """Watch ``target`` until stopped (False) or the snapshot dir appears (True)."""
        logger.debug("watching %s for new snapshots", target)
        changes_iter = awatch(
            target,
            watch_filter=_SnapshotFilter(str(snapshot_dir)),
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=stop,
            recursive=False,
            force_polling=self.force_polling,
        )
        watching.set()
        async for changes in changes_iter:
            detected_at = time.time()
            directory_appeared = False
            for _, path in sorted(changes, key=lambda change: change[1]):
                if path == str(snapshot_dir):
                    directory_appeared = True
                    continue
                snapshot_id = snapshot_id_from_name(os.path.basename(path))
                self._dispatch(SnapshotHint(key, snapshot_id, self.source, detected_at))
            if directory_appeared and target != snapshot_dir:
                # The first commit may already be inside; wake feeds, then watch the directory.
                self._dispatch(SnapshotHint(key, None, self.source, detected_at))
                return True
        return False
