"""Regenerate the captured SQS message bodies in ``payloads/`` from a real moto server.

Run by hand (not collected by pytest) when moto, pyarrow or pypaimon change how a commit looks
on S3::

    PYTHONPATH=tests python tests/notifiers/capture_payloads.py

Each JSON file holds one scenario: the exact message bodies the queue received, in order, and
the snapshot ids pypaimon committed (read back from the table), so the parser tests can assert
that exactly those snapshots produce hints.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from s3_support import (
    MotoServer,
    S3Queue,
    commit_rows,
    create_table,
    paimon_catalog,
    start_moto_server,
)

PAYLOADS = Path(__file__).resolve().parent / "payloads"
ALL_EVENTS = ("s3:ObjectCreated:*", "s3:ObjectRemoved:*")


def versions() -> dict[str, str]:
    return {name: version(name) for name in ("moto", "pypaimon", "pyarrow")}


def drain_raw(queue: S3Queue) -> list[str]:
    """Every body in the queue, exactly as received (not re-serialized)."""
    sqs = queue.server.client("sqs")
    bodies = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=queue.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1
        ).get("Messages", [])
        if not messages:
            return bodies
        for message in messages:
            bodies.append(message["Body"])
            sqs.delete_message(QueueUrl=queue.queue_url, ReceiptHandle=message["ReceiptHandle"])


def write_tables(server: MotoServer, bucket: str, tables: dict[str, dict]) -> dict[str, list[int]]:
    """Create the tables and commit each batch of ids; returns table URL -> snapshot ids."""
    catalog = paimon_catalog(server, bucket)
    committed = {}
    for identifier, spec in tables.items():
        table = create_table(
            catalog, identifier, primary_keys=spec.get("primary_keys"), options=spec.get("options")
        )
        for ids in spec["commits"]:
            commit_rows(table, ids)
        latest = table.snapshot_manager().get_latest_snapshot()
        committed[table.table_path.rstrip("/")] = list(range(1, latest.id + 1))
    return committed


def save(name: str, scenario: str, bucket: str, bodies: list[str], committed) -> None:
    document = {
        "scenario": scenario,
        "captured_with": versions(),
        "bucket": bucket,
        "committed_snapshots": committed,
        "bodies": bodies,
    }
    path = PAYLOADS / f"{name}.json"
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{path.name}: {len(bodies)} messages, {committed}")


def append_and_pk_tables() -> dict[str, dict]:
    return {
        "db.orders": {"commits": [[1, 2], [3], [4, 5]]},
        "db.users": {
            "primary_keys": ["id"],
            "options": {"bucket": "2", "changelog-producer": "input"},
            "commits": [[1, 2, 3], [2, 4], [1]],
        },
    }


def capture_direct(server: MotoServer) -> None:
    bucket = server.create_bucket("feed-capture-direct")
    queue = server.create_queue("capture-direct")
    queue.bucket = bucket
    server.notify_queue(bucket, queue.queue_arn, events=ALL_EVENTS)
    test_event = drain_raw(queue)
    committed = write_tables(server, bucket, append_and_pk_tables())
    save(
        "s3_direct_commits",
        "S3 -> SQS, ObjectCreated:* and ObjectRemoved:*, no key filter: moto's s3:TestEvent, "
        "then creating and committing an append table (3 commits) and a primary-key table "
        "(bucket=2, changelog-producer=input, 3 commits)",
        bucket,
        test_event + drain_raw(queue),
        committed,
    )


def capture_unicode(server: MotoServer) -> None:
    bucket = server.create_bucket("feed-capture-unicode")
    queue = server.create_queue("capture-unicode")
    queue.bucket = bucket
    server.notify_queue(bucket, queue.queue_arn, prefix="wh/", events=ALL_EVENTS[:1])
    drain_raw(queue)
    committed = write_tables(
        server, bucket, {"dé_db.tést": {"commits": [[1], [2]]}}
    )
    save(
        "s3_direct_unicode_names",
        "S3 -> SQS, ObjectCreated:*, prefix filter 'wh/': a table 'tést' in database 'dé_db'",
        bucket,
        drain_raw(queue),
        committed,
    )


def capture_sns(server: MotoServer, raw: bool) -> None:
    suffix = "raw" if raw else "envelope"
    bucket = server.create_bucket(f"feed-capture-sns-{suffix}")
    queue = server.create_queue(f"capture-sns-{suffix}")
    queue.bucket = bucket
    sns = server.client("sns")
    topic_arn = sns.create_topic(Name=f"capture-{suffix}")["TopicArn"]
    sns.subscribe(
        TopicArn=topic_arn,
        Protocol="sqs",
        Endpoint=queue.queue_arn,
        Attributes={"RawMessageDelivery": "true" if raw else "false"},
    )
    server.client("s3").put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "TopicConfigurations": [{"TopicArn": topic_arn, "Events": ["s3:ObjectCreated:*"]}]
        },
    )
    test_event = drain_raw(queue)
    committed = write_tables(
        server, bucket, {"db.events": {"commits": [[1], [2]]}}
    )
    save(
        f"sns_{suffix}_commits",
        f"S3 -> SNS -> SQS (RawMessageDelivery={raw}): s3:TestEvent, then an append table "
        f"with 2 commits",
        bucket,
        test_event + drain_raw(queue),
        committed,
    )


def capture_eventbridge(server: MotoServer) -> None:
    bucket = server.create_bucket("feed-capture-eventbridge")
    queue = server.create_queue("capture-eventbridge")
    queue.bucket = bucket
    events = server.client("events")
    events.put_rule(
        Name="paimon-snapshots",
        EventPattern=json.dumps(
            {"source": ["aws.s3"], "detail": {"bucket": {"name": [bucket]}}}
        ),
    )
    events.put_targets(Rule="paimon-snapshots", Targets=[{"Id": "q", "Arn": queue.queue_arn}])
    server.client("s3").put_bucket_notification_configuration(
        Bucket=bucket, NotificationConfiguration={"EventBridgeConfiguration": {}}
    )
    drain_raw(queue)
    committed = write_tables(
        server, bucket, {"db.clicks": {"commits": [[1], [2]]}}
    )
    save(
        "eventbridge_commits",
        "S3 -> EventBridge (rule on source aws.s3 and the bucket) -> SQS: an append table with "
        "2 commits, created and removed objects",
        bucket,
        drain_raw(queue),
        committed,
    )


def main() -> None:
    PAYLOADS.mkdir(exist_ok=True)
    server = start_moto_server()
    try:
        capture_direct(server)
        capture_unicode(server)
        capture_sns(server, raw=False)
        capture_sns(server, raw=True)
        capture_eventbridge(server)
    finally:
        server.close()


if __name__ == "__main__":
    main()
