"""The documents ``paimon-feed wire`` writes and ``check`` reads, pure (no I/O).

A warehouse ``s3://lake/wh`` is wired in one of two ways:

- **EventBridge**: the bucket's EventBridge flag on, one rule per warehouse whose key wildcard
  ``wh/*/snapshot/snapshot-*`` matches every table's commits (new tables included), and one
  target per queue (one queue per consumer group);
- **bucket notification**: one ``paimon-feed-*`` queue rule for the prefix ``wh/``, merged into
  the bucket's notification document (the document is one per bucket: other systems' rules stay).

>>> wh = Warehouse.parse("s3://lake/wh/")
>>> wh.snapshot_wildcard, wh.probe_key(7)
('wh/*/snapshot/snapshot-*', 'wh/_paimon_feed_probe/snapshot/snapshot-7')
>>> rule_name(wh)
'paimon-feed-lake-wh'
>>> pattern_matches(event_pattern(wh), "lake", wh.probe_key(7))
True
>>> pattern_matches(event_pattern(wh), "lake", "wh/db.db/t/data-1.parquet")
False
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from paimon_feed._layout import PROBE_TABLE_DIR
from paimon_feed.errors import ConfigurationError

__all__ = [
    "OWN_PREFIX",
    "QUEUE_ATTRIBUTES",
    "DLQ_ATTRIBUTES",
    "MIN_VISIBILITY_TIMEOUT",
    "Warehouse",
    "bucket_rule",
    "event_pattern",
    "key_policy_statement",
    "merge_notification",
    "merge_policy",
    "pattern_matches",
    "policy_statement",
    "rule_matches_key",
    "rule_name",
    "target_id",
]

#: What ``wire`` owns carries this prefix: rule names, notification ids, policy Sids, target ids.
OWN_PREFIX = "paimon-feed-"
#: The feed deletes a message once it is handed over; a Lambda consumer needs six times its
#: timeout (AWS's advice), the Terraform module's 720 s covers a 2-minute function.
MIN_VISIBILITY_TIMEOUT = 30
QUEUE_ATTRIBUTES = {
    "VisibilityTimeout": "720",
    "MessageRetentionPeriod": "345600",  # 4 days: messages are wake-ups, a lost one costs latency
    "ReceiveMessageWaitTimeSeconds": "20",
}
DLQ_ATTRIBUTES = {"MessageRetentionPeriod": "1209600"}  # 14 days, the maximum
MAX_RECEIVE_COUNT = 5
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Warehouse:
    """A warehouse on S3: its bucket and key prefix (``""`` at the bucket root, no slashes
    around it)."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> Warehouse:
        parsed = urlparse(url)
        if parsed.scheme not in ("s3", "s3a") or not parsed.netloc:
            raise ConfigurationError(
                f"warehouse {url!r} is not an S3 URL: give it as s3://BUCKET/WAREHOUSE"
            )
        if parsed.query or parsed.fragment:
            raise ConfigurationError(f"warehouse {url!r} has a query or fragment: drop it")
        return cls(bucket=parsed.netloc, prefix=parsed.path.strip("/"))

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def key_prefix(self) -> str:
        """Every key of the warehouse starts with this (``"wh/"``, or ``""`` at the root)."""
        return f"{self.prefix}/" if self.prefix else ""

    @property
    def snapshot_wildcard(self) -> str:
        return f"{self.key_prefix}*/snapshot/snapshot-*"

    @property
    def bucket_arn(self) -> str:
        return f"arn:aws:s3:::{self.bucket}"

    @property
    def probe_prefix(self) -> str:
        return f"{self.key_prefix}{PROBE_TABLE_DIR}/"

    def probe_key(self, number: int) -> str:
        return f"{self.probe_prefix}snapshot/snapshot-{number}"


def _bounded(name: str, limit: int) -> str:
    name = _NAME_UNSAFE.sub("-", name).strip("-")
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{name[: limit - 11]}-{digest}"


def rule_name(warehouse: Warehouse) -> str:
    """The EventBridge rule of a warehouse (at most 64 characters, as EventBridge allows)."""
    return _bounded(f"{OWN_PREFIX}{warehouse.bucket}-{warehouse.prefix}", 64)


