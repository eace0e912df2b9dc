"""The one place paimon-feed touches pypaimon internals.

pypaimon's ``AsyncStreamingTableScan`` already knows how to plan one streaming frame: the full
scan of a snapshot, the delta or changelog of a follow-up snapshot (with auth, native planning and
bucket filtering), and a set-diff catch-up. We use it as a synchronous planning library and
leave its polling loop alone. pypaimon is pinned to the minor version whose private helpers are
called here; an upgrade touches this file only.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable

from pypaimon.read.plan import Plan
from pypaimon.read.scanner.changelog_follow_up_scanner import ChangelogFollowUpScanner

from paimon_feed.errors import ConfigurationError

__all__ = [
    "StreamingPlanner",
    "table_name",
    "table_url",
    "serialize_split",
    "deserialize_split",
    "canonical_option_keys",
    "divide_split",
    "with_read_batch_rows",
]


def read_snapshot(snapshot_manager: Any, snapshot_id: int) -> Any:
    """Snapshot ``snapshot_id``, or ``None`` if its file does not exist.

    One read instead of pypaimon's existence check plus read: on S3 an existence check of a
    missing key is a HEAD and a LIST, a read is one HEAD (missing) or a HEAD and a GET.
    """
    from pypaimon.common.json_util import JSON
    from pypaimon.snapshot.snapshot import Snapshot

    path = snapshot_manager.get_snapshot_path(snapshot_id)
    try:
        text = snapshot_manager.file_io.read_file_utf8(path)
    except FileNotFoundError:
        return None
    return JSON.from_json(text, Snapshot)


def table_name(table: Any) -> str:
    """``db.table`` of a pypaimon table."""
    return table.identifier.get_full_name()


def table_url(table: Any) -> str:
    """The table's root as a URL (``file:///...`` for local tables)."""
    path = str(table.table_path)
    return path if "://" in path else "file://" + os.path.abspath(path)


def serialize_split(split: Any) -> bytes:
    """A split as pypaimon's cross-language ``SplitSerializer`` v1 bytes (stable across
    versions, unlike a pickle), for shipping splits to other processes (Spark executors)."""
    from pypaimon.read.split_serializer import serialize_split_v1

    return serialize_split_v1(split)


def deserialize_split(data: bytes, table: Any) -> Any:
    """The split :func:`serialize_split` wrote, rebuilt against ``table``'s schema."""
    from pypaimon.read.split_serializer import deserialize_split_v1

    schema = table.table_schema
    by_name = {field.name: field for field in schema.fields}
    partition_fields = [by_name[name] for name in schema.partition_keys]
    return deserialize_split_v1(data, partition_fields, table.trimmed_primary_keys_fields)


def divide_split(table: Any, split: Any, max_bytes: int, open_cost_bytes: int) -> list:
    """``split`` cut into splits of at most ``max_bytes`` (each file weighing at least
    ``open_cost_bytes``), for reading in parallel; ``[split]`` when it cannot be cut.

    Only append-table splits whose files are read as they are (``raw_convertible``, no data
    evolution) are cut: their files are independent. Primary-key splits must be merged whole.
    """
    from pypaimon.read.split import DataSplit

    if (
        type(split) is not DataSplit
        or not split.raw_convertible
        or table.is_primary_key_table
        or table.options.data_evolution_enabled()
        or len(split.files) < 2
    ):
        return [split]
    groups: list[set[int]] = [set()]
    size = 0
    for data_file in split.files:
        weight = max(data_file.file_size, open_cost_bytes)
        if groups[-1] and size + weight > max_bytes:
            groups.append(set())
            size = 0
        groups[-1].add(id(data_file))
        size += weight
    if len(groups) == 1:
        return [split]
    return [split.filter_file(lambda f, g=group: id(f) in g) for group in groups]


def with_read_batch_rows(table: Any, rows: int) -> Any:
    """``table`` reading Arrow batches of ``rows`` rows, unless the table sets its own
    ``read.batch-size``."""
    if "read.batch-size" in table.options.options.to_map():
        return table
    return table.copy({"read.batch-size": str(rows)})


