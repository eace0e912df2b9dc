"""The project's asyncio helpers: stopping background tasks, and an event loop in a thread.

:func:`cancel_and_wait` is how every background task ends (feeds, notifiers, warehouse pumps).
:class:`LoopThread` is the event loop that code without one drives: :class:`SyncChangeFeed
<paimon_feed.feed.sync.SyncChangeFeed>` and the Spark source's notifier
(:mod:`paimon_feed.spark.tracker`). It ends the way ``asyncio.run`` ends its loop, so a closed
one leaves no thread, task or file descriptor behind.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from paimon_feed.errors import LoopClosedError

__all__ = ["LoopClosedError", "LoopThread", "cancel_and_wait"]

T = TypeVar("T")


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until they have finished.

    Unlike ``await task`` under ``suppress(CancelledError)``, a cancellation of the caller
    itself (a timeout around ``close()``) still propagates instead of passing for the task's.
    """
    pending = list(tasks)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)


def _run_until_stopped(loop: asyncio.AbstractEventLoop) -> None:
    """Body of a loop thread: run until stopped, then release what the loop holds (as
    ``asyncio.run`` does): cancel what still runs, join the executor threads, close it.

    It holds the loop, never its owner, so an owner dropped without closing can be collected
    (and its finalizer can stop the loop).
    """
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            for task in tasks:
                if not task.cancelled() and task.exception() is not None:
                    loop.call_exception_handler(
                        {"message": "error in a loop thread's task at shutdown", "task": task,
                         "exception": task.exception()}
                    )
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


async def _run_then_stop(coroutine: Coroutine[Any, Any, Any]) -> None:
    try:
        await coroutine
    finally:
        asyncio.get_running_loop().stop()


class LoopThread:
    """An asyncio event loop running in a daemon thread named ``name``, started at once.

    :meth:`run` waits for a coroutine on it, :meth:`submit` starts one, :meth:`call_soon`
    hands it a callback; :meth:`stop` ends it and joins the thread. Every method may be
    called from any thread. Once the loop has stopped, :meth:`run` and :meth:`submit` raise
    :class:`LoopClosedError` and :meth:`call_soon` returns ``False``.
    """

    # A caller waits in slices, not in one blocking ``Future.result()``: a signal the kernel
    # hands to another thread (pypaimon's, watchfiles', the loop's) does not interrupt a lock
    # wait in the main thread, so Python would only run its SIGINT handler after the result
    # arrived, which for a feed of an idle table is never.
    WAIT_SLICE = 0.2  # seconds

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=_run_until_stopped, args=(self.loop,), name=name, daemon=True
        )
        self._thread.start()

    @property
    def name(self) -> str:
        return self._thread.name

    def is_alive(self) -> bool:
        """Whether the loop still runs (or is still releasing what it holds)."""
        return self._thread.is_alive()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coroutine`` on the loop; its result arrives in the returned future."""
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        except RuntimeError:  # the loop is closed
            coroutine.close()
            raise LoopClosedError(f"event loop thread {self.name} has stopped") from None

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coroutine`` on the loop and return its result (or raise its error).

        Raises :class:`LoopClosedError` if the loop stops first (:meth:`stop` from another
        thread), ``concurrent.futures.TimeoutError`` after ``timeout`` seconds. If the caller
        is interrupted meanwhile (``KeyboardInterrupt``), the coroutine is cancelled.
        """
        future = self.submit(coroutine)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                wait = self.WAIT_SLICE
                if deadline is not None:
                    wait = max(0.0, min(wait, deadline - time.monotonic()))
                try:
                    return future.result(timeout=wait)
                except concurrent.futures.TimeoutError:
                    if not self._thread.is_alive() and not future.done():
                        raise LoopClosedError(f"event loop thread {self.name} has stopped") from None
                    if deadline is not None and time.monotonic() >= deadline:
                        raise
        except concurrent.futures.CancelledError:
            raise LoopClosedError(f"event loop thread {self.name} has stopped") from None
        except BaseException:
            future.cancel()
            raise

    def call_soon(self, callback: Callable[..., object], *args: Any) -> bool:
        """Call ``callback(*args)`` on the loop; ``False`` if the loop has stopped."""
        if self.loop.is_closed():
            return False
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # closed in between
            return False
        return True

    def stop_after(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine``, then stop the loop; without waiting for either (a finalizer's
        way out, which may run on any thread, the loop's own included)."""
        try:
            self.submit(_run_then_stop(coroutine))
        except LoopClosedError:  # stopped already: nothing left to run it
            coroutine.close()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the loop, cancel what still runs on it and wait up to ``timeout`` seconds for
        the thread to end (not at all when called on the loop's own thread). Idempotent."""
        self.call_soon(self.loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
