"""The ``reader`` option of ``foreach_batch``: a batch's rows read by this project's executors
(``feed``), or handed to Paimon's own Spark connector (``connector``), chosen per table (``auto``).

The hand-off gives ``fn`` a DataFrame of ``spark.read.format("paimon")`` on the table's path,
in the schema our own reader gives (columns cast by name), holding exactly the rows our reader
would give for that batch. Paimon 0.9's batch reads (``paimon-spark-3.5`` 0.9.0, the connector
Maven serves) serve two batch shapes exactly:

- a **full state** at snapshot N: ``scan.snapshot-id=N`` (a static read of N, merged);
- **one snapshot's changes** (``delta``): ``incremental-between=<first-1>,<N>`` with
  ``incremental-between-scan-mode=delta``. Paimon 0.9 groups the range's new files per bucket
  into *batch* splits and reads them with the merge reader, which folds a key's versions into
  one and drops retractions (``IncrementalStartingScanner``, ``MergeFileSplitRead``); our reader
  gives each change as written. Both agree when every bucket of the batch holds one data file
  with no retracted rows (a file's keys are unique), which is what the planned splits are
  checked for; each delta batch is one connector read, their union the DataFrame. A file's
  retractions are known from its ``delete_row_count``, which Java's writers record and
  pypaimon 2.1's always write as 0: a table with ``rowkind.field`` (pypaimon's only way to
  write retractions) has no delta hand-off.

Other shapes (a ``changelog`` table, whose 0.9 read would fold a key's ``-U``/``+U`` pair; a
``catch-up`` range, an ``overwrite`` read, a bucket with several files or retractions, a batch
in an older schema than the table's: 0.9 reads in the latest) are read by our executors, the
reason logged once per table and shape. Options no hand-off can honour (``includeRowKind``: 0.9's
batch read has no row kind column; ``overwrite=read``) make ``reader=connector`` a
:class:`~paimon_feed.errors.ConfigurationError` and ``auto`` choose ``feed``.

``auto`` hands primary-key tables (merged on read, where the connector measured faster: see
docs/benchmarks.md, "foreach_batch reader choice") to the connector when ``format("paimon")``
is on the session's classpath, and reads everything else with ``feed`` (``[native]``
pypaimon-rust where exact when installed, else pypaimon). It logs its choice once at INFO.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paimon_feed.batch import FeedBatch
from paimon_feed.errors import ConfigurationError
from paimon_feed.spark.options import SourceOptions

__all__ = [
    "CONNECTOR_PACKAGE",
    "ConnectorRead",
    "ReaderChoice",
    "choose_reader",
    "connector_reads",
    "connector_frame",
]

logger = logging.getLogger(__name__)

#: The Maven coordinates of the connector this module is checked against.
CONNECTOR_PACKAGE = "org.apache.paimon:paimon-spark-3.5:0.9.0"
CONNECTOR_FORMAT = "paimon"
_NOT_FOUND = ("DATA_SOURCE_NOT_FOUND", "Failed to find the data source")


@dataclass(frozen=True)
class ReaderChoice:
    """Who reads the table's batches (``feed`` or ``connector``) and why."""

    reader: str
    reason: str


@dataclass(frozen=True)
class ConnectorRead:
    """One ``format("paimon")`` read: the full state at ``snapshot_id`` (``first_snapshot_id``
    ``None``), or the changes of ``first_snapshot_id..snapshot_id`` (inclusive)."""

    snapshot_id: int
    first_snapshot_id: int | None = None

    def options(self) -> dict[str, str]:
        if self.first_snapshot_id is None:
            return {"scan.snapshot-id": str(self.snapshot_id)}
        return {
            "incremental-between": f"{self.first_snapshot_id - 1},{self.snapshot_id}",
            "incremental-between-scan-mode": "delta",
        }


def _option_refusal(options: SourceOptions) -> str | None:
    """Why no batch of a read with these options can be handed off (``None``: some can)."""
    if options.include_row_kind:
        return "includeRowKind=true: Paimon 0.9's batch read has no row kind column"
    if options.overwrite == "read":
        return "overwrite=read: Paimon 0.9's batch read cannot give an overwrite's removed rows"
    return None


def _missing_connector(table: str, detail: str) -> ConfigurationError:
    return ConfigurationError(
        f"table {table}: option reader=connector hands each batch to Paimon's Spark connector, "
        f"but format('paimon') is not on this session's classpath ({detail}). Add the "
        f"connector for your Spark line when the session is built, e.g. "
        f".config('spark.jars.packages', '{CONNECTOR_PACKAGE}') (or spark.jars with the jar's "
        f"path), or set reader=feed (or auto) to read with paimon-feed's executors"
    )


