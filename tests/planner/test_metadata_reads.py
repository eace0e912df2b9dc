"""How the planner reads table metadata while it walks a backlog: snapshot and manifest files a
bounded number at a time (more on object stores), and each manifest read once however many
rounds, retries or catch-ups need it. Counted at the planner's metadata reader, on real tables.
Manifests decoded on the caller's thread list exactly the files pypaimon's pool lists, and
file system paths converted a directory at a time are the ones pypaimon converts."""

from __future__ import annotations

import threading
import time

import pytest
from support.planning import plan_rounds
from support.tables import (
    catalog,
    commit,
    create_append_table,
    create_pk_table,
    overwrite,
    rows_for,
)

from paimon_feed import Planner
from paimon_feed.planner import _manifests, _snapshots
from paimon_feed.planner import planner as planner_module
from paimon_feed.planner._objects import FilesystemPaths, MetadataFiles
from paimon_feed.planner.planner import reads_in_flight


class InFlight:
    """Counts reads of files under ``marker`` on a FileIO method, and the most in flight at
    once; each read is held ``hold_s`` so that reads issued together overlap."""

    def __init__(self, file_io, method: str, marker: str, monkeypatch, hold_s: float = 0.005):
        self.by_path: dict[str, int] = {}
        self.now = self.most = 0
        lock = threading.Lock()
        original = getattr(file_io, method)

        def counted(path, *args, **kwargs):
            if marker not in str(path):
                return original(path, *args, **kwargs)
            with lock:
                self.by_path[str(path)] = self.by_path.get(str(path), 0) + 1
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                time.sleep(hold_s)
                return original(path, *args, **kwargs)
            finally:
                with lock:
                    self.now -= 1

        monkeypatch.setattr(file_io, method, counted)


def plan_everything(planner: Planner, first: int):
    batches, position = plan_rounds(planner, first)
    return batches, position


def rows(batches) -> list:
    return sorted(row["id"] for batch in batches for row in batch.to_arrow().to_pylist())


def expected(table, commits) -> list:
    return sorted(row["id"] for n in commits for row in rows_for(table, n))


@pytest.mark.parametrize(
    "url, in_flight",
    [("s3://lake/wh/db.db/t", 16), ("s3a://lake/wh/db.db/t", 16), ("oss://b/wh/db.db/t", 16),
     ("file:///tmp/wh/db.db/t", 1), ("/tmp/wh/db.db/t", 1)],
)
def test_reads_in_flight_depend_on_the_store(url, in_flight):
    assert reads_in_flight(url) == in_flight


def test_on_a_local_disk_snapshots_are_read_one_after_another(append_table, monkeypatch):
    for n in range(40):
        commit(append_table, n)
    planner = Planner(append_table)
    assert planner.reads_in_flight == 1
    snapshots = InFlight(planner.files, "read", "/snapshot/snapshot-", monkeypatch)
    batches, position = plan_everything(planner, 1)
    assert [b.kind for b in batches] == ["catch-up"] and position == 41
    assert rows(batches) == expected(append_table, range(40))
    assert snapshots.most == 1 and len(snapshots.by_path) >= 40


def test_a_catch_up_reads_snapshots_and_manifests_concurrently_within_the_bound(append_table, monkeypatch):
    for n in range(40):
        commit(append_table, n)
    monkeypatch.setattr(planner_module, "reads_in_flight", lambda url: 4)  # as for an object store
    planner = Planner(append_table)
    assert planner.reads_in_flight == 4
    snapshots = InFlight(planner.files, "read", "/snapshot/snapshot-", monkeypatch)
    manifests = InFlight(planner.files, "read", "/manifest/", monkeypatch)
    batches, position = plan_everything(planner, 1)
    assert [b.kind for b in batches] == ["catch-up"] and position == 41
    assert rows(batches) == expected(append_table, range(40))
    assert 1 < snapshots.most <= planner.reads_in_flight, snapshots.most
    assert manifests.most <= planner.reads_in_flight, manifests.most
    assert len(manifests.by_path) >= 40  # one manifest per commit, all of them read


def test_on_an_object_store_the_manifests_of_a_catch_up_are_fetched_within_its_bound(append_table, monkeypatch):
    for n in range(40):
        commit(append_table, n)
    monkeypatch.setattr(planner_module, "reads_in_flight", lambda url: 6)  # as for s3://
    table = append_table.copy({"scan.manifest.parallelism": "1"})  # pypaimon: one at a time
    planner = Planner(table)
    manifests = InFlight(planner.files, "read", "/manifest/", monkeypatch)
    batches, _ = plan_everything(planner, 1)
    assert rows(batches) == expected(append_table, range(40))
    assert 2 < manifests.most <= 6, manifests.most  # fetched ahead by the planner, bounded
    assert max(manifests.by_path.values()) == 1 and len(manifests.by_path) >= 41


