"""Checkpoint and mark files get the mode every other file of the table gets: ``0666`` less the
umask, as Java Paimon writes them. The suite runs as root, so a permission error cannot show a
wrong mode: the tests read the mode bits. Oracle: the mode of the snapshot file pypaimon wrote
under the same umask."""

from __future__ import annotations

import os
import stat

import pytest
from support.tables import commit

from paimon_feed.batch import SnapshotMark
from paimon_feed.checkpoint import CheckpointStore


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_checkpoint_and_mark_files_honour_the_umask_as_java_writes_them(append_table, umask):
    previous = os.umask(umask)
    try:
        store = CheckpointStore.for_table(append_table, "etl")
        commit(append_table, 0)
        store.advance(2)
        store.save_mark(2, SnapshotMark.of(append_table.snapshot_manager().get_snapshot_by_id(1)))
        snapshot_file = os.path.join(os.path.dirname(os.path.dirname(store.path)), "snapshot", "snapshot-1")
    finally:
        os.umask(previous)
    expected = 0o666 & ~umask
    assert stat.S_IMODE(os.stat(store.path).st_mode) == expected
    assert stat.S_IMODE(os.stat(store.mark_path).st_mode) == expected
    assert stat.S_IMODE(os.stat(snapshot_file).st_mode) == expected  # as pypaimon writes the table


def test_a_0600_consumer_file_gets_the_tables_mode_at_its_next_write(append_table):
    store = CheckpointStore.for_table(append_table, "etl")
    previous = os.umask(0o022)
    try:
        store.save(1)
        os.chmod(store.path, 0o600)  # as releases before the fix wrote it
        store.advance(2)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o644
