"""The Lambda handler against a real moto_server: pypaimon commits to s3:// tables, the bucket's
notification configuration puts real S3 events on a real SQS queue, and each test builds the
Lambda SQS event from the messages it receives from that queue, then calls the handler in-process
with a fake context that has a deadline.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import socket
import threading
import time
from collections import Counter

import pytest
from s3_support import s3_catalog_options
from support import tables

from paimon_feed import CheckpointStore, ConfigurationError
from paimon_feed.aws import invocation, lambda_handler
from paimon_feed.aws.lambda_handler import InvocationFailedError, handler
from paimon_feed.notifiers.events import parse_lambda_event

HERE = os.path.dirname(os.path.abspath(__file__))
CONSUMER = "lambda-etl"
SECRET = "s3cr3t-never-logged-7f2c"


class FakeContext:
    """The part of the Lambda context the handler uses: a deadline."""

    function_name = "paimon-feed-test"
    aws_request_id = "test-request"

    def __init__(self, remaining_ms: int = 120_000) -> None:
        self.set_remaining(remaining_ms)

    def set_remaining(self, remaining_ms: int) -> None:
        self._deadline = time.monotonic() + remaining_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class Lake:
    """A warehouse on the moto bucket whose events land in the test's queue."""

    def __init__(self, queue) -> None:
        self.queue = queue
        self.server = queue.server
        self.options = s3_catalog_options(self.server, queue.bucket)
        self.options["fs.s3.accessKeySecret"] = SECRET  # moto does not check signatures
        self.warehouse = self.options.pop("warehouse")
        self.catalog = tables.catalog(self.warehouse, self.options)
        self.s3 = self.server.client("s3")

    def append_table(self, name: str):
        return tables.create_append_table(self.catalog, name)

    def pk_table(self, name: str):
        return tables.create_pk_table(self.catalog, name)

    def sqs_event(self) -> dict:
        """Every message now in the queue, as the SQS event Lambda would invoke us with."""
        sqs = self.server.client("sqs")
        records = []
        while True:
            messages = sqs.receive_message(
                QueueUrl=self.queue.queue_url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=0,
                AttributeNames=["All"],
            ).get("Messages", [])
            if not messages:
                break
            for message in messages:
                records.append(
                    {
                        "messageId": message["MessageId"],
                        "receiptHandle": message["ReceiptHandle"],
                        "body": message["Body"],
                        "attributes": message.get("Attributes", {}),
                        "messageAttributes": {},
                        "md5OfBody": message["MD5OfBody"],
                        "eventSource": "aws:sqs",
                        "eventSourceARN": self.queue.queue_arn,
                        "awsRegion": self.server.region,
                    }
                )
                sqs.delete_message(QueueUrl=self.queue.queue_url, ReceiptHandle=message["ReceiptHandle"])
        assert records, "the bucket notification produced no message"
        return {"Records": records}

    def checkpoint(self, table) -> int | None:
        return CheckpointStore.for_table(table, CONSUMER).load()

    def checkpoint_bytes(self, table) -> bytes:
        key = str(table.table_path).split("/", 3)[3] + f"/consumer/consumer-{CONSUMER}"
        return self.s3.get_object(Bucket=self.queue.bucket, Key=key)["Body"].read()


def ids_for_tables(event: dict, names: set[str]) -> set[str]:
    """The message ids of ``event`` with a snapshot hint for one of ``names`` (``db.table``)."""
    ids = set()
    for message_id, hints in parse_lambda_event(event):
        for hint in hints:
            db, table = hint.table_url.split("/")[-2:]
            if f"{db.removesuffix('.db')}.{table}" in names:
                ids.add(message_id)
    return ids


def only(event: dict, message_ids) -> dict:
    wanted = {item["itemIdentifier"] if isinstance(item, dict) else item for item in message_ids}
    return {"Records": [r for r in event["Records"] if r["messageId"] in wanted]}


def failures(response: dict) -> set[str]:
    return {item["itemIdentifier"] for item in response["batchItemFailures"]}


def expected_rows(table, commits) -> Counter:
    return Counter(tuple(sorted(row.items())) for n in commits for row in tables.rows_for(table, n))


def delivered_rows(processors, table_name: str) -> Counter:
    return Counter(row for d in processors.DELIVERED if d.table == table_name for row in d.rows)


@pytest.fixture
def processors(monkeypatch):
    monkeypatch.syspath_prepend(HERE)
    module = importlib.import_module("lambda_processors")
    module.reset()
    yield module
    module.reset()


