"""Planning: snapshot ids in, FeedBatches out (synchronous; no asyncio, no notifiers).

The public names are imported on first use (PEP 562), like the package root's: the light parts
of this folder (:mod:`~paimon_feed.planner._tables`, which reads a table's schema for Spark's
``load()``) must not load the planner, and with it pypaimon's table and read modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paimon_feed.planner.planner import Planned, Planner, StartResolution
    from paimon_feed.planner.timeline import Timeline

__all__ = ["Planner", "Planned", "StartResolution", "Timeline"]

#: public name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "Planner": "paimon_feed.planner.planner",
    "Planned": "paimon_feed.planner.planner",
    "StartResolution": "paimon_feed.planner.planner",
    "Timeline": "paimon_feed.planner.timeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
