"""Errors raised by paimon-feed.

Every error is a :class:`FeedError`, so ``except FeedError`` catches all of them::

    FeedError
    ├── ConfigurationError      an option, environment variable or argument is wrong
    │   ├── InvalidStartError   a start/end position cannot be parsed or resolved
    │   ├── InvalidConsumerIdError
    │   ├── UnknownArgumentError   a keyword argument nobody takes (also a TypeError)
    │   ├── MissingDependencyError   an optional extra ([s3], [spark]) is not installed
    │   │   └── SparkNotInstalledError
    │   ├── SparkVersionError   the running Spark line lacks the API a call or an option needs
    │   ├── VersionMismatchError   a Spark executor runs another paimon-feed/pypaimon than the driver
    │   ├── UnknownOptionError, InvalidOptionError   a Spark source option
    │   ├── InvalidOffsetError  a Spark offset this source did not write
    │   └── UnsupportedTypeError   a column type the Spark source cannot map
    ├── TableNotFoundError      the warehouse has no such table
    ├── CheckpointError         a consumer file cannot be read, parsed or written
    │   ├── CheckpointConflictError   another writer moved the checkpoint first
    │   └── CheckpointStorageError    storage failed reading or writing it (full disk,
    │                                 no permission, unreachable store); also a StorageError
    ├── SnapshotExpiredError    the next snapshot to read was expired before it was read
    ├── HistoryRewrittenError   the table's history no longer continues what was delivered
    │                           (rolled back, re-created, fast-forwarded)
    ├── StorageError            reading snapshots or data failed after retries
    ├── UnsupportedTableError   pypaimon cannot read a file of the table (not retried)
    │   └── DamagedMetadataError   a metadata file is not what the snapshot promises
    ├── SchemaChangedError      a Spark query's columns no longer match the table's
    ├── MalformedMessageError   a queue message that is not an S3 event notification
    ├── NotifierError           a push source failed (the feed falls back to polling)
    ├── InvocationFailedError   a direct Lambda invocation had tables that failed (so it is retried)
    └── FeedClosedError         the feed was used after it was closed
        └── LoopClosedError     the event loop thread behind a sync feed (or Spark's notifier)
                                stopped before it ran a call (internal: SyncChangeFeed says which feed)

Messages name the table, snapshot id or option that is wrong, and what to do about it.
Lower-level exceptions are chained (``raise ... from exc``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "FeedError",
    "ConfigurationError",
    "InvalidStartError",
    "InvalidConsumerIdError",
    "UnknownArgumentError",
    "MissingDependencyError",
    "install_hint",
    "TableNotFoundError",
    "CheckpointError",
    "CheckpointConflictError",
    "CheckpointStorageError",
    "SnapshotExpiredError",
    "HistoryRewrittenError",
    "DamagedMetadataError",
    "StorageError",
    "UnsupportedTableError",
    "is_transient",
    "is_access_denied",
    "as_feed_error",
    "storage_errors",
    "brief_repr",
    "NotifierError",
    "InvocationFailedError",
    "FeedClosedError",
    "LoopClosedError",
    "SparkNotInstalledError",
    "SparkVersionError",
    "VersionMismatchError",
    "UnknownOptionError",
    "InvalidOptionError",
    "InvalidOffsetError",
    "UnsupportedTypeError",
    "SchemaChangedError",
    "MalformedMessageError",
    "MAX_REASON_CHARS",
]


class FeedError(Exception):
    """Root of every paimon-feed error."""


class ConfigurationError(FeedError, ValueError):
    """An option, argument or environment variable has a wrong value."""


class InvalidStartError(ConfigurationError):
    """A start or end position cannot be parsed, or names a snapshot that cannot be read."""


class UnknownArgumentError(ConfigurationError, TypeError):
    """A keyword argument the callee does not take; the message suggests the one meant. A
    ``TypeError`` too, as Python's own error for it is."""


class InvalidConsumerIdError(ConfigurationError):
    """A consumer id would not make a safe consumer file name."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional integration was used without its extra installed; the message says which."""


def install_hint(extra: str) -> str:
    """How to install an extra: paimon-feed is installed from a checkout (or a wheel built
    from one), not from a package index.

    >>> install_hint("s3")
    'install the [s3] extra: pip install ".[s3]" in a paimon-feed checkout (or the wheel with [s3])'
    """
    return f'install the [{extra}] extra: pip install ".[{extra}]" in a paimon-feed checkout (or the wheel with [{extra}])'