@pytest.fixture
def lake(s3_queue, monkeypatch, processors) -> Lake:
    lake = Lake(s3_queue)
    monkeypatch.setenv("PAIMON_FEED_WAREHOUSE", lake.warehouse)
    monkeypatch.setenv("PAIMON_FEED_CATALOG_OPTIONS", json.dumps(lake.options))
    monkeypatch.setenv("PAIMON_FEED_CONSUMER_ID", CONSUMER)
    monkeypatch.setenv("PAIMON_FEED_PROCESSOR", "lambda_processors:record")
    for name in ("PAIMON_FEED_TABLES", "PAIMON_FEED_START", "PAIMON_FEED_DEADLINE_MARGIN_MS"):
        monkeypatch.delenv(name, raising=False)
    lambda_handler.clear_caches()
    yield lake
    lambda_handler.clear_caches()


# delivery ----------------------------------------------------------------------------------------
def test_real_notifications_deliver_every_row_exactly_once_across_repeated_invocations(
    lake, processors
):
    table = lake.append_table("db.events")
    for n in (1, 2):
        tables.commit(table, n)
    first_event = lake.sqs_event()
    # Most messages are data files, manifests, temp files: only snapshot files are hints.
    assert len(first_event["Records"]) > 2 * 5

    assert handler(first_event, FakeContext()) == {"batchItemFailures": []}
    assert [(d.kind, d.first_snapshot_id, d.snapshot_id) for d in processors.DELIVERED] == [
        ("full", 2, 2)
    ]

    for n in (3, 4):
        tables.commit(table, n)
    second_event = lake.sqs_event()
    assert handler(second_event, FakeContext()) == {"batchItemFailures": []}
    # Re-delivered events (SQS is at-least-once) find nothing new.
    assert handler(first_event, FakeContext()) == {"batchItemFailures": []}
    assert handler(second_event, FakeContext()) == {"batchItemFailures": []}

    assert [(d.kind, d.snapshot_id) for d in processors.DELIVERED] == [
        ("full", 2), ("delta", 3), ("delta", 4)
    ]
    assert delivered_rows(processors, "db.events") == expected_rows(table, [1, 2, 3, 4])
    assert lake.checkpoint_bytes(table) == b'{\n  "nextSnapshot" : 5\n}'


def test_primary_key_table_from_earliest_delivers_each_commits_changelog_once(
    lake, processors, monkeypatch
):
    monkeypatch.setenv("PAIMON_FEED_START", "earliest")
    table = lake.pk_table("db.orders")
    for n in (1, 2, 3):
        tables.commit(table, n)
    event = lake.sqs_event()
    assert handler(event, FakeContext()) == {"batchItemFailures": []}
    assert handler(event, FakeContext()) == {"batchItemFailures": []}
    assert [(d.kind, d.snapshot_id) for d in processors.DELIVERED] == [
        ("changelog", 1), ("changelog", 2), ("changelog", 3)
    ]
    for delivery, n in zip(processors.DELIVERED, (1, 2, 3)):
        assert Counter(delivery.rows) == expected_rows(table, [n])
    assert lake.checkpoint(table) == 4


def test_direct_s3_and_eventbridge_invocations_deliver_too(lake, processors):
    table = lake.append_table("db.events")
    tables.commit(table, 1)
    snapshot_bodies = [
        r["body"] for r in lake.sqs_event()["Records"] if "snapshot%2Fsnapshot-" in r["body"]
    ]
    assert len(snapshot_bodies) == 1
    direct_s3 = json.loads(snapshot_bodies[0])  # what S3 -> Lambda would send
    assert handler(direct_s3, FakeContext()) == {"batchItemFailures": []}

    tables.commit(table, 2)
    key = str(table.table_path).split("/", 3)[3] + "/snapshot/snapshot-2"
    eventbridge = {
        "version": "0",
        "source": "aws.s3",
        "detail-type": "Object Created",
        "detail": {"bucket": {"name": lake.queue.bucket}, "object": {"key": key}},
    }
    assert handler(eventbridge, FakeContext()) == {"batchItemFailures": []}
    assert [(d.kind, d.snapshot_id) for d in processors.DELIVERED] == [("full", 1), ("delta", 2)]

    tables.commit(table, 3)
    processors.FAIL_TABLES.add("db.events")
    with pytest.raises(InvocationFailedError, match="db.events: failed"):
        handler(eventbridge, FakeContext())
    assert lake.checkpoint(table) == 3


