"""ChangeFeed on ``s3://`` tables, woken by S3 event notifications through a real SQS queue.

Everything runs against a real ``moto_server`` process: pypaimon writes the tables over HTTP,
the bucket's notification configuration sends each object event to the queue, and SqsNotifier
long-polls it. The reconcile interval is far longer than each test, so delivery has to come from
push: the safety net fires at most once, for the short first wait after start-up.
"""

from __future__ import annotations

import asyncio

import pytest
from s3_feed_support import WAIT, S3WriterProcess, eventually, s3_catalog, sqs_notifier
from s3_support import s3_catalog_options
from support import tables
from support.feeds import consume, has_commit

from paimon_feed import ChangeFeed
from paimon_feed.notifiers.sqs import QUEUE_URL_ENV

PUSH_ONLY = 600.0  # reconcile_interval (seconds): longer than any test here


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture
def s3_writer(s3_queue):
    started: list[S3WriterProcess] = []
    options = s3_catalog_options(s3_queue.server, s3_queue.bucket)

    def start(table, first: int, last: int, interval: float = 0.0) -> S3WriterProcess:
        writer = S3WriterProcess(options, table.identifier.get_full_name(), first, last, interval)
        started.append(writer)
        return writer

    yield start
    for writer in started:
        writer.kill()


@pytest.mark.parametrize("kind", ["append", "pk"])
def test_every_committed_row_is_delivered_once_in_order_by_sqs_push_while_a_writer_commits(
    s3_queue, s3_writer, kind
):
    catalog = s3_catalog(s3_queue)
    create = tables.create_append_table if kind == "append" else tables.create_pk_table
    table = create(catalog)
    tables.commit(table, 0)
    s3_queue.purge()  # count only the events of commits made while the feed runs
    last = 16

    async def main():
        async with sqs_notifier(s3_queue.server, s3_queue.queue_url) as notifier:
            async with ChangeFeed(
                table, notifier=notifier, reconcile_interval=PUSH_ONLY, include_row_kind=True,
                max_pending=4,
            ) as feed:
                writer = s3_writer(table, 1, last)
                delivered = await consume(feed, until=has_commit(last), timeout=WAIT)
                await asyncio.to_thread(writer.wait)
                await eventually(
                    lambda: s3_queue.approximate_messages() == 0, what="queue drained"
                )
                return delivered, feed.metrics(), notifier.metrics()

    delivered, metrics, notifier_metrics = run(main())

    delivered.assert_exactly(table, range(0, last + 1), row_kind=True)
    assert delivered.batches[0].kind == "full"
    expected_kind = "changelog" if kind == "pk" else "delta"
    assert {batch.kind for batch in delivered.batches[1:]} <= {expected_kind, "catch-up"}
    if kind == "pk":
        assert {row["_row_kind"] for _, row in delivered.rows} == {"+I", "+U", "-D"}
    # push, not the safety net: sqs hints woke the feed, no fallback, and at most the one
    # short start-up check timed out
    assert metrics.hints_by_source.get("sqs", 0) >= 1
    assert metrics.reconciles <= 1
    assert metrics.fallbacks == 0 and metrics.mode == "push" and metrics.notifier == "sqs"
    assert metrics.last_delivered_snapshot_id == delivered.batches[-1].snapshot_id
    # the writer's data and manifest files made noise in the queue; all of it was cleared
    assert notifier_metrics["hints_dispatched"] == last  # one event per snapshot file, no more
    assert notifier_metrics["messages_malformed"] == 0
    assert notifier_metrics["messages_deleted"] == notifier_metrics["messages_received"]


# --- notifier="auto" ----------------------------------------------------------------------------


@pytest.mark.parametrize("configured_by", ["environment", "argument"])
def test_auto_notifier_picks_sqs_for_an_s3_table_when_a_queue_is_configured(
    s3_queue, monkeypatch, configured_by
):
    # The notifier built by "auto" gets no endpoint argument: boto's own environment variable
    # points it at moto, as AWS_ENDPOINT_URL_SQS would point it at a VPC endpoint.
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", s3_queue.server.endpoint_url)
    if configured_by == "environment":
        monkeypatch.setenv(QUEUE_URL_ENV, s3_queue.queue_url)
        options = {}
    else:
        monkeypatch.delenv(QUEUE_URL_ENV, raising=False)
        options = {"sqs_queue_url": s3_queue.queue_url}
    table = tables.create_append_table(s3_catalog(s3_queue))
    tables.commit(table, 0)

    async def main():
        async with ChangeFeed(table, reconcile_interval=PUSH_ONLY, **options) as feed:
            await consume(feed, until=has_commit(0))
            await asyncio.to_thread(tables.commit, table, 1)
            await asyncio.to_thread(tables.commit, table, 2)
            delivered = await consume(feed, until=has_commit(2))
            return delivered, feed.metrics(), type(feed._lifecycle.notifier).__name__

    delivered, metrics, notifier_type = run(main())

    delivered.assert_exactly(table, [1, 2])
    assert notifier_type == "SqsNotifier"
    assert metrics.notifier == "sqs" and metrics.mode == "push"
    assert metrics.hints_by_source.get("sqs", 0) >= 1
    assert metrics.reconciles <= 1


def test_auto_notifier_polls_an_s3_table_when_no_queue_is_configured(s3_queue, monkeypatch):
    monkeypatch.delenv(QUEUE_URL_ENV, raising=False)
    table = tables.create_append_table(s3_catalog(s3_queue))
    tables.commit(table, 0)

    async def main():
        async with ChangeFeed(table, start="latest", poll_interval=0.2) as feed:
            await asyncio.to_thread(tables.commit, table, 1)
            delivered = await consume(feed, until=has_commit(1))
            return delivered, feed.metrics(), type(feed._lifecycle.notifier).__name__

    delivered, metrics, notifier_type = run(main())

    delivered.assert_exactly(table, [1])
    assert notifier_type == "PollingNotifier"
    assert metrics.notifier == "poll"
    assert metrics.hints_by_source.get("sqs", 0) == 0
