"""The SqsNotifier's pipe check on a warehouse wired by ``paimon-feed wire``, on a real moto_server:
while its probes' events arrive, the tables' safety checks wait for ``proven_interval`` (no
storage request to any table between probes); when the wiring is removed, the next probe is
missed within its timeout, a WARNING says so, and every table is back to its short
``reconcile_interval``. Counts, not clocks: requests are read from moto's own log."""

from __future__ import annotations

import asyncio
import logging
import os

import pytest
from s3_feed_support import WAIT, eventually, s3_catalog, sqs_notifier
from s3_support import s3_catalog_options
from support import tables

from paimon_feed import WarehouseFeed
from paimon_feed.aws import wire

SHORT = 0.2  # seconds: reconcile_interval, so an unproven table checks many times per probe
LONG = 600.0  # seconds: discovery and proven intervals, far longer than the test
TABLES = ["db.a", "db.b", "db.c"]


def s3_requests(server, start: int, bucket: str) -> tuple[list[str], int]:
    """The S3 request lines of ``bucket`` in moto's log after byte ``start``, and the new end."""
    data = server.log_path.read_bytes()
    lines = data[start:].decode(errors="replace").splitlines()
    return [line for line in lines if f" /{bucket}/" in line or f" /{bucket}?" in line], len(data)


@pytest.fixture
def follow(s3_queue, monkeypatch):
    """The fixture's bucket as a warehouse of ``TABLES`` (one commit each), and how a test follows
    it: an SqsNotifier on ``queue_url`` probing every ``interval`` s (each probe given ``timeout``
    s), and a WarehouseFeed on it from ``latest``, unproven tables checked every ``SHORT`` s."""
    server, bucket = s3_queue.server, s3_queue.bucket
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint_url)
    catalog = s3_catalog(s3_queue)
    for name in TABLES:
        tables.commit(tables.create_append_table(catalog, name), 0)

    def start(queue_url: str, interval: float, timeout: float):
        notifier = sqs_notifier(server, queue_url, pipe_check_interval=interval, pipe_check_timeout=timeout,
                                proven_interval=LONG)
        feed = WarehouseFeed(
            f"s3://{bucket}/wh", catalog_options=s3_catalog_options(server, bucket), notifier=notifier,
            start="latest", discovery_interval=LONG, reconcile_interval=SHORT,
        )
        return notifier, feed

    return start


def test_probes_keep_tables_quiet_and_a_broken_pipe_brings_the_short_interval_back(s3_queue, follow, caplog):
    server, bucket = s3_queue.server, s3_queue.bucket
    server.client("s3").put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={})
    queue = f"{bucket}-pipe-{os.getpid()}"
    wired = wire(f"s3://{bucket}/wh", queue=queue, eventbridge=True)
    assert wired.queue_url is not None

    async def main() -> None:
        notifier, feed = follow(wired.queue_url, interval=0.5, timeout=5.0)
        async with notifier, feed:
            pipe = notifier.metrics
            await eventually(lambda: pipe()["pipe_checks_heard"] >= 1, what="a first probe's event")
            assert pipe()["pipe_proven"] == [f"s3://{bucket}/wh/"]
            # Past each table's start (its reads, and the short first wait's check) and one probe more.
            await eventually(lambda: all(m.reconciles >= 1 for m in feed.metrics().tables.values()),
                             what="each table's first safety check")
            heard = pipe()["pipe_checks_heard"]
            await eventually(lambda: pipe()["pipe_checks_heard"] > heard, what="one more probe")
            # Proven: a window of three probes costs the tables nothing; each quiet wait is deferred.
            _, start = s3_requests(server, 0, bucket)
            heard = pipe()["pipe_checks_heard"]
            checks = {name: m.reconciles for name, m in feed.metrics().tables.items()}
            await eventually(lambda: pipe()["pipe_checks_heard"] >= heard + 3, what="three more probes")
            window, _ = s3_requests(server, start, bucket)
            after = feed.metrics().tables
            assert {name: m.reconciles for name, m in after.items()} == checks
            assert all(m.safety_checks_deferred > 0 for m in after.values())
            assert [line for line in window if "/wh/db.db/" in line] == []
            probes = [line for line in window if "/wh/_paimon_feed_probe/" in line]
            assert probes and len(probes) == len(window)  # only the probes' PUT and DELETE
            assert pipe()["pipe_checks_missed"] == 0

            # Broken: the rule goes; the next probe is missed and the tables check again.
            await asyncio.to_thread(wire, f"s3://{bucket}/wh", queue=queue, eventbridge=True, remove=True)
            await eventually(lambda: pipe()["pipe_checks_missed"] >= 1, timeout=WAIT, what="a missed probe")
            assert pipe()["pipe_proven"] == []
            checks = {name: m.reconciles for name, m in feed.metrics().tables.items()}
            await eventually(
                lambda: all(m.reconciles >= checks[name] + 2 for name, m in feed.metrics().tables.items()),
                what="safety checks every reconcile_interval again",
            )

    with caplog.at_level(logging.INFO, logger="paimon_feed"):
        asyncio.run(main())
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("pipe from S3 to the queue failed" in message and f"s3://{bucket}/wh/" in message
               for message in warnings), warnings


def test_a_warehouse_whose_probe_never_arrives_is_not_probed_again(s3_queue, follow, caplog):
    """The fixture's queue gets no event for the probe's key (its rule is replaced by one for
    another prefix): the check turns itself off with one INFO line, tables keep the short interval."""
    server, bucket = s3_queue.server, s3_queue.bucket
    server.client("s3").put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "QueueConfigurations": [{"QueueArn": s3_queue.queue_arn, "Events": ["s3:ObjectCreated:*"],
                                 "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "wh/db.db/"}]}}}]})

    async def main() -> None:
        notifier, feed = follow(s3_queue.queue_url, interval=0.2, timeout=1.0)
        async with notifier, feed:
            await eventually(lambda: notifier.metrics()["pipe_checks_missed"] == 1, what="the first probe missed")
            checks = feed.metrics().tables["db.a"].reconciles
            await eventually(lambda: feed.metrics().tables["db.a"].reconciles >= checks + 3, what="safety checks")
            assert notifier.metrics()["pipe_checks_put"] == 1  # not probed again
            assert feed.metrics().tables["db.a"].safety_checks_deferred == 0

    with caplog.at_level(logging.INFO, logger="paimon_feed"):
        asyncio.run(main())
    messages = [(r.levelno, r.getMessage()) for r in caplog.records if "pipe check of" in r.getMessage()]
    assert [level for level, _ in messages] == [logging.INFO], messages
