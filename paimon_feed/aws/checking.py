"""``check()``: prove a warehouse's push wiring end to end (``paimon-feed check``).

It puts a probe object, ``WAREHOUSE/_paimon_feed_probe/snapshot/snapshot-N``, whose key every
warehouse rule matches but that no catalog lists (not a ``*.db`` directory) and that the feed
and the Lambda handler skip; waits for its event; deletes it (a crashed run's probes are deleted
by the next run first); and reports the delay.

SQS has no peek, so:

- with an EventBridge rule feeding the queue, ``check`` adds a temporary queue of its own as
  another target of that rule, waits there, and removes both: the consumers' queue is not read;
- with a bucket notification rule, it reads the shared queue: each consumer's message it
  receives is made visible again at once (``ChangeMessageVisibility 0``), and ``touched`` says
  how many (each such receive counts toward the message's ``maxReceiveCount``).

It also reads what it can see of the wiring and says what is missing or wrong: no rule, a
filter that does not match the warehouse's snapshot keys, the bucket's EventBridge flag off, a
queue policy that refuses S3 or EventBridge, a visibility timeout shorter than the feed needs.
``ok`` is true when the probe's event arrived and nothing found refuses delivery.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from paimon_feed.aws import _documents as w
from paimon_feed.aws._clients import Clients, aws_call, error_code
from paimon_feed.aws._diagnosis import policy_allows
from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers.events import keys_in_message

__all__ = ["CheckResult", "check"]

logger = logging.getLogger("paimon_feed.aws.checking")

_S3, _EVENTS = "s3.amazonaws.com", "events.amazonaws.com"


@dataclass
class CheckResult:
    """What ``check`` saw. ``delay`` is seconds from the probe's PUT to its event, or None."""

    warehouse: str
    queue_url: str
    ok: bool = False
    delay: float | None = None
    route: str | None = None  # "eventbridge" or "bucket-notification"
    touched: int = 0
    leftovers_removed: int = 0
    problems: list[str] = field(default_factory=list)  # each refuses delivery
    warnings: list[str] = field(default_factory=list)


