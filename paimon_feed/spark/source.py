"""The ``paimon_feed`` data source: Spark's Python Data Source API over the planner.

A thin adapter: options are parsed by :mod:`~paimon_feed.spark.options`, offsets are
:class:`~paimon_feed.spark.offsets.FeedOffset`, the driver-side work is
:class:`~paimon_feed.spark.driver.StreamDriver`, and reading is
:func:`~paimon_feed.spark.partitions.read_splits`.

Where things run: Spark builds the stream reader in several Python processes. The one that
answers offsets lives as long as the query and holds the :class:`StreamDriver` (created on the
first offset call). Others only pickle the reader to ship ``read()`` to executors, so the
reader's constructor does no work and its pickled state is just the options and the schema.

Spark imports this module in each of those processes, so it imports only what all of them
need: :mod:`~paimon_feed.spark.driver` (the planner, pypaimon's table and read modules) is
imported by the callbacks that plan or read, and ``load()``'s schema comes from the table's
schema file (:func:`~paimon_feed.spark.table.load_schema`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from paimon_feed.errors import install_hint
from paimon_feed.spark import SparkNotInstalledError

try:
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceReader,
        DataSourceStreamReader,
        InputPartition,
    )
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxFiles,
        SupportsTriggerAvailableNow,
    )
    from pyspark.sql.types import StructType
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise SparkNotInstalledError(
        "the paimon_feed Spark source needs PySpark 4.2 or newer (Python Data Source API with "
        "read limits): " + install_hint("spark")
    ) from exc

from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import FORMAT_NAME, SourceOptions, parse_options
from paimon_feed.spark.schema import spark_schema
from paimon_feed.spark.table import check_notifier, load_schema

if TYPE_CHECKING:
    from paimon_feed.spark.driver import StreamDriver
    from paimon_feed.spark.partitions import SplitGroup

__all__ = [
    "PaimonFeedDataSource",
    "PaimonFeedStreamReader",
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
        table_schema, table_url = load_schema(options)
        check_notifier(options, table_url)
        return spark_schema(
            options.table,
            table_schema.fields,
            include_row_kind=options.include_row_kind,
            include_snapshot_id=options.include_snapshot_id,
        )

    def reader(self, schema: StructType) -> PaimonFeedBatchReader:
        return PaimonFeedBatchReader(self._source_options(), schema)

    def streamReader(self, schema: StructType) -> PaimonFeedStreamReader:
        return PaimonFeedStreamReader(self._source_options(), schema)


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


class PaimonFeedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of a Paimon table's changes, woken by storage events.

    ``maxSnapshotsPerTrigger`` travels through Spark as ``ReadMaxFiles(N)`` (Spark passes only
    its built-in read limits across the Python boundary); this source reads it as N snapshot
    ids per micro-batch, and honours it under ``Trigger.AvailableNow`` too.
    """

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

    # offsets -----------------------------------------------------------------------------
    def initialOffset(self) -> dict:
        return self._get_driver().initial_offset().to_json()

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_snapshots_per_trigger is None:
            return ReadAllAvailable()
        return ReadMaxFiles(self.options.max_snapshots_per_trigger)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_snapshots = limit.max_files if isinstance(limit, ReadMaxFiles) else None
        end = self._get_driver().latest_offset(FeedOffset.from_json(start), max_snapshots)
        # Hand back Spark's own dict when nothing is new, so its "no data" check matches.
        return start if end == FeedOffset.from_json(start) else end.to_json()

    def reportLatestOffset(self) -> dict | None:
        if self._driver is None:
            return None
        known = self._driver.latest_known_offset()
        return known.to_json() if known is not None else None

    def prepareForTriggerAvailableNow(self) -> None:
        # Spark calls this before any offset, so the driver starts without a notifier: the run
        # never needs to hear of later commits.
        self._get_driver(follow=False).prepare_available_now()

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
