"""PollingNotifier: the fallback for stores with no push source.

Where pypaimon's streaming scan checks ten snapshot ids ahead every second, this checks only the
one a feed waits for (``snapshot-{next}``), and backs off while the table is idle: from
``poll_interval`` up to ``max_poll_interval``, back to ``poll_interval`` as soon as a snapshot
shows up.
"""

from __future__ import annotations

import asyncio
import logging

from paimon_feed._aio import cancel_and_wait
from paimon_feed._units import Duration, parse_duration
from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers.base import (
    Notifier,
    SnapshotHint,
    Subscription,
)

__all__ = ["PollingNotifier"]

logger = logging.getLogger(__name__)


def _present(file_io, path: str) -> bool:
    """Whether ``path`` exists, by reading it: on S3 a missing key's read is one HEAD, while an
    existence check is a HEAD and a LIST (snapshot files are small)."""
    try:
        file_io.read_file_utf8(path)
    except FileNotFoundError:
        return False
    return True


class PollingNotifier(Notifier):
    """Probe ``snapshot-{next}`` for each subscribed feed, with adaptive backoff.

    Args:
        poll_interval: time between checks while snapshots keep coming: seconds, or a duration
            such as ``"500ms"`` or a ``timedelta`` (:mod:`paimon_feed._units`).
        max_poll_interval: the longest wait between checks of an idle table (default 5 s).
        backoff: factor applied to the wait after each check that found nothing.
    """

    source = "poll"
    announces_commits = False

    def __init__(
        self,
        *,
        poll_interval: Duration = 1.0,
        max_poll_interval: Duration | None = None,
        backoff: float = 1.5,
    ) -> None:
        super().__init__()
        given = poll_interval
        poll_interval = parse_duration(poll_interval, what="poll_interval")
        if poll_interval <= 0:
            raise ConfigurationError(f"poll_interval must be > 0 seconds, got {given!r}")
        self.poll_interval = poll_interval
        self.max_poll_interval = (
            parse_duration(max_poll_interval, what="max_poll_interval")
            if max_poll_interval is not None
            else max(poll_interval, 5.0)
        )
        if self.max_poll_interval < poll_interval:
            raise ConfigurationError(
                f"max_poll_interval must be >= poll_interval ({poll_interval:g} s), got {max_poll_interval!r}"
            )
        if backoff < 1:
            raise ValueError(f"backoff must be >= 1, got {backoff}")
        self.backoff = backoff
        self.probes = 0
        self._tasks: dict[Subscription, asyncio.Task] = {}

    def _on_subscribe(self, subscription: Subscription) -> None:
        if subscription.file_io is None:
            raise ValueError(
                f"PollingNotifier needs the table's file_io to probe {subscription.location}"
            )
        self._tasks[subscription] = asyncio.get_running_loop().create_task(
            self._poll(subscription), name=f"paimon-feed-poll-{subscription.table_url}"
        )

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        task = self._tasks.pop(subscription, None)
        if task is not None:
            task.cancel()

    async def _close(self) -> None:
        tasks = list(self._tasks.values())
        self._tasks.clear()
        await cancel_and_wait(tasks)

    def interval_after(self, interval: float, found: bool) -> float:
        """The next wait: reset after a hit, grow (up to the maximum) after a miss.

        >>> PollingNotifier(poll_interval=1.0, max_poll_interval=2.0).interval_after(1.5, False)
        2.0
        """
        if found:
            return self.poll_interval
        return min(interval * self.backoff, self.max_poll_interval)

    async def _poll(self, subscription: Subscription) -> None:
        interval = self.poll_interval
        root = subscription.location.rstrip("/")
        while True:
            await asyncio.sleep(interval)
            snapshot_id = subscription.expected_snapshot_id
            if snapshot_id is None:
                continue
            path = f"{root}/snapshot/snapshot-{snapshot_id}"
            try:
                self.probes += 1
                found = await asyncio.to_thread(_present, subscription.file_io, path)
            except Exception as exc:  # storage hiccup: the feed's reconcile still runs
                logger.warning("poll of %s failed: %s", path, exc)
                found = False
            if found:
                subscription.notify(SnapshotHint(subscription.table_url, snapshot_id, self.source))
                self.hints_dispatched += 1
            interval = self.interval_after(interval, found)
