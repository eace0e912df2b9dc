"""``wire()``: set up push for a whole S3 warehouse, idempotently (``paimon-feed wire``).

It makes, or brings to what the feed needs, each of these, and changes nothing that is already
right (a second run reports no change):

1. the dead-letter queue ``NAME-dlq`` and the queue ``NAME`` (visibility 720 s, retention 4 days,
   long polling, redrive after 5 receives; SSE with SQS's key, or ``kms_key_id``), tagged
   ``paimon-feed:wired`` so ``remove`` deletes only queues ``wire`` made;
2. the queue policy statement that lets only this bucket (or only this rule) send to it, merged
   into the queue's policy;
3. with ``eventbridge=True``: the bucket's EventBridge flag (merged into the bucket's document),
   the warehouse's rule ``paimon-feed-BUCKET-PREFIX`` matching ``PREFIX/*/snapshot/snapshot-*``,
   and a target for this queue (another queue name adds another target: one per consumer
   group); otherwise one ``paimon-feed-*`` queue rule for ``PREFIX/``, merged into the bucket's
   notification document (foreign rules kept; an overlapping foreign rule is an error naming it).

``dry_run=True`` computes the same changes and makes none; ``remove=True`` undoes them (the
bucket's EventBridge flag stays on: other rules may need it). Needs the ``[s3]`` extra (boto3).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from paimon_feed.aws import _documents as w
from paimon_feed.aws._clients import Clients, aws_call
from paimon_feed.errors import ConfigurationError

__all__ = ["Change", "WireResult", "wire"]

logger = logging.getLogger("paimon_feed.aws.wiring")

WIRED_TAG = "paimon-feed:wired"


@dataclass(frozen=True)
class Change:
    """One change ``wire`` makes (or would make): ``action`` is ``create``, ``update`` or
    ``delete``."""

    action: str
    resource: str
    detail: str = ""

    def __str__(self) -> str:
        sign = {"create": "+", "update": "~", "delete": "-"}.get(self.action, "?")
        return f"{sign} {self.action} {self.resource}" + (f": {self.detail}" if self.detail else "")


@dataclass
class WireResult:
    """What ``wire`` found and did."""

    warehouse: str
    queue_name: str
    queue_url: str | None
    queue_arn: str
    eventbridge: bool
    dry_run: bool
    removed: bool
    rule_arn: str | None = None
    changes: list[Change] = field(default_factory=list)
    key_policy_statement: dict[str, Any] | None = None

    @property
    def changed(self) -> bool:
        return bool(self.changes)


class _Wiring:
    """One run: reads what exists, records each difference, applies it unless dry."""

    def __init__(self, clients: Clients, warehouse: w.Warehouse, queue: str, *, eventbridge: bool,
                 dry_run: bool, kms_key_id: str | None) -> None:
        self.c, self.wh, self.queue = clients, warehouse, queue
        self.eventbridge, self.dry_run, self.kms_key_id = eventbridge, dry_run, kms_key_id
        self.account, self.region = clients.account(), clients.region
        self.rule_name = w.rule_name(warehouse)
        self.rule_arn = f"arn:aws:events:{self.region}:{self.account}:rule/{self.rule_name}"
        self.changes: list[Change] = []

    def arn(self, name: str) -> str:
        return f"arn:aws:sqs:{self.region}:{self.account}:{name}"

    def change(self, action: str, resource: str, detail: str, apply: Callable[[], Any]) -> Any:
        self.changes.append(Change(action, resource, detail))
        logger.info("%s%s", "(dry run) " if self.dry_run else "", self.changes[-1])
        return None if self.dry_run else apply()

    # queues ------------------------------------------------------------------------------
    def queue_url(self, name: str) -> str | None:
        try:
            return str(self.c.sqs.get_queue_url(QueueName=name)["QueueUrl"])
        except self.c.sqs.exceptions.QueueDoesNotExist:
            return None

    def ensure_queue(self, name: str, attributes: dict[str, str]) -> str | None:
        url = self.queue_url(name)
        if url is None:
            shown = ", ".join(f"{k}={v}" for k, v in sorted(attributes.items()))
            created = self.change("create", f"queue {name}", shown, lambda: aws_call(
                f"create queue {name}", self.c.sqs.create_queue,
                QueueName=name, Attributes=attributes, tags={WIRED_TAG: "true"})["QueueUrl"])
            return None if created is None else str(created)
        current = aws_call(f"read queue {name}", self.c.sqs.get_queue_attributes,
                           QueueUrl=url, AttributeNames=["All"])["Attributes"]
        differ = {k: v for k, v in attributes.items() if not _same(current.get(k), v)}
        if differ:
            shown = ", ".join(f"{k}: {current.get(k)} -> {v}" for k, v in sorted(differ.items()))
            self.change("update", f"queue {name}", shown, lambda: aws_call(
                f"update queue {name}", self.c.sqs.set_queue_attributes, QueueUrl=url, Attributes=differ))
        return url

    def queue_attributes(self) -> tuple[dict[str, str], dict[str, str]]:
        sse = ({"KmsMasterKeyId": self.kms_key_id, "SqsManagedSseEnabled": "false"} if self.kms_key_id
               else {"SqsManagedSseEnabled": "true"})
        redrive = json.dumps({"deadLetterTargetArn": self.arn(f"{self.queue}-dlq"),
                              "maxReceiveCount": w.MAX_RECEIVE_COUNT}, sort_keys=True)
        return ({**w.QUEUE_ATTRIBUTES, **sse, "RedrivePolicy": redrive}, {**w.DLQ_ATTRIBUTES, **sse})

    def ensure_policy(self, url: str | None) -> None:
        source = self.rule_arn if self.eventbridge else self.wh.bucket_arn
        statement = w.policy_statement(self.arn(self.queue), source_arn=source,
                                       account=self.account, eventbridge=self.eventbridge)
        current = self.policy(url)
        merged = w.merge_policy(current, statement, drop_sids=set())
        if current is None or json.loads(merged or "{}") != json.loads(current):
            self.change("update" if current else "create", f"queue policy of {self.queue}",
                        f"allow {statement['Principal']['Service']} from {source}",
                        lambda: self.c.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": merged}))

    def policy(self, url: str | None) -> str | None:
        if url is None:
            return None
        attributes = self.c.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
        return attributes.get("Attributes", {}).get("Policy") or None

    # bucket and rule ---------------------------------------------------------------------
    def bucket_document(self) -> dict[str, Any]:
        return dict(aws_call(f"read the notification configuration of bucket {self.wh.bucket}",
                             self.c.s3.get_bucket_notification_configuration, Bucket=self.wh.bucket))

    def ensure_bucket(self, *, rule: dict[str, Any] | None, eventbridge: bool) -> None:
        current = self.bucket_document()
        merged, replaced = w.merge_notification(current, self.wh, rule=rule,
                                                queue_arn=self.arn(self.queue), eventbridge=eventbridge)
        before = {k: v for k, v in current.items() if k != "ResponseMetadata" and v != []}
        if merged == before:
            return
        what = []
        if replaced:
            what.append(f"{'replace' if rule is not None else 'remove'} {', '.join(replaced)}")
        if rule is not None and rule["Id"] not in replaced:
            what.append(f"add {rule['Id']} (prefix {self.wh.key_prefix!r})")
        if eventbridge and "EventBridgeConfiguration" not in before:
            what.append("turn on EventBridge notifications")
        self.change("update", f"notification configuration of bucket {self.wh.bucket}",
                    "; ".join(what) + " (other rules kept)",
                    lambda: self.c.s3.put_bucket_notification_configuration(
                        Bucket=self.wh.bucket, NotificationConfiguration=merged))

    def ensure_rule(self) -> None:
        pattern = json.dumps(w.event_pattern(self.wh), sort_keys=True)
        try:
            rule = self.c.events.describe_rule(Name=self.rule_name)
        except self.c.events.exceptions.ResourceNotFoundException:
            rule = None
        if rule is None or json.loads(rule.get("EventPattern", "{}")) != json.loads(pattern) \
                or rule.get("State") != "ENABLED":
            self.change("update" if rule else "create", f"EventBridge rule {self.rule_name}",
                        f"key wildcard {self.wh.snapshot_wildcard!r} in bucket {self.wh.bucket}",
                        lambda: self.c.events.put_rule(
                            Name=self.rule_name, EventPattern=pattern, State="ENABLED",
                            Description=f"Paimon snapshot commits under {self.wh.url}"))
        targets = self.targets() if rule is not None else []
        wanted = {"Id": w.target_id(self.queue), "Arn": self.arn(self.queue)}
        if not any(t.get("Id") == wanted["Id"] and t.get("Arn") == wanted["Arn"] for t in targets):
            self.change("create", f"target {wanted['Id']} of rule {self.rule_name}", f"queue {self.queue}",
                        lambda: self.c.events.put_targets(Rule=self.rule_name, Targets=[wanted]))

    def targets(self) -> list[dict[str, Any]]:
        try:
            return list(self.c.events.list_targets_by_rule(Rule=self.rule_name).get("Targets", []))
        except self.c.events.exceptions.ResourceNotFoundException:
            return []

    # remove ------------------------------------------------------------------------------
    def remove(self) -> None:
        ours = w.target_id(self.queue)
        targets = self.targets()
        if any(t.get("Id") == ours for t in targets):
            self.change("delete", f"target {ours} of rule {self.rule_name}", f"queue {self.queue}",
                        lambda: self.c.events.remove_targets(Rule=self.rule_name, Ids=[ours]))
        if targets and all(t.get("Id") == ours for t in targets):
            self.change("delete", f"EventBridge rule {self.rule_name}", "no target left",
                        lambda: self.c.events.delete_rule(Name=self.rule_name))
        self.ensure_bucket(rule=None, eventbridge=False)
        for name in (self.queue, f"{self.queue}-dlq"):
            url = self.queue_url(name)
            if url is None:
                continue
            tags = self.c.sqs.list_queue_tags(QueueUrl=url).get("Tags", {})
            if tags.get(WIRED_TAG) == "true":
                self.change("delete", f"queue {name}", "made by wire",
                            functools.partial(self.c.sqs.delete_queue, QueueUrl=url))
            elif name == self.queue:
                self.remove_policy(url)

    def remove_policy(self, url: str) -> None:
        current = self.policy(url)
        sids = {w.policy_statement(self.arn(self.queue), source_arn=s, account=self.account,
                                   eventbridge=e)["Sid"]
                for s, e in ((self.rule_arn, True), (self.wh.bucket_arn, False))}
        merged = w.merge_policy(current, None, drop_sids=sids)
        if current and merged != json.dumps(json.loads(current), sort_keys=True):
            self.change("update", f"queue policy of {self.queue}", "drop paimon-feed statements",
                        lambda: self.c.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": merged or ""}))


def _same(current: str | None, wanted: str) -> bool:
    if current is None:
        return False
    if current.startswith("{"):
        return bool(json.loads(current) == json.loads(wanted))
    return current == wanted


def wire(
    warehouse: str,
    *,
    queue: str,
    eventbridge: bool = True,
    dry_run: bool = False,
    remove: bool = False,
    kms_key_id: str | None = None,
    endpoint_url: str | None = None,
    region_name: str | None = None,
) -> WireResult:
    """Wire S3 → SQS push for every table of ``warehouse`` (``s3://BUCKET/PREFIX``) into the
    queue ``queue`` (a name, made if missing); see the module docstring. Returns the changes.

    Raises :class:`~paimon_feed.errors.ConfigurationError` for a bad URL or queue name, or a
    foreign notification rule that overlaps the warehouse (its message names the rule).
    """
    if not queue or len(queue) > 76 or not all(ch.isalnum() or ch in "-_" for ch in queue):
        raise ConfigurationError(
            f"queue name {queue!r}: use 1-76 letters, digits, '-' or '_' (the dead-letter queue "
            f"adds '-dlq' within SQS's 80 characters)"
        )
    wh = w.Warehouse.parse(warehouse)
    run = _Wiring(Clients(endpoint_url=endpoint_url, region_name=region_name), wh, queue,
                  eventbridge=eventbridge, dry_run=dry_run, kms_key_id=kms_key_id)
    url = run.queue_url(queue)
    if remove:
        run.remove()
    else:
        attributes, dlq_attributes = run.queue_attributes()
        run.ensure_queue(f"{queue}-dlq", dlq_attributes)
        url = run.ensure_queue(queue, attributes)
        run.ensure_policy(url)
        if eventbridge:
            run.ensure_bucket(rule=None, eventbridge=True)
            run.ensure_rule()
        else:
            run.ensure_bucket(rule=w.bucket_rule(wh, run.arn(queue), queue), eventbridge=False)
    source = run.rule_arn if eventbridge else wh.bucket_arn
    return WireResult(
        warehouse=wh.url, queue_name=queue, queue_url=None if remove else url, queue_arn=run.arn(queue),
        eventbridge=eventbridge, dry_run=dry_run, removed=remove,
        rule_arn=run.rule_arn if eventbridge else None, changes=run.changes,
        key_policy_statement=(w.key_policy_statement(source_arn=source, eventbridge=eventbridge)
                              if kms_key_id else None),
    )
