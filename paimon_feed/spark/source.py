"""The ``paimon_feed`` data source: Spark's Python Data Source API over the planner.

A thin adapter: options are parsed by :mod:`~paimon_feed.spark.options`, offsets are
:class:`~paimon_feed.spark.offsets.FeedOffset`, the driver-side work is
:class:`~paimon_feed.spark.driver.StreamDriver`, and reading is
:func:`~paimon_feed.spark.partitions.read_splits`.

Where things run: Spark builds the stream reader in several Python processes. The one that
answers offsets lives as long as the query and holds the :class:`StreamDriver` (created on the
first offset call). Others only pickle the reader to ship ``read()`` to executors, so the
reader's constructor does no work and its pickled state is just the options and the schema.

Which stream reader Spark gets depends on the line (:mod:`~paimon_feed.spark.lines`, read once
when this module loads): :class:`PaimonFeedStreamReader` on 4.2+, with Spark's read limits and
``Trigger.AvailableNow``; :class:`PositionTrackingStreamReader` on 4.0 and 4.1, which keeps the
start of the next micro-batch itself and caps it with ``maxSnapshotsPerTrigger``. On 3.5 this
module does not load: :class:`~paimon_feed.errors.SparkVersionError` points to
``foreach_batch``.

Spark imports this module in each of those processes, so it imports only what all of them
need: :mod:`~paimon_feed.spark.driver` (the planner, pypaimon's table and read modules) is
imported by the callbacks that plan or read, and ``load()``'s schema comes from the table's
schema file (:func:`~paimon_feed.spark.table.load_schema`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from paimon_feed.errors import SparkNotInstalledError, install_hint
from paimon_feed.spark.lines import SparkLine, installed_line

_line = installed_line()
if _line is None:  # pragma: no cover - exercised by a subprocess test
    raise SparkNotInstalledError(
        "the paimon_feed Spark source needs PySpark 4.0 or newer (the Python data source API): "
        + install_hint("spark")
    )
_line.require_data_source()
#: The PySpark line this process runs, detected once: which reader Spark gets depends on it.
LINE: SparkLine = _line

from pyspark.sql.datasource import (  # noqa: E402  (after the line check: 3.5 has no module)
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructType  # noqa: E402

from paimon_feed.spark.offsets import FeedOffset  # noqa: E402
from paimon_feed.spark.options import FORMAT_NAME, InvalidOptionError, SourceOptions, parse_options  # noqa: E402
from paimon_feed.spark.schema import spark_schema  # noqa: E402
from paimon_feed.spark.table import check_notifier, load_schema  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql.streaming.datasource import ReadLimit

    from paimon_feed.spark.driver import StreamDriver
    from paimon_feed.spark.partitions import SplitGroup

__all__ = [
    "LINE",
    "PaimonFeedDataSource",
    "PaimonFeedStreamReader",
    "PositionTrackingStreamReader",
    "PaimonFeedBatchReader",
    "PaimonFeedPartition",
]

logger = logging.getLogger(__name__)


class PaimonFeedPartition(InputPartition):
    """One Spark task's share of a micro-batch: a :class:`SplitGroup`."""

    def __init__(self, group: SplitGroup) -> None:
        super().__init__(group)

    def __repr__(self) -> str:
        group = self.value
        return (
            f"PaimonFeedPartition(snapshots={group.first_snapshot_id}..{group.last_snapshot_id}, "
            f"kind={group.kind}, splits={len(group.splits)})"
        )


def _read(options: SourceOptions, schema: StructType, partition: InputPartition) -> Iterator:
    from paimon_feed.spark.partitions import SplitGroup, read_splits
    from paimon_feed.spark.schema import arrow_schema, conform

    group = getattr(partition, "value", None)
    if not isinstance(group, SplitGroup):  # Spark's placeholder for a plan with no partitions
        return iter(())
    target = arrow_schema(schema)
    return read_splits(options, group, lambda batch: conform(batch, target))


class PaimonFeedDataSource(DataSource):
    """``spark.readStream.format("paimon_feed")`` / ``spark.read.format("paimon_feed")``.

    Options are checked, and the table opened, when the DataFrame is defined (``load()``), so
    a wrong option or table fails there with the option named.
    """

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def _source_options(self) -> SourceOptions:
        parsed = self.__dict__.get("_parsed")
        if parsed is None:
            parsed = parse_options(self.options)
            self.__dict__["_parsed"] = parsed
        return parsed

    def schema(self) -> StructType:
        options = self._source_options()
        if options.reader == "connector":
            raise InvalidOptionError(
                f"table {options.table}: option reader=connector is foreach_batch's (it hands "
                f"each batch to Paimon's own connector); format('{FORMAT_NAME}') reads with its "
                f"own executors: drop the option, set reader=feed, or read with "
                f"format('paimon') directly"
            )
        table_schema, table_url = load_schema(options)
        check_notifier(options, table_url)
        if options.max_snapshots_per_trigger is not None and not LINE.read_limits:
            logger.warning(
                "table %s: on Spark %s, maxSnapshotsPerTrigger=%d caps each micro-batch, but "
                "Trigger.AvailableNow runs a single micro-batch on this line (Python sources "
                "get no AvailableNow hook before Spark 4.2), so such a run reads %d snapshots "
                "at most; leave the option out of AvailableNow jobs",
                options.table, LINE.version, options.max_snapshots_per_trigger,
                options.max_snapshots_per_trigger,
            )
        return spark_schema(
            options.table,
            table_schema.fields,
            include_row_kind=options.include_row_kind,
            include_snapshot_id=options.include_snapshot_id,
        )

    def reader(self, schema: StructType) -> PaimonFeedBatchReader:
        return PaimonFeedBatchReader(self._source_options(), schema)

    def streamReader(self, schema: StructType) -> StreamReader:
        reader = PaimonFeedStreamReader if LINE.read_limits else PositionTrackingStreamReader
        return reader(self._source_options(), schema)


