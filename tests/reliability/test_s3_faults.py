"""Storage faults on S3: HTTP 503 SlowDown / 500 InternalError between the feed and the bucket.

Everything runs against a real ``moto_server``. pypaimon writes the ``s3://`` table straight to
moto; the feed reads the same bucket through :class:`FaultProxy`, which answers a seeded
fraction of its requests with S3 errors. moto itself cannot inject faults.

pyarrow's S3 client retries 5xx by itself. pypaimon configures it with the AWS *standard*
strategy and 10 attempts, whose backoff (random, up to 20 s per retry) makes a single request
under a permanent fault take about 100 s; so these tests give the feed's S3 file systems a fast
retry strategy with few attempts (``PYARROW_ATTEMPTS``; boto3's, for the planner's one-GET
metadata reads, through ``AWS_MAX_ATTEMPTS``), which lets faults reach the feed's own retries
(``metrics().storage_retries``) in seconds.
"""

from __future__ import annotations

import asyncio
import logging
import os

import pyarrow.fs as pafs
import pytest
from fault_proxy import FaultProxy  # this directory: pytest's rootdir-relative import
from s3_support import s3_catalog_options
from support import tables
from support.feeds import consume, has_commit

from paimon_feed import ChangeFeed, FeedError, StorageError
from paimon_feed.checkpoint import decode_checkpoint

logger = logging.getLogger(__name__)

PYARROW_ATTEMPTS = 2  # pyarrow's own tries per S3 request (pypaimon's default is 10)
WAIT = 60.0  # seconds: generous bounds, never latency claims
# Table metadata the feed plans from (retried by the feed). Data files are read by the
# consumer in batch.to_arrow(), which the feed does not retry, so they are left alone.
METADATA_KEYS = r"/(snapshot|manifest|schema)/"


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture
def fast_pyarrow_retries(monkeypatch):
    """S3 file systems made during the test retry 5xx quickly (AWS default strategy, 25 ms
    scale) and only ``PYARROW_ATTEMPTS`` times."""
    from pypaimon.filesystem.pyarrow_file_io import PyArrowFileIO

    def retry_config(self, max_attempts=10, request_timeout=60, connect_timeout=60):
        return {
            "request_timeout": 10,
            "connect_timeout": 10,
            "retry_strategy": pafs.AwsDefaultS3RetryStrategy(max_attempts=PYARROW_ATTEMPTS),
        }

    monkeypatch.setattr(PyArrowFileIO, "_create_s3_retry_config", retry_config)
    # The planner's one-GET metadata reads go through boto3, which reads these.
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", str(PYARROW_ATTEMPTS))


@pytest.fixture
def fault_proxy(s3_queue):
    """A fault proxy in front of the test's moto server, with no faults yet."""
    seed = int(os.environ.get("FAULT_PROXY_SEED", "20240601"))  # vary it to explore
    logger.info("fault proxy seed %d", seed)
    proxy = FaultProxy(s3_queue.server.endpoint_url, seed=seed).start()
    try:
        yield proxy
    finally:
        proxy.close()
    logger.info("fault proxy: %s", proxy.stats())


def writer_and_feed_tables(s3_queue, proxy, create=tables.create_append_table):
    """The table as the writer sees it (moto directly) and as the feed sees it (the proxy)."""
    direct = tables.catalog(
        f"s3://{s3_queue.bucket}/wh", s3_catalog_options(s3_queue.server, s3_queue.bucket)
    )
    writer_table = create(direct)
    options = s3_catalog_options(s3_queue.server, s3_queue.bucket)
    options["fs.s3.endpoint"] = proxy.endpoint_url
    proxied = tables.catalog(options["warehouse"], options)
    feed_table = proxied.get_table(writer_table.identifier.get_full_name())
    return writer_table, feed_table


def consumer_object(s3_queue, consumer_id: str) -> dict:
    """The consumer file as stored in moto (read directly, never through the proxy)."""
    s3 = s3_queue.server.client("s3")
    keys = [
        item["Key"]
        for item in s3.list_objects_v2(Bucket=s3_queue.bucket, Prefix="wh/").get("Contents", [])
        if item["Key"].endswith(f"/consumer/consumer-{consumer_id}")
    ]
    assert len(keys) == 1, keys
    response = s3.get_object(Bucket=s3_queue.bucket, Key=keys[0])
    return {
        "key": keys[0],
        "body": response["Body"].read(),
        "etag": response["ETag"],
        "last_modified": response["LastModified"],
    }


