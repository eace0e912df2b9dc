"""Consumer checkpoint files: Java Paimon's format, atomic writes, clear errors."""

import json
import os

import pytest

from paimon_feed import CheckpointError, CheckpointStore, InvalidConsumerIdError
from paimon_feed.checkpoint import decode_checkpoint, encode_checkpoint


def test_round_trip_and_java_format(append_table):
    store = CheckpointStore.for_table(append_table, "job-1")
    assert store.load() is None
    store.save(17)
    assert store.load() == 17
    with open(store.path, "rb") as handle:
        assert handle.read() == b'{\n  "nextSnapshot" : 17\n}'
    assert json.loads(encode_checkpoint(5)) == {"nextSnapshot": 5}
    # Java's compact form reads too
    assert decode_checkpoint('{"nextSnapshot":8}', "x") == 8


def test_saving_leaves_no_temp_files_behind(append_table):
    store = CheckpointStore.for_table(append_table, "tidy")
    for n in range(1, 20):
        store.save(n)
    assert os.listdir(os.path.dirname(store.path)) == ["consumer-tidy"]


@pytest.mark.parametrize(
    "text", ["", "{", "[]", '{"next": 3}', '{"nextSnapshot": "3"}', '{"nextSnapshot": 0}', '{"nextSnapshot": true}']
)
def test_corrupt_files_are_checkpoint_errors_naming_the_file(append_table, text):
    store = CheckpointStore.for_table(append_table, "c")
    os.makedirs(os.path.dirname(store.path))
    with open(store.path, "w") as handle:
        handle.write(text)
    with pytest.raises(CheckpointError, match="consumer-c"):
        store.load()


@pytest.mark.parametrize("consumer_id", ["..", "../x", "a\\b", "-x", "é", None, 5])
def test_unsafe_ids(append_table, consumer_id):
    with pytest.raises(InvalidConsumerIdError):
        CheckpointStore.for_table(append_table, consumer_id)


def test_saving_bad_positions_is_refused(append_table):
    store = CheckpointStore.for_table(append_table, "c")
    for bad in (0, -1, "3", True):
        with pytest.raises(CheckpointError):
            store.save(bad)
    assert store.load() is None
