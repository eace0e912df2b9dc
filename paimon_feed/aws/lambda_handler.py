"""AWS Lambda handler: S3 snapshot events in, one processor call per FeedBatch, checkpoints out.

Set the function's handler to ``paimon_feed.aws.lambda_handler.handler``. Each invocation reads
which tables of the warehouse got a new snapshot, and for each of them delivers every batch from
the consumer's checkpoint up to the newest snapshot, advancing the checkpoint after each batch.
The events are only wake-ups (the design's first invariant): what is delivered comes from the
snapshot files, so a lost, duplicated or reordered event delays a batch but never loses or
repeats one.

Configuration (environment variables)
-------------------------------------

=================================  ==============================================================
variable                           meaning
=================================  ==============================================================
``PAIMON_FEED_WAREHOUSE``          required; the warehouse URL, ``s3://bucket/prefix``
``PAIMON_FEED_CATALOG_OPTIONS``    optional; a JSON object of pypaimon catalog options
                                   (``{"fs.s3.region": "eu-west-1"}``). Leave credentials out on
                                   Lambda: the execution role is used. Never logged unmasked.
``PAIMON_FEED_CONSUMER_ID``        required; the consumer id, checkpointed in
                                   ``{table}/consumer/consumer-{id}`` (Java Paimon's file)
``PAIMON_FEED_PROCESSOR``          required; ``module:function``, called with each
                                   :class:`~paimon_feed.batch.FeedBatch` (``batch.table`` names
                                   the table; ``batch.to_arrow()`` reads its rows)
``PAIMON_FEED_TABLES``             optional; comma-separated ``db.table`` allow-list
``PAIMON_FEED_START``              optional; where a consumer without a checkpoint starts
                                   (:mod:`paimon_feed.start`), default ``latest-full``
``PAIMON_FEED_ON_EXPIRED``         optional; ``error`` (default), ``earliest`` or ``latest-full``:
                                   what to do when the checkpoint's next snapshot expired unread
``PAIMON_FEED_ON_HISTORY_REWRITTEN`` optional; ``error`` (default) or ``latest-full``: what to do
                                   when the table no longer continues what was delivered
                                   (rolled back, re-created); see :mod:`paimon_feed.progress`
``PAIMON_FEED_DEADLINE_MARGIN``    optional; stop taking new batches when less than this is left
                                   of the invocation (a duration: ``10s``, ``500ms``; a bare
                                   number is seconds); default: 10 s, or a quarter of the time
                                   left at the start of the invocation if that is less
``PAIMON_FEED_DEADLINE_MARGIN_MS`` optional; the same in milliseconds (a bare number is
                                   milliseconds, as its name says); set one of the two
=================================  ==============================================================

A missing or invalid variable fails the invocation with a
:class:`~paimon_feed.errors.ConfigurationError` naming it.

Events
------

- **SQS** (the recommended wiring: S3 → SQS, S3 → SNS → SQS or S3 → EventBridge → SQS): the
  handler returns ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``, so only
  the messages of tables that failed are retried. The event source mapping needs
  ``function_response_types = ["ReportBatchItemFailures"]``; without it a failure in any table
  retries (or, worse, deletes) the whole batch.
- **Direct** S3 or EventBridge invocations: failures raise, so Lambda's own retries and
  on-failure destination take over.

A message counts as failed when any table it names failed: the processor raised, storage or
checkpoint I/O failed, a snapshot expired before it was read, the table's history was rewritten
(rolled back or re-created: :class:`~paimon_feed.errors.HistoryRewrittenError`), a metadata file
is damaged, or the deadline came first. Transient storage errors are retried first, as in every
entry point (:data:`paimon_feed.progress.RETRY`). Other
tables' progress is committed regardless. A malformed message is reported as failed with a log
line (the queue's redrive policy moves it to the dead-letter queue). Events for other buckets,
other warehouses, non-table paths, dropped tables or tables outside ``PAIMON_FEED_TABLES`` are
skipped with a log line and count as processed.

Delivery is at least once: the checkpoint advances after the processor returns, so a crash or
timeout between the two repeats that one batch on the next invocation. Processors should be
idempotent per ``(batch.table, batch.snapshot_id)``.

Deadline
--------

Before each batch the handler checks ``context.get_remaining_time_in_millis()``; below the
margin it takes no new batch, and reports the messages of every table it did not finish as
failed, so the retry resumes from the checkpoint. The margin must exceed the longest time one
batch (planning plus the processor) can take.

Recommended concurrency
-----------------------

Use the SQS event source mapping's ``scaling_config.maximum_concurrency`` (2, the smallest value
AWS allows, up to a handful) rather than reserved concurrency, and a batching window
(``maximum_batching_window_in_seconds``, a few seconds) with a large batch size, so one
invocation sees many commits at once. Why: every invocation catches each table it hears about
up to its newest snapshot, so one invocation per table at a time already delivers everything;
more concurrency only helps when many tables are busy at once. Concurrent invocations for the
*same* table are safe: checkpoints are written with S3 conditional writes (compare-and-swap), so
no progress is lost and a checkpoint never moves backwards. But they are wasteful: both read
the same snapshots, and both may process the same batch before one of them loses the checkpoint
race (a duplicate delivery; delivery stays at-least-once). The loser then leaves the table to
the winner, so a collision costs at most one duplicate batch, not a lockstep replay. Throttling
the function through reserved concurrency instead makes Lambda hand messages back to the queue,
which counts receives and can push healthy messages to the dead-letter queue. Set the queue's
visibility timeout to at least six times the function timeout, and its redrive
``maxReceiveCount`` to at least 5, so deadline and throttling retries do not dead-letter good
messages.

Invocation log line
-------------------

Each invocation ends with one JSON line on stdout (CloudWatch Logs Insights reads its fields),
the figures ``paimon_feed.metrics`` exports for a long-running feed::

    {"paimon_feed": "invocation", "request_id": "...", "duration_ms": 812.4, "messages": 3,
     "retried_messages": 0, "failed_messages": 0, "malformed_messages": 0, "batches": 2,
     "rows": 20, "lag_snapshots": 0, "latency_ms": {"p50": 95.1, "p99": 130.2, "max": 130.2},
     "checkpoint_conflicts": 0, "tables": {"db.events": {"status": "done", "batches": 2,
     "rows": 20, "snapshots": 2, "next_snapshot_id": 5, "lag_snapshots": 0,
     "checkpoint_conflicts": 0, "error": null}}}

``rows`` counts the rows in the delivered batches' data files (before a primary-key merge);
``latency_ms`` runs from each batch's commit to the processor call; a table's ``lag_snapshots``
is how many snapshots it had left when the invocation ended (``null`` if that could not be
read), the top-level one their sum; ``checkpoint_conflicts`` counts checkpoint races lost to a
concurrent invocation; ``retried_messages`` are messages SQS delivered more than once
(``ApproximateReceiveCount`` above 1).

Warm invocations reuse the catalog and the tables (cached for five minutes per warehouse,
options and table), and the S3 client of the checkpoints.
"""

