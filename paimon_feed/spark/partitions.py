"""Spark partitions of a read: splits packed by size, and their stateless read in executors.

:func:`pack_splits` turns planned batches into :class:`SplitGroup` values (one per Spark task) on
the driver; :func:`read_splits` reads one group in an executor with the planner's public read
API (:mod:`paimon_feed.planner.read`), adding the ``_snapshot_id`` column when asked to.

A group carries the paimon-feed and pypaimon versions of the driver that planned it, and an
executor importing other versions refuses to read it (:class:`VersionMismatchError`, naming
both): split bytes are pypaimon's serializer's, and what a group means is paimon-feed's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pyarrow as pa

from paimon_feed.batch import FeedBatch
from paimon_feed.errors import VersionMismatchError
from paimon_feed.planner.read import read_serialized_splits
from paimon_feed.planner.splits import divide_split, serialize_split
from paimon_feed.spark.options import (
    DEFAULT_MAX_PARTITION_BYTES,
    DEFAULT_MIN_PARTITIONS,
    SourceOptions,
)
from paimon_feed.spark.schema import SNAPSHOT_ID_COLUMN
from paimon_feed.spark.table import worker_table

__all__ = [
    "SplitGroup",
    "pack_splits",
    "group_bytes",
    "read_splits",
    "table_token",
    "component_versions",
    "check_versions",
    "check_driver_versions",
    "OPEN_COST_BYTES",
    "READ_BATCH_ROWS",
]

#: Each data file weighs at least this much when splits are packed into partitions (Spark's
#: ``spark.sql.files.openCostInBytes``), so many small files do not pile into one task.
OPEN_COST_BYTES = 4 * 1024 * 1024
#: Rows per Arrow batch handed to Spark (pypaimon's default, 1024, makes per-batch overhead
#: dominate); a table's own ``read.batch-size`` wins.
READ_BATCH_ROWS = 65536


@dataclass(frozen=True)
class SplitGroup:
    """The payload of one Spark partition: pypaimon splits in ``SplitSerializer`` v1 bytes.

    ``snapshot_ids`` holds, for each split, the snapshot whose changes it reads (for a full
    state, the snapshot it was read at). ``first_snapshot_id``/``last_snapshot_id``
    (inclusive) name the snapshots the splits came from, for logs and the Spark UI.
    ``schema_id`` is the table schema every split is read into: the query's, which is never
    older than the schema a split was written with. ``row_kinds`` is empty, or holds for each
    split ``None`` (a change read as it was written) or the row kind every row of the split's
    merged state gets (``-D``/``+I``: the rows an overwrite removed or added). ``versions``
    is ``(paimon-feed, pypaimon)`` of the driver that planned the group (:func:`check_versions`).
    ``table`` is the :func:`table_token` of the table the driver planned against: an executor
    keeps the table it opened only for groups of the same token.
    """

    splits: tuple[bytes, ...]
    snapshot_ids: tuple[int, ...]
    first_snapshot_id: int
    kind: str
    schema_id: int = 0
    row_kinds: tuple[str | None, ...] = ()
    versions: tuple[str, str] | None = None
    table: tuple[int, int] | None = None

    @property
    def last_snapshot_id(self) -> int:
        return self.snapshot_ids[-1]


def _weight(split: Any) -> int:
    return sum(max(f.file_size, OPEN_COST_BYTES) for f in split.files)


def table_token(table: Any) -> tuple[int, int]:
    """The table as the driver sees it: its latest schema's id and creation time (ms). A table
    dropped and re-created under the same name has another token even at the same schema id."""
    schema = table.table_schema
    return schema.id, int(getattr(schema, "time_millis", 0) or 0)


def pack_splits(
    table: Any,
    batches: Sequence[FeedBatch],
    *,
    min_partitions: int = DEFAULT_MIN_PARTITIONS,
    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES,
) -> list[SplitGroup]:
    """Serialize the batches' splits and pack them, in snapshot order, into partitions.

    Sized the way Spark sizes file partitions: at most ``max_partition_bytes`` each, less for
    small batches so that ``min_partitions`` tasks share the work (Spark divides by its default
    parallelism, which a Python source cannot see), in a multiple of ``min_partitions`` groups
    of about equal size (:func:`group_bytes`). Append-table splits are cut into their files so
    that a large one is read in parallel; each split lands in the group where the middle of
    its bytes falls (counting all splits before it), so whole files of one size spread evenly:
    32 files of 11 MB make 4 groups of 8 for 4 slots, where "88 MB at most" would make 5, the
    fifth a second round of tasks. Primary-key splits stay whole (they are merged on read).
    """
    total = sum(_weight(split) for batch in batches for split, _ in _kinded_splits(batch))
    max_bytes = group_bytes(total, min_partitions, max_partition_bytes)
    schema_id = table.table_schema.id
    versions = component_versions()
    token = table_token(table)
    groups: list[SplitGroup] = []
    current: list[bytes] = []
    snapshot_ids: list[int] = []
    row_kinds: list[str | None] = []
    first: int | None = None
    kind: str | None = None
    size = 0

    def flush() -> None:
        nonlocal current, snapshot_ids, row_kinds, first, size
        if current:
            assert first is not None and kind is not None  # set with the first split
            kinds = tuple(row_kinds) if any(row_kinds) else ()
            groups.append(SplitGroup(
                tuple(current), tuple(snapshot_ids), first, kind, schema_id, kinds, versions, token
            ))
        current, snapshot_ids, row_kinds, first, size = [], [], [], None, 0

    done = 0  # the weight of the splits before this one
    index = 0  # the group ``current`` fills
    for batch in batches:
        for whole, row_kind in _kinded_splits(batch):
            # an append split in files of its own, which land where their middle falls
            for split in divide_split(table, whole, 1, OPEN_COST_BYTES):
                weight = _weight(split)
                wanted = (done + weight // 2) // max_bytes
                done += weight
                if current and (wanted != index or size + weight > max_partition_bytes):
                    flush()
                index = wanted
                if first is None:
                    first = batch.first_snapshot_id
                kind = batch.kind
                current.append(serialize_split(split))
                snapshot_ids.append(batch.snapshot_id)
                row_kinds.append(row_kind)
                size += weight
    flush()
    return groups


def group_bytes(total: int, min_partitions: int, max_partition_bytes: int) -> int:
    """The bytes each group of a read of ``total`` bytes aims at: the read cut into a multiple of
    ``min_partitions`` groups of equal size (so that ``min_partitions`` task slots finish
    together), each at most ``max_partition_bytes`` and at least ``OPEN_COST_BYTES``.

    >>> MiB = 1024 * 1024
    >>> group_bytes(352 * MiB, 2, 128 * MiB) // MiB   # 4 groups, not 128 + 128 + 96
    88
    >>> group_bytes(10 * MiB, 2, 128 * MiB) // MiB, group_bytes(MiB, 2, 128 * MiB) // MiB
    (5, 4)
    """
    if total <= 0:
        return OPEN_COST_BYTES
    largest = min(max_partition_bytes, max(OPEN_COST_BYTES, math.ceil(total / min_partitions)))
    groups = math.ceil(math.ceil(total / largest) / min_partitions) * min_partitions
    return max(OPEN_COST_BYTES, min(largest, math.ceil(total / groups)))


def _kinded_splits(batch: FeedBatch) -> list[tuple[Any, str | None]]:
    """The splits of ``batch`` with the row kind their merged state is read as (overwrite
    batches: removed ``-D`` first, then added ``+I``), or ``None`` for a plain change read."""
    if batch.kind == "overwrite":
        return [(s, "-D") for s in batch.removed_splits] + [(s, "+I") for s in batch.splits]
    return [(s, None) for s in batch.splits]


def read_splits(
    options: SourceOptions, group: SplitGroup, conform: Any = None
) -> Iterator[Any]:
    """Read one partition's splits as Arrow record batches (executor side, stateless).

    With ``includeSnapshotId`` each batch gets a ``_snapshot_id`` column: splits are read in
    runs of one snapshot each. ``conform`` maps each batch to what the caller needs (Spark's
    Arrow schema). Raises :class:`VersionMismatchError` if the driver that planned ``group``
    ran other versions than this process.
    """
    check_versions(group, options.table)
    pairs = read_serialized_splits(
        worker_table(options, group.schema_id, group.table),
        group.splits,
        table_name=options.table,
        schema_id=group.schema_id,
        include_row_kind=options.include_row_kind,
        keys=group.snapshot_ids if options.include_snapshot_id else None,
        row_kinds=group.row_kinds or None,
        batch_rows=READ_BATCH_ROWS,
    )
    for snapshot_id, batch in pairs:
        if snapshot_id is not None:
            ids = pa.repeat(pa.scalar(snapshot_id, pa.int64()), batch.num_rows)
            batch = batch.append_column(pa.field(SNAPSHOT_ID_COLUMN, pa.int64(), False), ids)
        yield conform(batch) if conform is not None else batch


@functools.cache
def component_versions() -> tuple[str, str]:
    """``(paimon-feed, pypaimon)``: the versions this process imports."""
    from paimon_feed import __version__

    try:
        pypaimon = version("pypaimon")
    except PackageNotFoundError:  # on sys.path without its metadata (a copied directory)
        import pypaimon as module

        pypaimon = str(getattr(module, "__version__", "unknown"))
    return __version__, pypaimon


def check_versions(group: SplitGroup, table_name: str) -> None:
    """Raise :class:`VersionMismatchError` if ``group`` was planned by a driver running another
    paimon-feed or pypaimon than this executor (a group without versions is not checked)."""
    if group.versions is not None and tuple(group.versions) != component_versions():
        check_driver_versions(
            group.versions, table_name,
            f"the driver that planned snapshots {group.first_snapshot_id}..{group.last_snapshot_id}",
        )


def check_driver_versions(driver: Sequence[str], table_name: str, planner: str) -> None:
    """Raise :class:`VersionMismatchError`, naming both, if ``driver`` (``(paimon-feed,
    pypaimon)`` of ``planner``) is not what this process runs."""
    here = component_versions()
    if tuple(driver) == here:
        return
    (feed, pypaimon), (driver_feed, driver_pypaimon) = here, driver
    raise VersionMismatchError(
        f"table {table_name}: this Spark executor runs paimon-feed {feed} with pypaimon "
        f"{pypaimon}, but {planner} runs paimon-feed {driver_feed} with pypaimon "
        f"{driver_pypaimon}. Install the same versions on the driver and on every executor "
        f"(one packed environment in spark.archives, or the same cluster libraries; see "
        f"docs/spark.md, 'Executors')"
    )