class PaimonFeedBatchReader(DataSourceReader):
    """A bounded read: the full state at the latest snapshot (default), or the changes of
    ``startingPosition`` .. ``endSnapshot``."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema

    def partitions(self) -> Sequence[InputPartition]:
        from paimon_feed.spark.driver import plan_batch

        return [PaimonFeedPartition(group) for group in plan_batch(self.options)]

    def read(self, partition: InputPartition) -> Iterator:
        return _read(self.options, self.schema, partition)


class StreamReader(DataSourceStreamReader):
    """What the stream readers of every Spark line share: planning, reading and commits; each
    line's class answers ``latestOffset`` the way that line calls it."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._driver: StreamDriver | None = None

    def __getstate__(self) -> dict:
        # Shipped to executors for read(): options and schema only, never the driver.
        return {"options": self.options, "schema": self.schema, "_driver": None}

    def _get_driver(self, *, follow: bool = True) -> StreamDriver:
        if self._driver is None:
            from paimon_feed.spark.driver import StreamDriver

            self._driver = StreamDriver(self.options, follow=follow)
        return self._driver

    def _latest(self, start: dict, max_snapshots: int | None) -> dict:
        end = self._get_driver().latest_offset(FeedOffset.from_json(start), max_snapshots)
        # Hand back Spark's own dict when nothing is new, so its "no data" check matches.
        return start if end == FeedOffset.from_json(start) else end.to_json()

    # offsets -----------------------------------------------------------------------------
    def initialOffset(self) -> dict:
        return self._get_driver().initial_offset().to_json()

    # planning and reading ----------------------------------------------------------------
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if start == end:
            return []
        groups = self._get_driver().plan(FeedOffset.from_json(start), FeedOffset.from_json(end))
        return [PaimonFeedPartition(group) for group in groups]

    def read(self, partition: InputPartition) -> Iterator:
        return _read(self.options, self.schema, partition)

    # lifecycle ---------------------------------------------------------------------------
    def commit(self, end: dict) -> None:
        self._get_driver().commit(FeedOffset.from_json(end))

    def stop(self) -> None:
        if self._driver is not None:
            self._driver.close()


class PaimonFeedStreamReader(StreamReader):
    """Micro-batches of a Paimon table's changes, woken by storage events (Spark 4.2+).

    ``maxSnapshotsPerTrigger`` travels through Spark as ``ReadMaxFiles(N)`` (Spark passes only
    its built-in read limits across the Python boundary); this source reads it as N snapshot
    ids per micro-batch, and honours it under ``Trigger.AvailableNow`` too.
    """

    def getDefaultReadLimit(self) -> ReadLimit:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles

        if self.options.max_snapshots_per_trigger is None:
            return ReadAllAvailable()
        return ReadMaxFiles(self.options.max_snapshots_per_trigger)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        from pyspark.sql.streaming.datasource import ReadMaxFiles

        return self._latest(start, limit.max_files if isinstance(limit, ReadMaxFiles) else None)

    def reportLatestOffset(self) -> dict | None:
        if self._driver is None:
            return None
        known = self._driver.latest_known_offset()
        return known.to_json() if known is not None else None

    def prepareForTriggerAvailableNow(self) -> None:
        # Spark calls this before any offset, so the driver starts without a notifier: the run
        # never needs to hear of later commits.
        self._get_driver(follow=False).prepare_available_now()


if LINE.read_limits:  # Spark then calls prepareForTriggerAvailableNow and runs to its target
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

    SupportsTriggerAvailableNow.register(PaimonFeedStreamReader)


class PositionTrackingStreamReader(StreamReader):
    """The stream reader for Spark 4.0 and 4.1, whose ``latestOffset()`` gets neither the
    batch's start nor a read limit.

    The reader keeps the start itself: the end of the last micro-batch Spark planned
    (``partitions``; on a restart Spark announces the last journaled offset with an empty
    ``partitions(offset, offset)``), or the initial offset. ``maxSnapshotsPerTrigger`` caps
    each answer from there, which is the same cap 4.2+ applies through ``ReadMaxFiles``.

    ``Trigger.AvailableNow`` has no hook on these lines: Spark runs one micro-batch up to
    what ``latestOffset()`` answers (or, with ``spark.sql.streaming.triggerAvailableNowWrapper
    .enabled``, batches up to the answer it fetched first), so a run reads everything there
    is, or ``maxSnapshotsPerTrigger`` snapshots at most.
    """

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        super().__init__(options, schema)
        self._initial: dict | None = None
        self._position: dict | None = None

    def __getstate__(self) -> dict:
        return {**super().__getstate__(), "_initial": None, "_position": None}

    def initialOffset(self) -> dict:
        # Asked once per query, maybe after the first latestOffset(): one answer for both.
        if self._initial is None:
            self._initial = super().initialOffset()
        return self._initial

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        # Spark 4.0/4.1 call latestOffset() without arguments; the defaults keep the signature
        # of the base class this module is type-checked against (4.2+).
        if start is None:
            start = self._position if self._position is not None else self.initialOffset()
        return self._latest(start, self.options.max_snapshots_per_trigger)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        self._position = end
        return super().partitions(start, end)
