"""Push notifications for ``s3://`` tables from an SQS queue fed by S3 event notifications.

One :class:`SqsNotifier` long-polls one queue for every table it serves: S3 (directly, through
SNS or through EventBridge) puts an event in the queue when a snapshot file is written, the
notifier parses it with :mod:`paimon_feed.notifiers.events` and wakes the subscriptions of that
table. Hints are only wake-ups, so a message is deleted as soon as its hints are handed over;
the feed's planner reads the snapshots itself.

What happens to each received message:

=========================================  ==================================================
message                                    outcome
=========================================  ==================================================
hints for a subscribed table               dispatched, then deleted
hints only for tables nobody follows       deleted if ``delete_unmatched`` (default), else left
no hints (data files, temp files, tests)   deleted: nothing will ever want it
malformed                                  logged and left for the queue's redrive policy,
                                           unless ``delete_malformed``
=========================================  ==================================================

A message that is left becomes visible again after the queue's visibility timeout; its
visibility is not reset, so the notifier does not spin on it.

A queue asked for is checked before the first batch (degradation is loud, once, at the start):
the first receive returns at once, and if it says the queue does not exist or these credentials
may not read it, the receive loop stops and every feed's start (:meth:`SqsNotifier.ready`)
raises :class:`~paimon_feed.errors.ConfigurationError` naming the queue and what to do, instead
of polling without a word. When receiving fails later ``failure_threshold`` times in a row
(queue unreachable, deleted, access revoked), the notifier marks itself unhealthy so feeds fall
back to polling, and keeps retrying with exponential backoff; the first successful receive marks
it healthy again.

The queue's side (the client, receives, batched deletes) is
:class:`~paimon_feed.notifiers._sqs_queue.SqsQueue`; this module decides what each message means.

Needs the ``[s3]`` extra (``aiobotocore``). Endpoint, region and credentials follow the boto
conventions: explicit arguments, else the environment (``AWS_ENDPOINT_URL_SQS``,
``AWS_DEFAULT_REGION``, ``AWS_ACCESS_KEY_ID``, ...) and the default credential chain.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed.errors import ConfigurationError, MissingDependencyError, NotifierError
from paimon_feed.notifiers._pipe_check import PipeCheck
from paimon_feed.notifiers._sqs_queue import (
    MAX_BATCH,
    SqsQueue,
    is_transport_error,
    region_from_queue_url,
    start_problem,
)
from paimon_feed.notifiers._sqs_warehouses import SqsWarehouses, check_pipe_options, is_s3_warehouse
from paimon_feed.notifiers.base import Notifier, Subscription, WarehouseChange
from paimon_feed.notifiers.events import MalformedMessageError, parse_message

__all__ = [
    "QUEUE_URL_ENV",
    "MissingDependencyError",
    "SqsNotifier",
    "queue_url_from_env",
]

logger = logging.getLogger(__name__)

QUEUE_URL_ENV = "PAIMON_FEED_SQS_QUEUE_URL"


def queue_url_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The queue URL configured in ``PAIMON_FEED_SQS_QUEUE_URL``, or ``None`` if unset or blank.

    >>> queue_url_from_env({QUEUE_URL_ENV: " https://sqs.eu-west-1.amazonaws.com/1/q "})
    'https://sqs.eu-west-1.amazonaws.com/1/q'
    >>> queue_url_from_env({}) is None
    True
    """
    value = (os.environ if environ is None else environ).get(QUEUE_URL_ENV, "").strip()
    return value or None