def test_each_manifest_is_read_once_across_rounds_retries_and_catch_ups(warehouse, append_table, monkeypatch):
    writer = catalog(warehouse).get_table("db.events")  # its own FileIO, not counted
    assert writer.file_io is not append_table.file_io
    for n in range(30):
        commit(writer, n)
    planner = Planner(append_table)
    manifests = InFlight(planner.files, "read", "/manifest/", monkeypatch)
    snapshots = InFlight(planner.files, "read", "/snapshot/snapshot-", monkeypatch)

    first, position = plan_everything(planner, 1)
    read_first = dict(manifests.by_path)
    again, _ = plan_everything(planner, 1)  # a retry of the same range: nothing read again
    assert manifests.by_path == read_first
    assert [(b.first_snapshot_id, b.snapshot_id) for b in again] == [(1, 30)]
    snapshot_reads_of_retry = sum(snapshots.by_path.values())

    for n in range(30, 60):
        commit(writer, n)
    later, end = plan_everything(planner, position)  # a set-diff of snapshots 30 and 60
    assert [(b.kind, b.first_snapshot_id, b.snapshot_id) for b in later] == [("catch-up", 31, 60)]
    assert rows(first) == expected(append_table, range(30))
    assert rows(later) == expected(append_table, range(30, 60))
    assert max(manifests.by_path.values()) == 1, [(p.rsplit("/", 1)[-1], n) for p, n in manifests.by_path.items() if n > 1]
    assert set(read_first) < set(manifests.by_path)
    # Snapshot files: each of the range once; the retry only probed for newer ones (the one
    # after LATEST, missing), re-read the newest snapshot it had read ahead (still the same
    # commit? else what was read ahead is dropped) and re-read the set-diff's anchor on purpose
    # (it may have expired): snapshot 30 is read three times, every other one at most twice.
    in_range = {p: n for p, n in snapshots.by_path.items() if p.rsplit("-", 1)[-1] not in ("31", "61")}
    assert snapshot_reads_of_retry <= 30 + 2 * 3 + 1, snapshots.by_path
    (newest,) = [p for p in in_range if p.endswith("/snapshot-30")]
    assert in_range.pop(newest) <= 3
    assert max(in_range.values()) <= 2 and sum(in_range.values()) <= 59 + 2, in_range


@pytest.mark.parametrize("entries, bytes_", [(10, 1 << 30), (10_000, 20_000)], ids=["entries", "bytes"])
def test_the_manifest_cache_is_bounded_by_entries_and_bytes(append_table, monkeypatch, entries, bytes_):
    for n in range(30):
        commit(append_table, n)
    monkeypatch.setattr(planner_module, "_MANIFEST_CACHE_ENTRIES", entries)
    monkeypatch.setattr(planner_module, "_MANIFEST_CACHE_BYTES", bytes_)
    planner = Planner(append_table, catch_up_threshold=1000)  # 30 rounds, 30 delta manifests
    batches, _ = plan_everything(planner, 1)
    assert rows(batches) == expected(append_table, range(30))  # exact whatever the bounds
    cache = planner.manifests
    assert cache.reads >= 60  # a delta manifest list and a manifest per snapshot
    assert 0 < len(cache) <= entries and 0 < cache.bytes <= bytes_
    assert len(cache) < 60  # the bound evicted some


def test_snapshots_parse_exactly_as_pypaimons_json_does(any_table, warehouse):
    import glob
    import json

    from pypaimon.common.json_util import JSON
    from pypaimon.snapshot.snapshot import Snapshot

    for n in range(3):
        commit(any_table, n)
    paths = glob.glob(f"{warehouse}/**/snapshot/snapshot-*", recursive=True)
    assert len(paths) == 3
    texts = [open(path).read() for path in paths]
    every_field = json.loads(texts[0])
    every_field.update(changelogManifestList="cl", changelogManifestListSize=7, indexManifest="ix",
                       changelogRecordCount=1, watermark=-5, statistics="st", nextRowId=9,
                       properties={"k": "v"}, writerVersion="w", somethingNewer=[1])
    without_uuid = {key: value for key, value in every_field.items() if key != "uuid"}
    texts += [json.dumps(every_field), json.dumps(without_uuid)]
    for text in texts:
        assert _snapshots.parse_snapshot(text) == JSON.from_json(text, Snapshot), text
    assert _snapshots.parse_snapshot(json.dumps(without_uuid)).uuid is None


def _identifiers(entries) -> list:
    return [(e.kind, tuple(e.partition.values), e.bucket, e.file.level, e.file.file_name) for e in entries]


