"""The viewfs:// mount table the HDFS notifier maps tables to nameservices with: read from the
Hadoop client conf files, resolved as Hadoop's ViewFileSystem resolves (longest mount point by
whole path components, else the fallback), and mapped back from a nameservice's path to every
viewfs:// path that shows it. Oracle: the link definitions written into the conf."""

from __future__ import annotations

from paimon_feed.notifiers._viewfs import MountTable, mount_table

SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.viewfs.mounttable.c.link./data</name><value>hdfs://ns0/warehouse</value></property>
  <property><name>fs.viewfs.mounttable.c.link./data/hot</name><value>hdfs://ns1:8020/hot</value></property>
  <property><name>fs.viewfs.mounttable.c.linkFallback</name><value>hdfs://ns2/</value></property>
  <property><name>fs.viewfs.mounttable.other.link./x</name><value>hdfs://nsx/x</value></property>
</configuration>
"""


def test_the_mount_table_is_read_from_hadoop_conf_dir(tmp_path, monkeypatch):
    (tmp_path / "core-site.xml").write_text(SITE)
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    table = mount_table("c")
    assert table is not None
    assert table.resolve("/data/db.db/t") == ("hdfs://ns0", "/warehouse/db.db/t")
    assert table.resolve("/data/hot/db.db/t") == ("hdfs://ns1:8020", "/hot/db.db/t")
    assert table.resolve("/data/hotter/t") == ("hdfs://ns0", "/warehouse/hotter/t")  # whole components
    assert table.resolve("/elsewhere/t") == ("hdfs://ns2", "/elsewhere/t")  # the fallback
    assert mount_table("unknown") is None


def test_a_nameservice_path_maps_back_to_the_viewfs_paths_that_show_it(tmp_path):
    (tmp_path / "hdfs-site.xml").write_text(SITE)
    table = mount_table("c", str(tmp_path))
    assert table is not None
    assert table.views("hdfs://ns0", "/warehouse/db.db/t") == ["viewfs://c/data/db.db/t"]
    assert table.views("hdfs://ns1:8020", "/hot/db.db/t") == ["viewfs://c/data/hot/db.db/t"]
    assert table.views("hdfs://ns2", "/elsewhere/t") == ["viewfs://c/elsewhere/t"]
    # Shadowed: /data/hot on ns2 through the fallback is served by ns1, so it shows nothing.
    assert table.views("hdfs://ns2", "/data/hot/t") == []
    assert table.views("hdfs://nsx", "/x/t") == []  # another mount table's nameservice


def test_without_links_there_is_no_mount_table(tmp_path):
    (tmp_path / "core-site.xml").write_text("<configuration/>")
    assert mount_table("c", str(tmp_path)) is None
    assert MountTable("c", {}).resolve("/a") is None
