"""Planning: snapshot ids in, FeedBatches out (synchronous; no asyncio, no notifiers)."""

from paimon_feed.planner.planner import Planned, Planner, StartResolution

__all__ = ["Planner", "Planned", "StartResolution"]
