"""spark.readStream.format("paimon_feed") on ``s3://`` tables, woken through SQS.

Real parts only: a ``moto_server`` process holds the bucket and the queue, pypaimon writes the
tables to it over HTTP, the bucket's notification configuration sends every object event to the
queue, and the source's notifier (in the Python worker that Spark starts for the query's driver
side) long-polls the queue. The reconcile interval is far longer than any test here, so after
the query's start-up check only SQS hints can make the source look for new snapshots.

The notifier finds moto through the standard AWS environment (``AWS_ENDPOINT_URL_SQS`` and the
fake credentials), which the module's Spark session hands to its Python workers.
"""

from __future__ import annotations

import os

import pytest
from s3_support import s3_catalog_options
from spark_support import (
    QUERY_TIMEOUT_S,
    BatchSink,
    WriterThread,
    data_progress,
    delivered_changes,
    driver_stats,
    expected_changes,
    new_spark_session,
    start_query,
    stats_worker_env,
    wait_until,
)
from support import tables

from paimon_feed.notifiers.sqs import QUEUE_URL_ENV

PUSH_ONLY = "10m"  # reconcileInterval: longer than any test here
LAST_COMMIT = 8


@pytest.fixture(scope="module")
def spark(moto_server, request, tmp_path_factory):
    """The module's session, with moto's SQS endpoint and fake credentials in its workers.

    ``PAIMON_FEED_SQS_QUEUE_URL`` is blanked (the notifier reads blank as unset), so only the
    ``queueUrl`` option can name a queue.
    """
    env = {
        **moto_server.credentials_env,
        "AWS_ENDPOINT_URL_SQS": moto_server.endpoint_url,
        QUEUE_URL_ENV: "",
    }
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)  # for a JVM this module starts; worker_env for one already running
    try:
        stats_env = stats_worker_env(tmp_path_factory.mktemp("driver-stats"))
        session = new_spark_session(
            f"paimon-feed-{request.module.__name__}", worker_env={**env, **stats_env}
        )
        yield session
        for query in session.streams.active:
            query.stop()
        session.stop()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Stats:
    """The source's driver-side counters for ``table``, as its driver last wrote them."""

    def __init__(self, spark, table) -> None:
        self._read = driver_stats(spark, table)

    def __call__(self) -> dict:
        return self._read()

    def sqs_hints(self) -> int:
        return self().get("hints", {}).get("sqs", 0)


def source_options(queue, table, **extra) -> dict:
    """Reader options for an ``s3://`` table of the queue's bucket: pypaimon's S3 settings go
    as ``catalog.<key>``, the way a user passes them."""
    catalog = s3_catalog_options(queue.server, queue.bucket)
    options = {f"catalog.{key}": value for key, value in catalog.items() if key != "warehouse"}
    options["warehouse"] = catalog["warehouse"]
    options["table"] = table.identifier.get_full_name()
    options.update({key: str(value) for key, value in extra.items()})
    return options


def with_rows(sink: BatchSink) -> list[tuple[int, list[int]]]:
    """``(batch id, commits)`` of the micro-batches that brought rows."""
    return [(batch_id, commits) for batch_id, commits in sink.commits_by_batch() if commits]


def s3_table(queue, kind: str):
    options = s3_catalog_options(queue.server, queue.bucket)
    catalog = tables.catalog(options["warehouse"], options)
    if kind == "append":
        return tables.create_append_table(catalog)
    return tables.create_pk_table(catalog)


def change_ends(query) -> dict[int, dict]:
    """``batch id -> end offset`` of the micro-batches that read changes.

    Only an offset that ends a change range has ``first``: the query's first batch may be an
    empty one that only records the initial position.
    """
    return {batch_id: end for batch_id, _, end in data_progress(query) if "first" in end}


