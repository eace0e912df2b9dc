"""ChaosNotifier: a notifier that loses, repeats, reorders and delays another notifier's hints.

For testing what DESIGN invariant 1 promises — hints are only wake-ups, so no mistreatment of
them can lose, repeat or reorder a batch; at worst the reconcile safety check finds a snapshot
one ``reconcile_interval`` late. Use it to rehearse a pipeline against a flaky push source::

    chaos = ChaosNotifier(LocalNotifier(), drop=0.3, duplicate=0.1, reorder=0.2, max_delay=0.5)
    async with chaos, ChangeFeed(table, notifier=chaos, reconcile_interval=5) as feed:
        ...

It relays through the inner notifier's public API: each subscription here has one on the inner
notifier, and every wake-up it sees becomes one hint that chaos then acts on.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

from paimon_feed._aio import cancel_and_wait
from paimon_feed.notifiers.base import (
    Notifier,
    SnapshotHint,
    Subscription,
)

__all__ = ["ChaosNotifier"]


class ChaosNotifier(Notifier):
    """Wraps ``inner``; each hint is dropped with probability ``drop``, else possibly held back
    behind the next one (``reorder``), delayed by up to ``max_delay`` seconds, and delivered
    twice with probability ``duplicate``. ``seed`` makes a run repeatable."""

    def __init__(
        self,
        inner: Notifier,
        *,
        drop: float = 0.0,
        duplicate: float = 0.0,
        reorder: float = 0.0,
        max_delay: float = 0.0,
        seed: int | None = None,
    ) -> None:
        super().__init__()
        for name, rate in (("drop", drop), ("duplicate", duplicate), ("reorder", reorder)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {rate}")
        if max_delay < 0:
            raise ValueError(f"max_delay must be >= 0 seconds, got {max_delay}")
        self.inner = inner
        self.source = inner.source
        self.drop, self.duplicate, self.reorder, self.max_delay = drop, duplicate, reorder, max_delay
        self._random = random.Random(seed)
        self._relays: dict[Subscription, tuple[Subscription, asyncio.Task]] = {}
        self._held: dict[str, SnapshotHint] = {}
        self._delayed: set[asyncio.Task] = set()
        self.stats: Counter[str] = Counter()

    @property
    def healthy(self) -> bool:  # type: ignore[override]
        return self.inner.healthy

    @healthy.setter
    def healthy(self, value: bool) -> None:  # the base class sets it once; health is the inner's
        pass

    def _on_subscribe(self, subscription: Subscription) -> None:
        inner = self.inner.subscribe(subscription.location, file_io=subscription.file_io)
        task = asyncio.get_running_loop().create_task(self._relay(inner, subscription))
        self._relays[subscription] = (inner, task)

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        inner, task = self._relays.pop(subscription)
        task.cancel()
        inner.close()

    async def ready(self) -> None:
        await self.inner.ready()

    async def _close(self) -> None:
        await cancel_and_wait([task for _, task in self._relays.values()] + list(self._delayed))

    async def _relay(self, inner: Subscription, outer: Subscription) -> None:
        while True:
            if outer.expected_snapshot_id is not None:
                inner.expect(outer.expected_snapshot_id)  # for probing inner notifiers
            wake = await inner.wait(0.05)
            if not wake.hinted:
                if not wake.timed_out:
                    outer.wake()  # a health change: pass it on untouched
                continue
            self.stats["received"] += 1
            self._mistreat(
                SnapshotHint(outer.table_url, wake.max_snapshot_id, self.source, wake.detected_at or time.time())
            )

    def _mistreat(self, hint: SnapshotHint) -> None:
        if self._random.random() < self.drop:
            self.stats["dropped"] += 1
            return
        held = self._held.pop(hint.table_url, None)
        if held is None and self._random.random() < self.reorder:
            self.stats["held_back"] += 1
            self._held[hint.table_url] = hint  # released after the next hint of the table
            return
        copies = 2 if self._random.random() < self.duplicate else 1
        self.stats["duplicated"] += copies - 1
        for _ in range(copies):
            self._later(hint)
        if held is not None:
            self._later(held)

    def _later(self, hint: SnapshotHint) -> None:
        delay = self._random.uniform(0, self.max_delay) if self.max_delay else 0.0
        if not delay:
            self.stats["delivered"] += 1
            self._dispatch(hint)
            return
        task = asyncio.get_running_loop().create_task(self._deliver_after(hint, delay))
        self._delayed.add(task)
        task.add_done_callback(self._delayed.discard)

    async def _deliver_after(self, hint: SnapshotHint, delay: float) -> None:
        await asyncio.sleep(delay)
        self.stats["delivered"] += 1
        self._dispatch(hint)
