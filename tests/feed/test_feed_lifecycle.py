"""Every lifecycle ends (DESIGN invariant 14): ``close()`` from another task or thread releases a
waiting consumer, and an abandoned feed warns and gives back its threads, watches and file
descriptors, on real pypaimon tables."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
import warnings

import pytest
from support.tables import commit

from paimon_feed import ChangeFeed, FeedClosedError

SETTLE_STEPS = 200  # released resources may take a few loop turns; this bounds a failing test
SETTLE_STEP = 0.05  # seconds
WAIT = 60  # seconds: how long a test waits for a consumer that should end at once


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def settle(released) -> bool:
    """Whether ``released()`` becomes true while the process finishes letting go."""
    for _ in range(SETTLE_STEPS):
        gc.collect()
        if released():
            return True
        time.sleep(SETTLE_STEP)
    return released()


async def settle_async(released) -> bool:
    for _ in range(SETTLE_STEPS):
        gc.collect()
        if released():
            return True
        await asyncio.sleep(SETTLE_STEP)
    return released()


def consumer_waiting(feed: ChangeFeed) -> bool:
    # A peek at the queue's waiting getters, so the test closes a feed whose consumer waits,
    # the case it pins, rather than one that has not asked for its next batch yet.
    queue = feed._consuming.queue
    return queue is not None and len(queue._getters) > 0


def commits_in(batches) -> list[int]:
    return sorted(value for batch in batches for value in batch.to_arrow().column("commit").to_pylist())


def warm_up(table) -> None:
    """One feed run to the end and closed, so lazily started pools (pyarrow's, pypaimon's)
    are part of the baseline rather than counted as a leak."""

    async def main():
        async with ChangeFeed(table, end=1) as feed:
            assert commits_in([batch async for batch in feed]) == [0, 0, 0]

    asyncio.run(main())


def unclosed_warnings(caught, kind: str) -> list[str]:
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, ResourceWarning) and f"unclosed {kind}" in str(w.message)
    ]


# --- close() wakes a waiting consumer ---------------------------------------------------------


def test_close_from_another_task_ends_an_async_for_that_waits_for_a_batch(append_table):
    commit(append_table, 0)

    async def main():
        feed = ChangeFeed(append_table, start="latest-full")
        delivered = []

        async def consume():
            async for batch in feed:
                delivered.append(batch)

        consumer = asyncio.create_task(consume())
        assert await settle_async(lambda: len(delivered) == 1 and consumer_waiting(feed))
        await feed.close()  # a shutdown handler, in another task
        await asyncio.wait_for(consumer, WAIT)  # before the fix: waited forever
        with pytest.raises(FeedClosedError, match="db.events"):
            await feed.__anext__()
        return delivered

    delivered = asyncio.run(main())
    assert [batch.kind for batch in delivered] == ["full"]
    assert commits_in(delivered) == [0, 0, 0]


def test_close_from_another_thread_ends_a_sync_for_loop_that_waits_for_a_batch(append_table):
    commit(append_table, 0)
    feed = ChangeFeed(append_table, start="latest-full")
    batches = feed.sync()
    delivered = []
    loop_ended = threading.Event()  # not set if the loop raised (pytest reports the error)

    def consume():
        for batch in batches:
            delivered.append(batch)  # noqa: PERF402 - the test watches it grow
        loop_ended.set()

    consumer = threading.Thread(target=consume, name="test-sync-consumer", daemon=True)
    consumer.start()
    assert settle(lambda: len(delivered) == 1 and consumer_waiting(feed))
    batches.close()
    consumer.join(WAIT)  # before the fix: the consumer polled a stopped loop forever
    assert not consumer.is_alive()
    assert loop_ended.is_set()
    assert commits_in(delivered) == [0, 0, 0]
    with pytest.raises(FeedClosedError, match="db.events"):
        next(batches)
    with pytest.raises(FeedClosedError, match="db.events"):
        batches.commit(delivered[0])
    assert "paimon-feed-sync-db.events" not in {t.name for t in threading.enumerate()}


# --- nothing is left behind -------------------------------------------------------------------


def test_closed_sync_feeds_give_back_their_threads_and_descriptors(append_table):
    commit(append_table, 0)
    warm_up(append_table)
    threads, fds = os_threads(), open_fds()
    for _ in range(5):
        with ChangeFeed(append_table, start="latest-full").sync() as batches:
            assert commits_in([next(batches)]) == [0, 0, 0]
    # Before the fix each closed feed left its watcher's worker thread behind.
    assert settle(lambda: os_threads() <= threads and open_fds() <= fds), (
        f"threads {os_threads()} (were {threads}), fds {open_fds()} (were {fds}): "
        f"{sorted(t.name for t in threading.enumerate())}"
    )


def test_abandoned_sync_feeds_warn_and_give_back_their_threads_and_descriptors(append_table):
    commit(append_table, 0)
    warm_up(append_table)
    threads, fds = os_threads(), open_fds()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            batches = iter(ChangeFeed(append_table, start="latest-full").sync())
            assert commits_in([next(batches)]) == [0, 0, 0]
            del batches  # dropped mid-iteration, never closed
        gc.collect()
    assert len(unclosed_warnings(caught, "SyncChangeFeed")) == 5, [str(w.message) for w in caught]
    # Before the fix: 16 more threads and 30 more descriptors, for good.
    assert settle(lambda: os_threads() <= threads and open_fds() <= fds), (
        f"threads {os_threads()} (were {threads}), fds {open_fds()} (were {fds}): "
        f"{sorted(t.name for t in threading.enumerate())}"
    )


def test_abandoned_async_feeds_warn_and_give_back_their_watches_while_the_loop_runs(
    append_table,
):
    commit(append_table, 0)
    warm_up(append_table)

    def watches() -> list[str]:
        return [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("paimon-feed-")]

    async def main():
        fds = open_fds()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(5):
                # Ends by itself at its end snapshot; nobody calls close().
                assert commits_in([batch async for batch in ChangeFeed(append_table, end=1)]) == [0, 0, 0]
            gc.collect()
        assert len(unclosed_warnings(caught, "ChangeFeed")) == 5, [str(w.message) for w in caught]
        # Before the fix each dropped feed's notifier kept watching the table as long as the
        # loop ran (a thread, an inotify descriptor); the loop's own pools may stay.
        assert await settle_async(lambda: not watches() and open_fds() <= fds), (
            f"watches {watches()}, fds {open_fds()} (were {fds})"
        )

    asyncio.run(main())


def test_an_async_feed_left_open_when_its_loop_ends_warns_and_gives_everything_back(
    append_table,
):
    commit(append_table, 0)
    warm_up(append_table)
    threads, fds = os_threads(), open_fds()

    async def main():
        feed = ChangeFeed(append_table, start="latest-full")
        await feed.start()
        assert commits_in([await feed.__anext__()]) == [0, 0, 0]
        # returns with the feed started and planning, never closed

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            asyncio.run(main())
        gc.collect()
    assert len(unclosed_warnings(caught, "ChangeFeed")) == 5, [str(w.message) for w in caught]
    assert settle(lambda: os_threads() <= threads and open_fds() <= fds), (
        f"threads {os_threads()} (were {threads}), fds {open_fds()} (were {fds}): "
        f"{sorted(t.name for t in threading.enumerate())}"
    )
