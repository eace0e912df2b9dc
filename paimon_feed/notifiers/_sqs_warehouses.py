"""What an :class:`~paimon_feed.notifiers.sqs.SqsNotifier` does for the ``s3://`` warehouses
:class:`~paimon_feed.WarehouseFeed` follows through it, beside waking tables: a snapshot event
that names a table no feed follows yet is announced to the warehouse's watch (with
warehouse-wide wiring, ``paimon-feed wire``, a new table is opened from its first commit's
event instead of the next listing), and the warehouse's pipe check
(:mod:`paimon_feed.notifiers._pipe_check`) is started, heard and asked for each table's safety
interval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers._pipe_check import PipeCheck
from paimon_feed.notifiers.base import WarehouseChange, normalize_table_url
from paimon_feed.notifiers.events import keys_in_message

__all__ = ["SqsWarehouses", "check_pipe_options", "is_s3_warehouse"]


def is_s3_warehouse(warehouse: str) -> bool:
    """Whether S3 events can name ``warehouse``'s tables (an ``s3://``, ``s3a://`` or ``s3n://`` URL)."""
    return warehouse.startswith(("s3://", "s3a://", "s3n://"))


def check_pipe_options(pipe_check_interval: float | None, pipe_check_timeout: float, proven_interval: float) -> None:
    """Raise :class:`ConfigurationError` on an SqsNotifier's pipe check option that is not a
    positive number of seconds (``pipe_check_interval`` may be ``None``: no check)."""
    options = {"pipe_check_timeout": pipe_check_timeout, "proven_interval": proven_interval}
    if pipe_check_interval is not None:
        options["pipe_check_interval"] = pipe_check_interval
    for name, value in options.items():
        if not value > 0:
            raise ConfigurationError(f"SqsNotifier: {name} must be > 0 seconds, got {value!r}")


class SqsWarehouses:
    """The warehouse watches of one notifier, and their pipe check (``pipe_check`` ``None``:
    none)."""

    def __init__(self, pipe_check: PipeCheck | None) -> None:
        self._pipe_check = pipe_check
        self._watches: list[tuple[str, WarehouseChange]] = []

    def watch(self, warehouse: str, on_change: WarehouseChange) -> Callable[[], None]:
        """Call ``on_change(table_url)`` for events of unfollowed tables under the ``s3://``
        ``warehouse``, and probe its pipe; returns what stops the call (not the probes, which end
        with :meth:`close`)."""
        watch = (normalize_table_url(warehouse) + "/", on_change)
        self._watches.append(watch)
        if self._pipe_check is not None:
            self._pipe_check.watch(warehouse)
        return lambda: self._watches.remove(watch) if watch in self._watches else None

    def announce(self, table_url: str) -> int:
        """Tell the watches that cover the unfollowed table at ``table_url``; how many did."""
        watches = [on_change for prefix, on_change in self._watches if table_url.startswith(prefix)]
        for on_change in watches:
            on_change(table_url)
        return len(watches)

    def safety_interval(self, table_url: str, reconcile_interval: float) -> float:
        """``proven_interval`` for a table whose warehouse's pipe check passes, else
        ``reconcile_interval``."""
        if self._pipe_check is None:
            return reconcile_interval
        return self._pipe_check.safety_interval(normalize_table_url(table_url) + "/", reconcile_interval)

    def heard_probe(self, body: str) -> bool:
        """Whether the message ``body`` is a probe's event (the check takes note of it)."""
        return self._pipe_check is not None and any(map(self._pipe_check.heard, keys_in_message(body)))

    def metrics(self) -> dict[str, Any]:
        """The pipe check's counters (none without one)."""
        return self._pipe_check.metrics() if self._pipe_check is not None else {}

    async def close(self) -> None:
        """Stop the probes."""
        if self._pipe_check is not None:
            await self._pipe_check.close()