def canonical_option_keys() -> dict[str, str]:
    """pypaimon's catalog/file-IO option keys by their lower-case spelling
    (``fs.s3.accesskeyid`` -> ``fs.s3.accessKeyId``), for callers whose options arrive
    lower-cased (Spark data source options are case-insensitive)."""
    from pypaimon.common.options import config
    from pypaimon.common.options.config_option import ConfigOption

    keys: dict[str, str] = {}
    for holder in vars(config).values():
        if isinstance(holder, type):
            for value in vars(holder).values():
                if isinstance(value, ConfigOption):
                    keys[value.key().lower()] = value.key()
    return keys


class StreamingPlanner:
    """Per-snapshot planning with pypaimon's streaming scan, no polling."""

    def __init__(
        self,
        table: Any,
        *,
        projection: list[str] | None,
        predicate: Any,
        buckets: frozenset[int] | None,
        include_row_kind: bool,
    ) -> None:
        self.table = table
        if projection is not None:
            columns = [field.name for field in table.fields]
            unknown = [name for name in projection if name not in columns]
            if unknown or not projection:
                raise ConfigurationError(
                    f"table {table_name(table)}: invalid projection {list(projection)!r}: "
                    f"unknown columns {unknown}; the table has {columns}"
                )
        builder = table.new_stream_read_builder()
        try:
            if projection is not None:
                builder.with_projection(list(projection))
            if predicate is not None:
                builder.with_filter(predicate)
            if buckets is not None:
                builder.with_buckets(sorted(buckets))
            builder.with_include_row_kind(include_row_kind)
            self._scan = builder.new_streaming_scan()
            builder.new_read()  # validate projection and predicate now, not at the first read
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"table {table_name(table)}: invalid projection {projection!r} or predicate: {exc}"
            ) from exc
        self._builder = builder
        self._buckets = buckets
        self._predicate = predicate
        scanner = self._scan.follow_up_scanner
        self.should_scan = scanner.should_scan
        self.mode = "changelog" if isinstance(scanner, ChangelogFollowUpScanner) else "delta"
        options = table.options
        # Set-diff catch-up returns files present at the end but not at the start. That equals
        # the union of the deltas only for plain append tables whose range holds no compaction
        # or overwrite; anything else would repeat rows, so it is planned snapshot by snapshot.
        self._diff_capable = (
            self.mode == "delta"
            and not table.is_primary_key_table
            and not options.deletion_vectors_enabled()
            and not options.data_evolution_enabled()
        )

    def reader(self) -> Any:
        """A pypaimon ``TableRead`` with the feed's projection, predicate and row kind."""
        return self._builder.new_read()

    def _only_buckets(self, plan: Plan) -> Plan:
        if self._buckets is None:
            return plan
        splits = [split for split in plan.splits() if split.bucket in self._buckets]
        return Plan(splits, snapshot_id=plan.snapshot_id)

    def full_plan(self, snapshot: Any) -> Plan:
        plan = self._scan._create_initial_plan(snapshot)
        return self._only_buckets(Plan(plan.splits(), snapshot_id=snapshot.id))

    def follow_up_plan(self, snapshot: Any) -> Plan:
        plan = self._scan._create_follow_up_plan(snapshot)
        return self._only_buckets(Plan(plan.splits(), snapshot_id=snapshot.id))

    def catch_up_plan(self, snapshots: list, scannable: Iterable[Any], threads: int) -> Plan:
        """One plan covering ``snapshots`` (consecutive ids, oldest first)."""
        first, last = snapshots[0], snapshots[-1]
        if self._diff_capable and all(s.commit_kind == "APPEND" for s in snapshots):
            start = self.table.snapshot_manager().get_snapshot_by_id(first.id - 1)
            if start is not None or first.id == 1:
                plan = self._scan._create_catch_up_plan(first.id, last)
                return self._only_buckets(Plan(plan.splits(), snapshot_id=last.id))
        scannable = list(scannable)
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(scannable)))) as pool:
            plans = list(pool.map(self.follow_up_plan, scannable))
        splits = [split for plan in plans for split in plan.splits()]
        return Plan(splits, snapshot_id=last.id)
