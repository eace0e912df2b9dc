"""``paimon-feed demo``: a local warehouse, a writer, and live feeds.

Creates ``db.events`` (append) and ``db.orders`` (primary key, ``changelog-producer=input``),
commits a backlog to ``events`` so its feed starts behind and catches up in one batch, then
commits to both tables from a writer thread while two ``ChangeFeed``\\ s tail them, printing
commit-to-delivery latency per batch, and one ``WarehouseFeed`` follows every table of the
warehouse beside them; a summary at the end. Both ``ChangeFeed``\\ s checkpoint as consumer
``demo``: a second run on the same ``--warehouse`` resumes where the first one stopped, and
every feed runs until it has delivered the writer's last commit.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from paimon_feed.checkpoint import CheckpointStore
from paimon_feed.feed import ChangeFeed
from paimon_feed.feed.warehouse import WarehouseFeed
from paimon_feed.planner import Timeline
from paimon_feed.tables import commit_arrow

__all__ = ["run_demo"]

EVENTS_SCHEMA = pa.schema(
    [pa.field("event_id", pa.int64(), nullable=False), ("kind", pa.string()), ("amount", pa.float64())]
)
ORDERS_SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        ("status", pa.string()),
        ("total", pa.float64()),
        ("op", pa.string()),
    ]
)
_KINDS = ("click", "view", "purchase")
_CONSUMER = "demo"


def _create_tables(warehouse: str):
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    catalog.create_table("db.events", Schema.from_pyarrow_schema(EVENTS_SCHEMA), True)
    catalog.create_table(
        "db.orders",
        Schema.from_pyarrow_schema(
            ORDERS_SCHEMA,
            primary_keys=["order_id"],
            options={"bucket": "2", "changelog-producer": "input", "rowkind.field": "op"},
        ),
        True,
    )
    return catalog.get_table("db.events"), catalog.get_table("db.orders")


def _write(table, schema: pa.Schema, rows: list[dict]) -> None:
    commit_arrow(table, pa.Table.from_pylist(rows, schema=schema))


def _commit_events(table, n: int) -> None:
    _write(
        table,
        EVENTS_SCHEMA,
        [{"event_id": n * 10 + i, "kind": _KINDS[(n + i) % 3], "amount": float(n + i)} for i in range(3)],
    )


def _commit_orders(table, n: int) -> None:
    """Order n is placed; order n-1 ships; order n-2 is cancelled (a delete)."""
    rows = [{"order_id": n, "status": "placed", "total": 10.0 + n, "op": "+I"}]
    if n >= 1:
        rows.append({"order_id": n - 1, "status": "shipped", "total": 9.0 + n, "op": "+U"})
    if n >= 2:
        rows.append({"order_id": n - 2, "status": "cancelled", "total": 8.0 + n, "op": "-D"})
    _write(table, ORDERS_SCHEMA, rows)


@dataclass
class _Tally:
    name: str
    batches: int = 0
    rows: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)


def _say(text: str) -> None:
    print(text, flush=True)


async def _tail(feed: ChangeFeed, tally: _Tally, last_snapshot: int) -> None:
    async for batch in feed:
        data = batch.to_arrow()
        latency_ms = time.time() * 1000 - batch.commit_time_ms
        tally.batches += 1
        tally.rows += data.num_rows
        tally.kinds[batch.kind] = tally.kinds.get(batch.kind, 0) + 1
        span = (
            f"#{batch.snapshot_id}"
            if batch.first_snapshot_id == batch.snapshot_id
            else f"#{batch.first_snapshot_id}-{batch.snapshot_id}"
        )
        detail = ""
        if "_row_kind" in data.column_names:
            counts: dict[str, int] = {}
            for kind in data.column("_row_kind").to_pylist():
                counts[kind] = counts.get(kind, 0) + 1
            detail = "  " + " ".join(f"{kind}{count}" for kind, count in sorted(counts.items()))
        if batch.kind in ("delta", "changelog"):
            tally.latencies_ms.append(latency_ms)
            timing = f"commit→delivery {latency_ms:7.1f} ms"
        elif batch.kind == "full":
            timing = f"table state at snapshot {batch.snapshot_id}"
        else:
            timing = f"{batch.snapshot_count} snapshots caught up in one batch"
        _say(f"  {tally.name:<7} {span:>9} {batch.kind:<9} {data.num_rows:>4} rows  {timing}{detail}")
        await feed.commit(batch)
        if batch.snapshot_id >= last_snapshot:
            return


async def _tail_warehouse(feed: WarehouseFeed, tally: _Tally, last_snapshots: dict[str, int]) -> None:
    """Count what one feed of the whole warehouse delivers, until every table's last commit."""
    delivered: dict[str, int] = {}
    async for batch in feed:
        data = batch.to_arrow()
        tally.batches += 1
        tally.rows += data.num_rows
        if batch.kind in ("delta", "changelog"):
            tally.latencies_ms.append(time.time() * 1000 - batch.commit_time_ms)
        await feed.commit(batch)
        delivered[batch.table] = batch.snapshot_id
        if all(delivered.get(name, 0) >= last for name, last in last_snapshots.items()):
            return


