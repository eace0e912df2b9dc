"""The runner's batch record beside a real consumer file: written and read back through the
table's own file IO, and a damaged record is an error naming the file and the remedy."""

from __future__ import annotations

import pytest

from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.consumers import delete_consumer
from paimon_feed.errors import CheckpointError
from paimon_feed.spark.batch_log import BatchLog, BatchRecord
from paimon_feed.spark.offsets import FeedOffset


@pytest.fixture
def log(paimon) -> BatchLog:
    return BatchLog(CheckpointStore.for_table(paimon.create_append_table(), "etl"))


def test_a_record_is_read_back_as_written_beside_the_consumer_file(log):
    assert log.load() is None
    record = BatchRecord(9, FeedOffset.position(4).after_changes(9, mark="ab12"))
    log.save(record)
    assert log.load() == record
    assert log.path.endswith("/consumer/.paimon-feed-etl.batch")


def test_a_full_state_record_continues_only_a_pending_full_state():
    record = BatchRecord(5, FeedOffset.pending_full(5).after_full())
    assert record.continues(FeedOffset.pending_full(7))
    assert not record.continues(FeedOffset.position(6))


def test_a_damaged_record_names_the_file_and_what_to_do(log):
    log._store.save_side("batch", '{"batchId": -1, "end": {"snapshot": 3}}')
    with pytest.raises(CheckpointError, match=r"\.paimon-feed-etl\.batch.*delete it"):
        log.load()


def test_deleting_the_consumer_deletes_its_batch_record(paimon):
    """A new consumer of the same id must not replay the deleted one's batch in flight."""
    table = paimon.create_append_table()
    store = CheckpointStore.for_table(table, "etl")
    store.save(3)
    log = BatchLog(store)
    log.save(BatchRecord(9, FeedOffset.position(3).after_changes(9)))
    delete_consumer(table, "etl")
    assert log.load() is None
    assert store.load() is None
