"""One SQS queue and one SqsNotifier serving many ChangeFeeds of s3:// tables in one process."""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from s3_feed_support import WAIT, eventually, s3_catalog, sqs_notifier
from support import tables
from support.feeds import consume, has_commit

from paimon_feed import ChangeFeed

PUSH_ONLY = 600.0  # reconcile_interval (seconds): longer than the test


@pytest.mark.slow  # ~30 s: 21 tables created and committed on moto (~10 ms per request)
def test_one_notifier_shared_by_many_feeds_gives_each_feed_all_and_only_its_tables_batches(
    s3_queue,
):
    # t1 and t10..t19 share a prefix on purpose; so do t2, t20 and t21. Commit counts differ
    # between neighbours, every fifth table has a primary key, and t21 is followed by nobody.
    # The tables start empty: each feed first waits for its table's first commit.
    followed = [f"t{i}" for i in range(1, 21)]
    unfollowed = "t21"
    last_commit = {name: 1 + i % 2 for i, name in enumerate(followed)}
    last_commit[unfollowed] = 2

    def create(names: list[str]) -> dict:
        catalog = s3_catalog(s3_queue)
        made = {}
        for name in names:
            primary_key = int(name[1:]) % 5 == 0
            create = tables.create_pk_table if primary_key else tables.create_append_table
            made[name] = create(catalog, f"db.{name}")
        return made

    with ThreadPoolExecutor(max_workers=4) as pool:
        chunks = [[*followed, unfollowed][i::4] for i in range(4)]
        table_of = {k: v for made in pool.map(create, chunks) for k, v in made.items()}
    s3_queue.purge()  # directory markers and schema files: not what this test counts

    def write_round(n: int) -> None:
        due = [name for name in table_of if last_commit[name] >= n]
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda name: tables.commit(table_of[name], n), due))

    async def main():
        async with sqs_notifier(s3_queue.server, s3_queue.queue_url) as notifier:
            async with contextlib.AsyncExitStack() as stack:
                feeds = {
                    name: await stack.enter_async_context(
                        ChangeFeed(table_of[name], notifier=notifier, reconcile_interval=PUSH_ONLY)
                    )
                    for name in followed
                }
                for n in (1, 2):  # commit n to every table that has one
                    await asyncio.to_thread(write_round, n)
                delivered = dict(
                    zip(
                        feeds,
                        await asyncio.gather(
                            *(
                                consume(feed, until=has_commit(last_commit[name]), timeout=WAIT)
                                for name, feed in feeds.items()
                            )
                        ),
                    )
                )
                await eventually(lambda: s3_queue.approximate_messages() == 0, what="queue drained")
                # every hint was dispatched before its message was deleted; wait for each
                # feed to have taken its own, then look for any it should not have had
                await eventually(
                    lambda: all(
                        feed.metrics().hints_by_source.get("sqs", 0) >= last_commit[name]
                        for name, feed in feeds.items()
                    ),
                    what="every feed woken by its hints",
                )
                metrics = {name: feed.metrics() for name, feed in feeds.items()}
                return delivered, metrics, notifier.metrics(), notifier.subscribed_tables()

    delivered, metrics, notifier_metrics, subscribed = asyncio.run(main())

    assert len(subscribed) == len(followed) == 20
    for name in followed:
        table = table_of[name]
        delivered[name].assert_exactly(table, range(1, last_commit[name] + 1))
        assert {batch.table for batch in delivered[name].batches} == {f"db.{name}"}
        # exactly one hint per commit of its own table: nothing from t1 reached t10 or back
        assert metrics[name].hints_by_source.get("sqs") == last_commit[name], name
        assert delivered[name].batches[0].kind == "full"  # the first commit, read in full
        assert metrics[name].reconciles <= 1 and metrics[name].fallbacks == 0, name
    assert notifier_metrics["hints_dispatched"] == sum(last_commit[name] for name in followed)
    assert notifier_metrics["hints_unmatched"] == last_commit[unfollowed]
    assert notifier_metrics["messages_deleted"] == notifier_metrics["messages_received"]
