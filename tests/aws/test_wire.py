"""``wire`` on a real moto_server: what it makes, that a second run changes nothing, that a
commit's event reaches the queue through what it made (the oracle: moto's own delivery), that
the bucket's other rules survive, and that ``remove`` undoes it."""

from __future__ import annotations

import json
from urllib.parse import unquote_plus

import pytest
from wire_support import Lake, lake  # noqa: F401  (fixture)

from paimon_feed.aws import wire
from paimon_feed.errors import ConfigurationError

FOREIGN_QUEUE_RULE = "indexer-parquet"


def _foreign_rules(lake: Lake, prefix: str = "other/") -> dict:
    """Rules of another system: a queue rule for another prefix, and the EventBridge flag off."""
    sqs = lake.client("sqs")
    url = sqs.create_queue(QueueName=f"{lake.bucket}-indexer")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rule = {"Id": FOREIGN_QUEUE_RULE, "QueueArn": arn, "Events": ["s3:ObjectCreated:*"],
            "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}}}
    lake.client("s3").put_bucket_notification_configuration(
        Bucket=lake.bucket, NotificationConfiguration={"QueueConfigurations": [rule]})
    return rule


def _put(lake: Lake, key: str) -> None:
    lake.client("s3").put_object(Bucket=lake.bucket, Key=key, Body=b"{}")


def _keys(bodies: list[str]) -> list[str]:
    keys = []
    for body in bodies:
        event = json.loads(body)
        if "detail" in event:
            keys.append(event["detail"]["object"]["key"])
        keys += [unquote_plus(r["s3"]["object"]["key"]) for r in event.get("Records", [])]
    return sorted(keys)


@pytest.mark.parametrize("eventbridge", [True, False], ids=["eventbridge", "bucket-notification"])
def test_wire_delivers_every_tables_commits_keeps_foreign_rules_and_is_idempotent(lake: Lake, eventbridge: bool):
    foreign = _foreign_rules(lake)
    queue = f"{lake.bucket}-feed"

    first = wire(lake.warehouse, queue=queue, eventbridge=eventbridge)
    assert first.changes and first.queue_url == lake.queue_url(queue)
    assert wire(lake.warehouse, queue=queue, eventbridge=eventbridge).changes == []

    document = lake.notification()
    assert foreign in document["QueueConfigurations"]
    assert ("EventBridgeConfiguration" in document) is eventbridge
    attributes = lake.client("sqs").get_queue_attributes(QueueUrl=first.queue_url, AttributeNames=["All"])["Attributes"]
    assert int(attributes["VisibilityTimeout"]) >= 30
    assert json.loads(attributes["RedrivePolicy"])["deadLetterTargetArn"].endswith(f":{queue}-dlq")
    (statement,) = json.loads(attributes["Policy"])["Statement"]
    source = statement["Condition"]["ArnEquals"]["aws:SourceArn"]
    assert source == (first.rule_arn if eventbridge else f"arn:aws:s3:::{lake.bucket}")

    lake.bodies(queue, wait=0)  # the test event S3 sends when a queue rule is written
    _put(lake, "wh/sales.db/orders/snapshot/snapshot-1")
    _put(lake, "wh/new.db/born_later/snapshot/snapshot-1")
    _put(lake, "other/x.parquet")
    snapshot_keys = [k for k in _keys(lake.bodies(queue)) if "/snapshot/" in k]
    assert snapshot_keys == ["wh/new.db/born_later/snapshot/snapshot-1", "wh/sales.db/orders/snapshot/snapshot-1"]
    assert _keys(lake.bodies(f"{lake.bucket}-indexer")) == ["other/x.parquet"]


def test_dry_run_prints_the_changes_and_makes_none(lake: Lake):
    queue = f"{lake.bucket}-feed"
    planned = wire(lake.warehouse, queue=queue, dry_run=True)
    assert [c.action for c in planned.changes] == ["create"] * 3 + ["update"] + ["create"] * 2
    assert lake.client("sqs").list_queues(QueueNamePrefix=queue).get("QueueUrls", []) == []
    assert lake.notification() == {}
    made = wire(lake.warehouse, queue=queue)
    assert [str(c) for c in made.changes] == [str(c) for c in planned.changes]


def test_remove_undoes_only_what_wire_made(lake: Lake):
    foreign = _foreign_rules(lake)
    queue = f"{lake.bucket}-feed"
    wire(lake.warehouse, queue=queue, eventbridge=False)
    removed = wire(lake.warehouse, queue=queue, eventbridge=False, remove=True)
    assert {c.action for c in removed.changes} == {"update", "delete"}
    assert lake.notification()["QueueConfigurations"] == [foreign]
    assert lake.client("sqs").list_queues(QueueNamePrefix=queue).get("QueueUrls", []) == []
    assert wire(lake.warehouse, queue=queue, eventbridge=False, remove=True).changes == []


def test_a_foreign_overlapping_rule_is_an_error_that_names_it(lake: Lake):
    _foreign_rules(lake, prefix="wh/sales.db/")
    with pytest.raises(ConfigurationError, match=f"{FOREIGN_QUEUE_RULE}.*overlaps.*--eventbridge"):
        wire(lake.warehouse, queue=f"{lake.bucket}-feed", eventbridge=False)
    # EventBridge needs no bucket rule of its own, so the same bucket can be wired that way.
    assert wire(lake.warehouse, queue=f"{lake.bucket}-feed", eventbridge=True).changes


def test_our_per_table_rules_are_replaced_by_the_warehouse_rule(lake: Lake):
    queue = f"{lake.bucket}-feed"
    made = wire(lake.warehouse, queue=queue, eventbridge=False)
    per_table = {"Id": "paimon-feed-sales.orders", "QueueArn": made.queue_arn, "Events": ["s3:ObjectCreated:*"],
                 "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "wh/sales.db/orders/snapshot/snapshot-"}]}}}
    lake.client("s3").put_bucket_notification_configuration(
        Bucket=lake.bucket, NotificationConfiguration={"QueueConfigurations": [per_table]})
    again = wire(lake.warehouse, queue=queue, eventbridge=False)
    assert "replace paimon-feed-sales.orders" in str(again.changes)
    assert [r["Id"] for r in lake.notification()["QueueConfigurations"]] == [f"paimon-feed-warehouse-{queue}"]


def test_each_consumer_group_gets_every_event(lake: Lake):
    groups = [f"{lake.bucket}-etl", f"{lake.bucket}-audit"]
    for queue in groups:
        wire(lake.warehouse, queue=queue)
    rule = wire(lake.warehouse, queue=groups[0]).rule_arn
    assert rule is not None
    targets = lake.client("events").list_targets_by_rule(Rule=rule.rsplit("/", 1)[1])["Targets"]
    assert len(targets) == 2
    for n in range(1, 4):
        _put(lake, f"wh/db.db/t{n}/snapshot/snapshot-{n}")
    expected = [f"wh/db.db/t{n}/snapshot/snapshot-{n}" for n in range(1, 4)]
    assert [_keys(lake.bodies(queue)) for queue in groups] == [expected, expected]
    # Removing one group leaves the other wired.
    wire(lake.warehouse, queue=groups[1], remove=True)
    _put(lake, "wh/db.db/t9/snapshot/snapshot-9")
    assert _keys(lake.bodies(groups[0])) == ["wh/db.db/t9/snapshot/snapshot-9"]


def test_kms_queue_shows_the_key_policy_statement(lake: Lake):
    made = wire(lake.warehouse, queue=f"{lake.bucket}-feed", kms_key_id="alias/lake-events")
    attributes = lake.client("sqs").get_queue_attributes(QueueUrl=made.queue_url, AttributeNames=["All"])["Attributes"]
    assert attributes["KmsMasterKeyId"] == "alias/lake-events"
    assert wire(lake.warehouse, queue=f"{lake.bucket}-feed", kms_key_id="alias/lake-events").changes == []
    statement = made.key_policy_statement
    assert statement is not None and statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"] == made.rule_arn
    assert "kms:GenerateDataKey" in statement["Action"]


def test_bad_arguments_are_configuration_errors(lake: Lake):
    with pytest.raises(ConfigurationError, match="not an S3 URL"):
        wire("/data/wh", queue="q")
    with pytest.raises(ConfigurationError, match="queue name"):
        wire(lake.warehouse, queue="bad name!")
