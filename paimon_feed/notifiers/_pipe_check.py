"""The pipe check of an :class:`~paimon_feed.notifiers.sqs.SqsNotifier`: prove, for a whole
``s3://`` warehouse, that S3 still delivers snapshot events to the queue, so each table's own
safety check can run far less often (DESIGN invariants 3 and 16).

For each warehouse a :class:`~paimon_feed.WarehouseFeed` watches (``watch_warehouse``), every
``interval`` seconds the check puts a probe object,
``WAREHOUSE/_paimon_feed_probe/snapshot/snapshot-N`` -- the key ``paimon-feed check`` uses: every
warehouse-wide rule ``paimon-feed wire`` makes matches it, no catalog lists it, the feed and the
Lambda handler skip it as a table -- and waits up to ``timeout`` seconds for its event on the
notifier's queue, then deletes it. While the last probe's event arrived, the warehouse is
*proven*: its tables' safety checks run every ``proven_interval`` instead of every
``reconcile_interval``. A probe whose event does not arrive in time ends the proof at once: a
WARNING, ``pipe_checks_missed`` counts it, and each table is back to its ``reconcile_interval``
from its next wait.

Bounds. While the pipe is proven, one lost event (S3 delivered the others, including the
probes, but not that one) is found by the table's next safety check: at most ``proven_interval``
later. A broken pipe is found within ``interval + timeout``; its tables' commits are then found
within one ``reconcile_interval`` more.

On by default only where it can work: a warehouse whose first probe's event never arrives (the
queue is wired per table, or not for this prefix) or whose probe may not be written is logged
once at INFO and not probed again; its tables keep their ``reconcile_interval``. A probe's event
that another process reading the same queue receives is lost to this one: it reads as a broken
pipe, which only shortens the intervals (the safe side).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed._layout import PROBE_TABLE_DIR
from paimon_feed.notifiers.base import normalize_table_url

__all__ = ["PipeCheck"]

logger = logging.getLogger("paimon_feed.notifiers.sqs")


class _Warehouse:
    """One probed warehouse: where its probes go and what the last one showed."""

    def __init__(self, url: str) -> None:
        self.url = url  # normalized, with a trailing slash
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        self.bucket, self.probe_prefix = bucket, f"{prefix}{PROBE_TABLE_DIR}/snapshot/"
        self.proven = self.ever_proven = False
        self.heard: dict[str, asyncio.Event] = {}
        self.last_delay: float | None = None


class PipeCheck:
    """Probes the warehouses of one notifier (see the module docstring).

    ``make_client()`` returns an async context manager giving an aiobotocore S3 client.
    """

    def __init__(
        self, owner: str, make_client: Callable[[], Any], *, interval: float, timeout: float,
        proven_interval: float,
    ) -> None:
        self.owner, self._make_client = owner, make_client
        self.interval, self.timeout, self.proven_interval = interval, timeout, proven_interval
        self._warehouses: dict[str, _Warehouse] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stack: contextlib.AsyncExitStack | None = None
        self._client: Any = None
        self.probes_put = self.probes_heard = self.probes_missed = 0

    def watch(self, warehouse: str) -> None:
        """Probe ``warehouse`` (an ``s3://`` URL) from now on, on the running event loop."""
        url = normalize_table_url(warehouse) + "/"
        if url in self._warehouses:
            return
        state = self._warehouses[url] = _Warehouse(url)
        task = asyncio.get_running_loop().create_task(self._probe_loop(state), name=f"paimon-feed pipe check {url}")
        self._tasks.append(task)

    def safety_interval(self, table_url: str, reconcile_interval: float) -> float:
        """How long a table may go without a safety check: ``proven_interval`` while its
        warehouse's pipe is proven, else ``reconcile_interval``."""
        for url, state in self._warehouses.items():
            if state.proven and table_url.startswith(url):
                return max(reconcile_interval, self.proven_interval)
        return reconcile_interval

    def heard(self, key: str) -> bool:
        """An event for object ``key`` arrived; whether it was one of this check's probes."""
        for state in self._warehouses.values():
            event = state.heard.get(key)
            if event is not None:
                event.set()
                return True
        return False

    def metrics(self) -> dict[str, Any]:
        return {
            "pipe_checks_put": self.probes_put, "pipe_checks_heard": self.probes_heard,
            "pipe_checks_missed": self.probes_missed,
            "pipe_proven": sorted(url for url, s in self._warehouses.items() if s.proven),
        }

    async def close(self) -> None:
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    async def _s3(self) -> Any:
        if self._client is None:
            self._stack = contextlib.AsyncExitStack()
            self._client = await self._stack.enter_async_context(self._make_client())
        return self._client

    async def _probe_loop(self, state: _Warehouse) -> None:
        while True:
            started = time.monotonic()
            if not await self._probe(state):
                return
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - started)))

    async def _probe(self, state: _Warehouse) -> bool:
        """One probe; whether to go on probing this warehouse."""
        key = f"{state.probe_prefix}snapshot-{time.time_ns() // 1000}"
        heard = state.heard[key] = asyncio.Event()
        try:
            s3 = await self._s3()
            try:
                await s3.put_object(Bucket=state.bucket, Key=key, Body=b'{"paimon-feed": "pipe check"}')
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a probe that cannot be written ends the proof
                return self._missed(state, f"writing the probe s3://{state.bucket}/{key} failed: {exc}")
            self.probes_put += 1
            put_at = time.monotonic()
            try:
                await asyncio.wait_for(heard.wait(), self.timeout)
            except asyncio.TimeoutError:
                return self._missed(state, f"the event of the probe s3://{state.bucket}/{key} did not "
                                           f"arrive within {self.timeout:g}s")
            finally:
                await self._delete(s3, state.bucket, key)
            self._arrived(state, time.monotonic() - put_at)
            return True
        finally:
            state.heard.pop(key, None)

    def _arrived(self, state: _Warehouse, delay: float) -> None:
        self.probes_heard += 1
        state.last_delay = delay
        if not state.proven:
            logger.info("%s: S3 delivers events of %s to the queue (probe after %.0f ms); its tables' "
                        "safety checks run every %gs while it does", self.owner, state.url, delay * 1000,
                        self.proven_interval)
        state.proven = state.ever_proven = True

    def _missed(self, state: _Warehouse, reason: str) -> bool:
        self.probes_missed += 1
        was_proven, state.proven = state.proven, False
        if not state.ever_proven:
            logger.info("%s: pipe check of %s off: %s. Its tables' safety checks run every "
                        "reconcile_interval; wire the warehouse (paimon-feed wire) to check them "
                        "less often", self.owner, state.url, reason)
            return False
        logger.warning("%s: the pipe from S3 to the queue failed for %s: %s; its tables' safety checks "
                       "are back to every reconcile_interval until a probe arrives (run paimon-feed "
                       "check to see what is wrong)%s", self.owner, state.url, reason,
                       "" if was_proven else " (still failing)")
        return True

    @staticmethod
    async def _delete(s3: Any, bucket: str, key: str) -> None:
        try:
            await s3.delete_object(Bucket=bucket, Key=key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a leftover probe is harmless; check removes it
            logger.warning("deleting the probe s3://%s/%s failed (%s); paimon-feed check removes "
                           "leftover probes", bucket, key, exc)
