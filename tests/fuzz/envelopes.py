"""Envelope strategies for the S3 / SNS / EventBridge parser and the Lambda entry: valid bodies
on every route with what they name, and captured or generated bodies with random changes."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote, quote_plus

from hypothesis import strategies as st

from . import fuzz_strategies
from .fuzz_strategies import MAX_SNAPSHOT_ID

PAYLOADS = Path(__file__).parent.parent / "notifiers" / "payloads"
CAPTURED_BODIES = sorted(
    {body for path in PAYLOADS.glob("*.json") for body in json.loads(path.read_text())["bodies"]}
)

json_values = fuzz_strategies.json_values()

# Keys, buckets and names ---------------------------------------------------------------------
# What a Paimon table path holds: letters of any script, digits, spaces and the punctuation
# that URL-encoding changes. Not '?', '#', ';' or control characters: normalize_table_url()
# parses hint URLs as URLs (and subscriptions the same way), so those do not round-trip.
PATH_CHARS = st.characters(
    categories=["L", "N", "Zs", "So"],
    include_characters="+%=-_.$~'!@&,()*é中😀",
    exclude_characters="/",
)
segments = st.text(alphabet=PATH_CHARS, min_size=1, max_size=12).filter(
    lambda segment: segment not in (".", "..")
)
table_paths = st.lists(segments, max_size=4).map("/".join)
s3_buckets = st.from_regex(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", fullmatch=True)
snapshot_ids = st.integers(min_value=1, max_value=MAX_SNAPSHOT_ID)
any_keys = st.one_of(
    st.text(),
    st.builds(
        lambda table, name: f"{table}/snapshot/{name}" if table else f"snapshot/{name}",
        st.text(max_size=20),
        st.one_of(
            st.builds("snapshot-{}".format, st.integers()),
            st.integers(min_value=19, max_value=6000).map(lambda n: "snapshot-" + "9" * n),
            st.text(alphabet="0123456789٠١٢３", min_size=1).map("snapshot-".__add__),
            st.sampled_from(["LATEST", "EARLIEST", "snapshot-", ".snapshot-3.0a1b.tmp"]),
            st.text(max_size=20),
        ),
    ),
)
any_buckets = st.one_of(
    s3_buckets, st.text(max_size=20), st.sampled_from(["a[b", "x]", "[::1]", "b\uff03c"])
)


def snapshot_key(table_path: str, snapshot_id: int) -> str:
    return f"{table_path}/snapshot/snapshot-{snapshot_id}".lstrip("/")


def table_url_of(bucket: str, table_path: str) -> str:
    return f"s3://{bucket}/{table_path}".rstrip("/")


# Envelopes -----------------------------------------------------------------------------------
def s3_record(
    bucket: object, key: object, event_name: object = "ObjectCreated:Put", size: object = 600
) -> dict:
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": "us-east-1",
        "eventTime": "2026-11-21T00:56:31.478Z",
        "eventName": event_name,
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": "paimon-snapshots",
            "bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
            "object": {"key": key, "size": size, "eTag": "d41d8cd98f00b204e9800998ecf8427e"},
        },
    }


def s3_event(bucket: object, key: object) -> dict:
    return {"Records": [s3_record(bucket, key)]}


def sns_notification(message: str) -> dict:
    return {
        "Type": "Notification",
        "MessageId": "4fdc7fc4-3921-4040-820d-cd8759d5883b",
        "TopicArn": "arn:aws:sns:us-east-1:123456789012:paimon",
        "Message": message,
        "Timestamp": "2026-11-21T00:56:34.529Z",
    }


def eventbridge_event(bucket: object, key: object, detail_type: object = "Object Created") -> dict:
    return {
        "version": "0",
        "detail-type": detail_type,
        "source": "aws.s3",
        "region": "us-east-1",
        "detail": {"bucket": {"name": bucket}, "object": {"key": key, "size": 600}},
    }


def s3_encode(key: str, slash_encoded: bool) -> str:
    """A key as S3 puts it in an event: form-URL-encoded (moto also encodes '/')."""
    return quote_plus(key, safe="" if slash_encoded else "/")


CREATED = ["ObjectCreated:Put", "ObjectCreated:Copy", "s3:ObjectCreated:CompleteMultipartUpload"]


@st.composite
def valid_bodies(draw, routes=("s3", "sns", "sns-raw", "eventbridge")):
    """``(body, [(bucket, table_url, snapshot_id)])``: a body on any route and what it names."""
    route = draw(st.sampled_from(routes))
    count = 1 if route == "eventbridge" else draw(st.integers(min_value=0, max_value=4))
    named = []
    records = []
    for _ in range(count):
        bucket, path, snapshot_id = draw(s3_buckets), draw(table_paths), draw(snapshot_ids)
        named.append((bucket, table_url_of(bucket, path), snapshot_id))
        event_name = draw(st.sampled_from(CREATED))
        size = draw(st.one_of(st.integers(), st.floats(), st.none()))  # huge, negative, absent
        key = s3_encode(snapshot_key(path, snapshot_id), slash_encoded=draw(st.booleans()))
        records.append(s3_record(bucket, key, event_name, size))
    if route == "eventbridge":
        bucket, table_url, snapshot_id = named[0]
        path = table_url[len(f"s3://{bucket}/"):]
        # EventBridge keys are not URL-encoded
        event = eventbridge_event(bucket, snapshot_key(path, snapshot_id))
    else:
        event = {"Records": records}
    if route == "sns":
        event = sns_notification(json.dumps(event, ensure_ascii=draw(st.booleans())))
    indent = draw(st.sampled_from([None, 1]))
    return json.dumps(event, ensure_ascii=draw(st.booleans()), indent=indent), named


def _change(draw, value, depth: int = 0):
    """``value`` (decoded JSON) with one random change somewhere inside it; a string holding
    JSON (an SNS Message, an SQS body) is decoded, changed and encoded again."""
    descend = depth < 8 and draw(st.integers(min_value=0, max_value=9)) < 8
    if isinstance(value, (dict, list)) and value and descend:
        copy = dict(value) if isinstance(value, dict) else list(value)
        slot = draw(st.sampled_from(sorted(copy) if isinstance(copy, dict) else range(len(copy))))
        action = draw(st.sampled_from(["change", "change", "delete", "replace", "add"]))
        if action == "change":
            copy[slot] = _change(draw, copy[slot], depth + 1)
        elif action == "delete":
            del copy[slot]
        elif action == "replace":
            copy[slot] = draw(json_values)
        elif isinstance(copy, dict):
            copy[draw(st.text(max_size=12))] = draw(json_values)
        else:  # a duplicated record, or anything, inserted
            copy.insert(slot, draw(st.one_of(st.just(copy[slot]), json_values)))
        return copy
    if isinstance(value, str) and value.lstrip().startswith("{") and descend:
        try:
            nested = json.loads(value)
        except ValueError:
            nested = None
        if nested is not None:
            return json.dumps(_change(draw, nested, depth + 1))
    if isinstance(value, str) and draw(st.booleans()):
        return draw(
            st.sampled_from(
                [value.upper(), value + "/", quote(value), quote_plus(value, safe=""), value[:-1]]
            )
            | any_keys
            | st.builds(lambda a, b: a + value + b, st.text(max_size=3), st.text(max_size=3))
        )
    return draw(st.one_of(json_values, any_keys, any_buckets))


@st.composite
def mutated_bodies(draw):
    """A captured or generated body with a few random changes, as text or bytes."""
    generated = valid_bodies().map(lambda pair: pair[0])
    body = draw(st.one_of(st.sampled_from(CAPTURED_BODIES), generated))
    event = json.loads(body)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        event = _change(draw, event)
    text = json.dumps(event, ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass") if draw(st.booleans()) else text


any_bodies = st.one_of(
    mutated_bodies(),
    st.builds(lambda key, bucket: json.dumps(s3_event(bucket, key)), any_keys, any_buckets),
    st.builds(lambda key, bucket: json.dumps(eventbridge_event(bucket, key)), any_keys,
              any_buckets),
    st.builds(lambda value: json.dumps(value), json_values),
    st.text(),
    st.binary(),
)
