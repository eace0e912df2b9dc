"""paimon-feed: an event-driven change feed for Apache Paimon tables — push instead of poll."""

from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.errors import (
    CheckpointConflictError,
    CheckpointError,
    ConfigurationError,
    FeedClosedError,
    FeedError,
    InvalidConsumerIdError,
    InvalidStartError,
    MissingDependencyError,
    NotifierError,
    SnapshotExpiredError,
    StorageError,
    TableNotFoundError,
    UnsupportedTableError,
)
from paimon_feed.feed import ChangeFeed, FeedMetrics, SyncChangeFeed
from paimon_feed.notifiers import LocalNotifier, Notifier, PollingNotifier, SnapshotHint
from paimon_feed.planner import Planner
from paimon_feed.start import StartPosition, parse_end, parse_start

__version__ = "0.1.0"

__all__ = [
    "ChangeFeed",
    "SyncChangeFeed",
    "FeedBatch",
    "FeedMetrics",
    "Planner",
    "CheckpointStore",
    "Notifier",
    "LocalNotifier",
    "PollingNotifier",
    "SqsNotifier",
    "SnapshotHint",
    "StartPosition",
    "parse_start",
    "parse_end",
    "FeedError",
    "ConfigurationError",
    "InvalidStartError",
    "InvalidConsumerIdError",
    "MissingDependencyError",
    "TableNotFoundError",
    "CheckpointError",
    "CheckpointConflictError",
    "SnapshotExpiredError",
    "StorageError",
    "UnsupportedTableError",
    "NotifierError",
    "FeedClosedError",
    "__version__",
]


def __getattr__(name: str):
    if name == "SqsNotifier":  # needs the [s3] extra
        from paimon_feed.notifiers.sqs import SqsNotifier

        return SqsNotifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