class TableNotFoundError(FeedError, LookupError):
    """The table does not exist in the warehouse."""


class CheckpointError(FeedError):
    """A consumer checkpoint file cannot be read, parsed or written."""


class CheckpointConflictError(CheckpointError):
    """A conditional checkpoint write lost a race to another writer."""


class SnapshotExpiredError(FeedError):
    """The next snapshot the feed must read was expired before it was read.

    Attributes name the table, the snapshot the feed needed and the earliest one still
    retained, so a caller can decide to restart from there.
    """

    def __init__(
        self,
        table: str,
        snapshot_id: int,
        earliest_snapshot_id: int | None,
        reason: str | None = None,
    ) -> None:
        self.table = table
        self.snapshot_id = snapshot_id
        self.earliest_snapshot_id = earliest_snapshot_id
        self.reason = reason
        retained = reason or (
            f"the earliest retained snapshot is {earliest_snapshot_id}"
            if earliest_snapshot_id is not None
            else "no snapshot is retained"
        )
        super().__init__(
            f"table {table}: snapshot {snapshot_id} expired before it was read ({retained}); "
            f"changes in between are lost to this consumer. Restart with "
            f"on_expired='earliest' or 'latest-full' to accept the gap, and give the consumer "
            f"an id so Paimon's snapshot expiration keeps unread snapshots."
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # keep the attributes when pickled
        return (type(self), (self.table, self.snapshot_id, self.earliest_snapshot_id, self.reason))


class HistoryRewrittenError(FeedError):
    """The table's history no longer continues the history already delivered.

    Snapshots were rolled back and their ids re-used, the table was dropped and re-created under
    the same name, or a branch was fast-forwarded over it: the snapshot the consumer read last
    (``snapshot_id``) is gone or is another snapshot now. Reading on would deliver a history
    that never happened, so the feed stops. ``change`` says what was found.
    """

    def __init__(self, table: str, snapshot_id: int, change: str) -> None:
        self.table = table
        self.snapshot_id = snapshot_id
        self.change = change
        super().__init__(
            f"table {table}: its history was rewritten after snapshot {snapshot_id}, the last "
            f"one this consumer read ({change}): the rows delivered since the rewritten point "
            f"are no longer the table's, and the new snapshots with re-used ids were never "
            f"delivered. Rebuild what was derived from this table: restart with "
            f"on_history_rewritten='latest-full' (the whole table as it is now, then its changes), "
            f"or reset the consumer"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # keep the attributes when pickled
        return (type(self), (self.table, self.snapshot_id, self.change))


class StorageError(FeedError, OSError):
    """Reading snapshots, manifests or data files failed after retries."""


class CheckpointStorageError(CheckpointError, StorageError):
    """Storage failed to read or write a consumer or mark file (a full disk, no permission, an
    unreachable store): not bad input, so the CLI exits 1 as for any storage error, where a
    corrupt checkpoint (a plain :class:`CheckpointError`) exits 2."""


class UnsupportedTableError(FeedError):
    """A file of the table cannot be parsed or read by pypaimon: a retry would fail the same
    way, so it is reported at once, naming the table, the snapshot and the file."""


class DamagedMetadataError(UnsupportedTableError):
    """A snapshot, manifest list or manifest file is not what the metadata naming it promises
    (its size, its id): a torn upload or a bad restore. Nothing past it is read or committed."""


def is_transient(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a storage failure a retry may fix (I/O errors, the S3 client's).

    A parse or format error (a manifest pypaimon cannot decode, a corrupt file, a missing file)
    is not: it fails the same way every time. Libraries wrap I/O errors (pypaimon in
    ``RuntimeError``), so the cause chain is followed.

    >>> is_transient(ConnectionResetError()), is_transient(KeyError("_VALUE_STATS_COLS"))
    (True, False)
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (FileNotFoundError, UnsupportedTableError)):
            return False
        if isinstance(exc, (OSError, TimeoutError)):
            return True
        if type(exc).__module__.split(".")[0] in ("botocore", "aiobotocore", "urllib3"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


_DENIED = re.compile(
    r"ACCESS_DENIED|AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|InvalidClientTokenId"
    r"|ExpiredToken|HTTP status 403|Unable to locate credentials|NoCredentialsError"
)


def is_access_denied(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) says storage refused these credentials, or that
    there were none: a retry cannot fix it, configuring credentials can. pyarrow reports a
    refused ``HEAD`` as ``AWS Error ACCESS_DENIED ... No response body``; pypaimon wraps it.

    >>> is_access_denied(RuntimeError("Failed to load schema")), is_access_denied(OSError(
    ...     "When getting information for key 'wh/t' in bucket 'b': AWS Error ACCESS_DENIED"))
    (False, True)
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _DENIED.search(f"{type(exc).__name__}: {exc}"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def as_feed_error(table: str, what: str, exc: BaseException) -> FeedError:
    """The one translation of a failure into a FeedError: ``exc`` itself if it is one, a
    :class:`StorageError` (retried by callers) if a retry may fix it (:func:`is_transient`),
    else an :class:`UnsupportedTableError` (reported at once). ``what`` says what failed."""
    if isinstance(exc, FeedError):
        return exc
    if is_transient(exc):
        return StorageError(f"table {table}: {what} failed: {type(exc).__name__}: {exc}")
    return UnsupportedTableError(
        f"table {table}: {what} failed, and would fail again: {type(exc).__name__}: {exc}. "
        f"pypaimon cannot read this part of the table; check the table's Paimon version "
        f"against the compatibility table in docs/compatibility.md"
    )


@contextlib.contextmanager
def storage_errors(table: str, what: str) -> Iterator[None]:
    """The boundary where pypaimon and storage failures become FeedErrors (see
    :func:`as_feed_error`)::

        with storage_errors("db.t", "reading snapshot 4"):
            ...
    """
    try:
        yield
    except FeedError:
        raise
    except Exception as exc:
        raise as_feed_error(table, what, exc) from exc


def brief_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for naming a bad input in a message.

    An int of over 4300 digits has no ``repr()`` (it raises ValueError), so it is described.

    >>> brief_repr("x" * 100, 10), brief_repr(10**5000), brief_repr({"a": 10**5000})
    ("'xxxxxx...", 'an integer of 16610 bits', 'a dict holding an integer too large to print')
    """
    if isinstance(value, int) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except ValueError:
        return f"a {type(value).__name__} holding an integer too large to print"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class NotifierError(FeedError):
    """A push notifier failed; feeds fall back to polling while it is down."""


class InvocationFailedError(FeedError):
    """A direct (non-SQS) Lambda invocation had tables that failed; raised so Lambda retries it."""


class FeedClosedError(FeedError, RuntimeError):
    """The feed was used after it was closed."""


class LoopClosedError(FeedClosedError):
    """The event loop thread (:class:`paimon_feed._aio.LoopThread`) stopped before, or while,
    running a coroutine."""


# Errors of the integrations, here so that the tree above is the whole story; each is also
# importable from the module that raises it.
class SparkNotInstalledError(MissingDependencyError):
    """PySpark is needed for the Spark source and runner and is not installed."""


class SparkVersionError(ConfigurationError):
    """The running Spark line lacks the API a call or an option needs; the message names the
    option (or call), the Spark version it needs and what to use on this line."""


class VersionMismatchError(ConfigurationError):
    """A Spark executor imports another paimon-feed or pypaimon than the driver that planned
    the read: splits and offsets are only understood by the versions that wrote them."""


class UnknownOptionError(ConfigurationError):
    """An option the ``paimon_feed`` source does not know (most often a typo)."""


class InvalidOptionError(ConfigurationError):
    """A known option with a value the source cannot use."""


class InvalidOffsetError(ConfigurationError):
    """An offset (from a Spark checkpoint) that this source did not write."""


class UnsupportedTypeError(ConfigurationError):
    """A column whose Paimon type the Spark source cannot map."""


class SchemaChangedError(FeedError):
    """The table's columns no longer match the schema the query was defined with."""


MAX_REASON_CHARS = 200


class MalformedMessageError(FeedError, ValueError):
    """A queue message or Lambda event that is not an S3 event notification in a known envelope.

    ``reason`` is short (at most ``MAX_REASON_CHARS`` characters), never the whole message;
    ``message_id`` names the SQS message when it is known.
    """

    def __init__(self, reason: str, message_id: str | None = None) -> None:
        self.reason = (
            reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 1] + "…"
        )
        self.message_id = message_id
        where = f"message {message_id}" if message_id else "message"
        super().__init__(
            f"malformed {where}: {self.reason}; expected an S3 event notification (direct, via "
            f"SNS or via EventBridge)"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # keep the attributes when pickled
        return (type(self), (self.reason, self.message_id))
