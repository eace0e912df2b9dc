"""A batch's rows as a Spark DataFrame, read in the executors: ``mapInArrow`` over descriptors.

The driver packs a batch's splits into :class:`~paimon_feed.spark.partitions.SplitGroup`
values (as the source does for its partitions), pickles each into one row of a small
DataFrame of descriptors, and maps them with :func:`read_groups`: each executor reads its
groups with :func:`~paimon_feed.spark.partitions.read_splits`. Only the descriptors travel
from the driver; no row is collected there. ``createDataFrame`` and ``mapInArrow`` are the
DataFrame API of classic Spark (3.3+) and of Spark Connect alike, which has no RDDs.

The descriptors carry the driver's paimon-feed and pypaimon versions; an executor with others
refuses to read, naming both, before it unpickles anything (a pickled split group is only
understood by the code that made it).
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from paimon_feed.spark.options import SourceOptions
from paimon_feed.spark.partitions import (
    SplitGroup,
    check_driver_versions,
    component_versions,
    read_splits,
)
from paimon_feed.spark.schema import arrow_schema, conform

__all__ = ["batch_frame", "read_groups", "DESCRIPTOR_COLUMN"]

DESCRIPTOR_COLUMN = "split_group"


def batch_frame(spark: Any, options: SourceOptions, groups: Sequence[SplitGroup], schema: Any) -> Any:
    """A DataFrame of ``schema`` (a Spark ``StructType``) holding the rows of ``groups``."""
    if not groups:
        return spark.createDataFrame([], schema)
    descriptors = spark.createDataFrame(
        [(pickle.dumps(group),) for group in groups], f"{DESCRIPTOR_COLUMN} binary"
    ).coalesce(len(groups))  # one task per group at most: no empty tasks for a small batch
    read = functools.partial(read_groups, options, arrow_schema(schema), component_versions())
    return descriptors.mapInArrow(read, schema)


def read_groups(
    options: SourceOptions,
    target: pa.Schema,
    driver_versions: tuple[str, str],
    descriptors: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """Executor side: read every split group named in ``descriptors`` into ``target``."""
    check_driver_versions(driver_versions, options.table, "the Spark driver")
    for batch in descriptors:
        for payload in batch.column(DESCRIPTOR_COLUMN).to_pylist():
            group = pickle.loads(payload)
            yield from read_splits(options, group, lambda rows: conform(rows, target))
