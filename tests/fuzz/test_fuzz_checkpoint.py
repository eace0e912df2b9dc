"""Fuzzing the consumer-file reader: whatever bytes a consumer file holds, reading it gives the
stored position or a CheckpointError naming the file, never a crash and never a silent reset
(``None``, as if the consumer had no checkpoint); and a corrupt file is left as it was."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support import tables

from paimon_feed import CheckpointError, CheckpointStore
from paimon_feed.checkpoint import decode_checkpoint, encode_checkpoint

from . import fuzz_strategies
from .fuzz_strategies import MAX_SNAPSHOT_ID

BOM = b"\xef\xbb\xbf"

json_values = fuzz_strategies.json_values(max_leaves=8)
number_tokens = st.one_of(
    st.sampled_from(
        ["NaN", "Infinity", "-Infinity", "-1", "0", "-0", "1", "5.0", "1e3", "1E400", "0x10",
         "01", "+3", '"3"', "true", "null", "[]", "{}", "٣", "３", str(MAX_SNAPSHOT_ID),
         str(MAX_SNAPSHOT_ID + 1), "18446744073709551616"]
    ),
    st.integers(min_value=20, max_value=6000).map(lambda n: "9" * n),
    st.integers().map(str),
)


def _documents(number: str, pretty: bool) -> str:
    if pretty:
        return '{\n  "nextSnapshot" : %s\n}' % number
    return '{"nextSnapshot":%s}' % number


valid_texts = st.builds(
    _documents, st.integers(min_value=1, max_value=MAX_SNAPSHOT_ID).map(str), st.booleans()
)
mutated_texts = st.one_of(
    st.builds(_documents, number_tokens, st.booleans()),
    st.builds(lambda value: json.dumps({"nextSnapshot": value}), json_values),
    st.builds(json.dumps, json_values),
    st.builds(lambda text, cut: text[:cut], valid_texts, st.integers(min_value=0, max_value=40)),
    st.builds(lambda text, extra: text + extra, valid_texts, st.text(max_size=10)),
)
contents = st.one_of(
    st.binary(max_size=200),
    mutated_texts.map(lambda text: text.encode("utf-8")),
    valid_texts.map(lambda text: BOM + text.encode("utf-8")),
    st.builds(lambda text, junk: text.encode() + junk, valid_texts, st.binary(min_size=1)),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One consumer of a real pypaimon table; each example rewrites its file."""
    catalog = tables.catalog(str(tmp_path_factory.mktemp("fuzz-checkpoint") / "warehouse"))
    return CheckpointStore.for_table(tables.create_append_table(catalog), "fuzz")


def _write(store: CheckpointStore, content: bytes) -> None:
    os.makedirs(os.path.dirname(store.path), exist_ok=True)
    with open(store.path, "wb") as handle:
        handle.write(content)


def _read(store: CheckpointStore) -> bytes:
    with open(store.path, "rb") as handle:
        return handle.read()


@given(st.one_of(mutated_texts, valid_texts, st.text()))
@example("[" * 100_000)  # json.loads raised RecursionError
@example('{"nextSnapshot": ' + "9" * 5000 + "}")  # int over 4300 digits: ValueError, wrapped
@example('{"nextSnapshot": 9223372036854775808}')  # past Java's long: accepted before
@example('{"nextSnapshot": NaN}')
@example("\ufeff" + encode_checkpoint(3))
def test_decoding_any_text_gives_a_positive_long_or_a_checkpoint_error(text):
    try:
        value = decode_checkpoint(text, "consumer/consumer-fuzz")
    except CheckpointError as error:
        assert "consumer/consumer-fuzz" in str(error)
        return
    assert type(value) is int and 1 <= value <= MAX_SNAPSHOT_ID


@given(contents, st.integers(min_value=1, max_value=MAX_SNAPSHOT_ID))
@example(b"\xff\xfe{}", 3)  # not UTF-8: advance() raised UnicodeDecodeError
@example(b"[" * 100_000, 3)
@example(b'{"nextSnapshot": 9223372036854775808}', 3)
def test_a_consumer_file_of_any_bytes_is_read_or_refused_never_reset(store, content, next_id):
    _write(store, content)

    try:
        loaded = store.load()
    except CheckpointError as error:
        assert "consumer-fuzz" in str(error)
        loaded = None
    else:
        assert loaded is not None, "an existing consumer file was read as no checkpoint"
        assert 1 <= loaded <= MAX_SNAPSHOT_ID

    try:
        advanced = store.advance(next_id)
    except CheckpointError as error:
        assert "consumer-fuzz" in str(error)
        assert loaded is None
        assert _read(store) == content, "a corrupt consumer file was changed"
        return
    assert loaded is not None, "advance() overwrote a consumer file that load() refused"
    assert advanced == (next_id > loaded)
    assert store.load() == max(loaded, next_id)


@given(st.integers(min_value=1, max_value=MAX_SNAPSHOT_ID))
def test_saved_positions_read_back_in_java_format(store, next_id):
    store.save(next_id)
    assert store.load() == next_id
    assert _read(store) == encode_checkpoint(next_id).encode("utf-8")
    assert json.loads(_read(store)) == {"nextSnapshot": next_id}
    assert decode_checkpoint('{"nextSnapshot":%d}' % next_id, "x") == next_id


@given(st.one_of(st.integers(max_value=0), st.integers(min_value=MAX_SNAPSHOT_ID + 1),
                 st.booleans(), st.floats(), st.text(max_size=5), st.none()))
@example(2**63)  # Java cannot read it back: was written
@example(10**5000)  # the message's repr() raised ValueError
def test_saving_what_java_cannot_read_is_refused(store, bad):
    store.save(7)
    for write in (store.save, store.advance):
        with pytest.raises(CheckpointError, match="consumer fuzz"):
            write(bad)
    assert store.load() == 7