# concurrency -------------------------------------------------------------------------------------
@pytest.mark.parametrize("checkpointed", [False, True], ids=["new-consumer", "checkpointed"])
def test_two_concurrent_invocations_for_one_table_lose_no_row_and_never_rewind(
    lake, processors, monkeypatch, caplog, checkpointed
):
    monkeypatch.setenv("PAIMON_FEED_START", "earliest")
    table = lake.append_table("db.events")
    commits = list(range(1, 7))
    for n in commits:
        tables.commit(table, n)
    event = lake.sqs_event()
    if checkpointed:  # both load position 1 and race over batch 1, not over the start
        CheckpointStore.for_table(table, CONSUMER).save(1)
    processors.ON_BATCH.append(lambda delivery: time.sleep(0.05))  # widen the race

    seen: list[int] = []
    stop = threading.Event()

    barrier = threading.Barrier(2)
    responses: dict[str, dict] = {}
    errors: list[BaseException] = []

    def watch():
        reader = CheckpointStore.for_table(table, CONSUMER)
        try:
            while not stop.is_set():
                value = reader.load()
                if value is not None:
                    seen.append(value)
        except BaseException as exc:  # a torn or failed read fails the test
            errors.append(exc)

    def invoke(name):
        try:
            barrier.wait()
            responses[name] = handler(event, FakeContext())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    caplog.set_level(logging.DEBUG, logger="paimon_feed.checkpoint")
    watcher = threading.Thread(target=watch)
    watcher.start()
    invocations = [threading.Thread(target=invoke, args=(n,), name=n) for n in ("inv-a", "inv-b")]
    for thread in invocations:
        thread.start()
    for thread in invocations:
        thread.join(120)
    stop.set()
    watcher.join()

    assert errors == []
    assert responses == {"inv-a": {"batchItemFailures": []}, "inv-b": {"batchItemFailures": []}}
    # No row lost; the checkpoint ends past the last snapshot and never moved backwards.
    assert set(delivered_rows(processors, "db.events")) == set(expected_rows(table, commits))
    assert lake.checkpoint(table) == 7
    assert seen == sorted(seen), "the checkpoint moved backwards"
    # Every batch delivered twice was delivered by both invocations, and one of them then found
    # its checkpoint write already done by the other (advance() returned False): duplicates come
    # only from that race, never from one invocation repeating itself.
    per_snapshot = Counter(d.snapshot_id for d in processors.DELIVERED)
    lost_races = Counter(
        int(r.getMessage().rsplit(" ", 1)[1])
        for r in caplog.records
        if "not moving it to" in r.getMessage()
    )
    for snapshot_id, count in per_snapshot.items():
        assert count <= 2
        threads = {d.thread for d in processors.DELIVERED if d.snapshot_id == snapshot_id}
        assert len(threads) == count, f"one invocation delivered snapshot {snapshot_id} twice"
        if count == 2:
            assert lost_races[snapshot_id + 1] >= 1, f"duplicate of {snapshot_id} without a lost race"
    # The loser of a race leaves the table to the winner: at most one duplicate, not a replay.
    duplicates = sum(count - 1 for count in per_snapshot.values())
    assert duplicates <= 1, per_snapshot
    print(f"concurrent invocations: {len(processors.DELIVERED)} deliveries, {duplicates} duplicates")


# failures ----------------------------------------------------------------------------------------
def test_failing_processor_reports_only_its_tables_messages_and_other_tables_commit(
    lake, processors
):
    bad = lake.append_table("db.bad")
    good = lake.append_table("db.good")
    for n in (1, 2):
        tables.commit(bad, n)  # mentioned first: its failure must not block db.good
        tables.commit(good, n)
    event = lake.sqs_event()
    processors.FAIL_TABLES.add("db.bad")

    response = handler(event, FakeContext())
    bad_ids = ids_for_tables(event, {"db.bad"})
    assert bad_ids and failures(response) == bad_ids
    assert lake.checkpoint(good) == 3
    assert lake.checkpoint(bad) is None
    assert delivered_rows(processors, "db.good") == expected_rows(good, [1, 2])

    processors.FAIL_TABLES.clear()
    assert handler(only(event, response["batchItemFailures"]), FakeContext()) == {
        "batchItemFailures": []
    }
    assert delivered_rows(processors, "db.bad") == expected_rows(bad, [1, 2])
    assert delivered_rows(processors, "db.good") == expected_rows(good, [1, 2])
    assert lake.checkpoint(bad) == 3


