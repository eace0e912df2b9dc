"""The notifier contract: storage events in, wake-ups for feeds out.

A notifier turns whatever its storage offers (inotify, S3 event notifications, a cheap existence
check) into :class:`SnapshotHint`\\ s and hands them to the :class:`Subscription` of every feed that
follows the hinted table. Hints are only wake-ups (DESIGN invariant 1): the planner alone decides
what exists, so a lost, repeated or foreign hint can delay a batch but never lose or repeat one.

One notifier may serve many feeds, in one event loop. Subscriptions keep no queue of hints, only
a summary of what arrived since the last wait, so memory stays flat however many events come in.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlparse

from paimon_feed._layout import is_local, local_path, local_url, snapshot_id_from_name

__all__ = [
    "SnapshotHint",
    "Wake",
    "Subscription",
    "Notifier",
    "WarehouseChange",
    "normalize_table_url",
    "snapshot_id_from_name",
]

logger = logging.getLogger(__name__)

_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


def normalize_table_url(url: str) -> str:
    """One spelling per table location, so hints and subscriptions meet.

    Local paths become ``file:///abs/path`` (percent-encoded, see :mod:`paimon_feed._layout`);
    ``s3a://``/``s3n://`` become ``s3://``; trailing slashes go.

    >>> normalize_table_url("s3a://bucket/wh/db.db/t/")
    's3://bucket/wh/db.db/t'
    >>> normalize_table_url("/tmp/wh/db.db/t")
    'file:///tmp/wh/db.db/t'
    >>> normalize_table_url("file:/tmp/wh/db.db/t") == normalize_table_url("file:///tmp/wh/db.db/t/")
    True
    >>> normalize_table_url("/tmp/pct%41x") == normalize_table_url(normalize_table_url("/tmp/pct%41x"))
    True
    """
    if is_local(url) or (os.name == "nt" and len(url.split("://", 1)[0]) == 1):
        # A plain path is a path, never parsed as a URL ('%', '#', '?' mean themselves).
        return local_url(local_path(url))
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    scheme = _SCHEME_ALIASES.get(scheme, scheme)
    path = parsed.path.rstrip("/")
    return f"{scheme}://{parsed.netloc}{path}"


class WarehouseChange(Protocol):
    """What :meth:`Notifier.watch_warehouse` calls: ``table_url`` names the table an event was
    for when the notifier knows it (an S3 event), else ``None`` (a directory came or went)."""

    def __call__(self, table_url: str | None = None) -> None: ...


@dataclass(frozen=True)
class SnapshotHint:
    """A storage event saying a snapshot file may exist for a table.

    ``snapshot_id`` is ``None`` when the source cannot tell which snapshot (a directory appeared).
    ``detected_at`` is epoch seconds when this process first learned of the event.
    """

    table_url: str
    snapshot_id: int | None
    source: str
    detected_at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Wake:
    """What a subscription collected between two waits."""

    sources: dict[str, int]
    detected_at: float | None
    max_snapshot_id: int | None
    timed_out: bool

    @property
    def hinted(self) -> bool:
        return bool(self.sources)


class Subscription:
    """One feed's interest in one table: the notifier sets it, the feed waits on it.

    ``expected_snapshot_id`` is kept up to date by the feed (the next snapshot it will plan), so
    notifiers that probe storage know what to look for.
    """

    def __init__(
        self, notifier: Notifier, table_url: str, location: str, file_io: Any = None
    ) -> None:
        self.notifier = notifier
        self.table_url = table_url
        self.location = location
        self.file_io = file_io
        self.expected_snapshot_id: int | None = None
        self._event = asyncio.Event()
        self._sources: Counter[str] = Counter()
        self._detected_at: float | None = None
        self._max_snapshot_id: int | None = None
        self._closed = False
        self._table_push_healthy = True
        #: How often push failed for this table (its watch died, or the notifier's source
        #: failed); the feed reports each as a fallback to polling.
        self.push_failures = 0

    def notify(self, hint: SnapshotHint) -> None:
        """Record a hint and wake the feed. Must run on the subscription's event loop."""
        if self._closed:
            return
        self._sources[hint.source] += 1
        if self._detected_at is None or hint.detected_at < self._detected_at:
            self._detected_at = hint.detected_at
        if hint.snapshot_id is not None and (
            self._max_snapshot_id is None or hint.snapshot_id > self._max_snapshot_id
        ):
            self._max_snapshot_id = hint.snapshot_id
        self._event.set()

    def wake(self) -> None:
        """Wake the feed without a hint (the notifier's health changed)."""
        self._event.set()

    def expect(self, next_snapshot_id: int) -> None:
        """Tell probing notifiers which snapshot id the feed waits for next."""
        self.expected_snapshot_id = next_snapshot_id

    @property
    def push_healthy(self) -> bool:
        """Whether push works for this table: the notifier's source, and this table's watch."""
        return self.notifier.healthy and self._table_push_healthy

    def safety_interval(self, reconcile_interval: float) -> float:
        """How long the feed may wait without a hint before its next safety check: longer than
        ``reconcile_interval`` only while the notifier proves its pipe alive for this table."""
        return self.notifier.safety_interval(self.table_url, reconcile_interval)

    def push_lost(self) -> None:
        """The notifier lost push for this table (a watch died): count it and wake the feed,
        which polls until :meth:`push_restored`."""
        self.push_failures += 1
        self._table_push_healthy = False
        self._event.set()

    def push_restored(self) -> None:
        """Push for this table works again; wake the feed."""
        self._table_push_healthy = True
        self._event.set()

    def drain(self) -> Wake:
        """Take what arrived since the last drain without waiting."""
        wake = Wake(
            sources=dict(self._sources),
            detected_at=self._detected_at,
            max_snapshot_id=self._max_snapshot_id,
            timed_out=False,
        )
        self._sources.clear()
        self._detected_at = None
        self._max_snapshot_id = None
        self._event.clear()
        return wake

    async def wait(self, timeout: float | None) -> Wake:
        """Wait until a hint arrives or ``timeout`` seconds pass; return what arrived.

        Cancelling the caller always cancels the wait, even in the loop iteration where a hint
        arrives. (``asyncio.wait_for`` before Python 3.12 returns the result then and drops the
        cancellation: a feed closed at that moment kept planning, and ``close()`` waited for it
        forever.)
        """
        timed_out = False
        if not self._event.is_set():
            hinted = asyncio.ensure_future(self._event.wait())
            try:
                done, _ = await asyncio.wait({hinted}, timeout=timeout)
            finally:
                hinted.cancel()
            timed_out = not done
        wake = self.drain()
        return Wake(wake.sources, wake.detected_at, wake.max_snapshot_id, timed_out)

    def close(self) -> None:
        """Stop receiving hints. Idempotent."""
        if not self._closed:
            self._closed = True
            self.notifier._unsubscribe(self)