def target_id(queue_name: str) -> str:
    """A queue's target id on the rule: one target per consumer group's queue."""
    return _bounded(f"{OWN_PREFIX}{queue_name}", 64)


def event_pattern(warehouse: Warehouse) -> dict[str, Any]:
    """Every table's committed snapshot files under the warehouse (``*`` also matches ``/``)."""
    return {
        "source": ["aws.s3"],
        "detail-type": ["Object Created"],
        "detail": {
            "bucket": {"name": [warehouse.bucket]},
            "object": {"key": [{"wildcard": warehouse.snapshot_wildcard}]},
        },
    }


def pattern_matches(pattern: Mapping[str, Any], bucket: str, key: str) -> bool:
    """Whether an S3 ``Object Created`` event for ``bucket``/``key`` matches ``pattern``.

    Understands what S3 rules use: exact values, ``prefix``, ``suffix`` and ``wildcard``
    filters on ``source``, ``detail-type``, ``detail.bucket.name`` and ``detail.object.key``.
    """
    event = {"source": "aws.s3", "detail-type": "Object Created",
             "detail": {"bucket": {"name": bucket}, "object": {"key": key}}}
    return _matches(event, pattern)


def _matches(event: Any, pattern: Mapping[str, Any]) -> bool:
    for field, wanted in pattern.items():
        value = event.get(field) if isinstance(event, Mapping) else None
        if isinstance(wanted, Mapping):
            if not _matches(value, wanted):
                return False
        elif isinstance(wanted, list):
            if not any(_value_matches(value, option) for option in wanted):
                return False
        else:
            return False
    return True


def _value_matches(value: Any, option: Any) -> bool:
    if not isinstance(option, Mapping):
        return bool(value == option)
    if not isinstance(value, str):
        return False
    if "prefix" in option:
        return value.startswith(str(option["prefix"]))
    if "suffix" in option:
        return value.endswith(str(option["suffix"]))
    if "wildcard" in option:
        return fnmatch.fnmatchcase(value, str(option["wildcard"]).replace("[", "[[]"))
    return False


# bucket notification -----------------------------------------------------------------------
def bucket_rule(warehouse: Warehouse, queue_arn: str, queue_name: str) -> dict[str, Any]:
    """The queue rule for the warehouse prefix (S3 filters by prefix and suffix only, so the
    queue also gets data and manifest files; the feed skips them)."""
    rule: dict[str, Any] = {
        "Id": _bounded(f"{OWN_PREFIX}warehouse-{queue_name}", 255),
        "QueueArn": queue_arn,
        "Events": ["s3:ObjectCreated:*"],
    }
    if warehouse.key_prefix:
        rule["Filter"] = {"Key": {"FilterRules": [{"Name": "prefix", "Value": warehouse.key_prefix}]}}
    return rule


_DESTINATIONS = (
    ("QueueConfigurations", "QueueArn"),
    ("TopicConfigurations", "TopicArn"),
    ("LambdaFunctionConfigurations", "LambdaFunctionArn"),
)


def _filter(rule: Mapping[str, Any], name: str) -> str:
    for item in rule.get("Filter", {}).get("Key", {}).get("FilterRules", []):
        if str(item.get("Name", "")).lower() == name:
            return str(item.get("Value", ""))
    return ""


def rule_matches_key(rule: Mapping[str, Any], key: str) -> bool:
    """Whether a bucket notification rule sends ``ObjectCreated`` for ``key``."""
    created = any(str(e).startswith(("s3:ObjectCreated:", "s3:*")) for e in rule.get("Events", []))
    return created and key.startswith(_filter(rule, "prefix")) and key.endswith(_filter(rule, "suffix"))


def _overlaps(rule: Mapping[str, Any], warehouse: Warehouse) -> bool:
    """S3 refuses two rules whose prefixes and suffixes overlap for the same event type; ours
    has no suffix, so any overlapping prefix with ``ObjectCreated`` events conflicts."""
    created = any(str(e).startswith(("s3:ObjectCreated:", "s3:*")) for e in rule.get("Events", []))
    prefix = _filter(rule, "prefix")
    ours = warehouse.key_prefix
    return created and (prefix.startswith(ours) or ours.startswith(prefix))


