"""Planning: snapshot ids in, FeedBatches out (synchronous; no asyncio, no notifiers).

The public names are imported on first use (PEP 562), like the package root's: the light parts
of this folder (:mod:`~paimon_feed.planner.catalog`, which reads a table's schema for Spark's
``load()``) must not load the planner, and with it pypaimon's table and read modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_feed._lazy import lazy_names

if TYPE_CHECKING:
    from paimon_feed.planner.cursor import Cursor, Round
    from paimon_feed.planner.planner import Planned, Planner, StartResolution
    from paimon_feed.planner.timeline import Timeline

__all__ = ["Planner", "Planned", "StartResolution", "Timeline", "Cursor", "Round"]

#: public name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "Planner": "paimon_feed.planner.planner",
    "Planned": "paimon_feed.planner.planner",
    "StartResolution": "paimon_feed.planner.planner",
    "Timeline": "paimon_feed.planner.timeline",
    "Cursor": "paimon_feed.planner.cursor",
    "Round": "paimon_feed.planner.cursor",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