def test_expired_snapshot_fails_the_tables_messages_and_keeps_the_checkpoint(
    lake, processors, caplog
):
    table = lake.append_table("db.events")
    for n in (1, 2, 3):
        tables.commit(table, n)
    event = lake.sqs_event()
    CheckpointStore.for_table(table, CONSUMER).save(2)
    prefix = str(table.table_path).split("/", 3)[3] + "/snapshot/"
    lake.s3.delete_object(Bucket=lake.queue.bucket, Key=prefix + "snapshot-2")
    lake.s3.put_object(Bucket=lake.queue.bucket, Key=prefix + "EARLIEST", Body=b"3")

    response = handler(event, FakeContext())
    assert failures(response) == ids_for_tables(event, {"db.events"})
    assert processors.DELIVERED == []
    assert lake.checkpoint(table) == 2
    assert "snapshot 2 expired before it was read" in caplog.text


def test_deadline_reports_unfinished_tables_and_a_retry_finishes(lake, processors, monkeypatch):
    monkeypatch.setenv("PAIMON_FEED_START", "earliest")
    monkeypatch.setenv("PAIMON_FEED_DEADLINE_MARGIN_MS", "5000")
    first = lake.append_table("db.first")
    second = lake.append_table("db.second")
    for n in (1, 2):
        tables.commit(first, n)
    tables.commit(second, 1)
    event = lake.sqs_event()
    context = FakeContext(60_000)
    # The first batch takes (almost) all the time that was left.
    processors.ON_BATCH.append(lambda delivery: context.set_remaining(1_000))

    response = handler(event, context)
    assert [(d.table, d.snapshot_id) for d in processors.DELIVERED] == [("db.first", 1)]
    assert failures(response) == ids_for_tables(event, {"db.first", "db.second"})
    assert lake.checkpoint(first) == 2  # consistent: exactly what was delivered
    assert lake.checkpoint(second) is None

    processors.ON_BATCH.clear()
    retry = handler(only(event, response["batchItemFailures"]), FakeContext())
    assert retry == {"batchItemFailures": []}
    assert [(d.table, d.snapshot_id) for d in processors.DELIVERED] == [
        ("db.first", 1), ("db.first", 2), ("db.second", 1)
    ]
    assert lake.checkpoint(first) == 3 and lake.checkpoint(second) == 2


def test_malformed_messages_fail_and_foreign_events_are_skipped(
    lake, processors, monkeypatch, caplog
):
    monkeypatch.setenv("PAIMON_FEED_TABLES", "db.events")
    caplog.set_level(logging.INFO, logger="paimon_feed")
    events = lake.append_table("db.events")
    other = lake.append_table("db.other")
    tables.commit(events, 1)
    tables.commit(other, 1)
    event = lake.sqs_event()
    foreign = {
        "Records": [
            {
                "eventSource": "aws:s3",
                "eventName": "ObjectCreated:Copy",
                "s3": {
                    "bucket": {"name": "some-other-bucket"},
                    "object": {"key": "wh/db.db/events/snapshot/snapshot-1"},
                },
            }
        ]
    }
    event["Records"] += [
        {"messageId": "bad-1", "body": "not json", "eventSource": "aws:sqs"},
        {"messageId": "foreign-1", "body": json.dumps(foreign), "eventSource": "aws:sqs"},
    ]

    response = handler(event, FakeContext())
    assert response == {"batchItemFailures": [{"itemIdentifier": "bad-1"}]}
    assert "malformed message bad-1" in caplog.text
    assert "s3://some-other-bucket/wh/db.db/events: outside the warehouse" in caplog.text
    assert "table db.other is not in PAIMON_FEED_TABLES" in caplog.text
    assert [(d.table, d.snapshot_id) for d in processors.DELIVERED] == [("db.events", 1)]
    assert lake.checkpoint(other) is None


def test_malformed_direct_invocation_raises(lake):
    with pytest.raises(Exception, match="unknown envelope"):
        handler({"hello": "world"}, FakeContext())


