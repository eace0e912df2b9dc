"""Paimon's on-disk names and the rules for table locations, pure (no I/O).

A local table is named by a plain path or a ``file://`` URL. A plain path is a path: it is never
parsed as a URL, so ``%``, ``#``, ``?`` and spaces in it mean themselves. A ``file://`` URL is a
URL: its path is percent-decoded. Inside the feed, local locations are spelled as proper
``file://`` URLs (percent-encoded), so a location survives being normalised twice.

>>> local_url("/tmp/pct%41x/hash#1")
'file:///tmp/pct%2541x/hash%231'
>>> local_path(local_url("/tmp/pct%41x/hash#1 q?x"))
'/tmp/pct%41x/hash#1 q?x'
>>> table_of_dir("sales.db", "orders"), table_of_dir("sales", "orders")
('sales.orders', None)
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote, unquote, urlparse

__all__ = [
    "DATABASE_SUFFIX",
    "SNAPSHOT_DIR",
    "SCHEMA_DIR",
    "SNAPSHOT_NAME",
    "PROBE_TABLE_DIR",
    "snapshot_id_from_name",
    "is_local",
    "local_path",
    "local_url",
    "table_of_dir",
]

#: A filesystem catalog keeps database ``db`` in ``{warehouse}/db.db`` and table ``db.t`` in
#: ``{warehouse}/db.db/t``.
DATABASE_SUFFIX = ".db"
SNAPSHOT_DIR = "snapshot"
SCHEMA_DIR = "schema"
#: A committed snapshot file: ``snapshot-{id}`` (temp files, ``LATEST`` and ``EARLIEST`` are not).
SNAPSHOT_NAME = re.compile(r"snapshot-([0-9]+)")
#: The directory under a warehouse where ``paimon-feed check`` puts its probe,
#: ``{warehouse}/_paimon_feed_probe/snapshot/snapshot-{n}``: a key the warehouse's snapshot rules
#: match, in a directory no catalog lists (not ``*.db``); the feed and the Lambda handler skip it.
PROBE_TABLE_DIR = "_paimon_feed_probe"


def snapshot_id_from_name(name: str) -> int | None:
    """The id in a committed snapshot file name (``snapshot-42`` → 42), else ``None``.

    Temp files (``.snapshot-42.<uuid>.tmp``), ``LATEST`` and ``EARLIEST`` give ``None``.

    >>> snapshot_id_from_name("snapshot-42"), snapshot_id_from_name(".snapshot-42.x.tmp")
    (42, None)
    """
    match = SNAPSHOT_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def is_local(location: str) -> bool:
    """Whether ``location`` (a path or URL) is on the local file system.

    >>> is_local("/data/wh"), is_local("file:///data/wh"), is_local("s3://b/wh")
    (True, True, False)
    """
    if "://" not in location:
        return True
    return location.split("://", 1)[0].lower() == "file"


def local_url(path: str) -> str:
    """The ``file://`` URL of a plain local path (made absolute, percent-encoded)."""
    absolute = os.path.abspath(path).rstrip("/") or "/"
    return "file://" + quote(absolute, safe="/")


def local_path(location: str) -> str:
    """The file-system path of a local location: a plain path as it is, a ``file://`` URL
    decoded."""
    if "://" not in location:
        return os.path.abspath(location)
    return unquote(urlparse(location).path)


def table_of_dir(database_dir: str, table_dir: str) -> str | None:
    """``db.table`` for a table directory inside a database directory, or ``None`` when the
    directory is not a database's."""
    if not database_dir.endswith(DATABASE_SUFFIX) or len(database_dir) == len(DATABASE_SUFFIX):
        return None
    if table_dir.startswith("."):  # hidden and temp directories
        return None
    return f"{database_dir[: -len(DATABASE_SUFFIX)]}.{table_dir}"