class SqsNotifier(Notifier):
    """Wakes feeds of ``s3://`` tables from S3 event notifications in an SQS queue.

    ``wait_time_seconds`` is the long-poll wait (0–20), ``max_messages`` the receive batch
    (1–10). ``buckets`` limits which buckets' events count (default: all). After
    ``failure_threshold`` consecutive receive failures the notifier reports itself unhealthy;
    it retries after ``retry_backoff[0]`` seconds, doubling up to ``retry_backoff[1]``.

    For each warehouse a :class:`~paimon_feed.WarehouseFeed` follows through it, a probe is put
    every ``pipe_check_interval`` seconds (``None``: never) and its event awaited for
    ``pipe_check_timeout``; while they arrive, that warehouse's tables run their safety check
    every ``proven_interval`` seconds (:mod:`paimon_feed.notifiers._pipe_check`). The probes'
    S3 client uses ``s3_endpoint_url`` (default: the boto environment, ``AWS_ENDPOINT_URL_S3``).

    The receive loop starts at the first :meth:`subscribe`, which must run inside the event
    loop that will wait on the subscriptions. Use as an async context manager or call
    :meth:`close`.
    """

    source = "sqs"

    def __init__(
        self,
        queue_url: str,
        *,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        wait_time_seconds: int = 20,
        max_messages: int = 10,
        delete_malformed: bool = False,
        delete_unmatched: bool = True,
        buckets: Iterable[str] | None = None,
        failure_threshold: int = 3,
        retry_backoff: tuple[float, float] = (0.5, 30.0),
        pipe_check_interval: float | None = 60.0,
        pipe_check_timeout: float = 30.0,
        proven_interval: float = 1800.0,
        s3_endpoint_url: str | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(queue_url, str) or not queue_url.strip():
            raise ConfigurationError(
                f"SqsNotifier: queue_url must be the queue's URL, got {queue_url!r}; set it "
                f"explicitly or in {QUEUE_URL_ENV}"
            )
        if not 0 <= wait_time_seconds <= 20:
            raise ConfigurationError(
                f"SqsNotifier: wait_time_seconds must be within 0..20, got {wait_time_seconds}"
            )
        if not 1 <= max_messages <= MAX_BATCH:
            raise ConfigurationError(
                f"SqsNotifier: max_messages must be within 1..10, got {max_messages}"
            )
        if failure_threshold < 1:
            raise ConfigurationError(
                f"SqsNotifier: failure_threshold must be at least 1, got {failure_threshold}"
            )
        initial_backoff, max_backoff = retry_backoff
        if not 0 < initial_backoff <= max_backoff:
            raise ConfigurationError(
                f"SqsNotifier: retry_backoff must be (initial, max) seconds with "
                f"0 < initial <= max, got {retry_backoff!r}"
            )
        check_pipe_options(pipe_check_interval, pipe_check_timeout, proven_interval)
        self.queue_url = queue_url.strip()
        self.endpoint_url = endpoint_url
        self.region_name = region_name or region_from_queue_url(self.queue_url)
        self.wait_time_seconds = wait_time_seconds
        self.max_messages = max_messages
        self._queue = SqsQueue(
            self.queue_url,
            endpoint_url=endpoint_url,
            region_name=self.region_name,
            credentials={
                "aws_access_key_id": aws_access_key_id,
                "aws_secret_access_key": aws_secret_access_key,
                "aws_session_token": aws_session_token,
            },
            wait_time_seconds=wait_time_seconds,
            max_messages=max_messages,
        )
        self._warehouses = SqsWarehouses(None if pipe_check_interval is None else PipeCheck(
            repr(self), lambda: self._queue.client_for("s3", s3_endpoint_url),
            interval=pipe_check_interval, timeout=pipe_check_timeout, proven_interval=proven_interval))
        self.delete_malformed = delete_malformed
        self.delete_unmatched = delete_unmatched
        self.buckets = frozenset(buckets) if buckets is not None else None
        self.failure_threshold = failure_threshold
        self.retry_backoff = (float(initial_backoff), float(max_backoff))
        self._task: asyncio.Task[None] | None = None
        #: done once the first receive answered (or failed); see :meth:`ready`
        self._first_receive: asyncio.Future[None] | None = None
        #: why the queue cannot be used at all, found by the first receive
        self.start_error: ConfigurationError | None = None
        self.consecutive_failures = 0
        self.messages_received = 0
        self.messages_deleted = 0
        self.messages_malformed = 0
        self.messages_ignored = 0
        self.messages_left = 0
        self.receive_errors = 0
        self.delete_errors = 0

    @classmethod
    def from_env(cls, **options: Any) -> SqsNotifier:
        """A notifier for the queue named in ``PAIMON_FEED_SQS_QUEUE_URL``."""
        queue_url = queue_url_from_env()
        if queue_url is None:
            raise ConfigurationError(
                f"{QUEUE_URL_ENV} is not set; set it to the URL of the SQS queue that receives "
                f"the warehouse bucket's S3 event notifications"
            )
        return cls(queue_url, **options)

    def __repr__(self) -> str:
        return f"SqsNotifier({self.queue_url!r})"

    def metrics(self) -> dict[str, Any]:
        """Counters since creation, plus current health; JSON-serializable.

        ``messages_ignored`` had no hint (noise, test events) and were deleted;
        ``messages_left`` were not deleted (malformed, or unmatched with ``delete_unmatched``
        off); ``hints_unmatched`` counts hints for tables nobody follows.
        """
        return {
            "source": self.source,
            "queue_url": self.queue_url,
            "healthy": self.healthy,
            "subscribed_tables": len(self._subscriptions),
            "messages_received": self.messages_received,
            "messages_deleted": self.messages_deleted,
            "messages_malformed": self.messages_malformed,
            "messages_ignored": self.messages_ignored,
            "messages_left": self.messages_left,
            "hints_dispatched": self.hints_dispatched,
            "hints_unmatched": self.hints_unmatched,
            "receive_errors": self.receive_errors,
            "delete_errors": self.delete_errors,
            "consecutive_failures": self.consecutive_failures,
            **self._warehouses.metrics(),
        }

    # lifecycle ---------------------------------------------------------------------------

    def _on_subscribe(self, subscription: Subscription) -> None:
        try:
            self._start_receiving(f"subscribe({subscription.table_url!r})")
        except NotifierError:
            subscription.close()
            raise

    def _start_receiving(self, caller: str) -> None:
        if self._task is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError as exc:
            raise NotifierError(
                f"{self!r}: {caller} must be called inside a running event loop (from async "
                f"code); the receive loop runs there"
            ) from exc
        self._first_receive = loop.create_future()
        self._task = loop.create_task(self._receive_loop(), name=f"paimon-feed {self!r}")
        self._task.add_done_callback(self._on_loop_done)

    def watch_warehouse(self, warehouse: str, on_change: WarehouseChange) -> Callable[[], None] | None:
        """Call ``on_change(table_url)`` when a snapshot event names a table under the ``s3://``
        ``warehouse`` that no feed follows yet: with warehouse-wide wiring (``paimon-feed
        wire``), a new table's first commit is found by its event, not by the next listing
        (:mod:`paimon_feed.notifiers._sqs_warehouses`)."""
        if not is_s3_warehouse(warehouse):
            return None
        self._start_receiving(f"watch_warehouse({warehouse!r})")
        return self._warehouses.watch(warehouse, on_change)

    def safety_interval(self, table_url: str, reconcile_interval: float) -> float:
        """``proven_interval`` for a table whose warehouse's pipe check passes, else
        ``reconcile_interval`` (see :mod:`paimon_feed.notifiers._pipe_check`)."""
        if not self.healthy:
            return reconcile_interval
        return self._warehouses.safety_interval(table_url, reconcile_interval)

    async def ready(self) -> None:
        """Wait for the first receive (it does not wait for messages), and raise
        :class:`ConfigurationError` if it showed that the queue does not exist or that these
        credentials may not read it. Any other failure (a connection refused) is left to the
        notifier's health: the feed polls until the queue answers, and says so."""
        if self._first_receive is not None:
            await asyncio.shield(self._first_receive)
        if self.start_error is not None:
            raise self.start_error

    async def _close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait([task])
        await self._warehouses.close()
        self._answered()

    def _answered(self) -> None:
        """The first receive is over: release :meth:`ready`'s waiters."""
        if self._first_receive is not None and not self._first_receive.done():
            self._first_receive.set_result(None)

    def _on_loop_done(self, task: asyncio.Task[None]) -> None:
        self._answered()
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            logger.error("%r: receive loop stopped by %r", self, error, exc_info=error)
            self._set_healthy(False, f"receive loop stopped: {error!r}")

    # receive loop ------------------------------------------------------------------------

    async def _receive_loop(self) -> None:
        async with self._queue:
            first = True
            while True:
                try:
                    messages = await self._queue.receive(wait=not first)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - logged, counted, reflected in health
                    if first and self._cannot_start(exc):
                        return
                    first = False
                    self._answered()
                    await self._receive_failed(exc)
                    continue
                first = False
                self._answered()
                self.consecutive_failures = 0
                self._set_healthy(True)
                if messages:
                    await self._handle(messages)

    def _cannot_start(self, exc: Exception) -> bool:
        """Whether the first receive's ``exc`` means the queue cannot be used at all; if so,
        the reason is kept for :meth:`ready` and the notifier is unhealthy."""
        problem = start_problem(self.queue_url, exc)
        if problem is None:
            return False
        self.receive_errors += 1
        self.start_error = ConfigurationError(problem)
        self._set_healthy(False, problem)
        self._answered()
        return True

    async def _receive_failed(self, exc: Exception) -> None:
        self.receive_errors += 1
        self.consecutive_failures += 1
        reason = f"{type(exc).__name__}: {exc}"
        initial, maximum = self.retry_backoff
        delay = min(maximum, initial * 2 ** min(self.consecutive_failures - 1, 32))
        logger.warning(
            "%r: receive failed (%d in a row), retrying in %.1fs: %s",
            self,
            self.consecutive_failures,
            delay,
            reason,
            exc_info=not is_transport_error(exc),
        )
        if self.consecutive_failures >= self.failure_threshold:
            self._set_healthy(False, f"{self.consecutive_failures} receive failures; {reason}")
        await asyncio.sleep(delay)

    async def _handle(self, messages: list[dict[str, Any]]) -> None:
        to_delete: list[dict[str, Any]] = []
        for message in messages:
            self.messages_received += 1
            if self._settle(message):
                to_delete.append(message)
            else:
                self.messages_left += 1
        if to_delete:
            deleted, failed = await self._queue.delete(to_delete)
            self.messages_deleted += deleted
            self.delete_errors += failed

    def _settle(self, message: dict[str, Any]) -> bool:
        """Dispatch one message's hints; whether the message should be deleted."""
        message_id = message.get("MessageId")
        try:
            hints = parse_message(message.get("Body", ""), source=self.source, buckets=self.buckets)
        except MalformedMessageError as error:
            self.messages_malformed += 1
            logger.warning(
                "%r: message %s is malformed (%s); %s",
                self,
                message_id,
                error.reason,
                "deleting it" if self.delete_malformed else "leaving it for the redrive policy",
            )
            return self.delete_malformed
        except Exception:  # noqa: BLE001 - a parser bug must not stop the feed's push source
            self.messages_malformed += 1
            logger.error(
                "%r: message %s could not be handled; leaving it for the redrive policy",
                self,
                message_id,
                exc_info=True,
            )
            return False
        if not hints:
            if self._warehouses.heard_probe(message.get("Body", "")):
                return True
            self.messages_ignored += 1
            return True
        receivers = sum([self._dispatch(hint) or self._warehouses.announce(hint.table_url) for hint in hints])
        return receivers > 0 or self.delete_unmatched