def _manifests_of(table, snapshot):
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    return ManifestListManager(table).read_all(snapshot)


@pytest.mark.parametrize("shape", ["append with overwrites", "primary key"])
@pytest.mark.parametrize("local", [True, False], ids=["local", "held"])
def test_manifests_decoded_inline_list_the_files_pypaimons_pool_lists(cat, shape, local):
    """Every snapshot's live files, read with the feed's inline decoding (local, or every file
    already held) and with a fresh pypaimon manager, in the same order. Overwrites write DELETE
    entries that cancel earlier ADDs across manifests; primary keys write several levels."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    table = create_pk_table(cat) if shape == "primary key" else create_append_table(cat)
    for n in range(12):
        (overwrite if shape != "primary key" and n % 4 == 3 else commit)(table, n)
    snapshots = table.snapshot_manager()
    latest = snapshots.get_latest_snapshot().id
    cache = _manifests.ManifestCache(MetadataFiles(table.file_io), local=local)
    inline = cache.install(ManifestFileManager(table))
    decoded_on = set()
    read = inline.read
    inline.read = lambda *args, **kwargs: decoded_on.add(threading.current_thread().name) or read(*args, **kwargs)
    deletes = 0
    for snapshot_id in range(1, latest + 1):
        metas = _manifests_of(table, snapshots.get_snapshot_by_id(snapshot_id))
        if not local:
            cache.prefetch([(f"{inline.manifest_path}/{m.file_name}", m.file_size) for m in metas], 4)
        pooled = ManifestFileManager(table).read_entries_parallel(metas)
        ours = inline.read_entries_parallel(metas)
        assert _identifiers(ours) == _identifiers(pooled), snapshot_id
        deletes += sum(meta.num_deleted_files for meta in metas)
    assert decoded_on == {threading.current_thread().name}
    if shape != "primary key":
        assert deletes > 0  # the merge across manifests was exercised


def test_manifests_still_to_be_fetched_from_a_store_are_read_by_pypaimons_pool(append_table):
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    for n in range(6):
        commit(append_table, n)
    metas = _manifests_of(append_table, append_table.snapshot_manager().get_latest_snapshot())
    cache = _manifests.ManifestCache(MetadataFiles(append_table.file_io), local=False)
    manager = cache.install(ManifestFileManager(append_table))
    decoded_on = []
    read = manager.read
    manager.read = lambda *args, **kwargs: decoded_on.append(threading.current_thread().name) or read(*args, **kwargs)
    entries = manager.read_entries_parallel(metas, max_workers=2)
    assert len(entries) == 6 and len(decoded_on) == 6
    assert threading.current_thread().name not in decoded_on  # nothing held: pypaimon's threads


def _s3_file_io():
    from pypaimon.common.options import Options
    from pypaimon.filesystem.pyarrow_file_io import PyArrowFileIO

    options = {"fs.s3.endpoint": "http://127.0.0.1:9", "fs.s3.accessKeyId": "k",
               "fs.s3.accessKeySecret": "s", "fs.s3.region": "us-east-1"}
    return PyArrowFileIO("s3://lake/wh", Options(options))


@pytest.mark.parametrize("store", ["local", "s3"])
def test_paths_converted_a_directory_at_a_time_are_pypaimons(store, tmp_path):
    from pypaimon.filesystem.local_file_io import LocalFileIO

    file_io = LocalFileIO() if store == "local" else _s3_file_io()
    root = f"file://{tmp_path}" if store == "local" else "s3://lake"
    names = ["data-1.parquet", "snapshot-7", "a%20b", "q?x", "h#1", "c:d", "..", "x;y"]
    directories = [f"{root}/wh/db.db/t/bucket-0", f"{root}/wh/db.db/t/dt=2024-01-01/bucket-3",
                   f"{root}/wh/db.db/t/p=a%2Fb/bucket-0", f"{root}//wh//db.db/t/manifest", "rel/dir",
                   f"{tmp_path}/plain", "s3://lake", "file:/only/one/slash"]
    paths = FilesystemPaths(file_io)
    for directory in directories:
        for name in names:
            path = f"{directory}/{name}"
            assert paths(path) == file_io.to_filesystem_path(path), path
        assert paths(directory) == file_io.to_filesystem_path(directory)


def test_local_metadata_is_read_from_the_path_pypaimon_would_open(append_table):
    commit(append_table, 0)
    files = MetadataFiles(append_table.file_io)
    snapshot = append_table.snapshot_manager().get_snapshot_path(1)
    with append_table.file_io.new_input_stream(snapshot) as stream:
        assert files.read(snapshot) == stream.read()
    with pytest.raises(FileNotFoundError):
        files.read(snapshot.replace("snapshot-1", "snapshot-2"))
