"""The notifiers of a :class:`~paimon_feed.WarehouseFeed`: one per kind of table location.

A filesystem catalog keeps every table under its warehouse, so one notifier chosen by the
warehouse's URL serves them all. A REST or JDBC catalog says where each table lives
(``file:/...``, ``s3://...``); its warehouse may be only a name. So the notifier is chosen by each
table's own location, and made once per kind (``auto`` on a local table and on an S3 table are
two notifiers, each shared by every table of its kind: DESIGN invariant 15). A notifier instance
the caller gave serves every table, and stays the caller's to close.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlparse

from paimon_feed.errors import FeedClosedError
from paimon_feed.feed.lifecycle import open_notifier
from paimon_feed.notifiers import Notifier, normalize_table_url

__all__ = ["SharedNotifiers"]


class SharedNotifiers:
    """``for_location(url)``: the notifier for a table at ``url``, made on first use; safe from
    the threads that open tables."""

    def __init__(self, spec: str | Notifier, options: dict[str, Any]) -> None:
        self._spec = spec
        self._options = options
        self._by_scheme: dict[str, Notifier] = {}
        self._owned: list[Notifier] = []
        self._lock = threading.Lock()
        self._closed = False

    def for_location(self, url: str) -> Notifier:
        """The notifier serving the table (or warehouse directory) at ``url``."""
        if isinstance(self._spec, Notifier):
            return self._spec
        scheme = urlparse(normalize_table_url(url)).scheme
        with self._lock:
            if self._closed:  # a table opened in a thread while the feed closed
                raise FeedClosedError(f"the warehouse feed closed before the table at {url} was followed")
            notifier = self._by_scheme.get(scheme)
            if notifier is None:
                notifier, owned = open_notifier(self._spec, url, self._options)
                self._by_scheme[scheme] = notifier
                if owned:
                    self._owned.append(notifier)
        return notifier

    def opened(self) -> list[Notifier]:
        """The notifiers made so far (for metrics and tests)."""
        return list(self._by_scheme.values())

    async def close(self) -> None:
        """Close the notifiers this made; a caller's instance is left open."""
        with self._lock:
            self._closed = True
            owned, self._owned = self._owned, []
            self._by_scheme.clear()
        for notifier in owned:
            await notifier.close()
