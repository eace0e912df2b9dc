"""CheckpointStore.advance: never backwards, no lost progress with concurrent writers.

On S3 (a real moto_server) it is a compare-and-swap with conditional writes (If-Match /
If-None-Match); on local files a read-compare-rename under a directory flock. Races are forced
deterministically where the test needs a particular interleaving, and run for real with threads
and processes where the claim is "whatever the interleaving".
"""

from __future__ import annotations

import multiprocessing
import os
import random
import re
import threading

import pytest
from botocore.exceptions import ClientError
from s3_support import create_table, paimon_catalog, s3_catalog_options

from paimon_feed import CheckpointConflictError, CheckpointError, CheckpointStore
from paimon_feed._s3 import s3_client_for_options


@pytest.fixture
def s3_table(s3_queue):
    catalog = paimon_catalog(s3_queue.server, s3_queue.bucket)
    return create_table(catalog, "db.ckpt")


@pytest.fixture
def s3(s3_queue):
    return s3_queue.server.client("s3")


def consumer_key(table, consumer_id: str) -> str:
    return str(table.table_path).split("/", 3)[3] + f"/consumer/consumer-{consumer_id}"


# moto's conditional writes (what the compare-and-swap relies on) ------------------------------
def test_moto_server_enforces_if_match_and_if_none_match_on_put_object(s3_queue, s3):
    bucket = s3_queue.bucket
    first = s3.put_object(Bucket=bucket, Key="k", Body=b"1", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError) as exists:
        s3.put_object(Bucket=bucket, Key="k", Body=b"2", IfNoneMatch="*")
    assert exists.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert exists.value.response["Error"]["Code"] == "PreconditionFailed"

    second = s3.put_object(Bucket=bucket, Key="k", Body=b"2", IfMatch=first)["ETag"]
    with pytest.raises(ClientError) as stale:
        s3.put_object(Bucket=bucket, Key="k", Body=b"3", IfMatch=first)
    assert stale.value.response["Error"]["Code"] == "PreconditionFailed"
    with pytest.raises(ClientError) as missing:
        s3.put_object(Bucket=bucket, Key="absent", Body=b"3", IfMatch=second)
    assert missing.value.response["Error"]["Code"] == "NoSuchKey"
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"2"


# single writer ---------------------------------------------------------------------------------
def test_advance_on_s3_writes_java_bytes_and_only_moves_forward(s3_table, s3, s3_queue):
    store = CheckpointStore.for_table(s3_table, "etl")
    assert store.advance(3) is True  # created with If-None-Match
    assert store.advance(7) is True  # replaced with If-Match
    assert store.advance(5) is False
    assert store.advance(7) is False
    assert store.load() == 7
    raw = s3.get_object(Bucket=s3_queue.bucket, Key=consumer_key(s3_table, "etl"))["Body"].read()
    assert raw == b'{\n  "nextSnapshot" : 7\n}'


def test_save_on_s3_is_one_put_of_java_bytes(s3_table, s3, s3_queue):
    store = CheckpointStore.for_table(s3_table, "etl")
    log = s3_queue.server.log_path
    offset = log.stat().st_size
    store.save(9)
    store.save(4)  # save rewinds on purpose
    requests = re.findall(r'"(?:\x1b\[[0-9;]*m)?([A-Z]+) (\S*/consumer\S*) HTTP', log.read_bytes()[offset:].decode())
    assert [method for method, _ in requests] == ["PUT", "PUT"], requests
    raw = s3.get_object(Bucket=s3_queue.bucket, Key=consumer_key(s3_table, "etl"))["Body"].read()
    assert raw == b'{\n  "nextSnapshot" : 4\n}'
    assert store.load() == 4


def test_s3_client_comes_from_the_tables_catalog_options(s3_table, s3_queue):
    options = s3_catalog_options(s3_queue.server, s3_queue.bucket)
    client = s3_client_for_options(options)
    assert client.meta.endpoint_url == s3_queue.server.endpoint_url
    assert client.meta.config.s3["addressing_style"] == "path"
    assert s3_client_for_options(dict(options)) is client  # cached per settings
    # for_table finds the same options on the table's file IO without being told
    assert CheckpointStore.for_table(s3_table, "etl")._client() is client


def test_advance_on_s3_refuses_to_overwrite_a_corrupt_file(s3_table, s3, s3_queue):
    s3.put_object(Bucket=s3_queue.bucket, Key=consumer_key(s3_table, "bad"), Body=b"{oops")
    with pytest.raises(CheckpointError, match="corrupt consumer file .*consumer-bad"):
        CheckpointStore.for_table(s3_table, "bad").advance(4)
    assert s3.get_object(Bucket=s3_queue.bucket, Key=consumer_key(s3_table, "bad"))[
        "Body"
    ].read() == b"{oops"


