"""``check`` on a real moto_server: a wired warehouse passes (through either route), and each way
of being mis-wired is named; the consumers' messages are left as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from wire_support import Lake, lake  # noqa: F401  (fixture)

from paimon_feed.aws import check, wire
from paimon_feed.notifiers.events import parse_lambda_event, parse_message


def _probe_objects(lake: Lake) -> list[str]:
    listing = lake.client("s3").list_objects_v2(Bucket=lake.bucket, Prefix="wh/_paimon_feed_probe/")
    return [item["Key"] for item in listing.get("Contents", [])]


def test_eventbridge_wiring_passes_through_a_temporary_target_of_its_own(lake: Lake):
    made = wire(lake.warehouse, queue=f"{lake.bucket}-feed")
    assert made.queue_url is not None and made.rule_arn is not None
    result = check(lake.warehouse, queue_url=made.queue_url)
    assert result.ok, result.problems
    assert result.route == "eventbridge" and result.delay is not None and result.touched == 0
    assert _probe_objects(lake) == []
    # check never read the consumers' queue: the probe's event is there, and gives no hint.
    (body,) = lake.bodies(f"{lake.bucket}-feed", wait=0)
    assert "_paimon_feed_probe/snapshot/snapshot-" in body and parse_message(body) == []
    # The temporary target and queue are gone.
    targets = lake.client("events").list_targets_by_rule(Rule=made.rule_arn.rsplit("/", 1)[1])["Targets"]
    assert [t["Arn"] for t in targets] == [made.queue_arn]
    queues = lake.client("sqs").list_queues(QueueNamePrefix="paimon-feed-check-").get("QueueUrls", [])
    assert queues == []


def test_bucket_notification_wiring_passes_and_gives_consumers_messages_back(lake: Lake):
    made = wire(lake.warehouse, queue=f"{lake.bucket}-feed", eventbridge=False)
    assert made.queue_url is not None
    lake.bodies(f"{lake.bucket}-feed", wait=0)
    sqs = lake.client("sqs")
    pending = {f'{{"consumer": {n}}}' for n in range(3)}
    for body in pending:
        sqs.send_message(QueueUrl=made.queue_url, MessageBody=body)
    result = check(lake.warehouse, queue_url=made.queue_url)
    assert result.ok, result.problems
    assert result.route == "bucket-notification" and result.touched == 3
    left = set(lake.bodies(f"{lake.bucket}-feed", wait=0))
    assert pending <= left  # visible again at once
    assert not any("_paimon_feed_probe/snapshot/snapshot-" in b and "ObjectCreated" in b for b in left)


def test_no_rule_is_named(lake: Lake):
    url = lake.client("sqs").create_queue(QueueName=f"{lake.bucket}-lonely")["QueueUrl"]
    result = check(lake.warehouse, queue_url=url, timeout=1)
    assert not result.ok and result.delay is None
    assert "no event for the probe" in result.problems[0]
    assert "no EventBridge rule and no notification rule" in result.problems[1]
    assert _probe_objects(lake) == []


def test_a_filter_that_does_not_match_is_named(lake: Lake):
    made = wire(lake.warehouse, queue=f"{lake.bucket}-feed", eventbridge=False)
    document = lake.notification()
    (rule,) = document["QueueConfigurations"]
    rule["Filter"]["Key"]["FilterRules"] = [{"Name": "prefix", "Value": "wh/sales.db/"}]
    lake.client("s3").put_bucket_notification_configuration(Bucket=lake.bucket, NotificationConfiguration=document)
    result = check(lake.warehouse, queue_url=str(made.queue_url), timeout=1)
    assert not result.ok
    assert any(rule["Id"] in p and "does not match" in p for p in result.problems)


def test_a_queue_policy_that_refuses_eventbridge_is_named(lake: Lake):
    made = wire(lake.warehouse, queue=f"{lake.bucket}-feed")
    wrong = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"}, "Action": "sqs:SendMessage",
        "Resource": made.queue_arn, "Condition": {"ArnEquals": {"aws:SourceArn": made.rule_arn + "-other"}}}]}
    lake.client("sqs").set_queue_attributes(QueueUrl=made.queue_url, Attributes={"Policy": json.dumps(wrong)})
    result = check(lake.warehouse, queue_url=str(made.queue_url))
    assert not result.ok
    assert any("queue policy refuses events.amazonaws.com" in p for p in result.problems)


def test_a_short_visibility_timeout_is_named_and_leftover_probes_are_removed(lake: Lake):
    made = wire(lake.warehouse, queue=f"{lake.bucket}-feed")
    lake.client("sqs").set_queue_attributes(QueueUrl=made.queue_url, Attributes={"VisibilityTimeout": "5"})
    lake.client("s3").put_object(Bucket=lake.bucket, Key="wh/_paimon_feed_probe/snapshot/snapshot-1", Body=b"")
    result = check(lake.warehouse, queue_url=str(made.queue_url))
    assert result.ok and result.leftovers_removed == 1, result.problems
    assert any("visibility timeout is 5s" in w for w in result.warnings)


def test_the_feed_and_the_lambda_handler_skip_the_probe(lake: Lake):
    """The probe's real events (both envelopes) give no hint to the SQS notifier's parser or the
    Lambda handler's."""
    wire(lake.warehouse, queue=f"{lake.bucket}-direct", eventbridge=False)
    wire(lake.warehouse, queue=f"{lake.bucket}-bridge")
    for queue in (f"{lake.bucket}-direct", f"{lake.bucket}-bridge"):
        lake.bodies(queue, wait=0)
    lake.client("s3").put_object(Bucket=lake.bucket, Key="wh/_paimon_feed_probe/snapshot/snapshot-5", Body=b"")
    lake.client("s3").put_object(Bucket=lake.bucket, Key="wh/db.db/t/snapshot/snapshot-5", Body=b"")
    for queue in (f"{lake.bucket}-direct", f"{lake.bucket}-bridge"):
        bodies = lake.bodies(queue)
        assert len(bodies) == 2
        hints = [h.table_url for b in bodies for h in parse_message(b)]
        assert hints == [f"s3://{lake.bucket}/wh/db.db/t"]
        event = {"Records": [{"eventSource": "aws:sqs", "messageId": str(n), "body": b} for n, b in enumerate(bodies)]}
        assert [h.table_url for _, hs in parse_lambda_event(event) for h in hs] == hints


