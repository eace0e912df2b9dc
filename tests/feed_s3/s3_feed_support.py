"""Helpers for ChangeFeed tests on ``s3://`` tables of a real ``moto_server``.

Tables use the schemas and deterministic rows of ``support.tables`` (every row names the commit
that wrote it), so :class:`support.feeds.Delivered` checks what a feed delivered. Blocking work
(pypaimon commits, boto3 calls) runs in threads or processes so feeds and the SQS receive loop
keep running.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config
from s3_support import MotoServer, S3Queue, s3_catalog_options
from support import tables
from support.feeds import Delivered
from support.fixtures import WRITER, WriterProcess

from paimon_feed.notifiers.sqs import SqsNotifier

__all__ = [
    "WAIT",
    "Follower",
    "QueueRelay",
    "S3WriterProcess",
    "eventually",
    "s3_catalog",
    "send_bucket_events_to",
    "sqs_notifier",
]

WAIT = 90.0  # seconds: a generous bound for waiting on moto, never a latency claim


def s3_catalog(queue: S3Queue) -> Any:
    """pypaimon's filesystem catalog on ``s3://<bucket>/wh`` of the queue's moto server, with
    database ``db`` created (``support.tables.catalog`` with the S3 options)."""
    options = s3_catalog_options(queue.server, queue.bucket)
    return tables.catalog(options["warehouse"], options)


def sqs_notifier(server: MotoServer, queue_url: str, **options: Any) -> SqsNotifier:
    """An SqsNotifier for a queue on ``server``. A short long-poll wait by default: a receive
    cancelled at close keeps waiting inside moto and could hide a later test's message."""
    options.setdefault("wait_time_seconds", 1)
    return SqsNotifier(
        queue_url,
        endpoint_url=server.endpoint_url,
        region_name=server.region,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        **options,
    )


def send_bucket_events_to(server: MotoServer, bucket: str, *queue_arns: str) -> None:
    """Replace the bucket's notification configuration: every ``ObjectCreated`` event goes to
    each queue. (AWS rejects overlapping rules; there an SNS topic fans out. moto accepts them,
    which is all a test tapping the events needs.)"""
    server.client("s3").put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "QueueConfigurations": [
                {"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]} for arn in queue_arns
            ]
        },
    )


async def eventually(
    predicate: Callable[[], bool], timeout: float = WAIT, what: str = "condition"
) -> None:
    """Wait until ``predicate()`` (run in a thread, it may call boto3) is true."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(predicate):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        await asyncio.sleep(0.05)


class Follower:
    """Consumes a feed in the background, committing every batch, for tests in phases.

    ``await follower.until(has_commit(n))`` waits for a condition on what was delivered so far;
    a failure of the feed is raised there instead of a timeout.
    """

    def __init__(self, feed: Any) -> None:
        self.feed = feed
        self.delivered = Delivered()
        self._task: asyncio.Task | None = None

    async def __aenter__(self) -> Follower:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._task.cancel()
        await asyncio.wait({self._task})

    async def _run(self) -> None:
        async for batch in self.feed:
            index = len(self.delivered.batches)
            rows = await asyncio.to_thread(lambda: batch.to_arrow().to_pylist())
            self.delivered.batches.append(batch)
            self.delivered.rows.extend((index, row) for row in rows)
            await self.feed.commit(batch)

    async def until(self, condition: Callable[[Delivered], bool], timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while not condition(self.delivered):
            if self._task.done():
                self._task.result()  # raises the feed's error
                raise AssertionError("the feed ended before the condition was met")
            if time.monotonic() > deadline:
                commits = sorted(set(self.delivered.commits))
                raise AssertionError(f"condition not met within {timeout}s; delivered {commits}")
            await asyncio.sleep(0.05)


class S3WriterProcess(WriterProcess):
    """A writer committing to an ``s3://`` table from another process while a test consumes."""

    def __init__(
        self, catalog_options: dict[str, str], table_name: str, first: int, last: int,
        interval: float = 0.0,
    ) -> None:
        super().__init__(WRITER, json.dumps(catalog_options), table_name, first, last, interval)

    def wait(self, timeout: float = 180) -> None:  # commits to moto are slower than local ones
        super().wait(timeout)


class QueueRelay:
    """Forwards every message of one queue to another queue, ``copies`` times, in a thread.

    To a queue on another moto server (moto delivers a bucket's events only to queues of its
    own server), the relay plays the part of the network between S3 and an SQS endpoint that
    can go down: while the target does not answer, messages are dropped (counted in
    ``dropped``), as events are lost in an outage. With ``copies`` > 1 it duplicates real
    events, as SQS's at-least-once delivery may.
    """

    def __init__(
        self, source: S3Queue, target_server: MotoServer, target_url: str, copies: int = 1
    ) -> None:
        self.source = source
        self.target_server = target_server
        self.target_url = target_url
        self.copies = copies
        self.forwarded = 0
        self.dropped = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="queue-relay", daemon=True)

    def __enter__(self) -> QueueRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        source = self.source.server.client("sqs")
        # One attempt per send: an event that finds the target down is lost, not retried later.
        target = boto3.client(
            "sqs",
            endpoint_url=self.target_server.endpoint_url,
            region_name=self.target_server.region,
            aws_access_key_id=self.target_server.access_key,
            aws_secret_access_key=self.target_server.secret_key,
            config=Config(retries={"total_max_attempts": 1}, connect_timeout=2, read_timeout=10),
        )
        while not self._stop.is_set():
            response = source.receive_message(
                QueueUrl=self.source.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1
            )
            for message in response.get("Messages", []):
                try:
                    for _ in range(self.copies):
                        target.send_message(QueueUrl=self.target_url, MessageBody=message["Body"])
                    self.forwarded += 1
                except Exception:  # noqa: BLE001 - the target is down: the event is lost
                    self.dropped += 1
                source.delete_message(
                    QueueUrl=self.source.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
