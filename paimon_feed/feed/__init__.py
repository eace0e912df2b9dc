"""ChangeFeed: the async facade that ties a notifier, the planner, a bounded queue and checkpoints.

::

    async with ChangeFeed(table, consumer_id="orders-etl") as feed:
        async for batch in feed:
            process(batch.to_arrow())
            await feed.commit(batch)

A background task plans batches whenever the notifier wakes it (or the ``reconcile_interval``
safety check fires) and puts them on a queue of at most ``max_pending`` batches, so a slow
consumer slows planning and memory stays flat. Errors raised in the background are parked and
re-raised at the consumer's next iteration, after every batch planned before them.

Closing: ``close()`` may come from any task (a shutdown handler). A consumer waiting for a batch
at that moment ends its ``async for`` normally (``StopAsyncIteration``); a call made after
``close()`` raises :class:`FeedClosedError`. A started feed that is dropped without ``close()``
warns (``ResourceWarning``) and, if its event loop still runs, releases its subscription and
notifier there.

Commit semantics: ``commit(batch)`` stores ``batch.next_snapshot_id`` (the first snapshot *not*
processed) in Paimon's consumer file. Only committed progress survives a restart, so a crash
repeats at most the batches delivered but not committed (at-least-once), and never skips one.
"""

from paimon_feed.feed.feed import ChangeFeed
from paimon_feed.feed.stats import FeedMetrics
from paimon_feed.feed.sync import SyncChangeFeed

__all__ = ["ChangeFeed", "FeedMetrics", "SyncChangeFeed"]
