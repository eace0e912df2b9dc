"""What an OVERWRITE snapshot changed, as files: the entries of its delta manifests, split into
the files it added and the files it removed, and splits to read either as the state it holds.

An overwrite batch delivers the removed files' rows as ``-D`` and the added files' rows as
``+I``; both are read as state (primary keys merged), not as changes, which is why a removed
file is planned as if it were added (:func:`changed_files`).
"""

from __future__ import annotations

from typing import Any

from paimon_feed.planner._manifests import ManifestCache

__all__ = ["changed_files", "state_splits"]


def changed_files(table: Any, snapshot: Any, manifests: ManifestCache | None) -> tuple[list[Any], list[Any]]:
    """The manifest entries of the files ``snapshot`` added, and of the files it removed (as
    ADD entries of the same files, to plan a read of them); read through ``manifests`` if given."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    lists, reader = ManifestListManager(table), ManifestFileManager(table)
    if manifests is not None:
        manifests.install(lists)
        manifests.install(reader)
    entries = [
        entry
        for manifest in lists.read_delta(snapshot)
        for entry in reader.read(manifest.file_name, drop_stats=True, file_size=manifest.file_size)
    ]
    return [e for e in entries if e.kind == 0], [_as_added(e) for e in entries if e.kind != 0]


def state_splits(
    table: Any, entries: list[Any], snapshot_id: int, buckets: frozenset[int] | None
) -> list[Any]:
    """Splits reading the files of ``entries`` (only those in ``buckets``, if given) as the
    state they hold, the way a batch read of ``table`` splits them."""
    from pypaimon.read.scanner.append_table_split_generator import (
        AppendTableSplitGenerator,
    )
    from pypaimon.read.scanner.primary_key_table_split_generator import (
        PrimaryKeyTableSplitGenerator,
    )

    if buckets is not None:
        entries = [e for e in entries if e.bucket in buckets]
    if not entries:
        return []
    options = table.options
    generator = (
        PrimaryKeyTableSplitGenerator
        if table.is_primary_key_table
        else AppendTableSplitGenerator
    )(
        table,
        options.source_split_target_size(),
        options.source_split_open_file_cost(),
        deletion_files_map={},
        snapshot_id=snapshot_id,
    )
    splits: list[Any] = generator.create_splits(entries)
    return splits


def _as_added(entry: Any) -> Any:
    """A DELETE manifest entry as the ADD entry of the same file, to plan a read of it."""
    from pypaimon.manifest.schema.manifest_entry import ManifestEntry

    return ManifestEntry(
        kind=0, partition=entry.partition, bucket=entry.bucket,
        total_buckets=entry.total_buckets, file=entry.file,
    )