def _cli(lake: Lake, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run([sys.executable, "-m", "paimon_feed.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_cli_exit_codes(lake: Lake):
    queue = f"{lake.bucket}-feed"
    dry = _cli(lake, "wire", lake.warehouse, "--queue", queue, "--dry-run")
    assert dry.returncode == 0 and "change(s) to make (dry run, none made)" in dry.stdout, dry.stderr
    made = _cli(lake, "wire", lake.warehouse, "--queue", queue)
    assert made.returncode == 0 and "queue url: " in made.stdout, made.stderr
    again = _cli(lake, "wire", lake.warehouse, "--queue", queue)
    assert "already in place; no change" in again.stdout
    url = made.stdout.split("queue url: ")[1].split()[0]
    works = _cli(lake, "check", lake.warehouse, "--queue-url", url)
    assert works.returncode == 0 and works.stdout.startswith("push works"), works.stdout + works.stderr
    other = lake.client("sqs").create_queue(QueueName=f"{lake.bucket}-other")["QueueUrl"]
    broken = _cli(lake, "check", lake.warehouse, "--queue-url", other, "--timeout", "1s")
    assert broken.returncode == 1 and "no EventBridge rule" in broken.stdout
    assert _cli(lake, "check", "/local/wh", "--queue-url", other).returncode == 2
    assert _cli(lake, "check", lake.warehouse).returncode == 2  # --queue-url is required
    assert _cli(lake, "wire", lake.warehouse, "--queue", queue, "--eventbridge", "--bucket-notification").returncode == 2
