"""PySpark source for Paimon tables: ``spark.readStream.format("paimon_feed")``.

::

    import paimon_feed.spark

    paimon_feed.spark.register(spark)
    stream = (
        spark.readStream.format("paimon_feed")
        .option("warehouse", "s3://bucket/warehouse")
        .option("table", "shop.orders")
        .option("consumerId", "orders-to-delta")   # Paimon keeps what this query has not read
        .option("maxSnapshotsPerTrigger", 10)
        .load()
    )

The Python data source needs Spark 4.0 or newer; :mod:`paimon_feed.spark.lines` says what each
line offers (read limits from 4.2), and on Spark 3.5 :func:`register` raises
:class:`SparkVersionError` pointing to ``foreach_batch``.

``spark.read.format("paimon_feed")`` reads the current state (or, with ``startingPosition`` and
``endSnapshot``, a bounded range of changes). Options are listed in
:mod:`paimon_feed.spark.options`, offsets in :mod:`paimon_feed.spark.offsets`.

On S3, unlike a polling source, ``latestOffset`` answers from memory: a notifier (SQS, as for
:class:`~paimon_feed.ChangeFeed`) runs in the driver and the source checks storage only when it
is told a snapshot arrived, or every ``reconcileInterval`` seconds. On a local file system a
check is a ``stat``, so ``notifier=auto`` checks on every trigger there and runs no notifier
(:func:`~paimon_feed.spark.tracker.tracking_mode`); ``notifier=local`` asks for inotify.

Progress and restarts:

- Spark's checkpoint is the source of truth. A restarted query resumes from the offsets Spark
  journaled, and a journaled micro-batch is planned again identically (from its end offset,
  with :meth:`Planner.plan_range` / :meth:`Planner.full_batch`), whatever the table did since.
- ``consumerId`` is Paimon's side of it. Each micro-batch Spark completes advances
  ``{table}/consumer/consumer-<id>`` (``{"nextSnapshot": N}``), so Paimon's snapshot expiration
  keeps the snapshots the query has not read. The source learns that a batch completed when
  Spark asks for the offset after it (Spark's own ``commit`` comes a batch later, and never for
  the last batch of a ``Trigger.AvailableNow`` run), so when a query stops the file holds the
  end of the last batch Spark committed (it never leads);
  a thread of the driver writes it, so no micro-batch waits for the write
  (:class:`~paimon_feed.spark.consumer_file.ConsumerFileWriter`).
  A *new* query (no Spark checkpoint yet) with a stored consumer file starts there, and the
  file wins over ``startingPosition``, as for :class:`~paimon_feed.ChangeFeed`.
- Batch reads (``spark.read``) ignore ``consumerId`` and the streaming-only options.

Spark 3.5, or a loop of your own instead of a ``StreamingQuery``: :func:`foreach_batch` (in
:mod:`paimon_feed.spark.runner`) calls ``fn(df, batch_id)`` for each batch, woken by push, on
classic Spark and Spark Connect alike.

Latency: PySpark hands each micro-batch's read to a Python worker over a local TCP socket by
default, and that hand-over waits out one delayed ACK of TCP (the JVM sends the task in two
small writes, and Nagle's algorithm holds the second until the first is acknowledged). Spark's
``spark.python.unix.domain.socket.enabled=true`` (PySpark 4.1+, not on Windows) uses Unix
domain sockets instead; :func:`register` logs a hint when a session runs without it.

PySpark is an optional dependency: this package imports it only when the source is used, and
raises :class:`SparkNotInstalledError` (an ``ImportError``) with the install hint if it is
missing.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from paimon_feed.errors import SparkNotInstalledError, SparkVersionError, install_hint
from paimon_feed.spark.lines import installed_line, parse_line
from paimon_feed.spark.options import FORMAT_NAME

__all__ = [
    "register",
    "foreach_batch",
    "BatchRunner",
    "PaimonFeedDataSource",
    "FORMAT_NAME",
    "UNIX_SOCKETS_CONF",
    "SparkNotInstalledError",
    "SparkVersionError",
]

logger = logging.getLogger(__name__)

#: Spark's switch from TCP to Unix domain sockets between the JVM and its Python workers.
UNIX_SOCKETS_CONF = "spark.python.unix.domain.socket.enabled"

_INSTALL_HINT = install_hint("spark")


def _source_module():
    """``paimon_feed.spark.source``, imported on first use: PySpark 4.0+ (the Python data source
    API); without PySpark the install hint, on Spark 3.5 a pointer to ``foreach_batch``."""
    line = installed_line()
    if line is None:
        raise SparkNotInstalledError(
            f"the paimon_feed Spark source needs PySpark 4.0 or newer: {_INSTALL_HINT}"
        )
    line.require_data_source()
    from paimon_feed.spark import source

    return source


def register(spark: Any) -> None:
    """Make ``format("paimon_feed")`` available in ``spark`` (a ``SparkSession``, classic or
    Spark Connect).

    Needs Spark 4.0 or newer: on Spark 3.5 it raises :class:`SparkVersionError`, pointing to
    ``paimon_feed.spark.foreach_batch``, which serves that line. With a Spark Connect session
    the source is registered on the server (its Python workers run it, so paimon-feed must be
    installed there, as on executors) and the server's Spark version is the one checked."""
    source = _source_module()  # fails with the install hint before touching ``spark``
    if is_connect(spark):
        parse_line(spark.version).require_data_source("the Spark Connect server runs Spark")
    spark.dataSource.register(source.PaimonFeedDataSource)
    line = installed_line()
    hint = socket_hint(_conf(spark, UNIX_SOCKETS_CONF)) if line and line.unix_sockets else None
    if hint:
        # A warning: at INFO, Spark's and most applications' logging never shows it.
        logger.warning(hint)


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (its work runs on a server)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def socket_hint(unix_sockets: str | None) -> str | None:
    """What :func:`register` logs for a session whose ``UNIX_SOCKETS_CONF`` is ``unix_sockets``
    (None: unset), or None when there is nothing to say."""
    if os.name != "posix" or (unix_sockets or "false").strip().lower() == "true":
        return None
    return (
        f"{UNIX_SOCKETS_CONF} is off in this Spark session: each micro-batch's read reaches its "
        f"Python worker over TCP and waits out one delayed ACK. Set it to true when "
        f"building the session for lower latency (see docs/spark.md)."
    )


def _conf(spark: Any, key: str) -> str | None:
    try:
        return spark.conf.get(key, None)
    except Exception:  # a session that cannot answer (e.g. a key Spark Connect hides): no hint
        return None


def __getattr__(name: str):
    if name in ("foreach_batch", "BatchRunner", "RunnerMetrics"):
        try:
            import pyspark.sql  # noqa: F401
        except ImportError as exc:
            raise SparkNotInstalledError(
                f"paimon_feed.spark.foreach_batch needs PySpark 3.5 or newer: {_INSTALL_HINT}"
            ) from exc
        from paimon_feed.spark import runner

        return getattr(runner, name)
    if name == "PaimonFeedDataSource":
        return _source_module().PaimonFeedDataSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
