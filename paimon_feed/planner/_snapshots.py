"""Snapshot files and hints, read as Java Paimon reads them; tags; table names and URLs.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Union

from paimon_feed._layout import snapshot_id_from_name

logger = logging.getLogger(__name__)


def read_snapshot(snapshot_manager: Any, snapshot_id: int, files: Any = None) -> Any:
    """Snapshot ``snapshot_id``, or ``None`` if its file does not exist.

    One read instead of pypaimon's existence check plus read: on S3 an existence check of a
    missing key is a HEAD and a LIST, a read through pyarrow is one HEAD (missing) or a HEAD and
    a GET, through ``files`` (a :class:`~paimon_feed.planner._objects.MetadataFiles`) one GET.
    """
    try:
        text = _read_text(snapshot_manager, snapshot_manager.get_snapshot_path(snapshot_id), files)
    except FileNotFoundError:
        return None
    return parse_snapshot(text)


def _read_text(snapshot_manager: Any, path: str, files: Any) -> str:
    if files is None:
        return snapshot_manager.file_io.read_file_utf8(path)
    return files.read(path).decode("utf-8")


@functools.lru_cache(maxsize=1)
def _snapshot_fields() -> tuple[dict[str, str], dict[str, Any]] | None:
    """``Snapshot``'s JSON names -> field names, and the values of fields missing from the
    JSON, as pypaimon's ``JSON.from_json`` derives them; ``None`` if a field needs more than a
    rename (a decoder, a nested class), which only ``JSON.from_json`` does."""
    import dataclasses

    from pypaimon.snapshot.snapshot import Snapshot

    names, missing = {}, {}
    for field in dataclasses.fields(Snapshot):
        if field.metadata.get("json_ignore", False):
            continue
        kind = field.type
        origin, args = getattr(kind, "__origin__", None), getattr(kind, "__args__", None)
        if origin is Union and args is not None and len(args) == 2:
            kind = args[0]
            origin, args = getattr(kind, "__origin__", None), getattr(kind, "__args__", None)
        if (
            field.metadata.get("decoder") is not None
            or dataclasses.is_dataclass(kind)
            or (origin in (list, list) and args and dataclasses.is_dataclass(args[0]))
        ):
            return None
        json_name = field.metadata.get("json_name", field.name)
        names[json_name] = field.name
        if "json_missing_default" in field.metadata:
            missing[json_name] = field.metadata["json_missing_default"]
    return names, missing


def parse_snapshot(text: str) -> Any:
    """A snapshot file's JSON as pypaimon's ``Snapshot``, exactly as ``JSON.from_json`` builds
    it, at a fraction of its cost (it derives the field mapping anew for every file; a catch-up
    parses thousands)."""
    import json

    from pypaimon.common.json_util import JSON
    from pypaimon.snapshot.snapshot import Snapshot

    fields = _snapshot_fields()
    if fields is None:
        return JSON.from_json(text, Snapshot)
    names, missing = fields
    data = json.loads(text)
    kwargs = {names[key]: value for key, value in data.items() if key in names}
    for key, value in missing.items():
        if key not in data:
            kwargs[names[key]] = value
    return Snapshot(**kwargs)


def table_name(table: Any) -> str:
    """``db.table`` of a pypaimon table."""
    return table.identifier.get_full_name()


def table_url(table: Any) -> str:
    """The table's root as a URL (``file:///...`` for local tables, ``file:/`` ones included)."""
    from paimon_feed._layout import is_local, local_url

    path = str(table.table_path)
    return local_url(path) if is_local(path) else path




def _read_hint(snapshot_manager: Any, name: str, files: Any = None) -> int | None:
    path = f"{snapshot_manager.snapshot_dir}/{name}"
    try:
        text = _read_text(snapshot_manager, path, files)
    except FileNotFoundError:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        logger.debug("snapshot hint %s holds %r, not a snapshot id; listing instead", path, text[:40])
        return None
    return value if value > 0 else None


def _snapshot_exists(snapshot_manager: Any, snapshot_id: int, files: Any = None) -> bool:
    # A read, not pypaimon's exists(): that one answers "missing" for some storage errors.
    try:
        _read_text(snapshot_manager, snapshot_manager.get_snapshot_path(snapshot_id), files)
    except FileNotFoundError:
        return False
    return True


def listed_snapshot_ids(snapshot_manager: Any) -> list[int]:
    """Ids of the ``snapshot-N`` files in the snapshot directory, sorted (empty if none)."""
    directory = snapshot_manager.snapshot_dir
    try:
        statuses = snapshot_manager.file_io.list_status(directory)
    except FileNotFoundError:
        return []
    ids = []
    for status in statuses:
        snapshot_id = snapshot_id_from_name(str(status.path).rstrip("/").rsplit("/", 1)[-1])
        if snapshot_id is not None:
            ids.append(snapshot_id)
    return sorted(ids)


def latest_snapshot_id(
    snapshot_manager: Any, exists: Callable[[int], bool] | None = None, files: Any = None
) -> int | None:
    """The newest snapshot id (``None`` for a table without snapshots), as Java finds it.

    ``exists`` answers whether a snapshot exists (a caller with a cache of parsed snapshots
    passes one that asks it first); by default the snapshot file is read (through ``files``,
    a ``MetadataFiles``, if given).
    """
    exists = exists or (lambda snapshot_id: _snapshot_exists(snapshot_manager, snapshot_id, files))
    hinted = _read_hint(snapshot_manager, "LATEST", files)
    if hinted is not None and not exists(hinted + 1) and exists(hinted):
        return hinted
    ids = listed_snapshot_ids(snapshot_manager)
    return ids[-1] if ids else None


def earliest_snapshot_id(snapshot_manager: Any, files: Any = None) -> int | None:
    """The oldest retained snapshot id (``None`` for a table without snapshots).

    Without a usable ``EARLIEST`` hint (pypaimon writes none), ``snapshot-1`` is looked for
    before the directory is listed: ids start at 1, so if it exists it is the oldest, and a
    listing (a stat per file on a local disk) costs far more on a long history.
    """
    hinted = _read_hint(snapshot_manager, "EARLIEST", files)
    if hinted is not None and _snapshot_exists(snapshot_manager, hinted, files):
        return hinted
    if hinted != 1 and _snapshot_exists(snapshot_manager, 1, files):
        return 1
    ids = listed_snapshot_ids(snapshot_manager)
    return ids[0] if ids else None


def read_tags(table: Any) -> dict[str, Any]:
    """The table's tags by name, each as the snapshot it holds (empty if it has none)."""
    from pypaimon.common.json_util import JSON
    from pypaimon.tag.tag import Tag

    manager = table.tag_manager()
    directory = manager.tag_directory()
    try:
        statuses = table.file_io.list_status(directory)
    except FileNotFoundError:
        return {}
    tags = {}
    for status in statuses:
        name = str(status.path).rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("tag-"):
            try:
                text = table.file_io.read_file_utf8(manager.tag_path(name[4:]))
            except FileNotFoundError:
                continue  # deleted while listing
            tags[name[4:]] = JSON.from_json(text, Tag)
    return tags
