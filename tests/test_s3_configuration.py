"""One S3 configuration: the endpoint set as a catalog option, in ``AWS_ENDPOINT_URL`` or in
``AWS_ENDPOINT_URL_S3`` reaches every client the feed uses (pyarrow through pypaimon for table
files, boto3 for consumer files, aiobotocore for SQS), on a real ``moto_server``; an endpoint
that accepts no connection fails within 5 s, named, in the library, the CLI and the Lambda
handler. (Spark's ``load()`` is covered by tests/spark/test_spark_readme.py.)

Credentials and region come from the environment (the ``s3_queue`` fixture sets them), and the
options set no path-style access: an IP-address endpoint must work without it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest
from s3_support import commit_rows, create_table, free_port, paimon_catalog

from paimon_feed import ChangeFeed, StorageError, open_table
from paimon_feed._s3 import resolve_s3_options

ROUTES = ["fs.s3.endpoint", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"]
CONSUMER = "routes"


def configure(route: str, endpoint: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The catalog options for ``route``; the environment variable set if that is the route."""
    if route == "fs.s3.endpoint":
        return {"fs.s3.endpoint": endpoint}
    monkeypatch.setenv(route, endpoint)
    return {}


@pytest.fixture
def lake(s3_queue):
    """A bucket with ``db.t``: commit 1 writes ids 1 and 2, commit 2 writes id 3."""
    catalog = paimon_catalog(s3_queue.server, s3_queue.bucket)
    table = create_table(catalog, "db.t")
    commit_rows(table, [1, 2])
    commit_rows(table, [3])
    s3_queue.purge()
    return s3_queue


def consumer_file(lake) -> dict:
    body = lake.server.client("s3").get_object(
        Bucket=lake.bucket, Key=f"wh/db.db/t/consumer/consumer-{CONSUMER}"
    )["Body"].read()
    return json.loads(body)


async def drain(feed: ChangeFeed) -> list[int]:
    ids: list[int] = []
    async with feed:
        async for batch in feed:
            ids.extend(batch.to_arrow().column("id").to_pylist())
            await feed.commit(batch)
    return sorted(ids)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("route", ROUTES)
def test_every_endpoint_route_reads_the_table_and_writes_the_consumer_file_on_moto(
    lake, route, monkeypatch
):
    options = configure(route, lake.server.endpoint_url, monkeypatch)
    table = open_table(f"s3://{lake.bucket}/wh", "db.t", options)
    feed = ChangeFeed(table, consumer_id=CONSUMER, start="earliest", end=2, notifier="poll")
    assert asyncio.run(drain(feed)) == [1, 2, 3]  # pyarrow reached moto
    assert consumer_file(lake) == {"nextSnapshot": 3}  # and so did boto3


@pytest.mark.timeout(90)
def test_aws_endpoint_url_also_reaches_the_sqs_notifier(lake, monkeypatch):
    configure("AWS_ENDPOINT_URL", lake.server.endpoint_url, monkeypatch)
    table = open_table(f"s3://{lake.bucket}/wh", "db.t")

    async def follow() -> tuple[list[int], dict]:
        feed = ChangeFeed(
            table, consumer_id=CONSUMER, start="latest", notifier="sqs",
            sqs_queue_url=lake.queue_url, reconcile_interval=3600,
        )
        async with feed:
            await asyncio.sleep(1)  # the receive loop is polling the queue
            await asyncio.to_thread(commit_rows, table, [4])
            batch = await asyncio.wait_for(feed.__anext__(), 60)
            return batch.to_arrow().column("id").to_pylist(), feed.metrics()

    ids, metrics = asyncio.run(follow())
    assert ids == [4]
    assert metrics.hints_by_source.get("sqs", 0) >= 1 and metrics.mode == "push"


@pytest.mark.parametrize("route", ROUTES)
def test_an_endpoint_without_a_listener_fails_within_5_s_naming_it_and_its_route(
    lake, route, monkeypatch
):
    endpoint = f"http://127.0.0.1:{free_port()}"
    options = configure(route, endpoint, monkeypatch)
    started = time.monotonic()
    with pytest.raises(StorageError) as caught:
        open_table(f"s3://{lake.bucket}/wh", "db.t", options)
    assert time.monotonic() - started < 5
    assert f"cannot reach the S3 endpoint {endpoint} (set by {route})" in str(caught.value)


@pytest.mark.parametrize("route", ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"])
def test_the_cli_reads_with_the_endpoint_from_the_environment_and_fails_fast_without_it(
    lake, route, monkeypatch
):
    def tail(endpoint: str) -> subprocess.CompletedProcess:
        monkeypatch.setenv(route, endpoint)
        return subprocess.run(
            [sys.executable, "-m", "paimon_feed.cli", "tail", f"s3://{lake.bucket}/wh", "db.t",
             "--from", "earliest", "--to", "2"],
            capture_output=True, text=True, timeout=60,
        )

    result = tail(lake.server.endpoint_url)
    assert result.returncode == 0, result.stderr
    assert sorted(json.loads(line)["id"] for line in result.stdout.splitlines()) == [1, 2, 3]

    dead = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = tail(dead)
    assert time.monotonic() - started < 15  # 5 s at most for the check, plus Python's start-up
    assert result.returncode == 1 and f"cannot reach the S3 endpoint {dead}" in result.stderr


def test_explicit_options_win_over_the_environment_and_path_style_follows_the_host():
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_REGION": "eu-west-1"}
    assert resolve_s3_options("s3://b/wh", {"fs.s3.endpoint": "https://s3.example.com"}, env) == {
        "fs.s3.endpoint": "https://s3.example.com", "fs.s3.region": "eu-west-1",
    }
    assert resolve_s3_options(
        "s3://b/wh", {}, {"AWS_ENDPOINT_URL": "http://localhost:4566"}
    )["fs.s3.path-style-access"] == "true"
    assert "fs.s3.endpoint" not in resolve_s3_options(
        "s3://b/wh", {}, {**env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}
    )
