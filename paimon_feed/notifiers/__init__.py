"""Notifiers: storage events in, wake-ups (SnapshotHints) out. They never plan.

Which notifier serves a table is chosen by the table URL's scheme, fsspec-style, from a small
registry: ``file`` → :class:`LocalNotifier`; ``s3``/``s3a`` → ``SqsNotifier`` when a queue is
configured (``sqs_queue_url=`` or ``PAIMON_FEED_SQS_QUEUE_URL``); ``hdfs`` →
:class:`HdfsNotifier` (the NameNode's inotify stream where the user may read it, else one
NameNode call per table per 10 s, with a warning), ``viewfs`` → :class:`HdfsPollingNotifier`;
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


def _viewfs_auto(options: dict) -> Notifier:
    return HdfsPollingNotifier()


def _hdfs(options: dict) -> Notifier:
    return HdfsNotifier(required=True, hadoop_classpath=options.get("hadoop_classpath"))


#: scheme -> factory used by ``notifier="auto"``
AUTO_BY_SCHEME: dict[str, Callable[[dict], Notifier]] = {
    "file": _local,
    "s3": _s3_auto,
    "s3a": _s3_auto,
    "hdfs": _hdfs_auto,
    "viewfs": _viewfs_auto,
}

_BY_NAME: dict[str, Callable[[dict], Notifier]] = {"local": _local, "poll": _poll, "sqs": _sqs, "hdfs": _hdfs}


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
    if spec == "hdfs" and urlparse(normalize_table_url(table_url)).scheme != "hdfs":
        raise ConfigurationError(
            f"notifier='hdfs' reads an HDFS namespace's inotify stream; table {table_url} is not "
            f"on hdfs:// (use 'auto' or 'poll')"
        )
    return _BY_NAME[spec](options)
