"""Tables named by every URL form pypaimon accepts: the consumer file lands in the table's own
``consumer/`` directory, inotify watches the table's real directory, and a consumer file an older
release wrote under the working directory (``<cwd>/file:/...``) is moved beside the table.

Oracle: the table's directory on disk, as pypaimon's filesystem catalog laid it out."""

from __future__ import annotations

import asyncio
import json
import logging
import os

import pytest
from support.feeds import consume, has_commit
from support.tables import catalog, commit, create_append_table

from paimon_feed import ChangeFeed, CheckpointError
from paimon_feed.batch import SnapshotMark
from paimon_feed.checkpoint import CheckpointStore

SPELLINGS = {
    "plain": lambda path: path,
    "file-one-slash": lambda path: "file:" + path,  # what Paimon's REST server returns
    "file-three-slashes": lambda path: "file://" + path,
}


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """A working directory of its own, so a file written relative to it shows."""
    directory = tmp_path / "cwd"
    directory.mkdir()
    monkeypatch.chdir(directory)
    return directory


def real_table_dir(tmp_path) -> str:
    return str(tmp_path / "wh" / "db.db" / "events")


def every_file(directory) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(root, name), directory)
        for root, _, names in os.walk(directory) for name in names
    )


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_consumer_file_lands_beside_the_table_and_push_hears_commits(tmp_path, cwd, spelling):
    table = create_append_table(catalog(SPELLINGS[spelling](str(tmp_path / "wh"))))
    commit(table, 0)

    async def main():
        # No safety check and no polling within the test: only inotify can deliver commit 1.
        async with ChangeFeed(
            table, consumer_id="etl", start="earliest", notifier="local",
            reconcile_interval=3600, poll_interval=3600,
        ) as feed:
            await consume(feed, until=has_commit(0), timeout=60)
            commit(table, 1)
            seen = await consume(feed, until=has_commit(1), timeout=60)
            return seen, feed.metrics()

    seen, metrics = asyncio.run(main())
    assert seen.commits == [1, 1, 1] and metrics.push_healthy
    consumer_dir = os.path.join(real_table_dir(tmp_path), "consumer")
    with open(os.path.join(consumer_dir, "consumer-etl")) as handle:
        assert json.load(handle) == {"nextSnapshot": 3}
    assert ".paimon-feed-etl.mark" in os.listdir(consumer_dir)
    assert every_file(cwd) == []  # nothing under the working directory


def stray_files(tmp_path, cwd) -> tuple[str, str]:
    """A consumer file and mark where releases before the fix wrote them for a ``file:/`` table."""
    stray_dir = os.path.join(str(cwd), "file:", real_table_dir(tmp_path).lstrip("/"), "consumer")
    os.makedirs(stray_dir)
    consumer, mark = os.path.join(stray_dir, "consumer-etl"), os.path.join(stray_dir, ".paimon-feed-etl.mark")
    return consumer, mark


def test_a_consumer_file_left_under_the_working_directory_moves_beside_the_table(tmp_path, cwd, caplog):
    table = create_append_table(catalog("file:" + str(tmp_path / "wh")))
    for n in range(3):
        commit(table, n)  # snapshots 1..3
    store = CheckpointStore.for_table(table, "etl")
    stray, stray_mark = stray_files(tmp_path, cwd)
    assert os.path.relpath(stray, cwd) == os.path.relpath(store.path)  # the old code's place
    with open(stray, "w") as handle:
        handle.write('{\n  "nextSnapshot" : 3\n}')
    mark = SnapshotMark.of(table.snapshot_manager().get_snapshot_by_id(2))
    with open(stray_mark, "w") as handle:
        json.dump({"nextSnapshot": 3, "snapshot": mark.to_json()}, handle)

    async def main():
        async with ChangeFeed(table, consumer_id="etl", notifier="poll", poll_interval=0.05) as feed:
            return await consume(feed, until=has_commit(2))

    with caplog.at_level(logging.WARNING, logger="paimon_feed"):
        seen = asyncio.run(main())
    assert seen.commits == [2, 2, 2]  # resumed at snapshot 3, not started over
    consumer_dir = os.path.join(real_table_dir(tmp_path), "consumer")
    with open(os.path.join(consumer_dir, "consumer-etl")) as handle:
        assert json.load(handle) == {"nextSnapshot": 4}
    assert not os.path.exists(stray) and not os.path.exists(stray_mark)
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert stray in warning and os.path.join(consumer_dir, "consumer-etl") in warning


def test_two_different_consumer_files_refuse_to_start_naming_both(tmp_path, cwd):
    table = create_append_table(catalog("file:" + str(tmp_path / "wh")))
    commit(table, 0)
    stray, _ = stray_files(tmp_path, cwd)
    with open(stray, "w") as handle:
        handle.write('{"nextSnapshot": 2}')
    beside = os.path.join(real_table_dir(tmp_path), "consumer", "consumer-etl")
    os.makedirs(os.path.dirname(beside))
    with open(beside, "w") as handle:
        handle.write('{"nextSnapshot": 1}')
    with pytest.raises(CheckpointError) as caught:
        CheckpointStore.for_table(table, "etl").load()
    assert stray in str(caught.value) and beside in str(caught.value)
    assert os.path.exists(stray) and os.path.exists(beside)  # nothing touched
