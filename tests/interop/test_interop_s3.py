"""Scenario 12: a table on S3 (a real moto_server) written by Java Paimon, followed through
SQS: the object keys Java's commit path produces must wake the feed.

Java (Hadoop's S3A through ``paimon-s3``) writes ``snapshot/.snapshot-N.<uuid>.tmp`` and renames
it, which S3 reports as an ``ObjectCreated:Copy`` of ``snapshot/snapshot-N``, as pypaimon's
commits are; docs/s3.md and the Terraform modules filter on that key prefix.
"""

from __future__ import annotations

import asyncio
from urllib.parse import unquote_plus

from interop_support import assert_same_rows, feed_changes, follow, last_changed_snapshot
from pypaimon import CatalogFactory
from s3_support import s3_catalog_options
from scenarios import COLUMNS

from paimon_feed import ChangeFeed
from paimon_feed.notifiers.sqs import SqsNotifier


def java_s3_options(server) -> dict[str, str]:
    """paimon-s3's options for the moto server (S3A underneath, path-style addressing)."""
    return {
        "s3.endpoint": server.endpoint_url,
        "s3.access-key": server.access_key,
        "s3.secret-key": server.secret_key,
        "s3.endpoint.region": server.region,
        "s3.path.style.access": "true",
    }


def rows(n: int) -> list[dict]:
    return [{"id": n * 10 + i, "commit": n, "payload": f"c{n}-{i}"} for i in range(3)]


def test_java_commits_on_s3_wake_an_sqs_feed_that_delivers_them_exactly(java, s3_queue):
    server = s3_queue.server
    py_options = s3_catalog_options(server, s3_queue.bucket)
    table = java.table(py_options["warehouse"], "db.events", **java_s3_options(server))
    table.create(COLUMNS, primary_keys=["id"], options={"bucket": "2", "changelog-producer": "input"})
    table.write(rows(1))
    s3_queue.purge()  # from here on, the queue holds only what the feed must act on

    notifier = SqsNotifier(
        s3_queue.queue_url,
        endpoint_url=server.endpoint_url,
        region_name=server.region,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        wait_time_seconds=1,
    )
    py_table = CatalogFactory.create(py_options).get_table("db.events")

    async def run():
        async with notifier:
            # A reconcile interval far beyond the test: only SQS messages can wake the feed.
            async with ChangeFeed(
                py_table, start="latest-full", notifier=notifier, reconcile_interval=300.0, include_row_kind=True
            ) as feed:
                delivered = await follow(
                    feed, lambda: [table.write(rows(n)) for n in range(2, 5)], lambda: last_changed_snapshot(table)
                )
                return delivered, feed.metrics()

    delivered, metrics = asyncio.run(run())
    # The feed's first wait after start-up is short (a commit may race the notifier's start);
    # after it, only SQS could wake it within the test: the reconcile interval is 300 s.
    assert metrics.hints_by_source.get("sqs", 0) >= 1 and metrics.reconciles <= 1, metrics
    full = delivered.batches[0]
    assert_same_rows([{k: v for k, v in r.items() if k != "_row_kind"} for i, r in delivered.rows if i == 0], table.read(full.snapshot_id))
    last = delivered.batches[-1].snapshot_id
    assert_same_rows(feed_changes(delivered), table.changes(after=full.snapshot_id, to=last)["rows"], with_kind=True)
    assert {row["commit"] for row in feed_changes(delivered)} == {2, 3, 4}


def test_java_snapshot_keys_on_s3_match_the_documented_notification_filter(java, s3_queue):
    server = s3_queue.server
    py_options = s3_catalog_options(server, s3_queue.bucket)
    table = java.table(py_options["warehouse"], "db.events", **java_s3_options(server))
    table.create(COLUMNS, options={"bucket": "1", "bucket-key": "id"})
    s3_queue.purge()
    snapshots = [table.write(rows(n)) for n in (1, 2)]

    events = [
        (record["eventName"], unquote_plus(record["s3"]["object"]["key"]))
        for body in s3_queue.receive_bodies()
        for record in body.get("Records", [])
    ]
    prefix = "wh/db.db/events/snapshot/snapshot-"  # the filter of docs/s3.md and feed_queue
    matching = [(name, key) for name, key in events if key.startswith(prefix)]
    assert sorted(key for _, key in matching) == [f"{prefix}{n}" for n in snapshots], events
    assert {name for name, _ in matching} == {"ObjectCreated:Copy"}, matching
    # Java's temporary snapshot file does not match, so it never reaches a feed.
    assert any("/snapshot/.snapshot-" in key for _, key in events), events
