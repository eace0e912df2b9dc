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

A Python worker's first read pays for its start: the worker process, its imports (pyarrow,
pypaimon, paimon-feed's read path) and the table it opens. A batch with more groups than warm
workers starts more, and that batch and every commit queued behind it wait seconds for them.
:func:`warm_workers` pays it once, when a following runner starts (one job, a task per slot,
each reading an empty split group); the table a worker opened is kept for the next
batches (:func:`~paimon_feed.spark.table.worker_table`).
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

__all__ = ["batch_frame", "read_groups", "warm_workers", "task_slots", "DESCRIPTOR_COLUMN"]

DESCRIPTOR_COLUMN = "split_group"
#: At most this many workers are warmed (one tiny task each), however large the cluster.
MAX_WARM_TASKS = 64


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


def task_slots(spark: Any, fallback: int) -> int:
    """How many tasks ``spark`` runs at once (classic Spark's default parallelism); a Spark
    Connect session does not say, so ``spark.default.parallelism`` if set, else ``fallback``."""
    from paimon_feed.spark import is_connect

    if is_connect(spark):
        configured = spark.conf.get("spark.default.parallelism", None)
        return int(configured) if configured else fallback
    return int(spark.sparkContext.defaultParallelism)


def warm_workers(
    spark: Any, options: SourceOptions, schema: Any, schema_id: int, tasks: int, token: tuple[int, int]
) -> None:
    """Start ``tasks`` Python workers (at most :data:`MAX_WARM_TASKS`) and have each read an
    empty split group of schema ``schema_id`` (``schema`` as a Spark ``StructType``): the path
    of a batch's read (descriptors, ``mapInArrow``, the worker's imports, the table opened, the
    rows collected), without a row. The tasks run at once (each takes the imports' time), so
    each starts a worker of its own; Spark keeps them for the next tasks
    (``spark.python.worker.reuse``, on by default), with the table opened for ``token``
    (:func:`~paimon_feed.spark.partitions.table_token`)."""
    tasks = max(1, min(tasks, MAX_WARM_TASKS))
    empty = SplitGroup((), (), 0, "warm-up", schema_id, (), component_versions(), token)
    batch_frame(spark, options, [empty] * tasks, schema).collect()
