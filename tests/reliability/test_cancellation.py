"""Cancellation at the worst moment: right after a hint woke a waiting feed.

Before Python 3.12, ``asyncio.wait_for`` returns the result and drops a cancellation that
arrives after the awaited thing finished but before ``wait_for`` resumed. A subscription's wait
built on it swallowed ``ChangeFeed.close()``'s cancel when a hint came in during the same loop
iteration: the planner kept running and ``close()`` waited for it forever (the S3 fault test's
stall). These tests pin that moment down deterministically with the event loop's own ordering:
the hint is dispatched, one loop iteration lets the subscription's event fire, then the waiter is
cancelled before it resumes.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from support.tables import commit

from paimon_feed import ChangeFeed
from paimon_feed.notifiers import Notifier, SnapshotHint

CLOSE_BOUND = 5.0  # seconds; closing takes milliseconds, this only bounds a hang


class RecordingNotifier(Notifier):
    """A notifier with no source: the test dispatches hints itself, and learns when the feed
    starts waiting on its subscription."""

    source = "test"

    def __init__(self) -> None:
        super().__init__()
        self.subscription = None
        self.waiting = asyncio.Event()

    def _on_subscribe(self, subscription) -> None:
        self.subscription = subscription
        wait = subscription.wait

        async def recorded_wait(timeout):
            self.waiting.set()
            return await wait(timeout)

        subscription.wait = recorded_wait


def test_a_subscription_wait_cancelled_just_after_a_hint_is_cancelled():
    async def main():
        notifier = Notifier()
        subscription = notifier.subscribe("file:///tmp/t")
        waiter = asyncio.get_running_loop().create_task(subscription.wait(30))
        await asyncio.sleep(0)  # the waiter waits
        subscription.notify(SnapshotHint(subscription.table_url, 2, "test"))
        await asyncio.sleep(0)  # the hint's event fired; the waiter has not resumed yet
        waiter.cancel()
        try:
            with pytest.raises(asyncio.CancelledError):
                await waiter
        finally:
            await notifier.close()

    asyncio.run(main())


def test_closing_a_feed_just_after_a_hint_woke_it_stops_its_planner(append_table):
    commit(append_table, 0)

    async def main():
        notifier = RecordingNotifier()
        feed = ChangeFeed(append_table, notifier=notifier, reconcile_interval=30, poll_interval=30)
        await feed.start()
        full = await feed.__anext__()
        assert full.kind == "full"
        await notifier.waiting.wait()  # the planner waits for snapshot 2
        notifier.subscription.notify(SnapshotHint(notifier.subscription.table_url, 2, "test"))
        await asyncio.sleep(0)  # the hint's event fired; the planner has not resumed yet
        # close() in this very step, so its cancel reaches the planner before it resumes
        guard = asyncio.get_running_loop().call_later(CLOSE_BOUND, asyncio.current_task().cancel)
        started = time.monotonic()
        try:
            await feed.close()
        except asyncio.CancelledError:
            pytest.fail(f"close() did not return within {CLOSE_BOUND}s: the planner kept running")
        finally:
            guard.cancel()
        assert time.monotonic() - started < CLOSE_BOUND
        await notifier.close()

    asyncio.run(main())