# races -------------------------------------------------------------------------------------------
def _interleave(store: CheckpointStore, between_read_and_write) -> list:
    """Make ``store`` run ``between_read_and_write()`` right after each of its S3 reads."""
    reads = []
    original = store._read_s3

    def read(client, bucket, key):
        result = original(client, bucket, key)
        reads.append(result[0])
        between_read_and_write(len(reads))
        return result

    store._read_s3 = read
    return reads


def test_stale_writer_loses_the_race_and_cannot_move_the_checkpoint_backwards(s3_table):
    stale = CheckpointStore.for_table(s3_table, "etl")
    fresh = CheckpointStore.for_table(s3_table, "etl")
    stale.advance(2)
    # stale reads 2, then fresh moves it to 9 before stale writes 5 with the old ETag.
    reads = _interleave(stale, lambda n: fresh.advance(9) if n == 1 else None)
    assert stale.advance(5) is False
    assert reads == [2, 9]  # lost with 412, read again, saw 9 >= 5 and gave up quietly
    assert stale.load() == 9


def test_writer_that_loses_the_race_to_a_lower_value_retries_and_wins(s3_table):
    first = CheckpointStore.for_table(s3_table, "etl")
    other = CheckpointStore.for_table(s3_table, "etl")
    reads = _interleave(first, lambda n: other.advance(4) if n == 1 else None)
    assert first.advance(6) is True  # the file did not exist at its first read
    assert reads == [None, 4]  # If-None-Match lost to `other`, retried with If-Match
    assert first.load() == 6


def test_writer_that_keeps_losing_raises_conflict_and_leaves_the_other_writes(s3_table):
    loser = CheckpointStore.for_table(s3_table, "etl")
    loser.max_attempts = 3
    rewinder = CheckpointStore.for_table(s3_table, "etl")
    rewinder.save(1)
    # Someone keeps rewriting a lower position between every read and write.
    _interleave(loser, lambda n: rewinder.save(1 + n % 2))
    with pytest.raises(CheckpointConflictError, match="consumer-etl lost 3 races"):
        loser.advance(10)
    assert loser.load() in (1, 2)


def test_concurrent_s3_writers_end_at_the_maximum_and_never_go_backwards(s3_table):
    targets = list(range(2, 42))
    random.Random(7).shuffle(targets)
    chunks = [targets[i::6] for i in range(6)]
    seen: list[int] = []
    stop = threading.Event()
    errors: list[BaseException] = []
    read = threading.Condition()  # guards ``reads``, the watcher's reads so far
    reads = 0

    def watch():
        nonlocal reads
        reader = CheckpointStore.for_table(s3_table, "etl")
        try:
            while not stop.is_set():
                value = reader.load()
                if value is not None:
                    seen.append(value)
                with read:
                    reads += 1
                    read.notify_all()
        except BaseException as exc:  # a torn or failed read fails the test
            errors.append(exc)

    def write(chunk):
        store = CheckpointStore.for_table(s3_table, "etl")
        store.max_attempts = 50
        try:
            for target in chunk:
                with read:  # two reads between writes, however loaded the machine is
                    before = reads
                    read.wait_for(lambda: reads >= before + 2 or stop.is_set(), timeout=10)
                store.advance(target)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    watcher = threading.Thread(target=watch)
    watcher.start()
    writers = [threading.Thread(target=write, args=(chunk,)) for chunk in chunks]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    watcher.join()
    assert errors == []
    assert len(seen) > 10
    assert CheckpointStore.for_table(s3_table, "etl").load() == 41
    assert seen == sorted(seen), "the checkpoint moved backwards"


# local files -------------------------------------------------------------------------------------
def test_local_advance_only_moves_forward_and_leaves_no_extra_files(append_table):
    store = CheckpointStore.for_table(append_table, "tidy")
    assert store.advance(4) is True
    assert store.advance(3) is False
    assert store.advance(9) is True
    assert store.load() == 9
    with open(store.path, "rb") as handle:
        assert handle.read() == b'{\n  "nextSnapshot" : 9\n}'
    assert os.listdir(os.path.dirname(store.path)) == ["consumer-tidy"]


def test_local_advance_refuses_bad_positions_and_corrupt_files(append_table):
    store = CheckpointStore.for_table(append_table, "c")
    for bad in (0, -1, "3", True):
        with pytest.raises(CheckpointError):
            store.advance(bad)
    os.makedirs(os.path.dirname(store.path))
    with open(store.path, "w") as handle:
        handle.write("[]")
    with pytest.raises(CheckpointError, match="consumer-c"):
        store.advance(2)


def _advance_many(table_path: str, targets: list[int]) -> None:
    store = CheckpointStore(None, table_path, "etl")
    for target in targets:
        store.advance(target)


def test_concurrent_local_writers_in_processes_end_at_the_maximum(append_table):
    targets = list(range(2, 202))
    random.Random(3).shuffle(targets)
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_advance_many, args=(str(append_table.table_path), targets[i::4]))
        for i in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    assert CheckpointStore.for_table(append_table, "etl").load() == 201
