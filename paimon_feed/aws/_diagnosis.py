"""What ``check`` reads in queue policies, pure (no I/O); the keys a message names are read
by :func:`paimon_feed.notifiers.events.keys_in_message`.

>>> policy = '''{"Statement": [{"Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"},
...   "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:1:q",
...   "Condition": {"ArnEquals": {"aws:SourceArn": "arn:aws:s3:::lake"}}}]}'''
>>> policy_allows(policy, "s3.amazonaws.com", "arn:aws:s3:::lake", "arn:aws:sqs:us-east-1:1:q")
True
>>> policy_allows(policy, "s3.amazonaws.com", "arn:aws:s3:::other", "arn:aws:sqs:us-east-1:1:q")
False
>>> policy_allows(policy, "events.amazonaws.com", "arn:aws:events:us-east-1:1:rule/r",
...               "arn:aws:sqs:us-east-1:1:q")
False
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["policy_allows"]

_SOURCE_ARN = "aws:sourcearn"


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern.replace("[", "[[]"))


def _principal_matches(principal: Any, service: str) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, Mapping):
        return False
    return service in _as_list(principal.get("Service")) or "*" in _as_list(principal.get("AWS"))


def _condition_matches(condition: Any, source_arn: str) -> bool:
    """Conditions on ``aws:SourceArn`` must admit ``source_arn``; others (``aws:SourceAccount``)
    are taken as met: the sender is in the account the policy names, or AWS refuses it anyway."""
    if not isinstance(condition, Mapping):
        return True
    for operator, tests in condition.items():
        if not isinstance(tests, Mapping):
            continue
        for key, values in tests.items():
            if str(key).lower() != _SOURCE_ARN:
                continue
            like = "Like" in str(operator)
            if not any(_glob(str(v), source_arn) if like else str(v) == source_arn
                       for v in _as_list(values)):
                return False
    return True


def _statement_applies(statement: Mapping[str, Any], service: str, source_arn: str, queue_arn: str) -> bool:
    actions = [str(a).lower() for a in _as_list(statement.get("Action"))]
    if not any(a in ("*", "sqs:*", "sqs:sendmessage") for a in actions):
        return False
    if not any(_glob(str(r), queue_arn) for r in _as_list(statement.get("Resource", "*"))):
        return False
    return _principal_matches(statement.get("Principal"), service) and _condition_matches(
        statement.get("Condition"), source_arn
    )


def policy_allows(policy: str | None, service: str, source_arn: str, queue_arn: str) -> bool:
    """Whether the queue policy lets ``service`` (``s3.amazonaws.com``,
    ``events.amazonaws.com``) send to ``queue_arn`` on behalf of ``source_arn``: an ``Allow``
    that applies and no ``Deny`` that does."""
    if not policy:
        return False
    try:
        document = json.loads(policy)
    except ValueError:
        return False
    statements = [s for s in _as_list(document.get("Statement")) if isinstance(s, Mapping)]
    applying = [s for s in statements if _statement_applies(s, service, source_arn, queue_arn)]
    return any(s.get("Effect") == "Allow" for s in applying) and not any(
        s.get("Effect") == "Deny" for s in applying
    )
