"""A batch's rows as a Spark DataFrame, read in the executors: ``mapInArrow`` over descriptors.

The driver packs a batch's splits into :class:`~paimon_feed.spark.partitions.SplitGroup`
values (as the source does for its partitions), pickles each into one row of a small
DataFrame of descriptors, and maps them with :func:`read_groups`: each executor reads its
groups with :func:`~paimon_feed.spark.partitions.read_splits`. Only the descriptors travel
from the driver; no row is collected there. ``createDataFrame`` and ``mapInArrow`` are the
DataFrame API of classic Spark (3.3+) and of Spark Connect alike, which has no RDDs.

A descriptor carries the driver's paimon-feed version; an executor with another version
refuses to read (a pickled split group is only understood by the code that made it).
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from paimon_feed.errors import ConfigurationError
from paimon_feed.spark.options import SourceOptions
from paimon_feed.spark.partitions import SplitGroup, read_splits
from paimon_feed.spark.schema import arrow_schema, conform

__all__ = ["batch_frame", "read_groups", "DESCRIPTOR_COLUMN"]

DESCRIPTOR_COLUMN = "split_group"


def _version() -> str:
    from paimon_feed import __version__

    return __version__


def batch_frame(spark: Any, options: SourceOptions, groups: Sequence[SplitGroup], schema: Any) -> Any:
    """A DataFrame of ``schema`` (a Spark ``StructType``) holding the rows of ``groups``."""
    if not groups:
        return spark.createDataFrame([], schema)
    descriptors = spark.createDataFrame(
        [(pickle.dumps(group),) for group in groups], f"{DESCRIPTOR_COLUMN} binary"
    ).coalesce(len(groups))  # one task per group at most: no empty tasks for a small batch
    read = functools.partial(read_groups, options, arrow_schema(schema), _version())
    return descriptors.mapInArrow(read, schema)


def read_groups(
    options: SourceOptions, target: pa.Schema, driver_version: str, descriptors: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """Executor side: read every split group named in ``descriptors`` into ``target``."""
    if driver_version != _version():
        raise ConfigurationError(
            f"table {options.table}: the Spark driver runs paimon-feed {driver_version} but this "
            f"executor has paimon-feed {_version()}; install the same version on both (see "
            f"docs/spark.md, 'Executors')"
        )
    for batch in descriptors:
        for payload in batch.column(DESCRIPTOR_COLUMN).to_pylist():
            group = pickle.loads(payload)
            yield from read_splits(options, group, lambda rows: conform(rows, target))