class _Check:
    def __init__(self, clients: Clients, wh: w.Warehouse, queue_url: str, result: CheckResult) -> None:
        self.c, self.wh, self.queue_url, self.result = clients, wh, queue_url, result
        try:
            attributes = self.c.sqs.get_queue_attributes(
                QueueUrl=queue_url, AttributeNames=["QueueArn", "VisibilityTimeout", "Policy"]
            )["Attributes"]
        except Exception as exc:  # noqa: BLE001 - translated: the queue is the user's argument
            raise ConfigurationError(
                f"queue {queue_url}: cannot read it ({error_code(exc) or exc}); give the URL of an "
                f"existing queue (paimon-feed wire prints it)"
            ) from exc
        self.queue_arn = attributes["QueueArn"]
        self.visibility = int(attributes.get("VisibilityTimeout", "30"))
        self.policy = attributes.get("Policy")
        self.flag_off: str | None = None

    # what the wiring looks like ----------------------------------------------------------
    def eventbridge_rules(self, probe_key: str) -> list[str]:
        """Rules targeting the queue that match the probe; problems for those that do not."""
        names = aws_call("list the EventBridge rules of the queue", self.c.events.list_rule_names_by_target,
                         TargetArn=self.queue_arn).get("RuleNames", [])
        matching = []
        for name in names:
            rule = self.c.events.describe_rule(Name=name)
            pattern = json.loads(rule.get("EventPattern") or "{}")
            if rule.get("State") != "ENABLED":
                self.result.problems.append(f"EventBridge rule {name} targets the queue but is disabled")
            elif w.pattern_matches(pattern, self.wh.bucket, probe_key):
                matching.append(str(rule["Arn"]))
            else:
                self.result.problems.append(
                    f"EventBridge rule {name} targets the queue but its pattern does not match "
                    f"{probe_key!r}: it should filter the key with {{\"wildcard\": "
                    f"\"{self.wh.snapshot_wildcard}\"}} (paimon-feed wire --eventbridge sets it)")
        return matching

    def bucket_rules(self, document: dict[str, Any], probe_key: str) -> list[str]:
        rules = [r for r in document.get("QueueConfigurations", []) if r.get("QueueArn") == self.queue_arn]
        matching = [str(r.get("Id")) for r in rules if w.rule_matches_key(r, probe_key)]
        for rule in rules:
            if str(rule.get("Id")) not in matching:
                self.result.problems.append(
                    f"bucket {self.wh.bucket}'s notification rule {rule.get('Id')} sends to the queue "
                    f"but does not match {probe_key!r} (filter {rule.get('Filter')}, events "
                    f"{rule.get('Events')}): it should send s3:ObjectCreated:* with the prefix "
                    f"{self.wh.key_prefix!r}")
        return matching

    def diagnose(self, probe_key: str) -> list[str]:
        """Read the wiring, record what is wrong; the matching EventBridge rules' ARNs."""
        document = aws_call(f"read the notification configuration of bucket {self.wh.bucket}",
                            self.c.s3.get_bucket_notification_configuration, Bucket=self.wh.bucket)
        rules = self.eventbridge_rules(probe_key)
        direct = self.bucket_rules(document, probe_key)
        problems = self.result.problems
        if rules and "EventBridgeConfiguration" not in document:
            # Said only if nothing arrives: some S3 look-alikes do not report the flag they keep.
            self.flag_off = (f"bucket {self.wh.bucket} does not send its events to EventBridge: "
                             f"turn its EventBridge notifications on (paimon-feed wire --eventbridge)")
        for arn in rules:
            if not policy_allows(self.policy, _EVENTS, arn, self.queue_arn):
                problems.append(f"the queue policy refuses {_EVENTS} from rule {arn}: allow "
                                f"sqs:SendMessage with aws:SourceArn {arn}")
        if direct and not policy_allows(self.policy, _S3, self.wh.bucket_arn, self.queue_arn):
            problems.append(f"the queue policy refuses {_S3} from {self.wh.bucket_arn}: allow "
                            f"sqs:SendMessage with aws:SourceArn {self.wh.bucket_arn}")
        if not rules and not direct and not problems:
            problems.append(f"no EventBridge rule and no notification rule of bucket {self.wh.bucket} "
                            f"sends to the queue: run paimon-feed wire {self.wh.url} --queue NAME")
        if self.visibility < w.MIN_VISIBILITY_TIMEOUT:
            self.result.warnings.append(
                f"the queue's visibility timeout is {self.visibility}s, shorter than the "
                f"{w.MIN_VISIBILITY_TIMEOUT}s the feed needs (a Lambda consumer: six times its "
                f"timeout): a message still being handled is delivered again")
        self.result.route = "eventbridge" if rules else "bucket-notification" if direct else None
        return rules

    # the probe ---------------------------------------------------------------------------
    def remove_leftovers(self) -> None:
        listing = self.c.s3.list_objects_v2(Bucket=self.wh.bucket, Prefix=self.wh.probe_prefix)
        for item in listing.get("Contents", []):
            self.c.s3.delete_object(Bucket=self.wh.bucket, Key=item["Key"])
            self.result.leftovers_removed += 1

    def wait(self, queue_url: str, probe_key: str, deadline: float, *, shared: bool) -> float | None:
        touched: set[str] = set()
        try:
            while (left := deadline - time.monotonic()) > 0:
                messages = self.c.sqs.receive_message(
                    QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=max(1, min(5, int(left))),
                    VisibilityTimeout=30 if shared else 0,
                ).get("Messages", [])
                found = None
                for message in messages:
                    if probe_key in keys_in_message(message.get("Body", "")):
                        found = time.monotonic()
                        self.c.sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
                    elif shared:
                        touched.add(message["MessageId"])
                        self.c.sqs.change_message_visibility(
                            QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
                if found is not None:
                    return found
                if messages:
                    time.sleep(0.05)  # only consumers' messages, visible again: do not spin on them
            return None
        finally:
            self.result.touched = len(touched)

    def temporary_target(self, rule_arn: str) -> tuple[str, str, str]:
        """A queue of check's own as another target of the rule: (rule, target id, queue url)."""
        name = f"paimon-feed-check-{uuid.uuid4().hex[:12]}"
        url = self.c.sqs.create_queue(QueueName=name)["QueueUrl"]
        arn = self.c.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        statement = w.policy_statement(arn, source_arn=rule_arn, account="", eventbridge=True)
        self.c.sqs.set_queue_attributes(QueueUrl=url, Attributes={
            "Policy": w.merge_policy(None, statement, drop_sids=set()) or ""})
        rule = rule_arn.rsplit("/", 1)[-1]
        self.c.events.put_targets(Rule=rule, Targets=[{"Id": name, "Arn": arn}])
        return rule, name, url


def check(
    warehouse: str,
    *,
    queue_url: str,
    timeout: float = 10.0,
    endpoint_url: str | None = None,
    region_name: str | None = None,
) -> CheckResult:
    """Prove that a commit under ``warehouse`` reaches ``queue_url`` (module docstring)."""
    if timeout <= 0:
        raise ConfigurationError(f"check timeout must be > 0 seconds, got {timeout!r}")
    wh = w.Warehouse.parse(warehouse)
    result = CheckResult(warehouse=wh.url, queue_url=queue_url)
    run = _Check(Clients(endpoint_url=endpoint_url, region_name=region_name), wh, queue_url, result)
    run.remove_leftovers()
    probe_key = wh.probe_key(time.time_ns() // 1000)
    rules = run.diagnose(probe_key)
    temporary = run.temporary_target(rules[0]) if rules else None
    try:
        aws_call(f"put the probe {probe_key} in bucket {wh.bucket}", run.c.s3.put_object,
                 Bucket=wh.bucket, Key=probe_key, Body=b'{"paimon-feed": "check"}')
        started = time.monotonic()
        try:
            arrived = run.wait(temporary[2] if temporary else queue_url, probe_key,
                               started + timeout, shared=temporary is None)
        finally:
            run.c.s3.delete_object(Bucket=wh.bucket, Key=probe_key)
    finally:
        if temporary is not None:
            rule, target, url = temporary
            run.c.events.remove_targets(Rule=rule, Ids=[target])
            run.c.sqs.delete_queue(QueueUrl=url)
    if arrived is not None:
        result.delay = arrived - started
    else:
        result.problems[:0] = [f"no event for the probe {probe_key!r} arrived within {timeout:g}s",
                               *filter(None, [run.flag_off])]
    result.ok = arrived is not None and not result.problems
    return result
