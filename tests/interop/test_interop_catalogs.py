"""Tables of a REST catalog (Paimon's reference server, ``RESTCatalogServer`` from paimon-core's
tests jar) and of pypaimon's JDBC catalog on SQLite, followed as a filesystem catalog's are: by
push while a writer process commits, with rollback and drop-and-re-create as errors, and the
consumer file in the table's own ``consumer/`` directory.

Oracles: the rows each commit wrote (``support.tables``), and pypaimon's own batch read of the
table at the delivered snapshot, which does not go through the feed.
"""

from __future__ import annotations

import asyncio
import json
import os
from urllib.parse import unquote, urlparse

import pytest
from support.feeds import consume, has_commit
from support.fixtures import WRITER, WriterProcess
from support.tables import commit, create_append_table, create_pk_table

from paimon_feed import ChangeFeed, HistoryRewrittenError

TABLE_KINDS = {"append": create_append_table, "pk": create_pk_table}


def run(coroutine, timeout: float = 120):
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def create(any_catalog, kind: str, table: str = "events"):
    return TABLE_KINDS[kind](any_catalog.catalog, any_catalog.name(table))


def table_dir(table) -> str:
    """The local directory of a table whatever URL form its catalog gave (``file:/...`` from
    the REST server, a plain path from JDBC)."""
    path = str(table.table_path)
    return unquote(urlparse(path).path) if path.startswith("file:") else path


def batch_read(table, snapshot_id: int) -> list[dict]:
    """pypaimon's batch read of ``table`` at ``snapshot_id``, sorted by ``id``."""
    at = table.copy({"scan.snapshot-id": str(snapshot_id)})
    builder = at.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda row: row["id"])


def applied(rows: list[dict]) -> list[dict]:
    """The table a primary-key changelog leaves: ``op`` is each row's kind."""
    state: dict[int, dict] = {}
    for row in rows:
        if row["op"] in ("+I", "+U"):
            state[row["id"]] = row
        else:
            state.pop(row["id"], None)
    return sorted(state.values(), key=lambda row: row["id"])


def feed_of(table, **options) -> ChangeFeed:
    return ChangeFeed(table, consumer_id="etl", poll_interval=0.05, **options)


@pytest.mark.parametrize("kind", ["append", "pk"])
def test_a_catalog_table_is_followed_by_push_while_a_writer_commits(any_catalog, kind, tmp_path, monkeypatch):
    workdir = tmp_path / "workdir"  # where a table URL taken for a relative path would land
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    table = create(any_catalog, kind)
    writer = WriterProcess(WRITER, any_catalog.writer_target(), any_catalog.name("events"), 0, 7, 0.02)

    async def main():
        # No safety check within the test: every batch must come by push (inotify).
        async with feed_of(table, start="earliest", notifier="local", reconcile_interval=3600) as feed:
            seen = await consume(feed, until=has_commit(7))
            return seen, feed.metrics()

    try:
        seen, metrics = run(main())
    finally:
        writer.kill()
    seen.assert_exactly(table, range(8))
    # Only the start's safety check ran; the commits after it came by inotify.
    assert metrics.mode == "push" and metrics.fallbacks == 0 and metrics.reconciles <= 1
    assert metrics.hints_by_source.get("local", 0) > 0
    last = seen.batches[-1].snapshot_id
    delivered = [row for _, row in seen.rows]
    expected = batch_read(table, last)
    if kind == "pk":
        assert applied(delivered) == expected
    else:
        assert sorted(delivered, key=lambda row: row["id"]) == expected
    consumer_file = os.path.join(table_dir(table), "consumer", "consumer-etl")
    with open(consumer_file) as handle:
        assert json.load(handle) == {"nextSnapshot": last + 1}
    assert os.listdir(workdir) == []  # nothing written under the working directory


def test_a_rollback_through_the_catalog_is_history_rewritten(any_catalog):
    table = create(any_catalog, "append")
    for n in range(5):
        commit(table, n)  # snapshots 1..5

    async def main():
        async with feed_of(table, start="earliest", reconcile_interval=0.5) as feed:
            seen = await consume(feed, until=has_commit(4))
            assert seen.batches[-1].snapshot_id == 5
            table.rollback_to(2)  # through the catalog (REST) or the table's files (JDBC)
            for n in (100, 101):
                commit(table, n)  # re-use the ids 3 and 4
            with pytest.raises(HistoryRewrittenError) as caught:
                async for batch in feed:
                    raise AssertionError(f"a batch of the rewritten history: {batch}")
            return caught.value

    error = run(main())
    assert error.table == any_catalog.name("events") and error.snapshot_id == 5
    assert [row["commit"] for row in batch_read(table, 4)] == [0] * 3 + [1] * 3 + [100] * 3 + [101] * 3


def test_a_dropped_and_recreated_table_with_one_commit_is_history_rewritten(any_catalog):
    name = any_catalog.name("events")
    table = create(any_catalog, "append")
    for n in range(3):
        commit(table, n)

    async def main():
        async with feed_of(table, start="earliest", reconcile_interval=0.5) as feed:
            await consume(feed, until=has_commit(2))
            any_catalog.catalog.drop_table(name)
            commit(create(any_catalog, "append"), 100)  # one commit: snapshot 1 again
            with pytest.raises(HistoryRewrittenError) as caught:
                async for batch in feed:
                    raise AssertionError(f"a batch of the re-created table: {batch}")
            return caught.value

    error = run(main(), timeout=60)
    assert error.table == name
