"""The CLI and :class:`~paimon_feed.WarehouseFeed` on a REST catalog (Paimon's reference server)
and on pypaimon's JDBC catalog: tables found through the catalog, each watched where the catalog
says it lives, no warning about a warehouse "directory" that a REST catalog's name is not.

Oracles: the rows each commit wrote, and pypaimon's batch read of the table (not our feed).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys

from support.fixtures import WRITER, WriterProcess, python_env
from support.tables import commit, rows_for
from test_interop_catalogs import batch_read, create, run, table_dir

from paimon_feed import WarehouseFeed
from paimon_feed.checkpoint import CheckpointStore


def paimon_feed(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paimon_feed.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=python_env())


def test_tail_reads_a_catalog_table_then_refuses_its_rolled_back_history(any_catalog):
    table = create(any_catalog, "append")
    for n in range(3):
        commit(table, n)
    name = any_catalog.name("events")
    first = paimon_feed(*any_catalog.cli(name, "--from", "earliest", "--to", "3", "--consumer-id", "cli",
                                         "--format", "jsonl", "-v"))
    assert first.returncode == 0, first.stderr
    assert "[rest]" not in first.stderr, first.stderr  # -v: the feed's INFO lines, not a line a REST request
    printed = sorted((json.loads(line) for line in first.stdout.splitlines()), key=lambda row: row["id"])
    assert printed == batch_read(table, 3)
    with open(os.path.join(table_dir(table), "consumer", "consumer-cli")) as handle:
        assert json.load(handle) == {"nextSnapshot": 4}
    table.rollback_to(1)
    for n in (100, 101, 102):
        commit(table, n)  # snapshots 2..4 again, other rows
    second = paimon_feed(*any_catalog.cli(name, "--to", "4", "--consumer-id", "cli", "--format", "jsonl"))
    assert second.returncode == 1, second.stderr
    assert f"table {name}: its history was rewritten after snapshot 3" in second.stderr
    assert second.stdout == ""
    assert CheckpointStore.for_table(table, "cli").load() == 4


def test_warehouse_tail_lists_through_the_catalog_and_never_warns_about_its_name(any_catalog):
    table = create(any_catalog, "append")
    commit(table, 0)
    # Two more commits while the CLI waits, a second apart: time in which the old code tried
    # (and failed) to watch the REST warehouse's name as a directory, saying so each time.
    writer = WriterProcess(WRITER, any_catalog.writer_target(), any_catalog.name("events"), 1, 2, 1.0)
    try:
        tailed = paimon_feed(*any_catalog.cli(f"{any_catalog.database}.*", "--from", "earliest",
                                              "--limit", "9", "--format", "jsonl"))
        writer.wait()
    finally:
        writer.kill()
    assert tailed.returncode == 0, tailed.stderr
    assert "cannot watch" not in tailed.stderr and "warning" not in tailed.stderr.lower(), tailed.stderr
    printed = sorted((json.loads(line) for line in tailed.stdout.splitlines()), key=lambda row: row["id"])
    assert {row.pop("_table") for row in printed} == {any_catalog.name("events")}
    assert printed == batch_read(table, 3)


def test_warehouse_feed_follows_the_catalog_tables_where_they_live(any_catalog, caplog):
    caplog.set_level(logging.WARNING, logger="paimon_feed")
    names = [any_catalog.name(table) for table in ("events", "orders", "late")]
    tables = {names[0]: create(any_catalog, "append", "events"), names[1]: create(any_catalog, "pk", "orders")}
    for table in tables.values():
        commit(table, 0)
    options = {key: value for key, value in any_catalog.options.items() if key != "warehouse"}

    async def main():
        by_table: dict[str, list[dict]] = {name: [] for name in names}
        feed = WarehouseFeed(
            any_catalog.warehouse, catalog_options=options, tables=[f"{any_catalog.database}.*"],
            consumer_id="etl", start="earliest", discovery_interval=0.3, reconcile_interval=3600,
            poll_interval=0.05,
        )
        async with feed:
            for table in tables.values():
                for n in (1, 2):
                    await asyncio.to_thread(commit, table, n)
            # A table created after the start: found by listing the catalog.
            tables[names[2]] = await asyncio.to_thread(create, any_catalog, "append", "late")
            await asyncio.to_thread(commit, tables[names[2]], 0)
            wanted = {names[0]: {0, 1, 2}, names[1]: {0, 1, 2}, names[2]: {0}}
            async for batch in feed:
                by_table[batch.table].extend(batch.to_arrow().to_pylist())
                await feed.commit(batch)
                if all({row["commit"] for row in by_table[name]} == wanted[name] for name in names):
                    break
            return by_table, feed.metrics(), wanted

    by_table, metrics, wanted = run(main())
    key = lambda row: sorted(row.items())  # noqa: E731
    for name in names:
        expected = [row for n in sorted(wanted[name]) for row in rows_for(tables[name], n)]
        assert sorted(by_table[name], key=key) == sorted(expected, key=key), name
        assert metrics.tables[name].notifier == "local" and metrics.tables[name].mode == "push", name
        assert CheckpointStore.for_table(tables[name], "etl").load() == metrics.tables[name].last_delivered_snapshot_id + 1
        assert os.path.isdir(os.path.join(table_dir(tables[name]), "consumer"))
    assert metrics.tables_discovered == 1
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
