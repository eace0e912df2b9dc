"""Degradation is loud, once, at the start (DESIGN invariant 16), on a real ``moto_server``.

A queue asked for (by ``notifier="sqs"``, by giving its URL to ``auto``, or as an ``SqsNotifier``)
that does not exist, or that these credentials may not read, fails the feed's start with a
``ConfigurationError`` naming the queue and what to do (the CLI exits 2) instead of polling
without a word; ``notifier="auto"`` on ``s3://`` without a queue polls and says so in one
WARNING at the start, with what it costs and how to enable push (the CLI shows it without
``-v``). A push source that fails later falls back to polling (``test_feed_s3_faults.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys

import boto3
import pytest
from s3_feed_support import s3_catalog, sqs_notifier
from s3_support import s3_catalog_options, start_moto_server
from support import tables
from support.feeds import consume, has_commit

from paimon_feed import ChangeFeed, ConfigurationError, WarehouseFeed, open_table
from paimon_feed.notifiers.sqs import QUEUE_URL_ENV

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def missing_queue_url(s3_queue) -> str:
    return f"{s3_queue.server.endpoint_url}/123456789012/no-such-queue"


@pytest.fixture
def table(s3_queue, monkeypatch):
    monkeypatch.delenv(QUEUE_URL_ENV, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", s3_queue.server.endpoint_url)  # notifiers made by name
    table = tables.create_append_table(s3_catalog(s3_queue))
    tables.commit(table, 0)
    return table


async def first_batch(feed: ChangeFeed) -> None:
    async with feed:
        async for _batch in feed:
            pytest.fail("a batch was delivered by a feed whose queue does not exist")


@pytest.mark.parametrize("asked", ["sqs by name", "auto with its URL", "an SqsNotifier"])
def test_a_missing_queue_asked_for_fails_the_start_naming_it(s3_queue, table, asked):
    url = missing_queue_url(s3_queue)
    if asked == "sqs by name":
        feed = ChangeFeed(table, notifier="sqs", sqs_queue_url=url, start="earliest")
    elif asked == "auto with its URL":
        feed = ChangeFeed(table, sqs_queue_url=url, start="earliest")
    else:
        feed = ChangeFeed(table, notifier=sqs_notifier(s3_queue.server, url), start="earliest")
    with pytest.raises(ConfigurationError) as raised:
        asyncio.run(first_batch(feed))
    message = str(raised.value)
    assert f"SQS queue {url} does not exist" in message
    assert "check the queue URL (account, region and name)" in message


@pytest.fixture(scope="module")
def guarded():
    """A second moto that checks credentials after its first three requests, which make user
    ``writer`` (allowed everything): the tests' usual fake credentials are unknown to it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INITIAL_NO_AUTH_ACTION_COUNT", "3")
        server = start_moto_server()
    try:
        iam = server.client("iam")
        iam.create_user(UserName="writer")
        key = iam.create_access_key(UserName="writer")["AccessKey"]
        allow_all = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="writer", PolicyName="all", PolicyDocument=json.dumps(allow_all))
        yield server, {"fs.s3.accessKeyId": key["AccessKeyId"], "fs.s3.accessKeySecret": key["SecretAccessKey"]}
    finally:
        server.close()


def test_a_queue_these_credentials_may_not_read_fails_the_start_naming_it(guarded, table):
    server, _writer = guarded
    url = f"{server.endpoint_url}/123456789012/guarded"
    notifier = sqs_notifier(server, url)

    async def main():
        try:
            await first_batch(ChangeFeed(table, notifier=notifier, start="earliest"))
        finally:
            await notifier.close()

    with pytest.raises(ConfigurationError) as raised:
        asyncio.run(main())
    assert f"these credentials may not read SQS queue {url}" in str(raised.value)
    assert "allow sqs:ReceiveMessage and sqs:DeleteMessage" in str(raised.value)
    assert notifier.metrics()["healthy"] is False


