"""Pure parsing of S3 event notifications into :class:`SnapshotHint`\\ s (no I/O).

S3 can announce a new object along three routes, and each reaches a queue or a Lambda in its
own envelope; this module unwraps all of them so the SQS notifier and the Lambda handler share
one parser:

- **S3 → SQS** (or S3 → SNS → SQS with raw message delivery): the body is the S3 event,
  ``{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "s3": ...}]}``.
  Keys in it are form-URL-encoded (``%2F``, ``+`` for a space, UTF-8 percent-escapes).
- **S3 → SNS → SQS**: the body is an SNS notification whose ``Message`` is the S3 event as a
  JSON string.
- **S3 → EventBridge → SQS**: the body is the EventBridge event (``"source": "aws.s3"``,
  ``"detail-type": "Object Created"``), with the key in ``detail.object.key``, *not* encoded.

Only a committed snapshot file, ``<table>/snapshot/snapshot-<N>``, gives a hint. Everything else
a warehouse writes (data files, manifests, schema files, ``.snapshot-N.<uuid>.tmp`` files that
pypaimon renames into place, ``LATEST``/``EARLIEST``, directory markers), deletions, S3's
``s3:TestEvent`` and objects in buckets outside ``buckets`` are understood and give no hint.
What cannot be understood raises :class:`MalformedMessageError`, so the caller can leave it for
the queue's redrive policy.

On S3, pypaimon commits a snapshot by writing ``.snapshot-N.<uuid>.tmp`` and renaming it, which
S3 performs as a copy: the snapshot arrives as ``ObjectCreated:Copy``. Writers that put the file
directly produce ``ObjectCreated:Put`` or ``ObjectCreated:CompleteMultipartUpload``; every
``ObjectCreated:*`` event counts.

>>> body = '''{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Copy",
...   "s3": {"bucket": {"name": "lake"},
...          "object": {"key": "wh/sales.db/orders/snapshot/snapshot-7"}}}]}'''
>>> [(h.table_url, h.snapshot_id, h.source) for h in parse_message(body)]
[('s3://lake/wh/sales.db/orders', 7, 'sqs')]
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any
from urllib.parse import unquote_plus

from paimon_feed._layout import PROBE_TABLE_DIR
from paimon_feed.errors import MAX_REASON_CHARS, MalformedMessageError
from paimon_feed.notifiers.base import SnapshotHint, normalize_table_url
from paimon_feed.start import MAX_SNAPSHOT_ID

__all__ = [
    "keys_in_message",
    "MAX_REASON_CHARS",
    "MalformedMessageError",
    "parse_message",
    "hints_from_event",
    "parse_lambda_event",
    "snapshot_hint_for_object",
]


# The table path is everything before "/snapshot/"; a table at the bucket root has none.
_SNAPSHOT_KEY = re.compile(r"(?:(?P<table>.*)/)?snapshot/snapshot-(?P<id>[0-9]+)", re.DOTALL)




def parse_message(
    body: str | bytes,
    *,
    source: str = "sqs",
    buckets: Collection[str] | None = None,
    detected_at: float | None = None,
) -> list[SnapshotHint]:
    """The snapshot hints in one queue message body, in the order of its records.

    ``buckets``, when given, is the set of bucket names whose events count; others give no
    hint. ``detected_at`` (epoch seconds, default now) is stamped on every hint.

    >>> parse_message('{"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": "lake"}')
    []
    >>> parse_message("not json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    paimon_feed.errors.MalformedMessageError: malformed message: body not JSON ...
    """
    return hints_from_event(_loads(body), source=source, buckets=buckets, detected_at=detected_at)


def hints_from_event(
    event: Any,
    *,
    source: str = "sqs",
    buckets: Collection[str] | None = None,
    detected_at: float | None = None,
) -> list[SnapshotHint]:
    """Like :func:`parse_message`, for a message body already decoded from JSON."""
    stamp = time.time() if detected_at is None else detected_at
    return _hints(event, source, buckets, stamp, depth=0)


def parse_lambda_event(
    event: Any,
    *,
    source: str = "lambda",
    buckets: Collection[str] | None = None,
    detected_at: float | None = None,
    on_malformed: Callable[[MalformedMessageError], None] | None = None,
) -> list[tuple[str | None, list[SnapshotHint]]]:
    """Split a whole Lambda invocation event into ``(message_id, hints)`` pairs.

    An SQS-triggered invocation gives one pair per SQS record, keyed by its ``messageId`` (what
    a handler reports in ``batchItemFailures``); an SNS-triggered one, one pair per SNS record
    keyed by the SNS ``MessageId``. A direct S3 or EventBridge invocation gives one pair with
    ``message_id`` ``None``.

    A malformed record raises :class:`MalformedMessageError` (with ``message_id`` set) unless
    ``on_malformed`` is given: then it is called with the error, the record is left out of the
    result, and the other records are still parsed.

    >>> event = {"Records": [{"eventSource": "aws:sqs", "messageId": "m-1", "body":
    ...     '{"Service": "Amazon S3", "Event": "s3:TestEvent"}'}]}
    >>> parse_lambda_event(event)
    [('m-1', [])]
    >>> bad = {"Records": [{"eventSource": "aws:sqs", "messageId": "m-2", "body": ""}]}
    >>> parse_lambda_event(bad, on_malformed=lambda error: print(error.message_id, error.reason))
    m-2 empty body
    []
    """
    stamp = time.time() if detected_at is None else detected_at
    if isinstance(event, (str, bytes)):
        event = _loads(event)
    if not isinstance(event, Mapping):
        raise MalformedMessageError(f"Lambda event is a {type(event).__name__}, not an object")
    records = event.get("Records")
    first = records[0] if isinstance(records, list) and records else None
    kind = _record_source(first) if isinstance(first, Mapping) else None
    if kind not in ("aws:sqs", "aws:sns"):
        return [(None, _hints(event, source, buckets, stamp, depth=0))]
    assert isinstance(records, list)  # its first record named the source

    pairs: list[tuple[str | None, list[SnapshotHint]]] = []
    for record in records:
        message_id = None
        try:
            if not isinstance(record, Mapping) or _record_source(record) != kind:
                raise MalformedMessageError(f"a Lambda batch of {kind} records has another record")
            if kind == "aws:sqs":
                message_id = _optional_str(record.get("messageId"))
                body, depth = record.get("body"), 0
            else:
                sns = record.get("Sns")
                sns = sns if isinstance(sns, Mapping) else {}
                message_id = _optional_str(sns.get("MessageId"))
                body, depth = sns.get("Message"), 1  # SNS already unwrapped
            if not isinstance(body, str):
                raise MalformedMessageError(f"{kind} record has no string body")
            hints = _hints(_loads(body), source, buckets, stamp, depth=depth)
        except MalformedMessageError as error:
            located = MalformedMessageError(error.reason, message_id)
            if on_malformed is None:
                raise located from None
            on_malformed(located)
            continue
        pairs.append((message_id, hints))
    return pairs


def snapshot_hint_for_object(
    bucket: str,
    key: str,
    *,
    source: str,
    detected_at: float,
    buckets: Collection[str] | None = None,
) -> SnapshotHint | None:
    """The hint for one created object (key already decoded), or ``None`` if it is not one.

    A bucket name that cannot be a URL's host (``[``, ``]``, characters NFKC maps to ``/?#@:``)
    raises :class:`MalformedMessageError`.

    >>> snapshot_hint_for_object("lake", "wh/db.db/t/snapshot/snapshot-3", source="sqs",
    ...                          detected_at=0.0)
    SnapshotHint(table_url='s3://lake/wh/db.db/t', snapshot_id=3, source='sqs', detected_at=0.0)
    >>> snapshot_hint_for_object("lake", "wh/db.db/t/snapshot/LATEST", source="sqs",
    ...                          detected_at=0.0) is None
    True
    >>> snapshot_hint_for_object("lake", "wh/_paimon_feed_probe/snapshot/snapshot-9",
    ...                          source="sqs", detected_at=0.0) is None  # check's probe
    True
    """
    if buckets is not None and bucket not in buckets:
        return None
    match = _SNAPSHOT_KEY.fullmatch(key)
    if match is None:
        return None
    digits = match.group("id")  # int() refuses over 4300 digits: length first
    if len(digits.lstrip("0")) > 19 or not 1 <= int(digits) <= MAX_SNAPSHOT_ID:
        return None  # not a snapshot id Paimon writes (a Java long from 1)
    table_path = match.group("table") or ""
    if table_path.rpartition("/")[2] == PROBE_TABLE_DIR:
        return None  # paimon-feed check's probe: it proves the wiring, it is not a table
    try:
        table_url = normalize_table_url(f"s3://{bucket}/{table_path}")
    except ValueError:  # urlparse: a '[' or ']', or what NFKC turns into '/', '?', '#', '@', ':'
        raise MalformedMessageError(f"bucket name {bucket!r} is not an S3 bucket name") from None
    return SnapshotHint(
        table_url=table_url,
        snapshot_id=int(digits),
        source=source,
        detected_at=detected_at,
    )


# envelopes ----------------------------------------------------------------------------------
def _hints(
    event: Any,
    source: str,
    buckets: Collection[str] | None,
    detected_at: float,
    depth: int,
) -> list[SnapshotHint]:
    if not isinstance(event, Mapping):
        raise MalformedMessageError(f"JSON {type(event).__name__}, not an object")
    if "Records" in event:
        return _s3_records(event["Records"], source, buckets, detected_at)
    if event.get("Event") == "s3:TestEvent":
        return []
    if "Type" in event and ("TopicArn" in event or "Message" in event):
        return _sns_notification(event, source, buckets, detected_at, depth)
    if "detail-type" in event and "source" in event:
        return _eventbridge_event(event, source, buckets, detected_at)
    keys = ", ".join(sorted(map(str, event))[:8])
    raise MalformedMessageError(f"unknown envelope with keys [{keys}]")


def _sns_notification(
    event: Mapping[str, Any],
    source: str,
    buckets: Collection[str] | None,
    detected_at: float,
    depth: int,
) -> list[SnapshotHint]:
    kind = event.get("Type")
    if kind in ("SubscriptionConfirmation", "UnsubscribeConfirmation"):
        return []  # SNS housekeeping, not an object event
    if kind != "Notification":
        raise MalformedMessageError(f"SNS message of Type {kind!r}")
    message = event.get("Message")
    if not isinstance(message, str):
        raise MalformedMessageError("SNS notification without a string Message")
    if depth >= 1:
        raise MalformedMessageError("SNS notification inside an SNS notification")
    return _hints(_loads(message, "SNS Message"), source, buckets, detected_at, depth + 1)


def _s3_records(
    records: Any, source: str, buckets: Collection[str] | None, detected_at: float
) -> list[SnapshotHint]:
    if not isinstance(records, list):
        raise MalformedMessageError(f"Records is a {type(records).__name__}, not a list")
    hints = []
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise MalformedMessageError(f"Records[{index}] is not an object")
        record_source = record.get("eventSource")
        if record_source != "aws:s3":
            raise MalformedMessageError(f"Records[{index}] has eventSource {record_source!r}")
        event_name = record.get("eventName")
        if not isinstance(event_name, str):
            raise MalformedMessageError(f"Records[{index}] has no eventName")
        bucket, key = _path(record.get("s3"), ("bucket", "name"), ("object", "key"), index)
        if not event_name.removeprefix("s3:").startswith("ObjectCreated:"):
            continue
        hint = snapshot_hint_for_object(
            bucket, unquote_plus(key), source=source, detected_at=detected_at, buckets=buckets
        )
        if hint is not None:
            hints.append(hint)
    return hints


def _eventbridge_event(
    event: Mapping[str, Any], source: str, buckets: Collection[str] | None, detected_at: float
) -> list[SnapshotHint]:
    if event.get("source") != "aws.s3":
        raise MalformedMessageError(f"EventBridge event from source {event.get('source')!r}")
    if event.get("detail-type") != "Object Created":
        return []
    bucket, key = _path(event.get("detail"), ("bucket", "name"), ("object", "key"), None)
    hint = snapshot_hint_for_object(
        bucket, key, source=source, detected_at=detected_at, buckets=buckets
    )
    return [hint] if hint is not None else []


# helpers ------------------------------------------------------------------------------------
def _path(
    container: Any, bucket_path: tuple[str, str], key_path: tuple[str, str], index: int | None
) -> tuple[str, str]:
    where = "detail" if index is None else f"Records[{index}].s3"
    values = []
    for path in (bucket_path, key_path):
        value = container
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        if not isinstance(value, str) or not value:
            raise MalformedMessageError(f"{where}.{'.'.join(path)} is missing or not a string")
        values.append(value)
    return values[0], values[1]


def _loads(body: str | bytes, what: str = "body") -> Any:
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedMessageError(f"{what} is not UTF-8 ({exc.reason})") from None
    if not isinstance(body, str):
        raise MalformedMessageError(f"{what} is a {type(body).__name__}, not text")
    if not body.strip():
        raise MalformedMessageError(f"empty {what}")
    try:
        return json.loads(body)
    except RecursionError:
        raise MalformedMessageError(f"{what} nests JSON too deeply") from None
    except ValueError as exc:
        detail = f"{exc.msg} at char {exc.pos}" if isinstance(exc, json.JSONDecodeError) else exc
        raise MalformedMessageError(f"{what} not JSON ({detail}): {body[:60]!r}") from None


def _record_source(record: Mapping[str, Any]) -> Any:
    # SQS and S3 records spell it eventSource, SNS records EventSource.
    return record.get("eventSource", record.get("EventSource"))


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def keys_in_message(body: str) -> set[str]:
    """The object keys an S3 event names, in any of its envelopes (S3, SNS, EventBridge);
    nothing for a body that is none of them. Never raises: ``check`` and the pipe check read
    every message with it, Paimon's or not.

    >>> sorted(keys_in_message('{"detail-type": "Object Created", "source": "aws.s3",'
    ...                        ' "detail": {"object": {"key": "wh/a b"}}}'))
    ['wh/a b']
    >>> keys_in_message("not json")
    set()
    """
    try:
        event = json.loads(body)
    except ValueError:
        return set()
    if isinstance(event, Mapping) and isinstance(event.get("Message"), str):
        return keys_in_message(event["Message"])  # SNS
    if not isinstance(event, Mapping):
        return set()
    keys: set[str] = set()
    detail = event.get("detail")
    if isinstance(detail, Mapping) and isinstance(detail.get("object"), Mapping):
        key = detail["object"].get("key")
        if isinstance(key, str):
            keys.add(key)  # EventBridge: not URL-encoded
    for record in _records_list(event.get("Records")):
        s3 = record.get("s3") if isinstance(record, Mapping) else None
        key = s3.get("object", {}).get("key") if isinstance(s3, Mapping) else None
        if isinstance(key, str):
            keys.add(unquote_plus(key))
    return keys


def _records_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
