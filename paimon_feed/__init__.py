"""paimon-feed: an event-driven change feed for Apache Paimon tables — push instead of poll.

The public names below are imported on first use (PEP 562): Spark imports
``paimon_feed.spark`` in every Python process it starts for the source, and those processes
must not pay for the asyncio feed, the notifiers and the planner they do not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_feed._lazy import lazy_names
from paimon_feed.errors import (
    CheckpointConflictError,
    CheckpointError,
    CheckpointStorageError,
    ConfigurationError,
    DamagedMetadataError,
    FeedClosedError,
    FeedError,
    HistoryRewrittenError,
    InvalidConsumerIdError,
    InvalidStartError,
    MissingDependencyError,
    NotifierError,
    SnapshotExpiredError,
    StorageError,
    TableNotFoundError,
    UnsupportedTableError,
)

if TYPE_CHECKING:
    from paimon_feed.batch import FeedBatch
    from paimon_feed.checkpoint import CheckpointStore
    from paimon_feed.feed import ChangeFeed, FeedMetrics, SyncChangeFeed
    from paimon_feed.feed.warehouse import SyncWarehouseFeed, WarehouseFeed, WarehouseMetrics
    from paimon_feed.notifiers import (
        LocalNotifier,
        Notifier,
        PollingNotifier,
        SnapshotHint,
    )
    from paimon_feed.notifiers.sqs import SqsNotifier
    from paimon_feed.planner import Planner
    from paimon_feed.start import StartPosition, parse_end, parse_start
    from paimon_feed.tables import open_catalog, open_table

__version__ = "0.1.0"

__all__ = [
    "ChangeFeed",
    "SyncChangeFeed",
    "WarehouseFeed",
    "SyncWarehouseFeed",
    "WarehouseMetrics",
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
    "open_table",
    "open_catalog",
    "FeedError",
    "ConfigurationError",
    "InvalidStartError",
    "InvalidConsumerIdError",
    "MissingDependencyError",
    "TableNotFoundError",
    "CheckpointError",
    "CheckpointConflictError",
    "CheckpointStorageError",
    "SnapshotExpiredError",
    "HistoryRewrittenError",
    "StorageError",
    "UnsupportedTableError",
    "DamagedMetadataError",
    "NotifierError",
    "FeedClosedError",
    "__version__",
]

#: public name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "open_table": "paimon_feed.tables",
    "open_catalog": "paimon_feed.tables",
    "ChangeFeed": "paimon_feed.feed",
    "SyncChangeFeed": "paimon_feed.feed",
    "FeedMetrics": "paimon_feed.feed",
    "WarehouseFeed": "paimon_feed.feed.warehouse",
    "SyncWarehouseFeed": "paimon_feed.feed.warehouse",
    "WarehouseMetrics": "paimon_feed.feed.warehouse",
    "FeedBatch": "paimon_feed.batch",
    "Planner": "paimon_feed.planner",
    "CheckpointStore": "paimon_feed.checkpoint",
    "Notifier": "paimon_feed.notifiers",
    "LocalNotifier": "paimon_feed.notifiers",
    "PollingNotifier": "paimon_feed.notifiers",
    "SnapshotHint": "paimon_feed.notifiers",
    "SqsNotifier": "paimon_feed.notifiers.sqs",  # needs the [s3] extra
    "StartPosition": "paimon_feed.start",
    "parse_start": "paimon_feed.start",
    "parse_end": "paimon_feed.start",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