def test_s3_refusing_the_credentials_is_an_error_naming_the_table_and_what_to_configure(guarded, monkeypatch):
    """Before: ``RuntimeError: Failed to load schema ... ACCESS_DENIED ... No response body``."""
    server, writer = guarded
    for name, value in server.credentials_env.items():  # credentials the server does not know
        monkeypatch.setenv(name, value)
    bucket = f"denied-{os.getpid()}"
    boto3.client("s3", endpoint_url=server.endpoint_url, region_name=server.region,
                 aws_access_key_id=writer["fs.s3.accessKeyId"],
                 aws_secret_access_key=writer["fs.s3.accessKeySecret"]).create_bucket(Bucket=bucket)
    options = s3_catalog_options(server, bucket)
    tables.commit(tables.create_append_table(tables.catalog(options["warehouse"], {**options, **writer})), 0)
    unknown = {k: v for k, v in options.items() if k not in writer}  # credentials from the environment

    with pytest.raises(ConfigurationError) as raised:
        open_table(options["warehouse"], "db.events", unknown)
    message = str(raised.value)
    assert message.startswith(f"table db.events of warehouse s3://{bucket}/wh: access denied (")
    assert "ACCESS_DENIED" in message and "configure S3 credentials that may read it" in message

    catalog = [f"--catalog-option={k}={v}" for k, v in unknown.items() if k != "warehouse"]
    result = subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "tail", options["warehouse"], "db.events", *catalog],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"paimon-feed: error: table db.events of warehouse s3://{bucket}/wh: access denied")
    assert "AWS_ACCESS_KEY_ID" in result.stderr and "Traceback" not in result.stderr


def test_a_warehouse_feed_with_a_missing_queue_fails_its_start_even_when_tables_are_skipped(s3_queue, table):
    options = s3_catalog_options(s3_queue.server, s3_queue.bucket)
    feed = WarehouseFeed(options["warehouse"], catalog_options=options, notifier="sqs",
                         sqs_queue_url=missing_queue_url(s3_queue), on_table_error="skip")

    async def main():
        async with feed:
            pass

    with pytest.raises(ConfigurationError, match="does not exist"):
        asyncio.run(main())


def test_auto_without_a_queue_polls_and_warns_once_at_the_start_with_the_cost(table, caplog):
    async def main():
        async with ChangeFeed(table, start="latest", poll_interval="500ms") as feed:
            await asyncio.to_thread(tables.commit, table, 1)
            return await consume(feed, until=has_commit(1)), feed.metrics()

    with caplog.at_level(logging.WARNING, logger="paimon_feed"):
        delivered, metrics = asyncio.run(main())
    delivered.assert_exactly(table, [1])
    assert metrics.notifier == "poll"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    (warning,) = warnings
    assert "no SQS queue is configured, so notifier='auto' polls S3" in warning
    assert "one request every 0.5 s while commits come, up to 7,200 S3 requests an hour per table" in warning
    assert "720 an hour when idle" in warning
    assert "sqs_queue_url=" in warning and "--sqs-queue-url" in warning


def test_asking_for_polling_says_nothing(table, caplog):
    async def main():
        async with ChangeFeed(table, notifier="poll", start="earliest") as feed:
            await consume(feed, until=has_commit(0))

    with caplog.at_level(logging.WARNING, logger="paimon_feed"):
        asyncio.run(main())
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def cli_tail(s3_queue, *arguments: str) -> subprocess.CompletedProcess:
    options = s3_catalog_options(s3_queue.server, s3_queue.bucket)
    catalog = [f"--catalog-option={k}={v}" for k, v in options.items() if k != "warehouse"]
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "tail", options["warehouse"], "db.events",
         "--from", "earliest", "--to", "1", *catalog, *arguments],
        capture_output=True, text=True, timeout=120, env=env,
    )


def test_the_cli_exits_2_on_a_missing_queue_and_warns_without_v_when_it_polls(s3_queue, table):
    name = table.identifier.get_full_name()
    assert name == "db.events"
    refused = cli_tail(s3_queue, "--sqs-queue-url", missing_queue_url(s3_queue))
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert f"paimon-feed: error: SQS queue {missing_queue_url(s3_queue)} does not exist" in refused.stderr

    polled = cli_tail(s3_queue)
    assert polled.returncode == 0, polled.stderr
    assert [json.loads(line)["commit"] for line in polled.stdout.splitlines()] == [0, 0, 0]
    notes = [line for line in polled.stderr.splitlines() if "polls S3" in line]
    assert len(notes) == 1 and notes[0].startswith("paimon-feed: note: s3://"), polled.stderr
    assert "up to 3,600 S3 requests an hour per table" in notes[0]
