"""Paimon's on-disk names and the rules for table locations, pure (no I/O).

One rule tells a URL from a path, as pypaimon does: **a scheme followed by** ``:/`` **is a URL;
a plain path never is.** So ``file:/data/wh`` (one slash: what Paimon's REST catalog server
returns for a ``file:`` warehouse), ``file:///data/wh``, ``s3://b/wh``, ``s3a://b/wh``,
``oss://b/wh`` and ``hdfs://nn/wh`` are URLs, and ``/data/wh`` or ``wh`` are paths. A plain path
is never parsed as a URL, so ``%``, ``#``, ``?`` and spaces in it mean themselves. A ``file:``
URL's path is percent-decoded. A one-letter scheme is a Windows drive (``C:/data``), not a URL.
Inside the feed, local locations are spelled as proper ``file://`` URLs (percent-encoded), so a
location survives being normalised twice.

>>> local_url("/tmp/pct%41x/hash#1")
'file:///tmp/pct%2541x/hash%231'
>>> local_path(local_url("/tmp/pct%41x/hash#1 q?x"))
'/tmp/pct%41x/hash#1 q?x'
>>> [url_scheme(u) for u in ("file:/wh", "file:///wh", "/wh", "wh", "s3a://b/wh", "C:/wh")]
['file', 'file', None, None, 's3a', None]
>>> [local_path(u) for u in ("file:/wh/t", "file:///wh/t", "/wh/t")]
['/wh/t', '/wh/t', '/wh/t']
>>> [is_local(u) for u in ("file:/wh", "file:///wh", "/wh", "s3://b/wh", "oss://b/wh", "hdfs://nn/wh")]
[True, True, True, False, False, False]
>>> local_url("file:/tmp/wh/db.db/t"), local_url("file:///tmp/wh/db.db/t/")
('file:///tmp/wh/db.db/t', 'file:///tmp/wh/db.db/t')
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
    "is_url",
    "url_scheme",
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


#: A URL: a scheme of two or more characters, then ``:/`` (RFC 3986's scheme characters).
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/")


def url_scheme(location: str) -> str | None:
    """The scheme of a URL, lower-cased; ``None`` for a plain path (see the module docstring)."""
    match = _URL.match(location)
    return match.group(1).lower() if match else None


def is_url(location: str) -> bool:
    """Whether ``location`` is a URL (a scheme followed by ``:/``) rather than a plain path.

    >>> is_url("file:/wh"), is_url("/data/x:/y"), is_url("hdfs://nn/wh")
    (True, False, True)
    """
    return url_scheme(location) is not None


def is_local(location: str) -> bool:
    """Whether ``location`` (a path or URL) is on the local file system: a plain path or a
    ``file:`` URL (``file:/``, ``file:///``)."""
    return url_scheme(location) in (None, "file")


def local_url(location: str) -> str:
    """The ``file://`` URL of a local location (a plain path, made absolute, or a ``file:``
    URL), percent-encoded, without a trailing slash."""
    absolute = local_path(location).rstrip("/") or "/"
    return "file://" + quote(absolute, safe="/")


def local_path(location: str) -> str:
    """The file-system path of a local location: a plain path made absolute, a ``file:`` URL
    (``file:/p``, ``file:///p``) decoded."""
    if not is_url(location):
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