def _latest_snapshot_id(table: Any) -> int:
    return Timeline(table).latest_snapshot_id() or 0


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def _run(
    warehouse: str, events, orders, commits: int, backlog: int, interval: float, last: dict[str, int]
) -> list[_Tally]:
    """Write and tail; every feed runs until it has delivered the writer's last commit
    (``last``: snapshot id by table), whatever it had read before."""
    tallies = [_Tally("events"), _Tally("orders"), _Tally("warehouse")]
    async with ChangeFeed(events, consumer_id=_CONSUMER, start="earliest") as events_feed, ChangeFeed(
        orders, consumer_id=_CONSUMER, include_row_kind=True
    ) as orders_feed, WarehouseFeed(warehouse, start="latest") as warehouse_feed:
        stop = threading.Event()

        def write() -> None:
            for n in range(commits):
                if stop.is_set():
                    return
                _commit_events(events, backlog + n)
                _commit_orders(orders, n)
                time.sleep(interval)

        writer = threading.Thread(target=write, name="demo-writer", daemon=True)
        writer.start()
        tails = [
            asyncio.create_task(_tail(events_feed, tallies[0], last["db.events"])),
            asyncio.create_task(_tail(orders_feed, tallies[1], last["db.orders"])),
            asyncio.create_task(_tail_warehouse(warehouse_feed, tallies[2], last)),
        ]
        try:
            done, pending = await asyncio.wait(
                tails, timeout=120 + commits * interval * 4, return_when=asyncio.FIRST_EXCEPTION
            )
            for task in done:
                task.result()  # the first failure, if any
            if pending:
                raise TimeoutError("the demo's feeds did not receive every commit in time")
        finally:
            # Cancelled (Ctrl-C) or failed: stop both tails and wait for them, so no task is
            # left with an exception nobody retrieves.
            for task in tails:
                task.cancel()
            await asyncio.gather(*tails, return_exceptions=True)
            stop.set()
            writer.join()
        for tally, feed in zip(tallies, (events_feed, orders_feed)):
            metrics = feed.metrics()
            tally.kinds["hints"] = sum(metrics.hints_by_source.values())
            tally.kinds["reconciles"] = metrics.reconciles
        per_table = warehouse_feed.metrics().tables.values()
        tallies[2].kinds["hints"] = sum(sum(m.hints_by_source.values()) for m in per_table)
        tallies[2].kinds["reconciles"] = sum(m.reconciles for m in per_table)
    return tallies


def _timing(latencies: list[float]) -> str:
    if not latencies:
        return "no live batches"
    return (
        f"latency p50 {statistics.median(latencies):.1f} ms, p99 {_percentile(latencies, 0.99):.1f} ms, "
        f"max {max(latencies):.1f} ms"
    )


def run_demo(
    *,
    commits: int = 40,
    backlog: int = 25,
    interval: float = 0.1,
    warehouse: str | None = None,
    run: Callable[[Coroutine[Any, Any, Any]], Any] = asyncio.run,
) -> int:
    """Run the demo; returns the exit code. ``run`` runs its coroutine (the CLI passes one
    that turns SIGINT/SIGTERM into an exit code); anything but a list of tallies from it is
    returned as the exit code."""
    if commits < 1 or backlog < 0 or interval < 0:
        from paimon_feed.errors import ConfigurationError

        raise ConfigurationError("--commits must be >= 1, --backlog and --interval >= 0")
    own_dir = warehouse is None
    warehouse = warehouse or tempfile.mkdtemp(prefix="paimon-feed-demo-")
    try:
        events, orders = _create_tables(warehouse)
        _say(f"paimon-feed demo — warehouse {warehouse}")
        _say("  db.events: append table; db.orders: primary key, changelog-producer=input")
        _say("  a WarehouseFeed follows every table of the warehouse beside the two ChangeFeeds")
        for n in range(backlog):
            _commit_events(events, n)
        _say(f"writer: {commits} commits per table, one every {interval:g}s; feeds woken by inotify\n")
        last = {"db.events": _latest_snapshot_id(events) + commits, "db.orders": _latest_snapshot_id(orders) + commits}
        resumes_at = CheckpointStore.for_table(events, _CONSUMER).load()
        if resumes_at is None and backlog:
            _say(f"catching up: db.events is {backlog} snapshots ahead of its new consumer …")
        elif resumes_at is not None and resumes_at <= last["db.events"] - commits:
            _say(
                f"catching up: consumer '{_CONSUMER}' of db.events resumes at snapshot {resumes_at}, "
                f"{last['db.events'] - commits - resumes_at + 1} snapshots behind …"
            )
        started = time.time()
        tallies = run(_run(warehouse, events, orders, commits, backlog, interval, last))
        if not isinstance(tallies, list):
            return tallies  # interrupted: the exit code
        elapsed = time.time() - started
        _say("\nsummary")
        for tally in tallies[:2]:
            _say(
                f"  db.{tally.name:<7} {tally.batches:>3} batches, {tally.rows:>4} rows; {_timing(tally.latencies_ms)}; "
                f"wake-ups by push {tally.kinds.get('hints', 0)}, safety checks {tally.kinds.get('reconciles', 0)}"
            )
        whole = tallies[2]
        _say(
            f"  {'db.*':<10} {whole.batches:>3} batches, {whole.rows:>4} rows; {_timing(whole.latencies_ms)}; "
            f"one WarehouseFeed over both tables, one notifier"
        )
        behind = {
            name: next_id
            for name, table in (("db.events", events), ("db.orders", orders))
            if (next_id := CheckpointStore.for_table(table, _CONSUMER).load()) != last[name] + 1
        }
        if behind:  # cannot happen when every tail ran to the writer's last commit; say so if it does
            _say(
                f"  done in {elapsed:.1f}s; consumer '{_CONSUMER}' is behind: "
                + ", ".join(f"{name} reads snapshot {next_id} next of {last[name]}" for name, next_id in behind.items())
            )
            return 1
        _say(f"  done in {elapsed:.1f}s; every commit delivered once, in order, checkpointed as consumer '{_CONSUMER}'")
        return 0
    finally:
        if own_dir:
            shutil.rmtree(warehouse, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run_demo())
