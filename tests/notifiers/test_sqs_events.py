"""Parsing S3 event notifications (direct, SNS, EventBridge, Lambda) into snapshot hints.

The ``payloads/`` files are real message bodies a moto server queued while pypaimon created and
committed ``s3://`` tables (see ``capture_payloads.py``); the hand-written envelopes follow the
shapes AWS documents for S3 event notifications, SNS notifications and EventBridge S3 events.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from paimon_feed.errors import FeedError
from paimon_feed.notifiers.base import SnapshotHint, normalize_table_url
from paimon_feed.notifiers.events import (
    MAX_REASON_CHARS,
    MalformedMessageError,
    hints_from_event,
    parse_lambda_event,
    parse_message,
    snapshot_hint_for_object,
)

PAYLOADS = Path(__file__).parent / "payloads"
CAPTURED = sorted(PAYLOADS.glob("*.json"))


def load(name: str) -> dict:
    return json.loads((PAYLOADS / name).read_text())


def s3_record(key: str, *, bucket: str = "lake", event: str = "ObjectCreated:Put") -> dict:
    """One record as S3 sends it: the key form-URL-encoded."""
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": "us-east-1",
        "eventTime": "2024-05-01T12:00:00.000Z",
        "eventName": event,
        "userIdentity": {"principalId": "AWS:AIDAEXAMPLE"},
        "requestParameters": {"sourceIPAddress": "10.0.0.1"},
        "responseElements": {"x-amz-request-id": "C3D13FE58DE4C810"},
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": "paimon-snapshots",
            "bucket": {
                "name": bucket,
                "ownerIdentity": {"principalId": "A3NL1KOZZKExample"},
                "arn": f"arn:aws:s3:::{bucket}",
            },
            "object": {"key": key, "size": 600, "eTag": "d41d8cd9", "sequencer": "0055AED6DC"},
        },
    }


def s3_body(*keys: str, bucket: str = "lake", event: str = "ObjectCreated:Put") -> str:
    return json.dumps({"Records": [s3_record(k, bucket=bucket, event=event) for k in keys]})


def sns_body(message: str) -> str:
    """An SNS notification as delivered to SQS without raw message delivery."""
    return json.dumps(
        {
            "Type": "Notification",
            "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
            "TopicArn": "arn:aws:sns:us-east-1:123456789012:lake-events",
            "Subject": "Amazon S3 Notification",
            "Message": message,
            "Timestamp": "2024-05-01T12:00:00.123Z",
            "SignatureVersion": "1",
            "Signature": "EXAMPLE",
            "SigningCertURL": "https://sns.us-east-1.amazonaws.com/cert.pem",
            "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
        }
    )


def eventbridge_body(key: str, *, bucket: str = "lake", detail_type: str = "Object Created") -> str:
    """An S3 event delivered by EventBridge: the key is not URL-encoded."""
    return json.dumps(
        {
            "version": "0",
            "id": "17793124-05d4-b198-2fde-7ededc63b103",
            "detail-type": detail_type,
            "source": "aws.s3",
            "account": "123456789012",
            "time": "2024-05-01T12:00:00Z",
            "region": "us-east-1",
            "resources": [f"arn:aws:s3:::{bucket}"],
            "detail": {
                "version": "0",
                "bucket": {"name": bucket},
                "object": {"key": key, "size": 600, "etag": "d41d8cd9", "sequencer": "0055AED6"},
                "request-id": "N4N7GDK58NMKJ12R",
                "requester": "123456789012",
                "source-ip-address": "10.0.0.1",
                "reason": "CopyObject",
            },
        }
    )


def ids_by_table(hints: list[SnapshotHint]) -> dict[str, list[int | None]]:
    found: dict[str, list[int | None]] = {}
    for hint in hints:
        found.setdefault(hint.table_url, []).append(hint.snapshot_id)
    return found


# captured payloads -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", CAPTURED, ids=[p.stem for p in CAPTURED])
def test_captured_commits_give_one_hint_per_committed_snapshot_and_nothing_else(path):
    captured = json.loads(path.read_text())
    hints = [hint for body in captured["bodies"] for hint in parse_message(body)]

    assert ids_by_table(hints) == captured["committed_snapshots"]
    assert {hint.source for hint in hints} == {"sqs"}


def test_captured_payloads_cover_every_envelope():
    assert {p.stem for p in CAPTURED} >= {
        "s3_direct_commits",
        "s3_direct_unicode_names",
        "sns_envelope_commits",
        "sns_raw_commits",
        "eventbridge_commits",
    }


def test_pypaimon_commits_a_snapshot_on_s3_as_a_copy_of_a_temp_file():
    # pypaimon writes .snapshot-N.<uuid>.tmp, then renames it; S3 renames by CopyObject and
    # DeleteObject. So the hint comes from ObjectCreated:Copy, never from a suffix-filterable Put.
    captured = load("s3_direct_commits.json")
    events_by_name: dict[str, set[str]] = {}
    for body in captured["bodies"]:
        for record in json.loads(body).get("Records", []):
            key = record["s3"]["object"]["key"]
            name = key.rsplit("%2F", 1)[-1]
            if name.startswith(("snapshot-", ".snapshot-")):
                kind = "snapshot" if name.startswith("snapshot-") else "temp"
                events_by_name.setdefault(kind, set()).add(record["eventName"])

    assert events_by_name["snapshot"] == {"ObjectCreated:Copy"}
    assert "ObjectRemoved:Delete" in events_by_name["temp"]


def test_captured_s3_test_event_gives_no_hint():
    first = load("s3_direct_commits.json")["bodies"][0]

    assert json.loads(first)["Event"] == "s3:TestEvent"
    assert parse_message(first) == []


def test_captured_unicode_names_decode_to_the_table_path_pypaimon_uses():
    captured = load("s3_direct_unicode_names.json")
    raw_keys = [
        json.loads(body)["Records"][0]["s3"]["object"]["key"] for body in captured["bodies"]
    ]

    assert any("d%C3%A9_db.db%2Ft%C3%A9st" in key for key in raw_keys)
    assert set(captured["committed_snapshots"]) == {
        "s3://feed-capture-unicode/wh/dé_db.db/tést"
    }


def test_captured_bucket_filter_keeps_only_the_allowed_bucket():
    captured = load("s3_direct_commits.json")
    bodies = captured["bodies"]
    allowed = [h for b in bodies for h in parse_message(b, buckets={captured["bucket"]})]
    foreign = [h for b in bodies for h in parse_message(b, buckets={"other-bucket"})]

    assert len(allowed) == 6
    assert foreign == []


# direct S3 -> SQS --------------------------------------------------------------------------------
def test_snapshot_file_gives_hint_with_table_url_and_snapshot_id():
    [hint] = parse_message(s3_body("wh/sales.db/orders/snapshot/snapshot-42"), detected_at=12.5)

    assert hint == SnapshotHint("s3://lake/wh/sales.db/orders", 42, "sqs", 12.5)


@pytest.mark.parametrize(
    ("encoded_key", "table_url"),
    [
        ("wh%2Fdb.db%2Ft%2Fsnapshot%2Fsnapshot-1", "s3://lake/wh/db.db/t"),
        ("wh/my+db.db/t/snapshot/snapshot-1", "s3://lake/wh/my db.db/t"),
        ("wh/db.db/t%C3%A9st/snapshot/snapshot-1", "s3://lake/wh/db.db/tést"),
        ("wh/db.db/a%2Bb/snapshot/snapshot-1", "s3://lake/wh/db.db/a+b"),
        ("wh/%E6%95%B0%E6%8D%AE.db/t/snapshot/snapshot-1", "s3://lake/wh/数据.db/t"),
        ("snapshot/snapshot-1", "s3://lake"),
    ],
    ids=["slash-encoded", "plus-is-space", "utf8", "encoded-plus", "cjk", "table-at-bucket-root"],
)
def test_s3_keys_are_form_url_decoded(encoded_key, table_url):
    [hint] = parse_message(s3_body(encoded_key))

    assert hint.table_url == table_url
    assert hint.snapshot_id == 1


def test_keys_encoded_like_s3_round_trip_for_any_table_name():
    name = "wh/dé db.db/t+1 ü/snapshot/snapshot-9"

    [hint] = parse_message(s3_body(quote_plus(name, safe="/")))

    assert hint.table_url == "s3://lake/wh/dé db.db/t+1 ü"


@pytest.mark.parametrize(
    "key",
    [
        "wh/db.db/t/snapshot/.snapshot-3.5b6dbf9a-2bd5-4c50-b5e4-686e614bfd44.tmp",
        "wh/db.db/t/snapshot/LATEST",
        "wh/db.db/t/snapshot/EARLIEST",
        "wh/db.db/t/snapshot/",
        "wh/db.db/t/snapshot/snapshot-3/",
        "wh/db.db/t/snapshot/snapshot-",
        "wh/db.db/t/snapshot/snapshot-x1",
        "wh/db.db/t/snapshot/snapshot-1.json",
        "wh/db.db/t/snapshot/snapshot-%D9%A1",  # an Arabic-Indic digit one
        "wh/db.db/t/snapshot/snapshot-1%0A",
        "wh/db.db/t/bucket-0/data-24aeb68a-fb01-4484-991c-278d8df5d3c7-0.parquet",
        "wh/db.db/t/manifest/manifest-0a1d5bc4-da40-44f2-ab4c-3d4eccc939a0-0",
        "wh/db.db/t/manifest/manifest-list-3193de04-5e2a-4ed1-9c4b-811c632f632b-1",
        "wh/db.db/t/schema/schema-0",
        "wh/db.db/t/changelog/changelog-3",
        "wh/db.db/t/consumer/consumer-etl",
        "wh/db.db/t/mysnapshot/snapshot-1",
        "wh/db.db/t/snapshot-1",
        "wh/",
    ],
)
def test_files_other_than_committed_snapshots_give_no_hint(key):
    assert parse_message(s3_body(key)) == []


@pytest.mark.parametrize(
    "event",
    [
        "ObjectRemoved:Delete",
        "ObjectRemoved:DeleteMarkerCreated",
        "ObjectRestore:Completed",
        "ObjectTagging:Put",
        "LifecycleExpiration:Delete",
    ],
)
def test_events_other_than_object_created_give_no_hint(event):
    assert parse_message(s3_body("wh/db.db/t/snapshot/snapshot-1", event=event)) == []


@pytest.mark.parametrize(
    "event",
    [
        "ObjectCreated:Put",
        "ObjectCreated:Copy",
        "ObjectCreated:Post",
        "ObjectCreated:CompleteMultipartUpload",
        "s3:ObjectCreated:Put",
    ],
)
def test_every_object_created_event_gives_a_hint(event):
    [hint] = parse_message(s3_body("wh/db.db/t/snapshot/snapshot-1", event=event))

    assert hint.snapshot_id == 1


def test_records_for_other_buckets_are_skipped_when_buckets_are_given():
    body = json.dumps(
        {
            "Records": [
                s3_record("wh/db.db/t/snapshot/snapshot-1", bucket="lake"),
                s3_record("wh/db.db/t/snapshot/snapshot-2", bucket="elsewhere"),
            ]
        }
    )

    assert ids_by_table(parse_message(body, buckets={"lake"})) == {"s3://lake/wh/db.db/t": [1]}
    assert len(parse_message(body)) == 2


def test_several_records_give_hints_in_record_order():
    body = s3_body(
        "wh/db.db/a/snapshot/snapshot-5",
        "wh/db.db/a/snapshot/LATEST",
        "wh/db.db/b/snapshot/snapshot-1",
        "wh/db.db/a/snapshot/snapshot-6",
    )

    hints = parse_message(body, detected_at=1.0)

    assert [(h.table_url, h.snapshot_id) for h in hints] == [
        ("s3://lake/wh/db.db/a", 5),
        ("s3://lake/wh/db.db/b", 1),
        ("s3://lake/wh/db.db/a", 6),
    ]
    assert {h.detected_at for h in hints} == {1.0}


def test_hint_table_url_meets_subscriptions_spelled_with_s3a_or_trailing_slash():
    [hint] = parse_message(s3_body("wh/db.db/t/snapshot/snapshot-1"))

    assert normalize_table_url("s3a://lake/wh/db.db/t/") == hint.table_url
    assert normalize_table_url("s3://lake/wh/db.db/t//") == hint.table_url


def test_branch_snapshots_name_the_branch_directory_not_the_main_table():
    [hint] = parse_message(s3_body("wh/db.db/t/branch/branch-dev/snapshot/snapshot-2"))

    assert hint.table_url == "s3://lake/wh/db.db/t/branch/branch-dev"


def test_source_and_detected_at_are_stamped_on_every_hint():
    [hint] = parse_message(s3_body("wh/t/snapshot/snapshot-1"), source="lambda", detected_at=7.0)

    assert (hint.source, hint.detected_at) == ("lambda", 7.0)


def test_detected_at_defaults_to_now(monkeypatch):
    monkeypatch.setattr("paimon_feed.notifiers.events.time.time", lambda: 1234.5)

    [hint] = parse_message(s3_body("wh/t/snapshot/snapshot-1"))

    assert hint.detected_at == 1234.5


def test_bytes_bodies_are_decoded_as_utf8():
    body = s3_body("wh/t%C3%A9/snapshot/snapshot-1").encode()

    assert parse_message(body)[0].table_url == "s3://lake/wh/té"


def test_s3_test_event_gives_no_hint_even_for_a_foreign_bucket():
    body = json.dumps(
        {
            "Service": "Amazon S3",
            "Event": "s3:TestEvent",
            "Time": "2024-05-01T12:00:00.000Z",
            "Bucket": "elsewhere",
            "RequestId": "5582815E1AEA5ADF",
            "HostId": "8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE",
        }
    )

    assert parse_message(body, buckets={"lake"}) == []


def test_empty_records_list_gives_no_hint():
    assert parse_message('{"Records": []}') == []


# S3 -> SNS -> SQS --------------------------------------------------------------------------------
def test_sns_envelope_is_unwrapped():
    body = sns_body(s3_body("wh%2Fdb.db%2Ft%2Fsnapshot%2Fsnapshot-3"))

    assert ids_by_table(parse_message(body)) == {"s3://lake/wh/db.db/t": [3]}


def test_sns_raw_message_delivery_is_the_s3_event_itself():
    assert ids_by_table(parse_message(s3_body("wh/t/snapshot/snapshot-3"))) == {
        "s3://lake/wh/t": [3]
    }


def test_sns_envelope_of_the_s3_test_event_gives_no_hint():
    body = sns_body(json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": "x"}))

    assert parse_message(body) == []


@pytest.mark.parametrize("kind", ["SubscriptionConfirmation", "UnsubscribeConfirmation"])
def test_sns_housekeeping_messages_give_no_hint(kind):
    body = json.dumps(
        {
            "Type": kind,
            "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
            "Token": "2336412f37",
            "TopicArn": "arn:aws:sns:us-east-1:123456789012:lake-events",
            "Message": "You have chosen to subscribe to the topic ...",
            "SubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription",
        }
    )

    assert parse_message(body) == []


def test_sns_envelope_of_an_eventbridge_event_is_unwrapped():
    body = sns_body(eventbridge_body("wh/db.db/t/snapshot/snapshot-4"))

    assert ids_by_table(parse_message(body)) == {"s3://lake/wh/db.db/t": [4]}


# S3 -> EventBridge -> SQS ------------------------------------------------------------------------
def test_eventbridge_object_created_gives_hint():
    [hint] = parse_message(eventbridge_body("wh/db.db/t/snapshot/snapshot-8"))

    assert (hint.table_url, hint.snapshot_id) == ("s3://lake/wh/db.db/t", 8)


def test_eventbridge_keys_are_not_url_decoded():
    [hint] = parse_message(eventbridge_body("wh/a+b %2F é.db/t/snapshot/snapshot-1"))

    assert hint.table_url == "s3://lake/wh/a+b %2F é.db/t"


@pytest.mark.parametrize(
    "detail_type", ["Object Deleted", "Object Restore Completed", "Object Tags Added"]
)
def test_eventbridge_events_other_than_object_created_give_no_hint(detail_type):
    body = eventbridge_body("wh/t/snapshot/snapshot-1", detail_type=detail_type)

    assert parse_message(body) == []


def test_eventbridge_events_for_other_buckets_are_skipped():
    body = eventbridge_body("wh/t/snapshot/snapshot-1", bucket="elsewhere")

    assert parse_message(body, buckets={"lake"}) == []


def test_eventbridge_noise_keys_give_no_hint():
    assert parse_message(eventbridge_body("wh/t/snapshot/.snapshot-1.abc.tmp")) == []
    assert parse_message(eventbridge_body("wh/t/snapshot/LATEST")) == []


# malformed ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "reason_part"),
    [
        ("", "empty body"),
        ("   \n", "empty body"),
        ("{not json", "not JSON"),
        ('{"Records": [', "not JSON"),
        ("[1, 2]", "list"),
        ('"a string"', "str"),
        ("null", "NoneType"),
        ('{"hello": "world"}', "unknown envelope"),
        ('{"Records": {"eventSource": "aws:s3"}}', "not a list"),
        ('{"Records": ["x"]}', "Records[0] is not an object"),
        ('{"Records": [{"eventSource": "aws:sqs", "body": "{}"}]}', "eventSource 'aws:sqs'"),
        ('{"Records": [{"eventSource": "aws:s3"}]}', "eventName"),
        (
            '{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "s3": {}}]}',
            "bucket.name",
        ),
        (
            '{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",'
            ' "s3": {"bucket": {"name": "lake"}, "object": {"key": 5}}}]}',
            "object.key",
        ),
        ('{"Type": "Notification", "TopicArn": "arn", "Message": "nope"}', "SNS Message not JSON"),
        ('{"Type": "Notification", "TopicArn": "arn", "Message": 5}', "string Message"),
        ('{"Type": "Weird", "TopicArn": "arn", "Message": "{}"}', "Type 'Weird'"),
        ('{"source": "aws.ec2", "detail-type": "EC2 Instance State-change"}', "aws.ec2"),
        ('{"source": "aws.s3", "detail-type": "Object Created", "detail": {}}', "detail.bucket"),
    ],
)
def test_malformed_messages_raise_with_a_short_reason(body, reason_part):
    with pytest.raises(MalformedMessageError) as raised:
        parse_message(body)

    assert reason_part in raised.value.reason
    assert isinstance(raised.value, FeedError)


def test_sns_inside_sns_is_malformed():
    with pytest.raises(MalformedMessageError, match="inside an SNS"):
        parse_message(sns_body(sns_body(s3_body("wh/t/snapshot/snapshot-1"))))


def test_malformed_reason_of_a_huge_body_is_capped():
    body = "x" * 1_000_000

    with pytest.raises(MalformedMessageError) as raised:
        parse_message(body)

    assert len(raised.value.reason) <= MAX_REASON_CHARS
    assert len(str(raised.value)) < MAX_REASON_CHARS + 150


def test_malformed_reason_of_a_huge_unknown_envelope_is_capped():
    body = json.dumps({f"key-{i}-{'y' * 100}": i for i in range(1000)})

    with pytest.raises(MalformedMessageError) as raised:
        parse_message(body)

    assert len(raised.value.reason) <= MAX_REASON_CHARS


def test_absurdly_nested_json_is_malformed_not_a_crash():
    with pytest.raises(MalformedMessageError, match="too deeply"):
        parse_message("[" * 100_000 + "]" * 100_000)


def test_invalid_utf8_bytes_are_malformed():
    with pytest.raises(MalformedMessageError, match="not UTF-8"):
        parse_message(b'{"Records": "\xff"}')


def test_malformed_error_survives_pickling_with_its_attributes():
    error = MalformedMessageError("empty body", "m-1")

    copy = pickle.loads(pickle.dumps(error))

    assert (copy.reason, copy.message_id, str(copy)) == ("empty body", "m-1", str(error))


def test_hints_from_event_accepts_a_decoded_body():
    event = json.loads(s3_body("wh/t/snapshot/snapshot-2"))

    assert [h.snapshot_id for h in hints_from_event(event)] == [2]


def test_snapshot_hint_for_object_respects_buckets():
    hint = snapshot_hint_for_object(
        "lake", "wh/t/snapshot/snapshot-1", source="sqs", detected_at=0.0, buckets={"other"}
    )

    assert hint is None


# Lambda events -----------------------------------------------------------------------------------
def sqs_lambda_record(message_id: str, body: str) -> dict:
    return {
        "messageId": message_id,
        "receiptHandle": "MessageReceiptHandle",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1523232000000"},
        "messageAttributes": {},
        "md5OfBody": "7b270e59b47ff90a553787216d55d91d",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:lake-events",
        "awsRegion": "us-east-1",
    }


def test_lambda_sqs_event_gives_one_pair_per_message_id():
    event = {
        "Records": [
            sqs_lambda_record("m-1", s3_body("wh/t/snapshot/snapshot-1")),
            sqs_lambda_record("m-2", sns_body(s3_body("wh%2Fu%2Fsnapshot%2Fsnapshot-4"))),
            sqs_lambda_record("m-3", eventbridge_body("wh/t/snapshot/LATEST")),
        ]
    }

    pairs = parse_lambda_event(event, detected_at=3.0)

    assert [(mid, [(h.table_url, h.snapshot_id) for h in hints]) for mid, hints in pairs] == [
        ("m-1", [("s3://lake/wh/t", 1)]),
        ("m-2", [("s3://lake/wh/u", 4)]),
        ("m-3", []),
    ]
    assert {h.source for _, hints in pairs for h in hints} == {"lambda"}


def test_lambda_sqs_event_reports_malformed_records_by_message_id_and_keeps_the_rest():
    event = {
        "Records": [
            sqs_lambda_record("m-1", "{broken"),
            sqs_lambda_record("m-2", s3_body("wh/t/snapshot/snapshot-2")),
            sqs_lambda_record("m-3", ""),
        ]
    }
    failed: list[MalformedMessageError] = []

    pairs = parse_lambda_event(event, on_malformed=failed.append)

    assert [mid for mid, _ in pairs] == ["m-2"]
    assert [error.message_id for error in failed] == ["m-1", "m-3"]
    assert "m-1" in str(failed[0])


def test_lambda_sqs_event_raises_on_a_malformed_record_without_a_callback():
    event = {"Records": [sqs_lambda_record("m-9", '{"nope": 1}')]}

    with pytest.raises(MalformedMessageError) as raised:
        parse_lambda_event(event)

    assert raised.value.message_id == "m-9"


def test_lambda_direct_s3_event_gives_one_pair_without_message_id():
    event = json.loads(s3_body("wh%2Ft%2Fsnapshot%2Fsnapshot-6", "wh%2Ft%2Fsnapshot%2FLATEST"))

    [(message_id, hints)] = parse_lambda_event(event)

    assert message_id is None
    assert [(h.table_url, h.snapshot_id) for h in hints] == [("s3://lake/wh/t", 6)]


def test_lambda_direct_eventbridge_event_gives_one_pair_without_message_id():
    event = json.loads(eventbridge_body("wh/t/snapshot/snapshot-6"))

    assert [(mid, [h.snapshot_id for h in hints]) for mid, hints in parse_lambda_event(event)] == [
        (None, [6])
    ]


def test_lambda_sns_event_unwraps_each_sns_record():
    event = {
        "Records": [
            {
                "EventSource": "aws:sns",
                "EventVersion": "1.0",
                "EventSubscriptionArn": "arn:aws:sns:us-east-1:123456789012:lake-events:sub",
                "Sns": {
                    "Type": "Notification",
                    "MessageId": "sns-1",
                    "TopicArn": "arn:aws:sns:us-east-1:123456789012:lake-events",
                    "Message": s3_body("wh/t/snapshot/snapshot-2"),
                },
            }
        ]
    }

    [(message_id, [hint])] = parse_lambda_event(event)

    assert (message_id, hint.snapshot_id) == ("sns-1", 2)


def test_lambda_event_given_as_json_text_is_parsed():
    text = json.dumps({"Records": [sqs_lambda_record("m-1", s3_body("wh/t/snapshot/snapshot-1"))]})

    assert [mid for mid, _ in parse_lambda_event(text)] == ["m-1"]


def test_lambda_event_of_the_wrong_shape_is_malformed():
    with pytest.raises(MalformedMessageError, match="not an object"):
        parse_lambda_event(["not", "an", "event"])
    with pytest.raises(MalformedMessageError, match="unknown envelope"):
        parse_lambda_event({"hello": "world"})


def test_lambda_batch_mixing_record_kinds_flags_the_odd_record():
    event = {
        "Records": [
            sqs_lambda_record("m-1", s3_body("wh/t/snapshot/snapshot-1")),
            s3_record("wh/t/snapshot/snapshot-2"),
        ]
    }
    failed: list[MalformedMessageError] = []

    pairs = parse_lambda_event(event, on_malformed=failed.append)

    assert [mid for mid, _ in pairs] == ["m-1"]
    assert len(failed) == 1 and failed[0].message_id is None
