"""One inotify instance per process: many tables, dead watches, odd paths, few descriptors."""

from __future__ import annotations

import asyncio
import errno
import os
import random
import subprocess
import sys
import textwrap
import threading

import pytest
from support import tables
from support.fixtures import python_env
from support.tables import append_rows, commit, table_dir

from paimon_feed import ChangeFeed, LocalNotifier, WarehouseFeed
from paimon_feed.notifiers import _inotify

pytestmark = pytest.mark.skipif(not _inotify.available(), reason="inotify is Linux-only")

TIMEOUT = 120  # seconds; a guard against hangs, never a latency assertion


def inotify_instances() -> int:
    """This process's inotify file descriptors, as the kernel sees them."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                count += 1
        except OSError:
            continue
    return count


async def take(feed, count: int) -> list:
    batches = []
    async with asyncio.timeout(TIMEOUT):
        while len(batches) < count:
            batches.append(await feed.__anext__())
    return batches


def test_a_snapshot_directory_replaced_by_rename_is_noticed_counted_and_rewatched(append_table):
    commit(append_table, 0)
    snapshot_dir = os.path.join(table_dir(append_table), "snapshot")

    async def main():
        async with LocalNotifier() as notifier:
            async with ChangeFeed(append_table, notifier=notifier, start="latest",
                                  reconcile_interval=3600) as feed:
                # A restore: the directory is copied aside, and the copy renamed into place.
                await asyncio.to_thread(shutil_copy_and_swap, snapshot_dir)
                async with asyncio.timeout(TIMEOUT):
                    while notifier.watches_restored < 1:
                        await asyncio.sleep(0.01)
                await asyncio.to_thread(commit, append_table, 1)
                batch = (await take(feed, 1))[0]
                return batch, feed.metrics(), notifier.watch_losses

    batch, metrics, losses = asyncio.run(main())
    # push, not the hour-long safety check, delivered it; the loss is in the metrics
    assert batch.snapshot_id == 2 and metrics.hints_by_source.get("local", 0) >= 1
    assert losses == 1 and metrics.fallbacks == 1 and metrics.mode == "push"


def shutil_copy_and_swap(snapshot_dir: str) -> None:
    import shutil

    shutil.copytree(snapshot_dir, snapshot_dir + ".restored")
    os.rename(snapshot_dir, snapshot_dir + ".old")
    os.rename(snapshot_dir + ".restored", snapshot_dir)


def test_a_watch_that_cannot_be_re_established_means_polling_until_it_can(append_table):
    commit(append_table, 0)
    snapshot_dir = os.path.join(table_dir(append_table), "snapshot")

    async def main():
        async with LocalNotifier(retry_interval=0.05, max_retry_interval=0.05) as notifier:
            async with ChangeFeed(append_table, notifier=notifier, start="latest",
                                  poll_interval=0.05, reconcile_interval=3600) as feed:
                # The watch limit (fs.inotify.max_user_watches) reached while re-watching.
                watcher, add = notifier._lease.watcher, notifier._lease.watcher.add
                full = True

                def limited_add(path, sink, tag=None):
                    if full:
                        raise OSError(errno.ENOSPC, "No space left on device", path)
                    return add(path, sink, tag)

                watcher.add = limited_add
                try:
                    await asyncio.to_thread(shutil_copy_and_swap, snapshot_dir)
                    async with asyncio.timeout(TIMEOUT):
                        while feed.metrics().mode != "fallback-poll":
                            await asyncio.sleep(0.01)
                    await asyncio.to_thread(commit, append_table, 1)
                    polled = (await take(feed, 1))[0], feed.metrics()
                    full = False
                    async with asyncio.timeout(TIMEOUT):
                        while notifier.watches_restored < 1:
                            await asyncio.sleep(0.01)
                finally:
                    watcher.add = add
                await asyncio.to_thread(commit, append_table, 2)
                pushed = (await take(feed, 1))[0]
                return polled, pushed, feed.metrics()

    (polled_batch, polling), pushed, after = asyncio.run(main())
    assert polled_batch.snapshot_id == 2 and polling.fallbacks == 1 and not polling.push_healthy
    assert polling.hints_by_source.get("fallback-poll", 0) >= 1
    assert pushed.snapshot_id == 3 and after.push_healthy and after.mode == "push"


@pytest.mark.parametrize("name", ["pct%41x", "hash#1", "q?x", "with space", "all %20#?& of them"])
def test_paths_that_look_like_urls_still_get_push(tmp_path, name):
    warehouse = str(tmp_path / name / "wh")
    cat = tables.catalog(warehouse)
    table = tables.create_append_table(cat)

    async def main():
        async with LocalNotifier() as notifier:
            async with WarehouseFeed(warehouse, notifier=notifier, start="latest",
                                     reconcile_interval=3600, discovery_interval=3600) as feed:
                subscribed = notifier.subscribed_tables()
                await asyncio.to_thread(commit, table, 1)
                batch = (await take(feed, 1))[0]
                return subscribed, batch, feed.metrics().tables["db.events"]

    subscribed, batch, metrics = asyncio.run(main())
    from paimon_feed._layout import local_path

    assert [local_path(url) for url in subscribed] == [table_dir(table)]
    assert batch.to_arrow().column("id").to_pylist() == [r["id"] for r in append_rows(1)]
    assert metrics.hints_by_source.get("local", 0) >= 1 and metrics.reconciles == 0


def test_300_tables_one_inotify_instance_few_threads_every_commit_once(warehouse, cat):
    count = 300
    names = [f"db.t{i:03d}" for i in range(count)]
    handles = {name: tables.create_append_table(cat, name) for name in names}
    writes = [random.Random(7).choice(names) for _ in range(120)]
    before = inotify_instances()

    async def main():
        async with WarehouseFeed(warehouse, start="latest", max_pending=2,
                                 discovery_interval=3600) as feed:
            assert len(feed.tables()) == count
            during = (inotify_instances(), threading.active_count())
            written: dict[str, list[int]] = {}

            def writer():
                for n, name in enumerate(writes):
                    commit(handles[name], n)
                    written.setdefault(name, []).extend(r["id"] for r in append_rows(n))

            task = asyncio.create_task(asyncio.to_thread(writer))
            delivered: dict[str, list[int]] = {}
            snapshots = 0
            async with asyncio.timeout(TIMEOUT):
                while snapshots < len(writes):
                    batch = await feed.__anext__()
                    snapshots += batch.snapshot_count
                    ids = await asyncio.to_thread(lambda: batch.to_arrow().column("id").to_pylist())
                    delivered.setdefault(batch.table, []).extend(ids)
                    await feed.commit(batch)
            await task
            return during, delivered, written

    (instances, threads), delivered, written = asyncio.run(main())
    assert instances - before == 1
    assert threads <= 64
    assert delivered == written  # every commit exactly once, in order per table
    assert inotify_instances() == before  # closed with the last feed


def test_1000_tables_under_ulimit_n_256(tmp_path):
    script = textwrap.dedent(
        """
        import asyncio, os, resource, sys
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        from support import tables
        from paimon_feed import WarehouseFeed
        cat = tables.catalog(sys.argv[1])
        handles = [tables.create_append_table(cat, f"db.t{i:04d}") for i in range(1000)]

        async def main():
            async with WarehouseFeed(sys.argv[1], start="latest", discovery_interval=3600,
                                     max_pending=1) as feed:
                assert len(feed.tables()) == 1000, len(feed.tables())
                fds = len(os.listdir("/proc/self/fd"))
                for i in (0, 499, 999):
                    await asyncio.to_thread(tables.commit, handles[i], i)
                got = []
                async with asyncio.timeout(120):
                    while len(got) < 3:
                        got.append((await feed.__anext__()).table)
                modes = {m.mode for m in feed.metrics().tables.values()}
                print("OK", fds, sorted(got), sorted(modes))

        asyncio.run(main())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "wh")],
        capture_output=True, text=True, timeout=600, env=python_env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    print(result.stdout)
    line = [ln for ln in result.stdout.splitlines() if ln.startswith("OK")][0]
    _, fds, *rest = line.split(" ", 2)
    assert int(fds) < 256
    assert "db.t0000" in line and "db.t0499" in line and "db.t0999" in line and "'push'" in line
