"""SqsNotifier against a real moto_server: pypaimon commits to s3:// tables, S3 notifies SQS.

Async tests run their coroutine with ``asyncio.run``; blocking work (pypaimon commits, boto3
calls to inspect the queue) runs in threads so the notifier's receive loop keeps going.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from s3_support import (
    S3Queue,
    commit_rows,
    create_table,
    free_port,
    paimon_catalog,
    start_moto_server,
)

from paimon_feed.errors import ConfigurationError, FeedClosedError, NotifierError
from paimon_feed.notifiers.base import Subscription
from paimon_feed.notifiers.sqs import (
    QUEUE_URL_ENV,
    MissingDependencyError,
    SqsNotifier,
    queue_url_from_env,
)

WAIT = 30.0  # seconds: generous upper bound for an event to cross moto, never a latency claim


def notifier_for(queue: S3Queue, **options) -> SqsNotifier:
    options.setdefault("wait_time_seconds", 1)
    return SqsNotifier(
        queue.queue_url,
        endpoint_url=queue.server.endpoint_url,
        region_name=queue.server.region,
        aws_access_key_id=queue.server.access_key,
        aws_secret_access_key=queue.server.secret_key,
        **options,
    )


def snapshot_body(bucket: str, table_path: str, snapshot_id: int) -> str:
    """An S3 -> SQS event body for a snapshot file, encoded the way S3 encodes keys."""
    key = f"{table_path}/snapshot/snapshot-{snapshot_id}".replace("/", "%2F")
    record = {
        "eventSource": "aws:s3",
        "eventName": "ObjectCreated:Copy",
        "s3": {"bucket": {"name": bucket}, "object": {"key": key}},
    }
    return json.dumps({"Records": [record]})


async def hints_until(subscription: Subscription, snapshot_id: int, timeout: float = WAIT):
    """Wait until a hint for ``snapshot_id`` (or later) arrived; return (max id, hint count)."""
    deadline = time.monotonic() + timeout
    count = 0
    while True:
        remaining = deadline - time.monotonic()
        wake = await subscription.wait(max(remaining, 0.0))
        count += wake.sources.get("sqs", 0)
        if wake.max_snapshot_id is not None and wake.max_snapshot_id >= snapshot_id:
            return wake.max_snapshot_id, count
        if remaining <= 0:
            raise AssertionError(f"no hint for snapshot {snapshot_id} within {timeout}s")


async def eventually(predicate, timeout: float = WAIT, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(predicate):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        await asyncio.sleep(0.1)


# end to end with pypaimon --------------------------------------------------------------------
def test_pypaimon_commit_wakes_the_subscription_with_the_snapshot_id(s3_queue):
    catalog = paimon_catalog(s3_queue.server, s3_queue.bucket)
    options = {"bucket": "2", "changelog-producer": "input"}
    table = create_table(catalog, "db.users", primary_keys=["id"], options=options)

    async def scenario():
        async with notifier_for(s3_queue) as notifier:
            # another spelling of the same table: s3a scheme, trailing slash
            subscription = notifier.subscribe(f"s3a://{s3_queue.bucket}/wh/db.db/users/")
            await asyncio.to_thread(commit_rows, table, [1, 2])
            first = await hints_until(subscription, 1)
            await asyncio.to_thread(commit_rows, table, [2, 3])
            second = await hints_until(subscription, 2)
            await eventually(lambda: s3_queue.approximate_messages() == 0, what="queue drained")
            await eventually(
                lambda: notifier.messages_deleted == notifier.messages_received,
                what="every message deleted",
            )
            return first, second, notifier.metrics()

    first, second, metrics = asyncio.run(scenario())

    assert first == (1, 1)
    assert second == (2, 1)
    assert metrics["healthy"] is True
    assert metrics["hints_dispatched"] == 2
    assert metrics["messages_malformed"] == 0
    assert metrics["messages_deleted"] == metrics["messages_received"] > 2  # noise included
    json.dumps(metrics)


def test_commits_routed_through_sns_wake_the_subscription(moto_server, monkeypatch):
    for name, value in moto_server.credentials_env.items():
        monkeypatch.setenv(name, value)
    bucket = moto_server.create_bucket("feed-sns-route")
    queue = moto_server.create_queue("feed-sns-route")
    queue.bucket = bucket
    sns = moto_server.client("sns")
    topic = sns.create_topic(Name="feed-sns-route")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue.queue_arn)
    moto_server.client("s3").put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "TopicConfigurations": [{"TopicArn": topic, "Events": ["s3:ObjectCreated:*"]}]
        },
    )
    table = create_table(paimon_catalog(moto_server, bucket), "db.t")

    async def scenario():
        async with notifier_for(queue) as notifier:
            subscription = notifier.subscribe(f"s3://{bucket}/wh/db.db/t")
            await asyncio.to_thread(commit_rows, table, [1])
            return await hints_until(subscription, 1)

    assert asyncio.run(scenario()) == (1, 1)


@pytest.mark.slow  # ~20 s: 22 tables created and committed on moto
def test_one_queue_serves_many_tables_each_subscription_gets_only_its_own(s3_queue):
    # t1 and t10 share a prefix on purpose; commits per table differ so cross-talk shows.
    names = [f"t{i}" for i in range(1, 23)]
    commits = {name: 1 + (i % 2) for i, name in enumerate(names)}
    unsubscribed = "t22"

    def create_and_commit(names_chunk: list[str]) -> None:
        catalog = paimon_catalog(s3_queue.server, s3_queue.bucket)
        for name in names_chunk:
            table = create_table(catalog, f"db.{name}")
            for n in range(commits[name]):
                commit_rows(table, [n])

    def write_all() -> None:
        chunks = [names[i::4] for i in range(4)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(create_and_commit, chunks))

    async def scenario():
        async with notifier_for(s3_queue) as notifier:
            subscriptions = {
                name: notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/{name}")
                for name in names
                if name != unsubscribed
            }
            await asyncio.to_thread(write_all)
            results = {}
            for name, subscription in subscriptions.items():
                results[name] = await hints_until(subscription, commits[name])
            await eventually(lambda: s3_queue.approximate_messages() == 0, what="queue drained")
            # anything late would now be visible as an extra hint
            leftovers = {name: s.drain() for name, s in subscriptions.items()}
            return results, leftovers, notifier.metrics()

    results, leftovers, metrics = asyncio.run(scenario())

    assert results == {name: (commits[name], commits[name]) for name in results}
    assert all(not wake.hinted for wake in leftovers.values())
    assert len(results) == 21
    assert metrics["hints_dispatched"] == sum(commits.values()) - commits[unsubscribed]
    assert metrics["hints_unmatched"] == commits[unsubscribed]


# queue hygiene -------------------------------------------------------------------------------
def test_messages_for_unsubscribed_tables_are_deleted(s3_queue):
    async def scenario():
        async with notifier_for(s3_queue) as notifier:
            subscription = notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/followed")
            for table, snapshot_id in (("other", 1), ("other", 2), ("followed", 5)):
                body = snapshot_body(s3_queue.bucket, f"wh/db.db/{table}", snapshot_id)
                await asyncio.to_thread(s3_queue.send, body)
            result = await hints_until(subscription, 5)
            await eventually(lambda: notifier.hints_unmatched == 2, what="unmatched hints seen")
            await eventually(lambda: notifier.messages_deleted == 3, what="all three deleted")
            return result, notifier.metrics()

    result, metrics = asyncio.run(scenario())

    assert result == (5, 1)
    assert s3_queue.approximate_messages() == 0
    assert metrics["messages_left"] == 0


def test_messages_for_unsubscribed_tables_stay_when_delete_unmatched_is_off(s3_queue):
    async def scenario():
        async with notifier_for(s3_queue, delete_unmatched=False) as notifier:
            subscription = notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/followed")
            for table in ("other", "followed"):
                body = snapshot_body(s3_queue.bucket, f"wh/db.db/{table}", 1)
                await asyncio.to_thread(s3_queue.send, body)
            await hints_until(subscription, 1)
            await eventually(lambda: notifier.messages_left == 1, what="unmatched message left")
            await eventually(lambda: notifier.messages_deleted == 1, what="matched one deleted")
            return notifier.metrics()

    metrics = asyncio.run(scenario())

    assert s3_queue.approximate_messages() == 1  # in flight until its visibility timeout ends
    assert metrics["messages_deleted"] == 1


def test_malformed_message_is_left_for_redrive_and_the_notifier_keeps_running(s3_queue, caplog):
    caplog.set_level(logging.WARNING, logger="paimon_feed.notifiers.sqs")

    async def scenario():
        async with notifier_for(s3_queue) as notifier:
            subscription = notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/t")
            bad_id = await asyncio.to_thread(s3_queue.send, "{this is not json")
            await asyncio.to_thread(s3_queue.send, snapshot_body(s3_queue.bucket, "wh/db.db/t", 3))
            result = await hints_until(subscription, 3)
            await eventually(lambda: notifier.messages_malformed == 1, what="malformed seen")
            await eventually(lambda: notifier.messages_deleted == 1, what="good one deleted")
            task_running = not notifier._task.done()
            return bad_id, result, task_running, notifier.metrics()

    bad_id, result, task_running, metrics = asyncio.run(scenario())

    assert result == (3, 1)
    assert task_running
    assert metrics["healthy"] is True
    assert metrics["messages_deleted"] == 1
    assert s3_queue.approximate_messages() == 1
    [record] = [r for r in caplog.records if "malformed" in r.getMessage()]
    assert bad_id in record.getMessage()
    assert "not JSON" in record.getMessage()


def test_malformed_message_is_deleted_when_asked(s3_queue):
    async def scenario():
        async with notifier_for(s3_queue, delete_malformed=True) as notifier:
            notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/t")
            await asyncio.to_thread(s3_queue.send, "  ")  # SQS refuses a truly empty body
            await eventually(lambda: notifier.messages_deleted == 1, what="malformed deleted")
            return notifier.metrics()

    metrics = asyncio.run(scenario())

    assert metrics["messages_malformed"] == 1
    assert s3_queue.approximate_messages() == 0


def test_messages_from_a_foreign_bucket_are_ignored_when_buckets_are_set(s3_queue):
    async def scenario():
        async with notifier_for(s3_queue, buckets=[s3_queue.bucket]) as notifier:
            subscription = notifier.subscribe("s3://elsewhere/wh/db.db/t")
            await asyncio.to_thread(s3_queue.send, snapshot_body("elsewhere", "wh/db.db/t", 1))
            await eventually(lambda: notifier.messages_deleted == 1, what="message deleted")
            return subscription.drain(), notifier.metrics()

    wake, metrics = asyncio.run(scenario())

    assert not wake.hinted
    assert (metrics["messages_ignored"], metrics["hints_unmatched"]) == (1, 0)


# health --------------------------------------------------------------------------------------
def test_unreachable_endpoint_marks_the_notifier_unhealthy_and_wakes_subscriptions():
    dead_port = free_port()

    async def scenario():
        notifier = SqsNotifier(
            f"http://127.0.0.1:{dead_port}/123456789012/nowhere",
            endpoint_url=f"http://127.0.0.1:{dead_port}",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            wait_time_seconds=1,
            failure_threshold=2,
            retry_backoff=(0.05, 0.2),
        )
        async with notifier:
            subscription = notifier.subscribe("s3://lake/wh/db.db/t")
            wake = await subscription.wait(WAIT)
            healthy_after_wake = subscription.push_healthy
            await eventually(lambda: notifier.receive_errors >= 4, what="retries continue")
            task_running = not notifier._task.done()
            metrics = notifier.metrics()
        return wake, healthy_after_wake, task_running, metrics, notifier

    wake, healthy_after_wake, task_running, metrics, notifier = asyncio.run(scenario())

    assert not wake.timed_out and not wake.hinted
    assert healthy_after_wake is False
    assert task_running
    assert metrics["healthy"] is False
    assert metrics["consecutive_failures"] >= 4
    assert notifier._task is None  # closed cleanly


def test_notifier_recovers_when_the_queue_comes_back(monkeypatch):
    server = start_moto_server()  # dedicated: this test stops and restarts it
    try:
        for name, value in server.credentials_env.items():
            monkeypatch.setenv(name, value)
        queue = server.create_queue("feed-outage")

        async def scenario():
            notifier = SqsNotifier(
                queue.queue_url,
                endpoint_url=server.endpoint_url,
                wait_time_seconds=1,
                failure_threshold=2,
                retry_backoff=(0.05, 0.5),
            )  # region and credentials from the environment
            async with notifier:
                subscription = notifier.subscribe("s3://lake/wh/db.db/t")
                await asyncio.to_thread(queue.send, snapshot_body("lake", "wh/db.db/t", 1))
                before = await hints_until(subscription, 1)

                await asyncio.to_thread(server.stop)
                down = await subscription.wait(WAIT)
                healthy_while_down = notifier.healthy

                await asyncio.to_thread(server.start)  # same port, empty state
                await asyncio.to_thread(server.create_queue, "feed-outage")
                up = await subscription.wait(WAIT)
                healthy_when_up = notifier.healthy

                await asyncio.to_thread(queue.send, snapshot_body("lake", "wh/db.db/t", 2))
                after = await hints_until(subscription, 2)
                return before, down, healthy_while_down, up, healthy_when_up, after

        before, down, healthy_while_down, up, healthy_when_up, after = asyncio.run(scenario())
    finally:
        server.close()

    assert before == (1, 1)
    assert not down.timed_out and not down.hinted and healthy_while_down is False
    assert not up.timed_out and healthy_when_up is True
    assert after == (2, 1)


# lifecycle and configuration -----------------------------------------------------------------
def test_close_stops_the_receive_loop_and_closes_subscriptions(s3_queue):
    async def scenario():
        notifier = notifier_for(s3_queue)
        subscription = notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/t")
        task = notifier._task
        await asyncio.sleep(0.2)
        await notifier.close()
        await notifier.close()  # idempotent
        with pytest.raises(FeedClosedError):
            notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/t")
        return task, subscription, notifier

    task, subscription, notifier = asyncio.run(scenario())

    assert task.cancelled()
    assert notifier.subscribed_tables() == []
    assert subscription._closed


def test_one_receive_loop_serves_every_subscription(s3_queue):
    async def scenario():
        async with notifier_for(s3_queue) as notifier:
            notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/a")
            task = notifier._task
            notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/b")
            notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/a")
            loops = [t for t in asyncio.all_tasks() if "SqsNotifier" in t.get_name()]
            return task is notifier._task, len(loops)

    same, loops = asyncio.run(scenario())

    assert same and loops == 1


def test_subscribe_outside_an_event_loop_says_so():
    notifier = SqsNotifier("http://127.0.0.1:1/123456789012/q", region_name="us-east-1")

    with pytest.raises(NotifierError, match="running event loop"):
        notifier.subscribe("s3://lake/wh/db.db/t")

    assert notifier.subscribed_tables() == []
    asyncio.run(notifier.close())


@pytest.mark.parametrize(
    ("options", "option_name"),
    [
        ({"wait_time_seconds": 21}, "wait_time_seconds"),
        ({"wait_time_seconds": -1}, "wait_time_seconds"),
        ({"max_messages": 0}, "max_messages"),
        ({"max_messages": 11}, "max_messages"),
        ({"failure_threshold": 0}, "failure_threshold"),
        ({"retry_backoff": (0.0, 1.0)}, "retry_backoff"),
        ({"retry_backoff": (5.0, 1.0)}, "retry_backoff"),
        ({"pipe_check_interval": 0}, "pipe_check_interval"),
        ({"pipe_check_interval": -1.0}, "pipe_check_interval"),
        ({"pipe_check_timeout": 0}, "pipe_check_timeout"),
        ({"proven_interval": -5}, "proven_interval"),
    ],
)
def test_invalid_options_name_the_option(options, option_name):
    with pytest.raises(ConfigurationError, match=option_name):
        SqsNotifier("https://sqs.us-east-1.amazonaws.com/123456789012/q", **options)


def test_blank_queue_url_points_at_the_environment_variable():
    with pytest.raises(ConfigurationError, match=QUEUE_URL_ENV):
        SqsNotifier("  ")


def test_missing_aiobotocore_says_which_extra_to_install(monkeypatch):
    for module in ("aiobotocore", "aiobotocore.session", "aiobotocore.config"):
        monkeypatch.setitem(sys.modules, module, None)

    with pytest.raises(MissingDependencyError, match=r'pip install "\.\[s3\]" in a paimon-feed checkout') as raised:
        SqsNotifier("https://sqs.us-east-1.amazonaws.com/123456789012/q")

    assert isinstance(raised.value, ImportError)
    assert isinstance(raised.value, ConfigurationError)


def test_queue_url_comes_from_the_environment(monkeypatch):
    url = "https://sqs.eu-central-1.amazonaws.com/123456789012/lake-events"
    monkeypatch.setenv(QUEUE_URL_ENV, url)

    notifier = SqsNotifier.from_env(wait_time_seconds=5)

    assert queue_url_from_env() == url
    assert (notifier.queue_url, notifier.wait_time_seconds) == (url, 5)
    assert notifier.region_name == "eu-central-1"  # taken from the queue URL


def test_from_env_without_the_variable_says_what_to_set(monkeypatch):
    monkeypatch.delenv(QUEUE_URL_ENV, raising=False)

    with pytest.raises(ConfigurationError, match=QUEUE_URL_ENV):
        SqsNotifier.from_env()


@pytest.mark.parametrize(
    ("queue_url", "region"),
    [
        ("https://sqs.us-west-2.amazonaws.com/1/q", "us-west-2"),
        ("https://us-gov-west-1.queue.amazonaws.com/1/q", "us-gov-west-1"),
        ("https://sqs.cn-north-1.amazonaws.com.cn/1/q", "cn-north-1"),
        ("http://127.0.0.1:5000/123456789012/q", None),
    ],
)
def test_region_defaults_to_the_queue_urls_region(queue_url, region):
    assert SqsNotifier(queue_url).region_name == region
    assert SqsNotifier(queue_url, region_name="ap-south-1").region_name == "ap-south-1"


def test_an_unexpected_parser_error_is_logged_and_the_loop_keeps_running(
    s3_queue, monkeypatch, caplog
):
    from paimon_feed.notifiers import sqs

    real_parse = sqs.parse_message

    def parse_with_a_bug(body, **options):
        if body == "boom":
            raise RuntimeError("parser bug")
        return real_parse(body, **options)

    monkeypatch.setattr(sqs, "parse_message", parse_with_a_bug)
    caplog.set_level(logging.ERROR, logger="paimon_feed.notifiers.sqs")

    async def scenario():
        async with notifier_for(s3_queue) as notifier:
            subscription = notifier.subscribe(f"s3://{s3_queue.bucket}/wh/db.db/t")
            await asyncio.to_thread(s3_queue.send, "boom")
            await asyncio.to_thread(s3_queue.send, snapshot_body(s3_queue.bucket, "wh/db.db/t", 1))
            result = await hints_until(subscription, 1)
            await eventually(lambda: notifier.messages_malformed == 1, what="bug counted")
            return result, notifier.healthy

    assert asyncio.run(scenario()) == ((1, 1), True)
    assert any(r.exc_info and "parser bug" in str(r.exc_info[1]) for r in caplog.records)