# --- push through SQS -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "notifier"),
    [("append", "sqs"), ("primary-key", "auto")],
    ids=["append-table-notifier-sqs", "pk-table-notifier-auto"],
)
def test_a_running_query_on_s3_gets_every_concurrent_commit_once_in_order_woken_by_sqs(
    spark, s3_queue, tmp_path, kind, notifier
):
    table = s3_table(s3_queue, kind)
    stats = Stats(spark, table)
    options = source_options(
        s3_queue,
        table,
        startingPosition="earliest",
        includeRowKind="true",
        notifier=notifier,
        queueUrl=s3_queue.queue_url,
        reconcileInterval=PUSH_ONLY,
    )
    sink = BatchSink()
    query = start_query(
        spark, options, sink, str(tmp_path / "checkpoint"), processingTime="0 seconds"
    )
    try:
        # The driver side is up (notifier subscribed, start-up check done) before any commit,
        # so every snapshot the writer makes has to be announced by the queue.
        wait_until(lambda: stats().get("latest_calls", 0) >= 1, QUERY_TIMEOUT_S, "the source")
        started = stats()
        assert started["notifier"] == "sqs", f"notifier={notifier} picked {started['notifier']}"
        assert started["push_healthy"] and started["known_latest_snapshot_id"] is None

        writer = WriterThread(table, 1, LAST_COMMIT, interval=0.1).start()
        writer.join(QUERY_TIMEOUT_S)
        expected = expected_changes(table, range(1, LAST_COMMIT + 1))
        wait_until(lambda: len(sink.rows()) >= len(expected), QUERY_TIMEOUT_S, "every commit")
        wait_until(
            lambda: len(change_ends(query)) >= len(with_rows(sink)),
            QUERY_TIMEOUT_S,
            "progress of every batch",
        )
        ends = change_ends(query)

        # One hint per snapshot file; the queue's other events (data and manifest files) were
        # read and deleted without a hint.
        wait_until(
            lambda: stats.sqs_hints() >= LAST_COMMIT or not stats()["push_healthy"],
            QUERY_TIMEOUT_S,
            "every hint",
        )
        assert stats()["push_healthy"], f"the SQS push source failed: {stats()}"
        wait_until(lambda: s3_queue.approximate_messages() == 0, QUERY_TIMEOUT_S, "empty queue")
        settling = stats()["latest_calls"]
        wait_until(lambda: stats()["latest_calls"] >= settling + 20, QUERY_TIMEOUT_S, "triggers")
        idle_from = stats()
        wait_until(
            lambda: stats()["latest_calls"] >= idle_from["latest_calls"] + 100,
            QUERY_TIMEOUT_S,
            "100 idle triggers",
        )
        idle_to = stats()
    finally:
        query.stop()
    assert query.exception() is None

    # exactly once, with the right row kinds
    assert delivered_changes(sink.rows()) == expected
    if kind == "primary-key":
        assert {row["_row_kind"] for row in sink.rows()} == {"+I", "+U", "-D"}

    # in order: batches are consecutive, no commit of a later batch precedes an earlier one,
    # and each commit came in the batch whose offsets cover its snapshot
    batches = with_rows(sink)
    for (_, earlier), (_, later) in zip(batches, batches[1:]):
        assert max(earlier) < min(later), f"commits out of order: {batches}"
    assert sorted(ends) == [batch_id for batch_id, _ in batches]
    next_snapshot = 1
    for batch_id, commits in batches:
        end = ends[batch_id]
        assert end["first"] == next_snapshot, f"offsets do not tile: {ends}"
        covered = range(end["first"], end["snapshot"])
        for n, snapshot_id, _ in writer.committed:
            assert (n in commits) == (snapshot_id in covered), (n, snapshot_id, ends)
        next_snapshot = end["snapshot"]
    assert next_snapshot == writer.committed[-1][1] + 1

    # woken by SQS, not by polling storage: every check after the start-up one followed a hint,
    # and while idle, triggers were answered from memory
    assert idle_to["notifier"] == "sqs" and idle_to["push_healthy"]
    # one hint per snapshot file, more if SQS delivered a message twice (it may)
    assert set(idle_to["hints"]) == {"sqs"} and idle_to["hints"]["sqs"] >= LAST_COMMIT
    assert 2 <= idle_to["storage_checks"] <= 1 + idle_to["hints"]["sqs"]
    assert idle_to["storage_errors"] == 0
    assert idle_to["known_latest_snapshot_id"] == writer.committed[-1][1]
    assert idle_to["storage_calls"] == idle_from["storage_calls"]
    assert idle_to["storage_checks"] == idle_from["storage_checks"]


# --- configuration errors ---------------------------------------------------------------


def test_notifier_sqs_without_a_queue_url_fails_at_load_naming_queue_url(spark, s3_queue):
    table = s3_table(s3_queue, "append")
    options = source_options(s3_queue, table, notifier="sqs")
    with pytest.raises(Exception, match="option queueUrl: notifier='sqs' needs a queue"):
        spark.readStream.format("paimon_feed").options(**options).load()
