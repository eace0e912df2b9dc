"""Planning: snapshot ids in, FeedBatches out (synchronous; no asyncio, no notifiers)."""

from paimon_feed.planner.cursor import Cursor, Round
from paimon_feed.planner.planner import Planned, Planner, StartResolution
from paimon_feed.planner.timeline import Timeline

__all__ = ["Planner", "Planned", "StartResolution", "Timeline", "Cursor", "Round"]
