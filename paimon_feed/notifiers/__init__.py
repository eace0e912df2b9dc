"""Notifiers: storage events in, wake-ups (SnapshotHints) out. They never plan.

Which notifier serves a table is chosen by the table URL's scheme, fsspec-style, from a small
registry: ``file`` → :class:`LocalNotifier`; ``s3``/``s3a`` → ``SqsNotifier`` when a queue is
configured (``sqs_queue_url=`` or ``PAIMON_FEED_SQS_QUEUE_URL``); ``hdfs`` and
``viewfs`` → :class:`HdfsNotifier` (the NameNode's inotify stream, one per nameservice, where the
user may read it, else one NameNode call per table per 10 s, with a warning);
anything else → :class:`PollingNotifier`. A push source for another store is one module plus one registry entry.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlparse

from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers.base import (
    Notifier,
    SnapshotHint,
    Subscription,
    Wake,
    normalize_table_url,
    snapshot_id_from_name,
)
from paimon_feed.notifiers.hdfs import HdfsNotifier
from paimon_feed.notifiers.hdfs_poll import HdfsPollingNotifier
from paimon_feed.notifiers.local import LocalNotifier
from paimon_feed.notifiers.polling import PollingNotifier
from paimon_feed.notifiers.sqs import (  # aiobotocore loads lazily
    QUEUE_URL_ENV,
    queue_url_from_env,
)

__all__ = [
    "Notifier",
    "HdfsNotifier",
    "HdfsPollingNotifier",
    "LocalNotifier",
    "PollingNotifier",
    "SqsNotifier",
    "SnapshotHint",
    "Subscription",
    "Wake",
    "create_notifier",
    "polling_instead_of_push",
    "normalize_table_url",
    "snapshot_id_from_name",
    "SQS_QUEUE_URL_ENV",
]

SQS_QUEUE_URL_ENV = QUEUE_URL_ENV

NOTIFIER_NAMES = ("auto", "local", "poll", "sqs", "hdfs")


def __getattr__(name: str):
    if name == "SqsNotifier":  # needs the [s3] extra; import only when asked for
        from paimon_feed.notifiers.sqs import SqsNotifier

        return SqsNotifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _local(options: dict) -> Notifier:
    return LocalNotifier()


def _poll(options: dict) -> Notifier:
    return PollingNotifier(poll_interval=options.get("poll_interval", 1.0))


def _sqs(options: dict) -> Notifier:
    queue_url = options.get("sqs_queue_url") or queue_url_from_env()
    if not queue_url:
        raise ConfigurationError(
            f"notifier='sqs' needs a queue: pass sqs_queue_url=... or set {SQS_QUEUE_URL_ENV}"
        )
    from paimon_feed.notifiers.sqs import SqsNotifier

    return SqsNotifier(queue_url, **options.get("sqs_options", {}))


def _s3_auto(options: dict) -> Notifier:
    if options.get("sqs_queue_url") or queue_url_from_env():
        return _sqs(options)
    return _poll(options)


def _hdfs_auto(options: dict) -> Notifier:
    return HdfsNotifier(hadoop_classpath=options.get("hadoop_classpath"))


def _hdfs(options: dict) -> Notifier:
    return HdfsNotifier(required=True, hadoop_classpath=options.get("hadoop_classpath"))


#: scheme -> factory used by ``notifier="auto"``
AUTO_BY_SCHEME: dict[str, Callable[[dict], Notifier]] = {
    "file": _local,
    "s3": _s3_auto,
    "s3a": _s3_auto,
    "hdfs": _hdfs_auto,
    "viewfs": _hdfs_auto,
}

_BY_NAME: dict[str, Callable[[dict], Notifier]] = {"local": _local, "poll": _poll, "sqs": _sqs, "hdfs": _hdfs}


def polling_instead_of_push(spec: str, table_url: str, **options) -> str | None:
    """The one warning a feed gives at its start when ``notifier="auto"`` cannot push and polls
    storage that charges per request (``s3://`` without a queue): what it costs at the current
    poll interval and how to enable push; ``None`` when it pushes, or polling was asked for.

    >>> print(polling_instead_of_push("auto", "s3://b/wh/db.db/t", poll_interval=2.0))
    ... # doctest: +ELLIPSIS
    s3://b/wh/db.db/t: no SQS queue is configured, so notifier='auto' polls S3: one request every 2 s while commits come, up to 1,800 S3 requests an hour per table, 720 an hour when idle (...). For push, ...
    >>> polling_instead_of_push("poll", "s3://b/wh/db.db/t") is None
    True
    """
    url = normalize_table_url(table_url)
    if spec != "auto" or urlparse(url).scheme not in ("s3", "s3a"):
        return None
    if options.get("sqs_queue_url") or queue_url_from_env():
        return None
    interval = float(options.get("poll_interval", 1.0))
    idle = max(interval, 5.0)  # PollingNotifier's default longest wait
    return (
        f"{url}: no SQS queue is configured, so notifier='auto' polls S3: one request every "
        f"{interval:g} s while commits come, up to {3600 / interval:,.0f} S3 requests an hour per "
        f"table, {3600 / idle:,.0f} an hour when idle (backing off to {idle:g} s). For push, send "
        f"the bucket's snapshot-file events to an SQS queue and give its URL (sqs_queue_url=..., "
        f"the CLI's --sqs-queue-url, or {SQS_QUEUE_URL_ENV}): about 60 S3 requests an idle hour at the "
        f"default reconcile_interval; see "
        f"the S3 page of the docs. notifier='poll' asks for polling and says nothing."
    )


def create_notifier(spec: str, table_url: str, **options) -> Notifier:
    """Build the notifier ``spec`` names (``auto``, ``local``, ``poll``, ``sqs``, ``hdfs``) for a table.

    >>> type(create_notifier("auto", "/tmp/wh/db.db/t")).__name__
    'LocalNotifier'
    >>> type(create_notifier("auto", "oss://bucket/wh/db.db/t")).__name__
    'PollingNotifier'
    >>> type(create_notifier("auto", "hdfs://namenode:8020/wh/db.db/t")).__name__
    'HdfsNotifier'
    """
    if spec not in NOTIFIER_NAMES:
        raise ConfigurationError(
            f"unknown notifier {spec!r}: use one of {', '.join(NOTIFIER_NAMES)} "
            f"or pass a Notifier instance"
        )
    if spec == "auto":
        scheme = urlparse(normalize_table_url(table_url)).scheme
        return AUTO_BY_SCHEME.get(scheme, _poll)(options)
    if spec == "local" and not normalize_table_url(table_url).startswith("file://"):
        raise ConfigurationError(
            f"notifier='local' watches local directories; table {table_url} is not local "
            f"(use 'auto', 'poll' or 'sqs')"
        )
    if spec == "hdfs" and urlparse(normalize_table_url(table_url)).scheme not in ("hdfs", "viewfs"):
        raise ConfigurationError(
            f"notifier='hdfs' reads an HDFS namespace's inotify stream; table {table_url} is not "
            f"on hdfs:// or viewfs:// (use 'auto' or 'poll')"
        )
    return _BY_NAME[spec](options)
