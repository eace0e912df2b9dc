"""A ``viewfs://`` mount table, as the Hadoop client conf defines it: which nameservice serves a
path, and which ``viewfs://`` paths show a nameservice's path.

A federated namespace has one inotify stream per nameservice, and a stream names paths inside
its own nameservice; the HDFS notifier maps a ``viewfs://`` table to the stream that serves it
(:meth:`MountTable.resolve`) and each renamed snapshot file back to the ``viewfs://`` tables it
belongs to (:meth:`MountTable.views`). The table is read from ``core-site.xml`` and
``hdfs-site.xml`` in ``HADOOP_CONF_DIR``, the files hdfs-native (pypaimon's HDFS client) reads:
``fs.viewfs.mounttable.<cluster>.link.<path>`` and ``...linkFallback``, resolved as Hadoop's
``ViewFileSystem`` does (the longest mount point that is a prefix of the path, by whole
components, else the fallback). Other link kinds (``linkMerge``, ``linkRegex``, nfly) are not
read: such a table is polled.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from urllib.parse import urlparse

__all__ = ["MountTable", "mount_table"]

_SITE_FILES = ("core-site.xml", "hdfs-site.xml")


def _site_properties(conf_dir: str) -> dict[str, str]:
    properties: dict[str, str] = {}
    for name in _SITE_FILES:
        path = os.path.join(conf_dir, name)
        if not os.path.isfile(path):
            continue
        for prop in ET.parse(path).getroot().iter("property"):
            key, value = prop.findtext("name"), prop.findtext("value")
            if key:
                properties[key.strip()] = (value or "").strip()
    return properties


def _split(target: str) -> tuple[str, str]:
    """``hdfs://ns/a/b`` -> (``hdfs://ns``, ``/a/b``)."""
    parsed = urlparse(target)
    return f"{parsed.scheme.lower()}://{parsed.netloc}", parsed.path.rstrip("/") or "/"


def _under(path: str, root: str) -> str | None:
    """The part of ``path`` below ``root`` (``""`` if equal), by whole components; else None."""
    if root == "/":
        return path if path != "/" else ""
    if path == root:
        return ""
    return path[len(root):] if path.startswith(root + "/") else None


class MountTable:
    """The links of one mount table (``viewfs://<cluster>``): mount point -> (namespace, path)."""

    def __init__(self, cluster: str, links: dict[str, str], fallback: str | None = None) -> None:
        self.cluster = cluster
        self.links = {point.rstrip("/") or "/": _split(target) for point, target in links.items()}
        self.fallback = _split(fallback) if fallback else None

    def __repr__(self) -> str:
        return f"MountTable(viewfs://{self.cluster}, {len(self.links)} links)"

    def resolve(self, path: str) -> tuple[str, str] | None:
        """The namespace (``hdfs://host:port`` or ``hdfs://nameservice``) and path serving a
        ``viewfs://`` path, or ``None`` if no link and no fallback covers it.

        >>> table = MountTable("c", {"/a": "hdfs://ns0/x", "/a/b": "hdfs://ns1/y"})
        >>> table.resolve("/a/b/t"), table.resolve("/a/bc"), table.resolve("/z")
        (('hdfs://ns1', '/y/t'), ('hdfs://ns0', '/x/bc'), None)
        """
        best = None
        for point in self.links:
            rest = _under(path, point)
            if rest is not None and (best is None or len(point) > len(best[0])):
                best = (point, rest)
        if best is not None:
            namespace, root = self.links[best[0]]
            return namespace, (root.rstrip("/") + best[1]) or "/"
        if self.fallback is not None:
            namespace, root = self.fallback
            return namespace, (root.rstrip("/") + path) or "/"
        return None

    def views(self, namespace: str, path: str) -> list[str]:
        """Every ``viewfs://`` URL that shows ``path`` of ``namespace``.

        >>> MountTable("c", {"/a": "hdfs://ns0/x"}).views("hdfs://ns0", "/x/db.db/t")
        ['viewfs://c/a/db.db/t']
        """
        targets = list(self.links.items())
        if self.fallback is not None:
            targets.append(("", self.fallback))
        urls = []
        for point, (target_namespace, root) in targets:
            rest = _under(path, root) if target_namespace == namespace else None
            if rest is None:
                continue
            view = (point.rstrip("/") + rest) or "/"
            if self.resolve(view) == (namespace, path):  # not shadowed by a longer mount point
                urls.append(f"viewfs://{self.cluster}{view}")
        return urls


def mount_table(cluster: str, conf_dir: str | None = None) -> MountTable | None:
    """The mount table of ``viewfs://<cluster>`` from ``conf_dir`` (default ``$HADOOP_CONF_DIR``),
    or ``None`` if the conf defines no link for it."""
    conf_dir = conf_dir or os.environ.get("HADOOP_CONF_DIR")
    if not conf_dir:
        return None
    properties = _site_properties(conf_dir)
    prefix = f"fs.viewfs.mounttable.{cluster}."
    links = {key[len(prefix) + len("link."):]: value for key, value in properties.items()
             if key.startswith(prefix + "link.") and value}
    fallback = properties.get(prefix + "linkFallback")
    if not links and not fallback:
        return None
    return MountTable(cluster, links, fallback)
