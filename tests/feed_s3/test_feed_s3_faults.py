"""ChangeFeed on s3:// tables when the S3 → SQS path misbehaves: lost, duplicated, stale and
foreign events, and an SQS endpoint that goes down and comes back (DESIGN invariants 1 and 3).

Everything is real: pypaimon commits to a ``moto_server``, S3 sends the events to SQS, and the
faults are made with SQS's own API (queue attributes, purge, re-sent copies of real messages)
or by stopping the server that hosts the queue.
"""

from __future__ import annotations

import asyncio
import json

from s3_feed_support import (
    Follower,
    QueueRelay,
    eventually,
    s3_catalog,
    send_bucket_events_to,
    sqs_notifier,
)
from s3_support import start_moto_server
from support import tables
from support.feeds import has_commit

from paimon_feed import ChangeFeed

PUSH_ONLY = 600.0  # reconcile_interval (seconds): longer than any test here


async def commit_range(table, first: int, last: int) -> None:
    for n in range(first, last + 1):
        await asyncio.to_thread(tables.commit, table, n)


def test_events_purged_from_the_queue_are_made_up_for_by_the_reconcile_safety_net(s3_queue):
    table = tables.create_append_table(s3_catalog(s3_queue))
    tables.commit(table, 0)
    s3_queue.purge()
    sqs = s3_queue.server.client("sqs")

    def hold_new_events(seconds: int) -> None:
        sqs.set_queue_attributes(
            QueueUrl=s3_queue.queue_url, Attributes={"DelaySeconds": str(seconds)}
        )

    async def main():
        async with sqs_notifier(s3_queue.server, s3_queue.queue_url) as notifier:
            async with ChangeFeed(table, notifier=notifier, reconcile_interval=1.0) as feed:
                async with Follower(feed) as follower:
                    await commit_range(table, 1, 3)
                    await follower.until(has_commit(3))
                    await eventually(lambda: s3_queue.approximate_messages() == 0, what="drained")
                    pushed = notifier.hints_dispatched

                    # From here on S3's events wait in the queue, invisible, until the purge
                    # throws them away: the feed never hears of commits 4..8.
                    await asyncio.to_thread(hold_new_events, 900)
                    await commit_range(table, 4, 8)
                    await asyncio.to_thread(sqs.purge_queue, QueueUrl=s3_queue.queue_url)
                    await follower.until(has_commit(8))
                    lost = feed.metrics(), notifier.hints_dispatched

                    await asyncio.to_thread(hold_new_events, 0)
                    await commit_range(table, 9, 9)
                    await follower.until(has_commit(9))
                    await eventually(
                        lambda: notifier.hints_dispatched > pushed, what="events flowing again"
                    )
                    return follower.delivered, pushed, lost

    delivered, pushed, (lost_metrics, dispatched_while_lost) = asyncio.run(main())

    delivered.assert_exactly(table, range(0, 10))
    assert pushed == 3  # commits 1..3 came by push
    assert dispatched_while_lost == pushed  # not one event of commits 4..8 reached the feed
    assert lost_metrics.reconciles >= 1
    assert lost_metrics.hints_by_source.get("reconcile", 0) >= 1
    assert lost_metrics.fallbacks == 0 and lost_metrics.mode == "push"  # SQS itself was fine


