"""Planning one schema's batches with pypaimon's scanners: full, follow-up, catch-up and overwrite plans.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa
from pypaimon.read.plan import Plan
from pypaimon.read.scanner.changelog_follow_up_scanner import ChangelogFollowUpScanner

from paimon_feed.batch import BatchKind
from paimon_feed.errors import ConfigurationError, UnsupportedTableError
from paimon_feed.planner import _exact, _overwrite
from paimon_feed.planner._direct_read import (
    _DirectParquet,
    _with_path_factory_built_once,
)
from paimon_feed.planner._manifests import ManifestCache
from paimon_feed.planner._native_read import ROW_KIND_FROM_MERGE, NativeRead
from paimon_feed.planner._read import ExactRead, _exact_values, _StateBuilder
from paimon_feed.planner._rows import ROW_KIND_COLUMN
from paimon_feed.planner._schemas import NO_ROWS, _partition_test, predicate_columns
from paimon_feed.planner._snapshots import table_name

logger = logging.getLogger(__name__)


class SchemaPlanner:
    """Plans and reads the snapshots of one schema with pypaimon's streaming scan, no polling.

    ``projection`` and ``predicate`` name columns of this schema (the caller maps them from
    the feed's schema by field id).
    """

    def __init__(
        self,
        table: Any,
        *,
        projection: list[str] | None,
        predicate: Any,
        buckets: frozenset[int] | None,
        include_row_kind: bool,
        manifests: ManifestCache | None = None,
        reads_in_flight: int = 4,
        prefetch: bool = False,
    ) -> None:
        # Options pypaimon cannot merge with: change splits are read without them (no merge);
        # a merged read is refused (``refused``).
        unmergeable = _exact.unmergeable_options(table)
        if unmergeable:
            table = _exact.without_merge_options(table, unmergeable)
        table = _with_path_factory_built_once(table)
        self.table = table
        self.schema_id = table.table_schema.id
        self._no_rows = predicate is NO_ROWS  # no row of this schema can match: read nothing
        if self._no_rows:
            predicate = None
        self._manifests = manifests
        self._reads_in_flight = reads_in_flight
        self._prefetch = prefetch
        if projection is not None:
            columns = [field.name for field in table.fields]
            unknown = [name for name in projection if name not in columns]
            if unknown or not projection:
                raise ConfigurationError(
                    f"table {table_name(table)}: invalid projection {list(projection)!r}: "
                    f"unknown columns {unknown}; the table has {columns}"
                )
        # Columns the exact filter needs are read too, then dropped.
        read_columns = None
        output_columns = None
        if projection is not None:
            extra = [name for name in table.field_names if name in predicate_columns(predicate)
                     and name not in projection]
            read_columns = list(projection) + extra
            output_columns = ([ROW_KIND_COLUMN] if include_row_kind else []) + list(projection)
        # Merged state with pypaimon-rust where it is exact (``_native_read``), per split.
        native = NativeRead.for_table(
            table, read_columns, ROW_KIND_FROM_MERGE if include_row_kind else None
        )
        #: Why a batch kind (``_exact.CHANGES``, ``_exact.FULL``) cannot be read exactly.
        self.refused = _exact.lossy_reads(table, read_columns, unmergeable, native_state=native is not None)
        #: Why a state read is exact only if Rust reads every split of it (``None``: it is
        #: exact either way).
        self._native_only = None
        if native is not None:
            self._native_only = _exact.lossy_reads(table, read_columns, unmergeable).get(_exact.FULL)
            if self._native_only == self.refused.get(_exact.FULL):
                self._native_only = None
        chars = _exact.char_columns(table, read_columns)[0]
        pushed = _exact.pushable_predicate(predicate, table, chars)
        builder = table.new_stream_read_builder()
        try:
            if read_columns is not None:
                builder.with_projection(read_columns)
            if pushed is not None:
                builder.with_filter(pushed)
            if buckets is not None:
                builder.with_buckets(sorted(buckets))
            builder.with_include_row_kind(include_row_kind)
            self._scan = builder.new_streaming_scan()
            if manifests is not None:
                manifests.install(self._scan._manifest_list_manager)
                manifests.install(self._scan._manifest_file_manager)
            self._values = _exact_values(table, read_columns, chars)
            self._read_columns = read_columns
            self.read = ExactRead(
                builder, predicate, output_columns,
                direct=_DirectParquet.for_table(table, include_row_kind), values=self._values,
                native=native,
            )
            # Kept for overwrite reads: whole-table state, row kinds set by the feed.
            self._state_builder = table.new_read_builder()
            if read_columns is not None:
                self._state_builder.with_projection(read_columns)
            if pushed is not None:
                self._state_builder.with_filter(pushed)
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"table {table_name(table)}: invalid projection {projection!r} or predicate: {exc}"
            ) from exc
        self._buckets = buckets
        self._in_partition = _partition_test(table, predicate)
        scanner = self._scan.follow_up_scanner
        self.should_scan = scanner.should_scan
        self.mode: BatchKind = "changelog" if isinstance(scanner, ChangelogFollowUpScanner) else "delta"
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

    @property
    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema batches of this schema are read with."""
        return self.read.schema

    def _pruned(self, plan: Plan) -> Plan:
        if self._no_rows:
            return Plan([], snapshot_id=plan.snapshot_id)
        if self._buckets is None and self._in_partition is None:
            return plan
        splits = [
            split for split in plan.splits()
            if (self._buckets is None or split.bucket in self._buckets)
            and (self._in_partition is None or self._in_partition(split))
        ]
        return Plan(splits, snapshot_id=plan.snapshot_id)

    def full_plan(self, snapshot: Any) -> Plan:
        plan = self._scan._create_initial_plan(snapshot)
        plan = self._pruned(Plan(plan.splits(), snapshot_id=snapshot.id))
        self._check_native_only(plan.splits(), self.read)
        return plan

    def _check_native_only(self, splits: list, read: ExactRead) -> None:
        """Refuse a state read (before any row) that is exact only through Rust when a split
        would not go there."""
        if self._native_only is None:
            return
        for split in splits:
            if not read.native_takes(split):
                raise UnsupportedTableError(
                    f"{self._native_only} (pypaimon-rust, which keeps them, does not read "
                    f"bucket {split.bucket}: its files are not all Parquet, ORC or Avro of "
                    f"schema {self.schema_id})"
                )

    def follow_up_plan(self, snapshot: Any) -> Plan:
        plan = self._scan._create_follow_up_plan(snapshot)
        return self._pruned(Plan(plan.splits(), snapshot_id=snapshot.id))

    def catch_up_plan(
        self, start: Any, snapshots: list, scannable: Iterable[Any], threads: int
    ) -> Plan:
        """One plan covering ``snapshots`` (consecutive ids of this schema, oldest first);
        ``start`` is the snapshot before them (``None`` if it is gone or there is none)."""
        first, last = snapshots[0], snapshots[-1]
        if self._diff_capable and all(s.commit_kind == "APPEND" for s in snapshots):
            if start is not None or first.id == 1:
                plan = self._diff_plan(start, first.id, last)
                return self._pruned(Plan(plan.splits(), snapshot_id=last.id))
        scannable = list(scannable)
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(scannable)))) as pool:
            plans = list(pool.map(self.follow_up_plan, scannable))
        splits = [split for plan in plans for split in plan.splits()]
        return Plan(splits, snapshot_id=last.id)

    def _diff_plan(self, start: Any, first_id: int, last: Any) -> Plan:
        """pypaimon's set-diff catch-up (``_create_catch_up_plan``): files in ``last`` not in
        ``start``, or all of ``last`` from the first snapshot. With a manifest cache the same
        scanners read through it; with ``prefetch`` (object stores) the manifests are fetched
        ``reads_in_flight`` at a time first, where pypaimon reads as many at a time as the
        machine has cores. On a local disk a read costs less than the threads would."""
        from pypaimon.read.scanner.file_scanner import FileScanner
        from pypaimon.read.scanner.incremental_diff_scanner import (
            IncrementalDiffScanner,
        )

        scan = self._scan
        if self._manifests is None or scan._AsyncStreamingTableScan__auth_query() is not None:
            return scan._create_catch_up_plan(first_id, last)  # REST auth: pypaimon's own path
        lists = self._manifests.install(scan._manifest_list_manager)
        if self._prefetch:
            metas = lists.read_all(last) + (lists.read_all(start) if start is not None else [])
            self._manifests.prefetch(
                [(f"{lists.manifest_path}/{m.file_name}", m.file_size) for m in metas],
                self._reads_in_flight,
            )
        if start is None:
            scanner = FileScanner(
                self.table, lambda: (lists.read_all(last), last), predicate=scan.predicate, limit=None
            )
            self._manifests.install(scanner.manifest_file_manager)
            return scanner.scan()
        scanner = IncrementalDiffScanner(self.table)
        scanner.manifest_list_manager = lists
        self._manifests.install(scanner.manifest_file_manager)
        return scanner.scan(start, last)

    def overwrite_plan(self, snapshot: Any) -> tuple[Plan, list]:
        """What an OVERWRITE snapshot changed: splits of the files it added, and splits of the
        files it removed (each read as the state it held, to be delivered as ``-D``)."""
        added, removed = _overwrite.changed_files(self.table, snapshot, self._manifests)
        added = self._state_splits(added, snapshot.id)
        removed = self._state_splits(removed, snapshot.id)
        self._check_native_only([*added, *removed], self.state_read)
        return Plan(added, snapshot_id=snapshot.id), removed

    def _state_splits(self, entries: list, snapshot_id: int) -> list:
        splits = _overwrite.state_splits(self.table, entries, snapshot_id, self._buckets)
        return self._pruned(Plan(splits, snapshot_id=snapshot_id)).splits() if splits else []

    @functools.cached_property
    def state_read(self) -> ExactRead:
        """A reader that merges primary-key files into the state they hold, for overwrite
        batches (whose rows get their kinds from :meth:`ExactRead.to_arrow`); built once."""
        return ExactRead(
            _StateBuilder(self._state_builder), self.read._predicate, self.read._columns,
            values=self._values, native=NativeRead.for_table(self.table, self._read_columns, "+I"),
        )

