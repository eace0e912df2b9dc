"""Options of the ``paimon_feed`` Spark source, parsed and checked before any query runs.

Spark hands a Python data source its options in a case-insensitive dict whose keys are
lower-cased. This module turns that dict into a frozen :class:`SourceOptions` or raises a
:class:`~paimon_feed.errors.ConfigurationError` subclass that names the offending option, so a
typo fails at ``load()`` instead of in the middle of a stream.

=========================  ==========================================================
option                     meaning
=========================  ==========================================================
``warehouse``              warehouse root of pypaimon's catalog (required)
``table``                  ``db.table`` (required; ``load("db.table")`` works too)
``catalog.<key>``          any pypaimon catalog option, e.g. ``catalog.fs.s3.endpoint``
``startingPosition``       as ``ChangeFeed(start=...)``: ``latest-full`` (default),
                           ``latest``, ``earliest``, ``snapshot:N`` / ``N``, ``tag:NAME``,
                           ``time:<ISO-8601>`` / ``time:-1h``
``endSnapshot``            last snapshot id to read, inclusive; a batch read of a range
                           uses it with ``startingPosition``
``maxSnapshotsPerTrigger`` at most this many snapshot ids per micro-batch: a real read
                           limit, honoured by ``Trigger.AvailableNow`` too (the backlog is
                           split)
``includeRowKind``         ``true`` adds ``_row_kind`` (``+I``/``-U``/``+U``/``-D``) first
``includeSnapshotId``      ``true`` adds ``_snapshot_id`` (after ``_row_kind``): the snapshot
                           that committed each change, to order the changes of one
                           micro-batch before applying them (a full state carries the
                           snapshot it was read at)
``overwrite``              ``skip`` (default, as Java Paimon) or ``read``: OVERWRITE
                           snapshots as removed (``-D``) and added (``+I``) rows; ``read``
                           needs ``includeRowKind=true``
``consumerId``             Paimon consumer id: progress is written to
                           ``{table}/consumer/consumer-<id>`` on each Spark commit; a new
                           query with the same id starts from it
``onExpired``              ``error`` (default), ``earliest`` or ``latest-full``: when
                           the next snapshot expired before it was read
``onHistoryRewritten``     ``error`` (default) or ``latest-full``: when the table no
                           longer continues what was read (rolled back, re-created)
``notifier``               ``auto`` (default), ``local``, ``poll``, ``sqs``, ``hdfs``,
                           ``storage-per-trigger``; ``auto`` is ``sqs`` on ``s3://``
                           with a queue, a storage check on every trigger on a
                           local file system, ``hdfs`` on ``hdfs://`` (push where
                           the user may read the inotify stream, else a look every
                           10 s), ``poll`` elsewhere
``queueUrl``               the SQS queue for ``notifier=sqs`` (or ``auto`` on ``s3://``)
``reconcileInterval``      seconds between safety checks while push is healthy (60)
``pollInterval``           seconds between checks when polling or push is down (1)
``minPartitions``          split a micro-batch into at least this many Spark tasks (2)
``maxPartitionBytes``      data file bytes per Spark task at most (``128m``)
``reader``                 ``auto`` (default), ``feed`` or ``connector``: who reads a
                           ``foreach_batch`` batch's rows (:mod:`paimon_feed.spark.handoff`);
                           the source reads with its own executors (``feed``) only
=========================  ==========================================================

Durations are the project's one grammar, as in the CLI, Python and the Lambda handler: a bare
number is seconds (``"60"``, ``"0.5"``), or a unit: ``"500ms"``, ``"30s"``, ``"2m"``, ``"1h"``.
Paimon's own table options, passed through, keep Paimon's grammar.
Sizes take bytes or a unit, as Spark's own settings do: ``"134217728"``, ``"64k"``, ``"128m"``,
``"1g"``.

Partitions are sized the way Spark sizes file partitions (``spark.sql.files.maxPartitionBytes``
and the cluster's default parallelism), but a Python data source cannot see the default
parallelism, so ``minPartitions`` stands in for it: its default of 2 suits a laptop
(``local[2]``); on a cluster, set it to the executor cores a large backlog should spread over.
The ``foreach_batch`` runner can see it: there the default is the session's
``defaultParallelism`` (classic sessions; 2 on Spark Connect). A batch is cut into a multiple
of ``minPartitions`` tasks of about equal size, so the task slots finish together. Each task has a fixed cost (about 0.1 s on ``local[2]``), so more tasks than cores only slows
a query down.

>>> opts = parse_options({"warehouse": "/tmp/wh", "table": "db.orders",
...                       "catalog.fs.s3.accesskeyid": "k", "maxsnapshotspertrigger": "3"})
>>> opts.catalog_options()["fs.s3.accessKeyId"], opts.max_snapshots_per_trigger
('k', 3)
>>> parse_options({"warehouse": "/tmp/wh", "table": "db.t", "startingPositon": "latest"})
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
paimon_feed.errors.UnknownOptionError: unknown option 'startingPositon' for format paimon_feed (did you mean 'startingPosition'?). Known options: ...
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from paimon_feed._units import parse_duration
from paimon_feed.checkpoint import validate_consumer_id
from paimon_feed.errors import (
    ConfigurationError,
    InvalidConsumerIdError,
    InvalidOptionError,
    InvalidStartError,
    UnknownOptionError,
)
from paimon_feed.progress import check_policies
from paimon_feed.start import parse_end, parse_start
from paimon_feed.tables import parse_table_name

__all__ = [
    "DEFAULT_MAX_PARTITION_BYTES",
    "DEFAULT_MIN_PARTITIONS",
    "SourceOptions",
    "parse_options",
    "UnknownOptionError",
    "InvalidOptionError",
    "FORMAT_NAME",
    "STORAGE_PER_TRIGGER",
    "NOTIFIER_CHOICES",
    "READER_CHOICES",
]

FORMAT_NAME = "paimon_feed"
CATALOG_PREFIX = "catalog."

#: ``notifier`` value that disables push: every ``latestOffset`` call checks storage. What
#: ``auto`` does on a local file system, where a check is a ``stat``; on an object store each
#: check is a paid request (the baseline the benchmark compares push against).
STORAGE_PER_TRIGGER = "storage-per-trigger"
NOTIFIER_CHOICES = ("auto", "local", "poll", "sqs", "hdfs", STORAGE_PER_TRIGGER)
#: ``reader`` values: chosen per table, this project's executors, Paimon's Spark connector.
READER_CHOICES = ("auto", "feed", "connector")

_KNOWN = (
    "warehouse",
    "table",
    "startingPosition",
    "endSnapshot",
    "maxSnapshotsPerTrigger",
    "includeRowKind",
    "includeSnapshotId",
    "overwrite",
    "consumerId",
    "onExpired",
    "onHistoryRewritten",
    "notifier",
    "queueUrl",
    "reconcileInterval",
    "pollInterval",
    "minPartitions",
    "maxPartitionBytes",
    "reader",
)
_CANONICAL = {name.lower(): name for name in _KNOWN}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)
_SIZE_UNIT = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: Spark's ``spark.sql.files.maxPartitionBytes`` default.
DEFAULT_MAX_PARTITION_BYTES = 128 * 1024 * 1024
DEFAULT_MIN_PARTITIONS = 2
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


@dataclass(frozen=True)
class SourceOptions:
    """Validated options of one ``paimon_feed`` read. Durations are in seconds.

    ``starting_position`` stays a string: relative times (``time:-1h``) are resolved when the
    query starts, not when the DataFrame is defined.
    """

    table: str
    catalog: tuple[tuple[str, str], ...]
    starting_position: str = "latest-full"
    end_snapshot: int | None = None
    max_snapshots_per_trigger: int | None = None
    include_row_kind: bool = False
    include_snapshot_id: bool = False
    overwrite: Literal["skip", "read"] = "skip"
    consumer_id: str | None = None
    on_expired: str = "error"
    on_history_rewritten: str = "error"
    notifier: str = "auto"
    queue_url: str | None = None
    reconcile_interval: float = 60.0
    poll_interval: float = 1.0
    min_partitions: int = DEFAULT_MIN_PARTITIONS
    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES
    reader: str = "auto"

    def catalog_options(self) -> dict[str, str]:
        """Options for ``pypaimon.CatalogFactory.create`` (``warehouse`` included)."""
        return dict(self.catalog)

    @property
    def warehouse(self) -> str:
        return self.catalog_options()["warehouse"]

    @property
    def push(self) -> bool:
        """Whether a notifier was asked for (every choice but the per-trigger check)."""
        return self.notifier != STORAGE_PER_TRIGGER


def _unknown(key: str) -> UnknownOptionError:
    close = difflib.get_close_matches(key.lower(), list(_CANONICAL), n=1, cutoff=0.75)
    hint = f" (did you mean {_CANONICAL[close[0]]!r}?)" if close else ""
    return UnknownOptionError(
        f"unknown option {key!r} for format {FORMAT_NAME}{hint}. Known options: "
        f"{', '.join(_KNOWN)}; pass pypaimon catalog options with the {CATALOG_PREFIX!r} prefix "
        f"(e.g. catalog.fs.s3.endpoint)"
    )


def _positive_int(name: str, value: str) -> int:
    text = str(value).strip()
    if not text.isdigit() or int(text) < 1:
        raise InvalidOptionError(f"option {name} must be a positive integer, got {value!r}")
    return int(text)


def _duration_s(name: str, value: str) -> float:
    try:  # the project's one duration grammar; a bare number is seconds, as everywhere
        seconds = parse_duration(str(value), what=f"option {name}")
    except ConfigurationError as exc:
        raise InvalidOptionError(str(exc)) from exc
    if seconds <= 0:
        raise InvalidOptionError(f"option {name} must be greater than zero, got {value!r}")
    return seconds


def _size_bytes(name: str, value: str) -> int:
    match = _SIZE.match(str(value))
    if not match or int(match.group(1)) < 1:
        raise InvalidOptionError(
            f"option {name} must be a positive size such as '134217728', '64m' or '1g', "
            f"got {value!r}"
        )
    amount, unit = match.groups()
    return int(amount) * _SIZE_UNIT[unit[0].lower() if unit else "b"]


def _boolean(name: str, value: str) -> bool:
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InvalidOptionError(f"option {name} must be 'true' or 'false', got {value!r}")


def _catalog_key(suffix: str, known_keys: Mapping[str, str]) -> str:
    # Spark lower-cases option keys; pypaimon's are case-sensitive (fs.s3.accessKeyId).
    return known_keys.get(suffix.lower(), suffix)


def parse_options(
    options: Mapping[str, str], *, known_catalog_keys: Mapping[str, str] | None = None
) -> SourceOptions:
    """Check Spark's options for the ``paimon_feed`` format and return them typed.

    ``known_catalog_keys`` maps lower-case pypaimon option keys to their real spelling
    (default: every key pypaimon declares).
    """
    source: dict[str, str] = {}
    catalog: dict[str, str] = {}
    path = None
    for raw_key, value in options.items():
        key = str(raw_key)
        lowered = key.lower()
        if lowered.startswith(CATALOG_PREFIX):
            suffix = key[len(CATALOG_PREFIX):]
            if not suffix:
                raise InvalidOptionError(f"option {key!r} names no catalog option after the prefix")
            if known_catalog_keys is None:  # looked up only when there is a key to re-spell
                from paimon_feed.planner.catalog import canonical_option_keys

                known_catalog_keys = canonical_option_keys()
            catalog[_catalog_key(suffix, known_catalog_keys)] = str(value)
        elif lowered == "path":  # load("db.table")
            path = str(value)
        elif lowered in _CANONICAL:
            source[_CANONICAL[lowered]] = str(value)
        else:
            raise _unknown(key)

    if "warehouse" in catalog and "warehouse" in source:
        raise InvalidOptionError(
            "give the warehouse once: option warehouse and option catalog.warehouse are both set"
        )
    warehouse = source.pop("warehouse", None) or catalog.pop("warehouse", None)
    if not warehouse or not warehouse.strip():
        raise InvalidOptionError(
            "option warehouse is required: the root of the Paimon warehouse, e.g. "
            ".option('warehouse', 's3://bucket/warehouse')"
        )
    catalog["warehouse"] = warehouse.strip()

    table = source.pop("table", None)
    if table is not None and path is not None and table.strip() != path.strip():
        raise InvalidOptionError(f"option table ({table!r}) and load path ({path!r}) disagree")
    table = (table or path or "").strip()
    try:
        parse_table_name(table)
    except ConfigurationError as exc:
        raise InvalidOptionError(f"option table: {exc}") from exc

    starting = source.get("startingPosition", "latest-full").strip()
    try:
        parse_start(starting)
    except InvalidStartError as exc:
        raise InvalidStartError(f"option startingPosition: {exc}") from exc
    end = None
    if "endSnapshot" in source:
        try:
            end = parse_end(source["endSnapshot"])
        except InvalidStartError as exc:
            raise InvalidStartError(f"option endSnapshot: {exc}") from exc

    max_snapshots = None
    if "maxSnapshotsPerTrigger" in source:
        max_snapshots = _positive_int("maxSnapshotsPerTrigger", source["maxSnapshotsPerTrigger"])

    consumer_id = source.get("consumerId")
    if consumer_id is not None:
        try:
            validate_consumer_id(consumer_id)
        except InvalidConsumerIdError as exc:
            raise InvalidConsumerIdError(f"option consumerId: {exc}") from exc

    on_expired = source.get("onExpired", "error").strip().lower()
    on_rewritten = source.get("onHistoryRewritten", "error").strip().lower()
    try:
        check_policies(on_expired, on_rewritten)
    except ConfigurationError as exc:
        raise InvalidOptionError(
            f"option onExpired/onHistoryRewritten: {exc}".replace("on_expired", "onExpired")
            .replace("on_history_rewritten", "onHistoryRewritten")
        ) from exc

    notifier = source.get("notifier", "auto").strip().lower()
    if notifier not in NOTIFIER_CHOICES:
        raise InvalidOptionError(
            f"option notifier must be one of {', '.join(NOTIFIER_CHOICES[:-1])}, got {notifier!r}"
        )
    queue_url = source.get("queueUrl")
    if queue_url is not None and not queue_url.strip():
        raise InvalidOptionError("option queueUrl is empty")

    reader = source.get("reader", "auto").strip().lower()
    if reader not in READER_CHOICES:
        raise InvalidOptionError(f"option reader must be one of {', '.join(READER_CHOICES)}, got {reader!r}")

    include_row_kind = _boolean("includeRowKind", source.get("includeRowKind", "false"))
    overwrite = source.get("overwrite", "skip").strip().lower()
    if overwrite not in ("skip", "read"):
        raise InvalidOptionError(f"option overwrite must be skip or read, got {overwrite!r}")
    if overwrite == "read" and not include_row_kind:
        raise InvalidOptionError(
            "option overwrite=read delivers removed rows as -D and added rows as +I: "
            "set includeRowKind=true as well"
        )

    return SourceOptions(
        table=table,
        catalog=tuple(sorted(catalog.items())),
        starting_position=starting,
        end_snapshot=end,
        max_snapshots_per_trigger=max_snapshots,
        include_row_kind=include_row_kind,
        include_snapshot_id=_boolean(
            "includeSnapshotId", source.get("includeSnapshotId", "false")
        ),
        overwrite=cast(Literal["skip", "read"], overwrite),
        consumer_id=consumer_id,
        on_expired=on_expired,
        on_history_rewritten=on_rewritten,
        notifier=notifier,
        queue_url=queue_url.strip() if queue_url else None,
        reconcile_interval=_duration_s("reconcileInterval", source.get("reconcileInterval", "60")),
        poll_interval=_duration_s("pollInterval", source.get("pollInterval", "1")),
        min_partitions=_positive_int(
            "minPartitions", source.get("minPartitions", str(DEFAULT_MIN_PARTITIONS))
        ),
        max_partition_bytes=_size_bytes(
            "maxPartitionBytes", source.get("maxPartitionBytes", str(DEFAULT_MAX_PARTITION_BYTES))
        ),
        reader=reader,
    )