def merge_notification(
    current: Mapping[str, Any],
    warehouse: Warehouse,
    *,
    rule: Mapping[str, Any] | None,
    queue_arn: str,
    eventbridge: bool,
) -> tuple[dict[str, Any], list[str]]:
    """The bucket's notification document with our rule merged in; and the ids replaced.

    Other systems' rules are kept. Our own ``paimon-feed-*`` rules for this queue that overlap
    the warehouse (per-table rules, an older warehouse rule) are replaced by ``rule`` (removed
    when ``rule`` is None). A foreign rule, or our rule for another queue, that overlaps the
    warehouse prefix is an error that names it: S3 would refuse the document. ``eventbridge``
    turns the bucket's EventBridge flag on (it is never turned off: other rules may use it).
    """
    merged: dict[str, Any] = {
        k: v for k, v in current.items() if k != "ResponseMetadata" and not (k.endswith("Configurations") and not v)
    }
    replaced: list[str] = []
    for section, arn_key in _DESTINATIONS:
        kept = []
        for existing in current.get(section, []):
            name = str(existing.get("Id", "(no id)"))
            ours = name.startswith(OWN_PREFIX) and existing.get(arn_key) == queue_arn
            if ours and _overlaps(existing, warehouse):
                replaced.append(name)
                continue
            if rule is not None and _overlaps(existing, warehouse):
                owner = "another paimon-feed queue's" if name.startswith(OWN_PREFIX) else "a foreign"
                raise ConfigurationError(
                    f"bucket {warehouse.bucket}: {owner} notification rule {name!r} "
                    f"({existing.get(arn_key)}, prefix {_filter(existing, 'prefix')!r}) overlaps "
                    f"the warehouse prefix {warehouse.key_prefix!r}, and S3 allows one rule per "
                    f"key: use --eventbridge (one rule, several targets), or narrow or remove {name!r}"
                )
            kept.append(dict(existing))
        if section == "QueueConfigurations" and rule is not None:
            kept.append(dict(rule))
        if kept:
            merged[section] = kept
        else:
            merged.pop(section, None)
    if eventbridge:
        merged["EventBridgeConfiguration"] = {}
    return merged, replaced


# policies ----------------------------------------------------------------------------------
def policy_statement(queue_arn: str, *, source_arn: str, account: str, eventbridge: bool) -> dict[str, Any]:
    """Least privilege: only this bucket (or only this rule) may send, only to this queue."""
    service = "events.amazonaws.com" if eventbridge else "s3.amazonaws.com"
    condition: dict[str, Any] = {"ArnEquals": {"aws:SourceArn": source_arn}}
    if not eventbridge:
        condition["StringEquals"] = {"aws:SourceAccount": account}
    return {
        "Sid": _bounded(f"{OWN_PREFIX}{'events' if eventbridge else 's3'}-{source_arn.rsplit(':', 1)[-1]}", 100),
        "Effect": "Allow",
        "Principal": {"Service": service},
        "Action": "sqs:SendMessage",
        "Resource": queue_arn,
        "Condition": condition,
    }


def merge_policy(current: str | None, statement: Mapping[str, Any] | None, *, drop_sids: set[str]) -> str | None:
    """The queue policy with ``statement`` in place of its Sid (others kept); the statements
    whose Sid is in ``drop_sids`` removed. ``None`` when nothing is left."""
    document: dict[str, Any] = json.loads(current) if current else {"Version": "2012-10-17", "Statement": []}
    statements: Any = document.get("Statement", [])
    statements = [statements] if isinstance(statements, Mapping) else list(statements)
    drop = set(drop_sids) | ({statement["Sid"]} if statement else set())
    statements = [s for s in statements if s.get("Sid") not in drop]
    if statement is not None:
        statements.append(dict(statement))
    if not statements:
        return None
    document["Statement"] = statements
    return json.dumps(document, sort_keys=True)


def key_policy_statement(*, source_arn: str, eventbridge: bool) -> dict[str, Any]:
    """What a customer-managed KMS key's policy must allow so S3 (or EventBridge) can send to
    a queue encrypted with it; consumers need ``kms:Decrypt`` on it in their own role."""
    return {
        "Sid": "AllowPaimonFeedNotifications",
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com" if eventbridge else "s3.amazonaws.com"},
        "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
        "Resource": "*",
        "Condition": {"ArnEquals": {"aws:SourceArn": source_arn}},
    }
