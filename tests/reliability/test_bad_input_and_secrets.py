"""Hostile input is rejected or skipped with a clear message; secrets never leak."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys

import pytest
from support.tables import commit

from paimon_feed import ChangeFeed, InvalidConsumerIdError, InvalidStartError, SqsNotifier
from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers.events import MalformedMessageError, parse_message
from paimon_feed.tables import open_table, parse_table_name, redact

SECRET = "SUPERSECRET-do-not-print-1234"


@pytest.mark.parametrize("consumer_id", ["../../etc/passwd", "..", "a/../../b", "c\\d", "\x00", "ok\n", "٣"])
def test_path_traversal_consumer_ids_are_rejected(append_table, consumer_id):
    with pytest.raises(InvalidConsumerIdError):
        ChangeFeed(append_table, consumer_id=consumer_id)


@pytest.mark.parametrize("name", ["../db.t", "db/../x.t", "db.t/..", "db..t", "db.t.x", "", "db.", ".t"])
def test_path_traversal_table_names_are_rejected(warehouse, name):
    with pytest.raises(ConfigurationError, match="invalid table name"):
        parse_table_name(name)
    with pytest.raises(ConfigurationError):
        open_table(warehouse, name)


@pytest.mark.parametrize(
    "start",
    ["snapshot:" + "9" * 30, "time:-1e9d", "time:99999-01-01", "snapshot:1; rm -rf /", "snapshot:½", "-0x10h"],
)
def test_absurd_start_specs_are_clear_errors(append_table, start):
    commit(append_table, 0)

    async def main():
        async with ChangeFeed(append_table, start=start) as feed:
            await feed.__anext__()

    with pytest.raises(InvalidStartError):
        asyncio.run(main())


@pytest.mark.parametrize(
    "body",
    [
        "x" * 5_000_000,
        "\x00\xff\xfe" * 1000,
        "[" * 100_000,
        '{"Records": ' + "[" * 50_000 + "]" * 50_000 + "}",
    ],
)
def test_huge_binary_and_deep_messages_are_malformed_with_a_short_reason(body):
    with pytest.raises(MalformedMessageError) as info:
        parse_message(body)
    assert len(str(info.value)) < 400


def test_messages_for_other_buckets_give_no_hints():
    body = (
        '{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Copy", '
        '"s3": {"bucket": {"name": "elsewhere"}, "object": {"key": "wh/db.db/t/snapshot/snapshot-3"}}}]}'
    )
    assert parse_message(body, buckets={"mine"}) == []
    assert len(parse_message(body)) == 1


def test_secrets_in_catalog_options_never_reach_stderr():
    result = subprocess.run(
        [
            sys.executable, "-m", "paimon_feed.cli", "-vv", "tail", "s3://no-such-bucket/wh", "db.t",
            "--catalog-option", "fs.s3.endpoint=http://127.0.0.1:9",
            "--catalog-option", "fs.s3.accessKeyId=AKIDEXAMPLE",
            "--catalog-option", f"fs.s3.accessKeySecret={SECRET}",
            "--catalog-option", "fs.s3.path-style-access=true",
        ],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert SECRET not in result.stderr and SECRET not in result.stdout
    assert "db.t" in result.stderr or "no-such-bucket" in result.stderr


def test_redact_masks_secret_looking_options():
    masked = redact({"fs.s3.accessKeySecret": SECRET, "fs.s3.securityToken": SECRET, "fs.s3.accessKeyId": "AKID"})
    assert SECRET not in repr(masked) and masked["fs.s3.accessKeyId"] == "AKID"


def test_a_failing_sqs_notifier_keeps_its_credentials_out_of_logs_and_metrics(caplog):
    async def main():
        notifier = SqsNotifier(
            "http://127.0.0.1:9/123456789012/q",
            endpoint_url="http://127.0.0.1:9",
            region_name="us-east-1",
            aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key=SECRET,
            wait_time_seconds=0,
            failure_threshold=1,
            retry_backoff=(0.05, 0.1),
        )
        async with notifier:
            sub = notifier.subscribe("s3://bucket/wh/db.db/t")
            for _ in range(100):
                if not notifier.healthy:
                    break
                await sub.wait(0.05)
            return notifier.metrics(), repr(notifier), notifier.healthy

    with caplog.at_level(logging.DEBUG):
        metrics, text, healthy = asyncio.run(main())
    assert not healthy
    assert SECRET not in caplog.text and SECRET not in str(metrics) and SECRET not in text


@pytest.mark.parametrize("spec", ["snapshot:٣", "٣", "-٣h", "snapshot:3\n4", "-1h\n-2h"])
def test_non_ascii_digits_and_embedded_newlines_are_not_positions(spec):
    from paimon_feed import parse_start

    with pytest.raises(InvalidStartError):
        parse_start(spec)
