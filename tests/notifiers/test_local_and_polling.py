"""LocalNotifier and PollingNotifier against real table directories."""

import asyncio
import os

import pytest
from support.tables import commit, table_dir

from paimon_feed import LocalNotifier, PollingNotifier
from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers import HdfsPollingNotifier, create_notifier, normalize_table_url, snapshot_id_from_name


def test_snapshot_names():
    assert snapshot_id_from_name("snapshot-12") == 12
    for noise in ("LATEST", "EARLIEST", ".snapshot-3.abc.tmp", "snapshot-", "snapshot-1.tmp", "xsnapshot-1"):
        assert snapshot_id_from_name(noise) is None


def test_table_urls_meet_whatever_the_spelling():
    assert normalize_table_url("s3a://b/wh/db.db/t/") == normalize_table_url("s3://b/wh/db.db/t")
    assert normalize_table_url("/tmp/x/") == "file:///tmp/x"
    assert normalize_table_url("file:///tmp/x") == "file:///tmp/x"


def test_local_notifier_wakes_on_committed_snapshots_only(append_table):
    commit(append_table, 0)

    async def main():
        async with LocalNotifier() as notifier:
            sub = notifier.subscribe(str(append_table.table_path))
            await notifier.ready()
            snapshot_dir = os.path.join(table_dir(append_table), "snapshot")
            for noise in ("LATEST", ".snapshot-9.uuid.tmp", "EARLIEST"):
                with open(os.path.join(snapshot_dir, noise), "w") as handle:
                    handle.write("1")
            quiet = await sub.wait(0.3)
            commit(append_table, 1)
            woken = await sub.wait(10)
            return quiet, woken

    quiet, woken = asyncio.run(main())
    assert not quiet.hinted and quiet.timed_out
    assert woken.sources == {"local": 1} and woken.max_snapshot_id == 2


def test_local_notifier_follows_a_table_with_no_snapshot_directory_yet(append_table):
    assert not os.path.exists(os.path.join(table_dir(append_table), "snapshot"))

    async def main():
        async with LocalNotifier() as notifier:
            sub = notifier.subscribe(str(append_table.table_path))
            await notifier.ready()
            commit(append_table, 0)
            first = await sub.wait(10)
            await asyncio.sleep(0.2)  # the watch moves into snapshot/
            sub.drain()
            commit(append_table, 1)
            second = await sub.wait(10)
            return first, second

    first, second = asyncio.run(main())
    assert first.hinted
    assert second.max_snapshot_id == 2


def test_polling_notifier_probes_only_the_expected_snapshot_and_backs_off(append_table):
    commit(append_table, 0)

    class CountingIO:
        def __init__(self, inner):
            self.inner, self.paths = inner, []

        def read_file_utf8(self, path):
            self.paths.append(path)
            return self.inner.read_file_utf8(path)

    io = CountingIO(append_table.file_io)

    async def main():
        async with PollingNotifier(poll_interval=0.02, max_poll_interval=0.08) as notifier:
            sub = notifier.subscribe(str(append_table.table_path), file_io=io)
            sub.expect(2)
            idle = await sub.wait(0.5)
            commit(append_table, 1)
            woken = await sub.wait(10)
            return idle, woken

    idle, woken = asyncio.run(main())
    assert not idle.hinted and woken.max_snapshot_id == 2
    assert {os.path.basename(p) for p in io.paths} == {"snapshot-2"}
    # 0.5 s idle at 20 ms -> 80 ms backoff: far fewer probes than 25 fixed-interval checks
    assert len(io.paths) < 20
    assert PollingNotifier(poll_interval=1, max_poll_interval=4).interval_after(3, False) == 4
    assert PollingNotifier(poll_interval=1).interval_after(4, True) == 1


def test_auto_picks_by_scheme_and_rejects_nonsense(monkeypatch):
    monkeypatch.delenv("PAIMON_FEED_SQS_QUEUE_URL", raising=False)
    assert isinstance(create_notifier("auto", "/tmp/t"), LocalNotifier)
    assert isinstance(create_notifier("auto", "s3://b/wh/db.db/t"), PollingNotifier)
    assert isinstance(create_notifier("auto", "gs://b/wh/db.db/t"), PollingNotifier)
    assert isinstance(create_notifier("auto", "hdfs://nn/wh/db.db/t"), HdfsPollingNotifier)
    with pytest.raises(ConfigurationError):
        create_notifier("inotify", "/tmp/t")
    with pytest.raises(ConfigurationError):
        create_notifier("local", "s3://b/t")
    with pytest.raises(ConfigurationError, match="PAIMON_FEED_SQS_QUEUE_URL"):
        create_notifier("sqs", "s3://b/t")