class Notifier:
    """Base of every notifier: a registry of subscriptions keyed by normalized table URL.

    Subclasses set ``source`` and implement ``_on_subscribe``/``_on_unsubscribe`` (start and stop
    watching a table) and, if they own background work beyond that, ``_close``. They call
    ``_dispatch(hint)`` from the event loop for every event, and set ``healthy`` to ``False`` while
    their push source is down so feeds fall back to polling.
    """

    source = "notifier"
    #: Whether a healthy notifier hints every new snapshot (push: events name each one), or only
    #: finds the one a feed expects next (a prober): then a next snapshot that expired unread is
    #: never hinted, and feeds look for expiry at their safety checks.
    announces_commits = True

    def __init__(self) -> None:
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._closed = False
        self.healthy = True
        self.hints_dispatched = 0
        self.hints_unmatched = 0

    # lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Notifier:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop all watching. Idempotent; open subscriptions stop receiving hints."""
        if self._closed:
            return
        self._closed = True
        for subscriptions in list(self._subscriptions.values()):
            for subscription in list(subscriptions):
                subscription.close()
        await self._close()

    async def _close(self) -> None:
        """Subclass hook: release background resources."""

    def __del__(self) -> None:
        if not getattr(self, "_closed", True) and getattr(self, "_subscriptions", None):
            warnings.warn(f"unclosed notifier {self!r}", ResourceWarning, stacklevel=1)

    # subscriptions -----------------------------------------------------------------------

    def subscribe(self, table_url: str, *, file_io: Any = None) -> Subscription:
        """Follow a table; the returned subscription wakes on each hint for it.

        ``table_url`` is the table root as pypaimon names it (a local path or a URL);
        ``file_io`` is the table's pypaimon FileIO, for notifiers that probe storage.
        """
        if self._closed:
            from paimon_feed.errors import FeedClosedError

            raise FeedClosedError(f"{type(self).__name__} is closed; create a new notifier")
        key = normalize_table_url(table_url)
        subscription = Subscription(self, key, table_url, file_io)
        self._subscriptions.setdefault(key, []).append(subscription)
        self._on_subscribe(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        subscriptions = self._subscriptions.get(subscription.table_url, [])
        if subscription in subscriptions:
            subscriptions.remove(subscription)
            if not subscriptions:
                del self._subscriptions[subscription.table_url]
            self._on_unsubscribe(subscription)

    def _on_subscribe(self, subscription: Subscription) -> None:
        """Subclass hook: start watching ``subscription.table_url`` if not already."""

    async def ready(self) -> None:
        """Wait until every subscribed table is being watched (events from now on arrive)."""

    def _on_unsubscribe(self, subscription: Subscription) -> None:
        """Subclass hook: stop watching when nobody follows the table any more."""

    def watch_warehouse(self, warehouse: str, on_change: WarehouseChange) -> Callable[[], None] | None:
        """Call ``on_change()`` (on the event loop) whenever a database or table directory of
        ``warehouse`` appears or disappears (``on_change(table_url)`` when an event names the table), so a warehouse feed finds new tables without
        waiting for its next listing. Returns a function that stops it, or ``None`` if this
        notifier cannot tell (the feed then relies on its listing)."""
        return None

    def safety_interval(self, table_url: str, reconcile_interval: float) -> float:
        """Seconds a table at ``table_url`` may go without a safety check: ``reconcile_interval``
        unless the notifier proves, for the table's whole warehouse, that events still arrive
        (:class:`~paimon_feed.notifiers.sqs.SqsNotifier`'s pipe check)."""
        return reconcile_interval

    def subscribed_tables(self) -> list[str]:
        return list(self._subscriptions)

    def _dispatch(self, hint: SnapshotHint) -> int:
        """Hand a hint to every subscription of its table; return how many received it."""
        subscriptions = self._subscriptions.get(normalize_table_url(hint.table_url), ())
        for subscription in subscriptions:
            subscription.notify(hint)
        if subscriptions:
            self.hints_dispatched += 1
        else:
            self.hints_unmatched += 1
        return len(subscriptions)

    def _set_healthy(self, healthy: bool, reason: str = "") -> None:
        """Record a health change and wake every feed so it adapts its wait."""
        if healthy == self.healthy:
            return
        self.healthy = healthy
        if healthy:
            logger.info("%s push source recovered; feeds return to push", self.source)
        else:
            logger.warning(
                "%s push source failed (%s); feeds fall back to polling", self.source, reason
            )
        for subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                if not healthy:
                    subscription.push_failures += 1
                subscription.wake()
