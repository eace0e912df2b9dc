"""What a planning round costs in S3 requests: each snapshot, manifest list and manifest file is
read with one GET (pyarrow's S3 file system asks HEAD first), counted at a proxy in front of a
real ``moto_server``; rows checked against what the writer committed."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest
from fault_proxy import FaultProxy  # this directory: pytest's rootdir-relative import
from s3_support import commit_rows, create_table, paimon_catalog, s3_catalog_options

from paimon_feed import ChangeFeed, Planner
from paimon_feed.errors import StorageError


@pytest.fixture
def proxied(s3_queue):
    """``(table as written, the same table read through a counting proxy, the proxy)``."""
    table = create_table(paimon_catalog(s3_queue.server, s3_queue.bucket), "db.events")
    with FaultProxy(s3_queue.server.endpoint_url) as proxy:
        options = s3_catalog_options(s3_queue.server, s3_queue.bucket)
        options["fs.s3.endpoint"] = proxy.endpoint_url
        from pypaimon import CatalogFactory

        yield table, CatalogFactory.create(options).get_table("db.events"), proxy


def metadata_requests(proxy: FaultProxy) -> Counter:
    """``(method, kind of file)`` -> count, for snapshot, manifest list and manifest files."""
    counted: Counter = Counter()
    for line in proxy.history_lines(r"/(snapshot|manifest)/"):
        method, path = re.search(r"s (\w+) (\S+) ->", line).groups()
        name = path.rsplit("/", 1)[-1]
        kind = "manifest-list" if name.startswith("manifest-list") else name.split("-")[0]
        counted[(method, kind)] += 1
    return counted


def ids(batches) -> list[int]:
    return sorted(row["id"] for batch in batches for row in batch.to_arrow().to_pylist())


def test_a_follow_up_round_reads_each_metadata_file_with_one_get(proxied):
    written, table, proxy = proxied
    for n in range(3):
        commit_rows(written, [n * 10 + i for i in range(5)])
    planner = Planner(table)
    proxy.history.clear()
    planned = planner.next_batches(3, limit=1)
    assert ids(planned.batches) == [20, 21, 22, 23, 24]
    assert metadata_requests(proxy) == {
        ("GET", "snapshot"): 2,  # snapshot 3, and the catch-up probe of a later one (missing)
        ("GET", "manifest-list"): 1,
        ("GET", "manifest"): 1,
    }


def test_a_catch_up_reads_each_metadata_file_once_and_never_asks_head(proxied):
    written, table, proxy = proxied
    for n in range(12):
        commit_rows(written, [n])
    proxy.history.clear()
    planned = Planner(table, catch_up_threshold=2).next_batches(1, limit=4)
    assert [b.kind for b in planned.batches] == ["catch-up"]
    assert ids(planned.batches) == list(range(12))
    paths = Counter(proxy.history_lines(r"/(snapshot|manifest)/"))
    assert not [line for line in paths if " HEAD " in line]
    gets = Counter(re.search(r"GET (\S+) ->", line).group(1) for line in paths)
    assert max(gets.values()) == 1, gets.most_common(3)


def test_with_s3_get_turned_off_pyarrow_reads_the_same_rows(proxied, monkeypatch):
    monkeypatch.setenv("PAIMON_FEED_S3_GET", "0")
    written, table, proxy = proxied
    for n in range(3):
        commit_rows(written, [n])
    planner = Planner(table)
    assert not planner.files.one_request
    proxy.history.clear()
    assert ids(planner.next_batches(3, limit=1).batches) == [2]
    assert metadata_requests(proxy)[("HEAD", "manifest")] == 1  # pyarrow asks the size first


def test_a_missing_snapshot_is_not_an_error_and_a_denied_read_is_a_storage_error(proxied):
    written, table, proxy = proxied
    commit_rows(written, [1])
    planner = Planner(table)
    assert planner.files.one_request
    planned = planner.next_batches(2, limit=1)
    assert planned.batches == () and planned.next_snapshot_id == 2
    proxy.faults = ((403, "AccessDenied", "Access Denied"),)
    proxy.set_faults(rate=1.0, key_pattern=r"/snapshot/snapshot-")
    with pytest.raises(StorageError, match="AccessDenied"):
        Planner(table).next_batches(1, limit=1)


def test_an_idle_push_feed_reads_two_files_per_safety_check(proxied, s3_queue):
    """Under push every commit is announced, so the safety check reads the next snapshot and,
    for the history check (a table re-created with a single commit has no next snapshot to
    show it), the anchor: no hint files, no expiry check (an idle feed's next snapshot cannot
    have expired, it does not exist yet)."""
    from paimon_feed.notifiers.sqs import SqsNotifier

    written, table, proxy = proxied
    commit_rows(written, [1])

    async def idle() -> list[str]:
        notifier = SqsNotifier(
            s3_queue.queue_url, endpoint_url=s3_queue.server.endpoint_url, wait_time_seconds=1
        )
        async with notifier, ChangeFeed(
            table, start="latest", notifier=notifier, reconcile_interval=0.5
        ) as feed:
            await asyncio.sleep(0.8)  # the first (short) wait and one interval
            proxy.history.clear()
            await asyncio.sleep(2.6)
            assert feed.metrics().mode == "push"
            return proxy.history_lines(r"/db\.db/events/")

    lines = asyncio.run(idle())
    next_reads = [line for line in lines if re.search(r"GET \S+/snapshot/snapshot-2 -> 404", line)]
    anchor_reads = [line for line in lines if re.search(r"GET \S+/snapshot/snapshot-1 -> 200", line)]
    assert len(next_reads) + len(anchor_reads) == len(lines), lines  # nothing else is read
    assert 3 <= len(next_reads) <= 6, lines  # about one safety check per 0.5 s
    assert abs(len(anchor_reads) - len(next_reads)) <= 1, lines  # each check reads the anchor too


def test_without_boto3_the_planner_reads_through_pyarrow(proxied, monkeypatch):
    """The core install has no boto3: the one-GET path steps aside, nothing fails."""
    import sys

    monkeypatch.setitem(sys.modules, "boto3", None)  # "import boto3" raises ImportError
    written, table, proxy = proxied
    for n in range(2):
        commit_rows(written, [n])
    planner = Planner(table)
    assert not planner.files.one_request
    assert ids(planner.next_batches(1, limit=2).batches) == [0, 1]


def test_the_spark_sources_snapshot_checks_cost_one_request_each(proxied):
    """The Spark driver's tracker probes for the next snapshot with one HEAD (pyarrow's file
    system follows a missing key's HEAD with a LIST) and finds new snapshots the same way."""
    from paimon_feed.spark.tracker import SnapshotTracker

    written, table, proxy = proxied
    commit_rows(written, [1])
    planner = Planner(table)
    assert planner.files.one_request
    tracker = SnapshotTracker(table, planner.table_url, notifier=None, files=planner.files)
    assert tracker.refresh() == 1
    proxy.history.clear()
    assert tracker.refresh() == 1  # idle: snapshot 2 is not there
    assert metadata_requests(proxy) == {("HEAD", "snapshot"): 1}
    assert not proxy.history_lines(r"list-type|\?prefix=|\?delimiter=")
    commit_rows(written, [2])
    commit_rows(written, [3])
    proxy.history.clear()
    assert tracker.refresh() == 3  # 2 and 3 found, 4 missing: a HEAD each
    assert metadata_requests(proxy) == {("HEAD", "snapshot"): 3}