# configuration -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("PAIMON_FEED_WAREHOUSE", None, "PAIMON_FEED_WAREHOUSE is not set"),
        ("PAIMON_FEED_WAREHOUSE", "relative/path", "PAIMON_FEED_WAREHOUSE must be a warehouse URL"),
        ("PAIMON_FEED_CONSUMER_ID", None, "PAIMON_FEED_CONSUMER_ID is not set"),
        ("PAIMON_FEED_CONSUMER_ID", "../up", "PAIMON_FEED_CONSUMER_ID: invalid consumer id"),
        ("PAIMON_FEED_PROCESSOR", "", "PAIMON_FEED_PROCESSOR is not set"),
        ("PAIMON_FEED_PROCESSOR", "no_colon", "PAIMON_FEED_PROCESSOR must be 'module:function'"),
        ("PAIMON_FEED_PROCESSOR", "no_such_module_xyz:f", "PAIMON_FEED_PROCESSOR=.*cannot import"),
        ("PAIMON_FEED_PROCESSOR", "lambda_processors:nope", "PAIMON_FEED_PROCESSOR=.*no attribute"),
        ("PAIMON_FEED_PROCESSOR", "lambda_processors:NOT_CALLABLE", "PAIMON_FEED_PROCESSOR=.*not a function"),
        ("PAIMON_FEED_CATALOG_OPTIONS", "{not json " + SECRET, "PAIMON_FEED_CATALOG_OPTIONS is not valid JSON"),
        ("PAIMON_FEED_CATALOG_OPTIONS", "[1, 2]", "PAIMON_FEED_CATALOG_OPTIONS must be a JSON object"),
        ("PAIMON_FEED_CATALOG_OPTIONS", '{"a": {"b": 1}}', "PAIMON_FEED_CATALOG_OPTIONS: option 'a'"),
        ("PAIMON_FEED_TABLES", "db.ok, not-a-name", "PAIMON_FEED_TABLES: invalid table name"),
        ("PAIMON_FEED_START", "yesterday", "PAIMON_FEED_START: invalid start position"),
        ("PAIMON_FEED_DEADLINE_MARGIN_MS", "-5", "PAIMON_FEED_DEADLINE_MARGIN_MS: invalid duration '-5'"),
        ("PAIMON_FEED_DEADLINE_MARGIN", "10x", r"PAIMON_FEED_DEADLINE_MARGIN: invalid duration '10x'.*in seconds"),
    ],
)
def test_configuration_errors_name_the_variable(lake, monkeypatch, variable, value, message):
    if value is None:
        monkeypatch.delenv(variable)
    else:
        monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError, match=message) as error:
        handler({"Records": []}, FakeContext())
    assert SECRET not in str(error.value)


def test_secrets_are_never_logged_and_warm_invocations_reuse_the_catalog(
    lake, processors, monkeypatch, caplog
):
    opened = []
    real_open_catalog = invocation.open_catalog  # the warm-start cache lives there
    monkeypatch.setattr(
        invocation, "open_catalog", lambda *a, **k: opened.append(1) or real_open_catalog(*a, **k)
    )
    caplog.set_level(logging.DEBUG)
    table = lake.append_table("db.events")
    tables.commit(table, 1)
    event = lake.sqs_event()
    handler(event, FakeContext())
    tables.commit(table, 2)
    handler(lake.sqs_event(), FakeContext())
    assert [(d.kind, d.snapshot_id) for d in processors.DELIVERED] == [("full", 1), ("delta", 2)]
    assert opened == [1]
    assert caplog.records and SECRET not in caplog.text
    config = lambda_handler.HandlerConfig.from_env()
    assert SECRET not in repr(config) and SECRET not in json.dumps(config.describe())


def test_an_unreachable_s3_endpoint_fails_the_tables_messages_naming_it(lake, processors, monkeypatch, caplog):
    table = lake.append_table("db.events")
    tables.commit(table, 1)
    event = lake.sqs_event()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("PAIMON_FEED_CATALOG_OPTIONS", json.dumps({**lake.options, "fs.s3.endpoint": endpoint}))
    lambda_handler.clear_caches()
    response = handler(event, FakeContext())
    assert failures(response) == ids_for_tables(event, {"db.events"}) != set()
    assert f"cannot reach the S3 endpoint {endpoint}" in caplog.text
    assert "PAIMON_FEED_CATALOG_OPTIONS" in caplog.text and processors.DELIVERED == []


@pytest.mark.timeout(90)
@pytest.mark.parametrize("variable", ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"])
def test_the_endpoint_from_the_environment_reaches_table_reads_and_checkpoints(
    lake, processors, monkeypatch, variable
):
    table = lake.append_table("db.events")
    tables.commit(table, 1)
    event = lake.sqs_event()
    # As a function configured by its environment: no endpoint and no path-style option.
    options = {k: v for k, v in lake.options.items() if k not in ("fs.s3.endpoint", "fs.s3.path-style-access")}
    monkeypatch.setenv("PAIMON_FEED_CATALOG_OPTIONS", json.dumps(options))
    monkeypatch.setenv(variable, lake.server.endpoint_url)
    lambda_handler.clear_caches()
    assert handler(event, FakeContext()) == {"batchItemFailures": []}
    assert delivered_rows(processors, "db.events") == expected_rows(table, [1])
    assert lake.checkpoint_bytes(table) == b'{\n  "nextSnapshot" : 2\n}'