def probe_connector(spark: Any, table_path: str) -> str | None:
    """``None`` if ``format("paimon")`` opens ``table_path`` in ``spark``, else why not. A
    missing data source answers at analysis, before any data is read (classic and Connect)."""
    try:
        _ = spark.read.format(CONNECTOR_FORMAT).load(table_path).schema
    except Exception as exc:  # noqa: BLE001 - the answer is the reason, returned to the caller
        text = str(exc)
        if any(marker in text for marker in _NOT_FOUND):
            return "the data source 'paimon' is not found"
        return f"format('paimon') cannot open {table_path}: {text.splitlines()[0] if text else type(exc).__name__}"
    return None


def _feed_reason(table: Any) -> str:
    from paimon_feed.planner.read import native_reads_available

    engine = "[native] pypaimon-rust merges where exact" if native_reads_available() else "pypaimon"
    return f"paimon-feed's executors ({engine})"


def choose_reader(spark: Any, options: SourceOptions, table: Any, table_path: str) -> ReaderChoice:
    """The reader of ``table``'s batches for ``options.reader``; raises
    :class:`ConfigurationError` when ``connector`` was asked for and cannot be."""
    name = options.table
    if options.reader == "feed":
        return ReaderChoice("feed", f"reader=feed: {_feed_reason(table)}")
    refusal = _option_refusal(options)
    if options.reader == "connector":
        if refusal is not None:
            raise ConfigurationError(
                f"table {name}: option reader=connector cannot hand off a batch with {refusal}; "
                f"drop that option or set reader=feed (or auto)"
            )
        missing = probe_connector(spark, table_path)
        if missing is not None:
            raise _missing_connector(name, missing)
        return ReaderChoice("connector", "reader=connector")
    if not table.is_primary_key_table:
        return ReaderChoice("feed", f"not a primary-key table: {_feed_reason(table)}")
    if refusal is not None:
        return ReaderChoice("feed", f"{refusal}: {_feed_reason(table)}")
    missing = probe_connector(spark, table_path)
    if missing is not None:
        return ReaderChoice("feed", f"primary-key table, but {missing}: {_feed_reason(table)}")
    return ReaderChoice(
        "connector", "primary-key table merged on read and Paimon's connector on the classpath"
    )


def _one_file_per_bucket(batch: FeedBatch) -> str | None:
    """Why ``batch``'s changes are not each bucket's one file without retractions, or ``None``."""
    seen: set[tuple[str, int]] = set()
    for split in batch.splits:
        for meta in split.files:
            key = (str(getattr(split.partition, "values", split.partition)), split.bucket)
            if key in seen:
                return (f"several new files in one bucket: snapshots {batch.first_snapshot_id}.."
                        f"{batch.snapshot_id}, which Paimon 0.9 merges")
            seen.add(key)
            if meta.delete_row_count is None or meta.delete_row_count > 0:
                return (f"retracted rows: snapshot {batch.snapshot_id} holds -U/-D rows (or does not "
                        f"say), which Paimon 0.9 drops")
    return None


def connector_reads(batches: Sequence[FeedBatch], schema_id: int, table: Any) -> list[ConnectorRead] | str:
    """The connector reads that give exactly the rows of ``batches`` of ``table`` (pypaimon's),
    or why there are none (the batch's shape, a colon, the details)."""
    latest_schema_id = table.table_schema.id
    unrecorded = "rowkind.field" in table.table_schema.options
    if schema_id != latest_schema_id:
        return f"an older schema: the batch is in schema {schema_id}, Paimon 0.9 reads in the latest ({latest_schema_id})"
    reads = []
    for batch in batches:
        if batch.kind == "full":
            reads.append(ConnectorRead(batch.snapshot_id))
        elif batch.kind == "delta":
            why = _one_file_per_bucket(batch) if not unrecorded else (
                "retractions unrecorded: the table has rowkind.field, and pypaimon's writer does "
                "not count a file's retracted rows")
            if why is not None:
                return why
            reads.append(ConnectorRead(batch.snapshot_id, batch.first_snapshot_id))
        else:
            return (f"a {batch.kind} batch: snapshot {batch.snapshot_id}; Paimon 0.9 has no batch read "
                    f"of exactly these rows")
    return reads


def connector_frame(
    spark: Any, table_path: str, reads: Sequence[ConnectorRead], schema: Any, include_snapshot_id: bool
) -> Any:
    """The DataFrame of ``reads`` in ``schema`` (our reader's Spark schema): columns selected
    and cast by name, ``_snapshot_id`` the read's snapshot."""
    from pyspark.sql import functions as F

    from paimon_feed.spark.schema import SNAPSHOT_ID_COLUMN

    frames = []
    for read in reads:
        df = spark.read.format(CONNECTOR_FORMAT).options(**read.options()).load(table_path)
        columns = []
        for field in schema.fields:
            if field.name == SNAPSHOT_ID_COLUMN and include_snapshot_id:
                column = F.lit(read.snapshot_id).cast(field.dataType)
            else:
                column = F.col(f"`{field.name}`").cast(field.dataType)
            columns.append(column.alias(field.name))
        frames.append(df.select(*columns))
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result
