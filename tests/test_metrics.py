"""Prometheus metrics of real feeds on real pypaimon tables: scraped in-process through
``generate_latest`` and over HTTP from ``paimon-feed tail --metrics-port``, parsed with
prometheus_client's own parser, checked against what the test committed."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request

import pyarrow as pa
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from support.tables import APPEND_SCHEMA, commit

from paimon_feed import ChangeFeed, ConfigurationError, MissingDependencyError
from paimon_feed.metrics import METRICS, FeedCollector
from paimon_feed.tables import commit_arrow


def samples(text: str) -> dict[tuple, float]:
    """``{(sample name, (label, value), ...): value}`` from Prometheus exposition text."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, *sorted(sample.labels.items()))] = sample.value
    return found


def value(found: dict, name: str, table: str, consumer: str = "", **labels: str) -> float:
    return found[(name, *sorted({"table": table, "consumer": consumer, **labels}.items()))]


def scrape(collector: FeedCollector) -> dict[tuple, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return samples(generate_latest(registry).decode())


def add_column_and_commit(cat, n: int) -> None:
    """Add a column to db.events, then commit rows of commit ``n`` with it filled."""
    cat.alter_table("db.events", [SchemaChange.add_column("extra", AtomicType("STRING"))])
    schema = APPEND_SCHEMA.append(pa.field("extra", pa.string()))
    rows = [{"id": n * 1000 + i, "commit": n, "payload": f"c{n}-r{i}", "extra": "x"} for i in range(3)]
    commit_arrow(cat.get_table("db.events"), pa.Table.from_pylist(rows, schema=schema))


async def consume_until(feed: ChangeFeed, last_snapshot: int) -> list:
    batches = []
    async for batch in feed:
        batches.append(batch)
        await feed.commit(batch)
        if batch.snapshot_id >= last_snapshot:
            return batches
    raise AssertionError(f"feed ended before snapshot {last_snapshot}")


def test_collector_reports_two_feeds_against_what_was_committed(cat, append_table, pk_table, start_writer):
    for n in range(3):
        commit(append_table, n)

    async def run():
        events = ChangeFeed(append_table, consumer_id="etl", start="earliest", reconcile_interval=0.5)
        orders = ChangeFeed(pk_table, start="earliest", reconcile_interval=0.5)
        collector = FeedCollector([events, orders])
        async with events, orders:
            writers = [start_writer(append_table, 3, 6, interval=0.02), start_writer(pk_table, 1, 4)]
            await asyncio.wait_for(consume_until(events, 7), 60)
            await asyncio.wait_for(consume_until(orders, 4), 60)
            for writer in writers:
                await asyncio.to_thread(writer.wait)
            add_column_and_commit(cat, 7)
            delivered = await asyncio.wait_for(consume_until(events, 8), 60)
            found = scrape(collector)
            metrics = events.metrics()
        return found, metrics, delivered

    found, metrics, last = asyncio.run(run())
    # db.events: snapshots 1..8 (3 before the feed, 4 from the writer, 1 after the schema change)
    assert value(found, "paimon_feed_snapshots_delivered_total", "db.events", "etl") == 8
    assert value(found, "paimon_feed_delivered_snapshot_id", "db.events", "etl") == 8
    assert value(found, "paimon_feed_latest_snapshot_id", "db.events", "etl") == 8
    assert value(found, "paimon_feed_committed_next_snapshot_id", "db.events", "etl") == 9
    assert value(found, "paimon_feed_lag_snapshots", "db.events", "etl") == 0
    assert value(found, "paimon_feed_lag_seconds", "db.events", "etl") == 0
    assert value(found, "paimon_feed_schema_changes_total", "db.events", "etl") == 1
    assert last[-1].schema.names[-1] == "extra"
    batches = value(found, "paimon_feed_batches_delivered_total", "db.events", "etl")
    assert batches == metrics.batches_delivered >= 1
    assert value(found, "paimon_feed_batches_planned_total", "db.events", "etl") == batches
    # The histogram counted every delivered batch, in seconds.
    assert value(found, "paimon_feed_delivery_latency_seconds_count", "db.events", "etl") == batches
    assert value(found, "paimon_feed_delivery_latency_seconds_bucket", "db.events", "etl", le="+Inf") == batches
    assert value(found, "paimon_feed_delivery_latency_seconds_sum", "db.events", "etl") > 0
    wakeups = {
        dict(key[1:])["source"]: count for key, count in found.items()
        if key[0] == "paimon_feed_wakeups_total" and dict(key[1:])["table"] == "db.events"
    }
    assert wakeups == metrics.hints_by_source and wakeups.get("local", 0) >= 1
    for name in ("fallbacks", "storage_retries", "overwrites_skipped", "expired_restarts"):
        assert value(found, f"paimon_feed_{name}_total", "db.events", "etl") == 0
    assert value(found, "paimon_feed_push_healthy", "db.events", "etl") == 1
    # db.orders, no consumer id: empty when the feed started, then 4 commits.
    assert value(found, "paimon_feed_snapshots_delivered_total", "db.orders") == 4
    assert value(found, "paimon_feed_lag_snapshots", "db.orders") == 0
    assert ("paimon_feed_committed_next_snapshot_id", ("consumer", ""), ("table", "db.orders")) in found
    # Every documented name is exposed (histograms as their _count).
    names = {key[0] for key in found}
    for name, (kind, _help) in METRICS.items():
        assert (f"{name}_count" if kind == "histogram" else name) in names, name


def test_a_second_feed_with_the_same_table_and_consumer_is_refused(append_table):
    collector = FeedCollector([ChangeFeed(append_table, consumer_id="etl")])
    with pytest.raises(ConfigurationError, match="db.events.*'etl'"):
        collector.add(ChangeFeed(append_table, consumer_id="etl"))
    collector.add(ChangeFeed(append_table, consumer_id="other"))


def test_a_removed_feed_is_no_longer_reported_nor_observed(append_table):
    feed = ChangeFeed(append_table, consumer_id="etl")
    collector = FeedCollector([feed])
    assert value(scrape(collector), "paimon_feed_batches_delivered_total", "db.events", "etl") == 0
    collector.remove(feed)
    assert scrape(collector) == {}
    assert feed._consuming.listeners == []  # noqa: SLF001 - the histogram stopped listening


def test_without_prometheus_client_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # makes the import fail
    with pytest.raises(MissingDependencyError, match=r"install the \[metrics\] extra: pip install \"\.\[metrics\]\""):
        FeedCollector()


def test_tail_serves_metrics_over_http_while_tailing(warehouse, cat, append_table, start_writer):
    for n in range(2):
        commit(append_table, n)
    process = subprocess.Popen(
        [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.events", "--from", "earliest",
         "--consumer-id", "ops", "--metrics-port", "0", "--metrics-address", "127.0.0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stderr.readline()
        assert "serving metrics on http://127.0.0.1:" in line, line + process.stderr.read()
        url = line.split("serving metrics on ", 1)[1].strip()

        def scraped() -> dict:
            with urllib.request.urlopen(url, timeout=10) as response:
                assert response.headers["Content-Type"].startswith("text/plain")
                return samples(response.read().decode())

        start_writer(append_table, 2, 4, interval=0.02).wait()
        add_column_and_commit(cat, 5)
        found = until(scraped, lambda f: value(f, "paimon_feed_committed_next_snapshot_id", "db.events", "ops") == 7)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    # snapshots 1..6: two before tail started, three from the writer, one after the schema change
    assert [json.loads(row)["commit"] for row in out.splitlines()] == [n for n in range(6) for _ in range(3)]
    assert value(found, "paimon_feed_snapshots_delivered_total", "db.events", "ops") == 6
    assert value(found, "paimon_feed_delivered_snapshot_id", "db.events", "ops") == 6
    assert value(found, "paimon_feed_lag_snapshots", "db.events", "ops") == 0
    assert value(found, "paimon_feed_schema_changes_total", "db.events", "ops") == 1
    batches = value(found, "paimon_feed_batches_delivered_total", "db.events", "ops")
    assert value(found, "paimon_feed_delivery_latency_seconds_count", "db.events", "ops") == batches >= 2


def until(scrape_once, done, timeout: float = 60.0) -> dict:
    """Scrape until ``done(found)``; the deadline only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while True:
        found = scrape_once()
        try:
            if done(found):
                return found
        except KeyError:
            pass  # a series not there yet
        assert time.monotonic() < deadline, f"metrics never reached the expected state: {found}"
        time.sleep(0.1)


def test_tail_refuses_a_metrics_port_in_use(warehouse, append_table):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.events",
             "--metrics-port", str(port), "--metrics-address", "127.0.0.1"],
            capture_output=True, text=True, timeout=120,
        )
    assert result.returncode == 2, result.stderr
    assert f"--metrics-port {port}: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_collector_reports_each_table_of_a_warehouse_feed(warehouse, cat, append_table, pk_table):
    from paimon_feed import WarehouseFeed

    commit(append_table, 1)
    commit(pk_table, 1)

    async def main():
        async with WarehouseFeed(warehouse, consumer_id="wh", start="earliest") as feed:
            collector = FeedCollector([feed])
            for _ in range(2):
                await feed.commit(await feed.__anext__())
            return scrape(collector)

    found = asyncio.run(main())
    for table in ("db.events", "db.orders"):
        assert value(found, "paimon_feed_batches_delivered_total", table, "wh") == 1
        assert value(found, "paimon_feed_committed_next_snapshot_id", table, "wh") == 2
        assert value(found, "paimon_feed_delivery_latency_seconds_count", table, "wh") == 1