def test_duplicated_stale_and_foreign_messages_never_duplicate_a_batch(s3_queue):
    catalog = s3_catalog(s3_queue)
    followed = tables.create_append_table(catalog, "db.followed")
    other = tables.create_append_table(catalog, "db.other")
    for n in range(3):
        tables.commit(followed, n)
        tables.commit(other, n)
    # Real events, already stale when the feed starts: snapshots 1..3 of both tables, and the
    # data, manifest and LATEST files around them.
    captured = [json.dumps(body) for body in s3_queue.receive_bodies(wait_seconds=0)]
    snapshot_events = [body for body in captured if "%2Fsnapshot%2Fsnapshot-" in body]
    assert len(snapshot_events) == 6
    # A second queue taps the bucket's events; the relay re-sends each of them twice more to
    # the feed's queue, so every live event arrives three times.
    tap = s3_queue.server.create_queue(f"{s3_queue.bucket}-tap")
    send_bucket_events_to(s3_queue.server, s3_queue.bucket, s3_queue.queue_arn, tap.queue_arn)

    replays = 0
    sqs = s3_queue.server.client("sqs")

    def replay_stale() -> None:
        nonlocal replays
        replays += 1
        for body in captured + snapshot_events:  # the snapshot events twice
            sqs.send_message(QueueUrl=s3_queue.queue_url, MessageBody=body)

    async def main():
        async with sqs_notifier(s3_queue.server, s3_queue.queue_url) as notifier:
            async with ChangeFeed(
                followed, notifier=notifier, reconcile_interval=PUSH_ONLY
            ) as feed:
                async with Follower(feed) as follower:
                    with QueueRelay(tap, s3_queue.server, s3_queue.queue_url, copies=2):
                        await follower.until(has_commit(2))  # the full batch of snapshot 3
                        await asyncio.to_thread(replay_stale)
                        for n in range(3, 11):
                            await asyncio.to_thread(tables.commit, followed, n)
                            if n % 3 == 0:
                                await asyncio.to_thread(tables.commit, other, n)
                                await asyncio.to_thread(replay_stale)
                        await follower.until(has_commit(10))
                        await eventually(
                            lambda: tap.approximate_messages() == 0
                            and s3_queue.approximate_messages() == 0,
                            what="every copy sent and received",
                        )
                    # Any batch the copies caused is now planned; a last commit's batch would
                    # come after it, and assert_exactly below would see the repeat.
                    await asyncio.to_thread(tables.commit, followed, 11)
                    await follower.until(has_commit(11))
                    return follower.delivered, feed.metrics(), notifier.metrics()

    delivered, metrics, notifier_metrics = asyncio.run(main())

    delivered.assert_exactly(followed, range(0, 12))
    assert delivered.batches[0].kind == "full" and delivered.batches[0].snapshot_id == 3
    # every copy before the last commit was handed to the feed: 3 of each live event of
    # commits 3..10, and 2 stale events of each of the followed table's 3 snapshots per replay
    assert notifier_metrics["hints_dispatched"] >= 3 * 8 + replays * 2 * 3
    # the other table's events (stale ones each replay, 3 copies of each live one) woke nobody
    assert notifier_metrics["hints_unmatched"] >= replays * 2 * 3 + 3 * 3
    assert metrics.hints_by_source["sqs"] > len(delivered.batches)  # duplicates did arrive
    assert metrics.reconciles <= 1


def test_feed_falls_back_to_polling_while_sqs_is_down_and_returns_to_push(s3_queue):
    table = tables.create_append_table(s3_catalog(s3_queue))
    tables.commit(table, 0)
    s3_queue.purge()
    sqs_server = start_moto_server()  # the queue's own server: this test stops and restarts it
    try:
        queue = sqs_server.create_queue("feed-outage")

        async def main():
            notifier = sqs_notifier(
                sqs_server, queue.queue_url, failure_threshold=2, retry_backoff=(0.1, 0.5)
            )
            async with notifier, ChangeFeed(
                table, notifier=notifier, reconcile_interval=PUSH_ONLY, poll_interval=0.2
            ) as feed, Follower(feed) as follower:
                with QueueRelay(s3_queue, sqs_server, queue.queue_url) as relay:
                    await commit_range(table, 1, 3)
                    await follower.until(has_commit(3))
                    await eventually(
                        lambda: feed.metrics().hints_by_source.get("sqs", 0) >= 1,
                        what="push hints",
                    )
                    pushed = feed.metrics()

                    await asyncio.to_thread(sqs_server.stop)
                    await eventually(
                        lambda: feed.metrics().mode == "fallback-poll", what="fallback"
                    )
                    await commit_range(table, 4, 8)  # S3 still answers; SQS does not
                    await follower.until(has_commit(8))
                    down = feed.metrics()

                    await asyncio.to_thread(sqs_server.start)  # same port, empty state
                    await asyncio.to_thread(sqs_server.create_queue, "feed-outage")
                    await eventually(lambda: feed.metrics().mode == "push", what="back to push")
                    recovered = feed.metrics()
                    await commit_range(table, 9, 11)
                    await follower.until(has_commit(11))
                    await eventually(
                        lambda: feed.metrics().hints_by_source.get("sqs", 0)
                        > recovered.hints_by_source.get("sqs", 0),
                        what="push hints after recovery",
                    )
                    return follower.delivered, pushed, down, feed.metrics(), relay.dropped

        delivered, pushed, down, after, dropped = asyncio.run(main())
    finally:
        sqs_server.close()

    delivered.assert_exactly(table, range(0, 12))
    assert pushed.mode == "push" and pushed.fallbacks == 0
    assert down.mode == "fallback-poll" and not down.push_healthy
    assert down.fallbacks == 1
    assert down.hints_by_source.get("fallback-poll", 0) >= 1  # polling S3 found commits 4..8
    assert dropped >= 1  # events of the outage never reached SQS
    assert after.mode == "push" and after.push_healthy
    assert after.fallbacks == 1  # one outage, one fallback
