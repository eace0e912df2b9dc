"""A WarehouseFeed on an S3 warehouse wired by ``paimon-feed wire``: a table created while the
feed runs is followed because its first commit's event arrives, not because a listing came
round (the discovery interval and the safety check are far longer than the test): the event's
table is opened on its own, the warehouse is not listed again."""

from __future__ import annotations

import asyncio
import os

import pytest
from s3_feed_support import WAIT, s3_catalog, sqs_notifier
from s3_support import s3_catalog_options
from support import tables

from paimon_feed import WarehouseFeed
from paimon_feed.aws import wire

LONGER_THAN_THE_TEST = 600.0  # seconds: discovery_interval and reconcile_interval


@pytest.mark.parametrize("eventbridge", [True, False], ids=["eventbridge", "bucket-notification"])
def test_a_new_tables_first_commit_is_followed_by_its_event(s3_queue, monkeypatch, eventbridge):
    server = s3_queue.server
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint_url)
    # The fixture's own rule covers the bucket; wire a warehouse-wide queue of its own instead.
    server.client("s3").put_bucket_notification_configuration(Bucket=s3_queue.bucket, NotificationConfiguration={})
    wired = wire(f"s3://{s3_queue.bucket}/wh", queue=f"{s3_queue.bucket}-wh-{os.getpid()}", eventbridge=eventbridge)
    assert wired.queue_url is not None
    catalog = s3_catalog(s3_queue)
    old = tables.create_append_table(catalog, "db.old")
    tables.commit(old, 0)

    async def follow(feed: WarehouseFeed, seen: list[tuple[str, int]]) -> None:
        async for batch in feed:
            seen.append((batch.table, batch.snapshot_id))
            if batch.table == "db.born_later":
                return

    async def main() -> tuple[list[tuple[str, int]], int]:
        seen: list[tuple[str, int]] = []
        async with sqs_notifier(server, wired.queue_url) as notifier:
            async with WarehouseFeed(
                f"s3://{s3_queue.bucket}/wh", catalog_options=s3_catalog_options(server, s3_queue.bucket),
                notifier=notifier, start="latest", discovery_interval=LONGER_THAN_THE_TEST,
                reconcile_interval=LONGER_THAN_THE_TEST,
            ) as feed:
                assert sorted(feed.tables()) == ["db.old"]
                new = await asyncio.to_thread(tables.create_append_table, catalog, "db.born_later")
                await asyncio.to_thread(tables.commit, new, 0)
                await asyncio.wait_for(follow(feed, seen), WAIT)
                listings = feed.metrics().listings
        return seen, listings

    assert asyncio.run(main()) == ([("db.born_later", 1)], 1)  # the start's listing only