from __future__ import annotations

from typing import Any

from paimon_feed.aws.config import (
    ENV_CATALOG_OPTIONS,
    ENV_CONSUMER_ID,
    ENV_DEADLINE_MARGIN,
    ENV_DEADLINE_MARGIN_MS,
    ENV_ON_EXPIRED,
    ENV_ON_HISTORY_REWRITTEN,
    ENV_PROCESSOR,
    ENV_START,
    ENV_TABLES,
    ENV_WAREHOUSE,
    HandlerConfig,
    _load_processor,  # noqa: F401 - the image's smoke test imports it from here
)
from paimon_feed.aws.invocation import (
    TableOutcome,
    _table_of,  # noqa: F401 - the routing fuzz test imports it from here
    clear_caches,
    handle_event,
)
from paimon_feed.errors import InvocationFailedError

__all__ = [
    "ENV_CATALOG_OPTIONS",
    "ENV_CONSUMER_ID",
    "ENV_DEADLINE_MARGIN",
    "ENV_DEADLINE_MARGIN_MS",
    "ENV_ON_EXPIRED",
    "ENV_ON_HISTORY_REWRITTEN",
    "ENV_PROCESSOR",
    "ENV_START",
    "ENV_TABLES",
    "ENV_WAREHOUSE",
    "HandlerConfig",
    "InvocationFailedError",
    "TableOutcome",
    "clear_caches",
    "handle_event",
    "handler",
]


def handler(event: Any, context: Any) -> dict[str, Any]:
    """The Lambda entry point: configure from the environment, then :func:`handle_event`."""
    return handle_event(event, context, HandlerConfig.from_env())
