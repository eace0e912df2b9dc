"""What a started :class:`~paimon_feed.feed.ChangeFeed` holds outside itself: its notifier (when
the feed made it by name), its subscription and its planning task.

:meth:`Lifecycle.open` acquires them in order (notifier, subscription, ``ready()``, the start
position), :meth:`Lifecycle.close` releases them in reverse, and
:meth:`Lifecycle.release_abandoned` does it for a feed collected without ``close()``, on the
feed's event loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from paimon_feed._aio import cancel_and_wait
from paimon_feed.feed.planning import Planning, Position
from paimon_feed.notifiers import Notifier, Subscription, create_notifier, polling_instead_of_push

__all__ = ["Lifecycle", "open_notifier"]

logger = logging.getLogger("paimon_feed.feed")

_releasing: set[asyncio.Task[None]] = set()  # notifier closes of abandoned feeds, held until done


def _release(
    task: asyncio.Task[None], subscription: Subscription | None, notifier: Notifier | None
) -> None:
    """Stop what a collected, unclosed feed still holds; runs on that feed's event loop."""
    task.cancel()
    if subscription is not None:
        subscription.close()
    if notifier is not None:
        closing = asyncio.get_running_loop().create_task(notifier.close())
        _releasing.add(closing)
        closing.add_done_callback(_releasing.discard)


def open_notifier(
    spec: str | Notifier, url: str, options: dict[str, Any]
) -> tuple[Notifier, bool]:
    """The notifier for ``url``: made now by name (the caller owns it: ``True``), or the
    instance given (shared, the caller does not close it: ``False``). A feed opens its notifier
    once, at its start: when ``auto`` falls back to paid polling, this is where it says so, once
    (DESIGN invariant 16: loud, once, at the start)."""
    if isinstance(spec, Notifier):
        return spec, False
    notifier = create_notifier(spec, url, **options)
    warning = polling_instead_of_push(spec, url, **options)
    if warning is not None:
        logger.warning("%s", warning)
    return notifier, True


class Lifecycle:
    """One feed's notifier, subscription and planning task (see the module docstring)."""

    def __init__(
        self,
        *,
        table_name: str,
        table_url: str,
        file_io: Any,
        notifier: str | Notifier,
        notifier_options: dict[str, Any],
        planning: Planning,
    ) -> None:
        self._table_name = table_name
        self._table_url = table_url
        self._file_io = file_io
        self._notifier_spec = notifier
        self._notifier_options = notifier_options
        self._planning = planning
        self.notifier: Notifier | None = None
        self._owns_notifier = False
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def source(self) -> str:
        """Where wake-ups come from: the notifier's source, or its name before the start."""
        return self.notifier.source if self.notifier else str(self._notifier_spec)

    async def open(self, queue: asyncio.Queue[Any]) -> Position:
        """Subscribe the table to its notifier (made now for a name) and resolve where planning
        starts, so ``"latest"`` means the latest when the feed started."""
        self.notifier, self._owns_notifier = open_notifier(
            self._notifier_spec, self._table_url, self._notifier_options
        )
        self._subscription = self.notifier.subscribe(self._table_url, file_io=self._file_io)
        self._planning.attach(self.notifier, self._subscription, queue)
        await self.notifier.ready()
        return await self._planning.initial_position()

    def launch(self, position: Position) -> None:
        """Start the planning task at ``position``."""
        self._task = asyncio.get_running_loop().create_task(
            self._planning.run(position), name=f"paimon-feed-{self._table_name}"
        )

    async def close(self) -> None:
        """Cancel the planning task, then release the subscription and an owned notifier."""
        try:
            if self._task is not None:
                await cancel_and_wait([self._task])
        finally:
            if self._subscription is not None:
                self._subscription.close()
            if self._owns_notifier and self.notifier is not None:
                await self.notifier.close()

    def release_abandoned(self) -> None:
        """For a feed collected without ``close()``: the planning task holds no reference to the
        feed, so this can happen while its loop runs; stop the task there, and what it watched."""
        task = self._task
        if task is None or task.get_loop().is_closed():
            return
        notifier = self.notifier if self._owns_notifier else None
        task.get_loop().call_soon_threadsafe(_release, task, self._subscription, notifier)