@pytest.mark.timeout(150)
@pytest.mark.parametrize("kind", ["append", "pk"])
def test_transient_503_and_500_on_the_feeds_reads_lose_and_repeat_nothing(
    s3_queue, fault_proxy, fast_pyarrow_retries, kind
):
    create = tables.create_append_table if kind == "append" else tables.create_pk_table
    writer_table, feed_table = writer_and_feed_tables(s3_queue, fault_proxy, create)
    tables.commit(writer_table, 0)
    last = 8
    # a quarter of the feed's metadata reads fail, as 503 SlowDown or 500 InternalError
    fault_proxy.set_faults(rate=0.25, methods=("GET", "HEAD"), key_pattern=METADATA_KEYS)

    progress = []  # the consumer's Delivered, kept for the report if the test fails

    def until(delivered):
        progress[:] = [delivered]
        return has_commit(last)(delivered)

    async def main():
        async with ChangeFeed(
            feed_table, notifier="poll", poll_interval=0.1, reconcile_interval=0.5,
            include_row_kind=True, max_pending=2,
        ) as feed:
            for n in range(1, last + 1):
                await asyncio.to_thread(tables.commit, writer_table, n)
            delivered = await consume(feed, until=until, timeout=WAIT)
            return delivered, feed.metrics()

    try:
        # consume() bounds the wait for rows; this also bounds closing the feed, which once
        # hung for good (a cancellation lost in the subscription's wait; test_cancellation.py)
        delivered, metrics = run(asyncio.wait_for(main(), 2 * WAIT))
        stats = fault_proxy.stats()
        print(f"\n{kind}: proxy {stats}, feed storage_retries={metrics.storage_retries}")

        delivered.assert_exactly(feed_table, range(0, last + 1), row_kind=True)
        assert delivered.batches[0].kind == "full"
        assert stats["injected"] > 0
        assert set(stats["injected_by_code"]) == {"SlowDown", "InternalError"}
        assert stats["upstream_errors"] == 0
        # Not asserted: how many faults got through pyarrow's tries to the feed's own retries
        # (metrics.storage_retries, printed above; usually 1-3 here, but 0 is possible: the
        # poller swallows its failed probes, and a fault must hit both of pyarrow's tries).
        assert metrics.last_delivered_snapshot_id == delivered.batches[-1].snapshot_id
    except BaseException:
        print(delivery_report(progress[0] if progress else None, fault_proxy))
        raise


def delivery_report(delivered, proxy: FaultProxy, requests: int = 400) -> str:
    """What the consumer got, and which of the latest metadata requests got which answer."""
    lines = [f"proxy {proxy.stats()}", "delivered batches (first..last snapshot, kind, commits):"]
    for index, batch in enumerate(delivered.batches if delivered is not None else ()):
        commits = sorted({row["commit"] for i, row in delivered.rows if i == index})
        lines.append(
            f"  {batch.first_snapshot_id}..{batch.snapshot_id} {batch.kind} "
            f"splits={len(batch.splits)} commits={commits}"
        )
    lines.append(f"the last {requests} metadata requests through the proxy:")
    lines.extend(f"  {line}" for line in proxy.history_lines(METADATA_KEYS)[-requests:])
    return "\n".join(lines)


def test_a_permanent_503_reaches_the_consumer_as_a_storage_error_and_keeps_the_checkpoint(
    s3_queue, fault_proxy, fast_pyarrow_retries
):
    writer_table, feed_table = writer_and_feed_tables(s3_queue, fault_proxy)
    for n in range(3):
        tables.commit(writer_table, n)

    async def main():
        async with ChangeFeed(
            feed_table, consumer_id="etl", notifier="poll", poll_interval=0.1,
            reconcile_interval=0.5,
        ) as feed:
            delivered = await consume(feed, until=has_commit(2), timeout=WAIT)
            before = await asyncio.to_thread(consumer_object, s3_queue, "etl")
            assert decode_checkpoint(before["body"].decode(), before["key"]) == (
                delivered.batches[-1].next_snapshot_id
            )
            # from now on S3 answers every request of the feed with 503 SlowDown
            fault_proxy.set_faults(rate=1.0, methods=None, key_pattern=None)
            fault_proxy.faults = (
                (503, "SlowDown", "Please reduce your request rate."),
            )
            await asyncio.to_thread(tables.commit, writer_table, 3)
            await asyncio.to_thread(tables.commit, writer_table, 4)
            with pytest.raises(FeedError) as failure:
                # the feed retries ~6 s; each try costs pyarrow's own retries
                async for batch in feed:
                    raise AssertionError(f"a batch came through a dead S3: {batch}")
            return delivered, before, failure.value, feed.metrics()

    delivered, before, error, metrics = run(asyncio.wait_for(main(), 3 * WAIT))
    stats = fault_proxy.stats()
    print(f"\npermanent: proxy {stats}, feed storage_retries={metrics.storage_retries}, {error!r}")

    delivered.assert_exactly(feed_table, [0, 1, 2])
    assert isinstance(error, StorageError), repr(error)
    assert feed_table.identifier.get_full_name() in str(error)
    assert metrics.storage_retries >= 6  # the feed's whole backoff ran before giving up
    assert stats["injected_by_code"].get("SlowDown", 0) > 0
    after = consumer_object(s3_queue, "etl")
    assert after == before
    before_next = delivered.batches[-1].next_snapshot_id
    # the consumer stays right after the last committed batch: snapshot 3 (commit 2) is done
    assert decode_checkpoint(after["body"].decode(), after["key"]) == before_next


def test_the_proxy_answers_every_request_delay_ms_later_faulted_or_not(s3_queue):
    """The latency the catch-up benchmark injects: a lower bound per request, so only the
    minimum is checked (a loaded machine may add to it, never take from it)."""
    import time

    import botocore.exceptions

    server = s3_queue.server
    with FaultProxy(server.endpoint_url, delay_ms=150) as proxy:
        proxied = type(server)(port=proxy.port).client("s3")
        started = time.monotonic()
        proxied.head_bucket(Bucket=s3_queue.bucket)
        assert time.monotonic() - started >= 0.15
        proxy.set_faults(rate=1.0)
        started = time.monotonic()
        with pytest.raises(botocore.exceptions.ClientError):
            proxied.head_bucket(Bucket=s3_queue.bucket)  # boto retries: each try waits
        assert time.monotonic() - started >= 0.15
        proxy.set_delay(0)
        assert proxy.delay_ms == 0 and proxy.injected >= 1 and proxy.forwarded == 1
        with pytest.raises(ValueError):
            proxy.set_delay(-1)
