"""OVERWRITE snapshots (insert overwrite, truncate) by choice: skipped and counted, or read as
removed (-D) and added (+I) rows. With "read", replaying a feed rebuilds the table exactly; the
oracle is pypaimon's batch read of the table at its latest snapshot."""

from __future__ import annotations

import asyncio
import logging
import threading

import pyarrow as pa
import pytest
from pypaimon import Schema
from support.planning import plan_rounds

from paimon_feed import ChangeFeed, ConfigurationError, Planner
from paimon_feed.tables import commit_arrow

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), pa.field("dt", pa.string(), nullable=False)]
)


def make_table(cat, kind):
    options, keys = {}, None
    if kind == "pk":
        options, keys = {"bucket": "2", "changelog-producer": "input"}, ["id", "dt"]
    cat.create_table(
        "db.o", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"], primary_keys=keys, options=options), False
    )
    return cat.get_table("db.o")


def rows(commit, n=4):
    return [{"id": commit * 10 + i, "v": f"c{commit}", "dt": f"d{i % 2}"} for i in range(n)]


def overwrite(table, data, partition=None):
    builder = table.new_batch_write_builder().overwrite(partition)
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(pa.Table.from_pylist(data, schema=SCHEMA))
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()


def writes(table):
    """Appends and overwrites, partition-wise and whole-table; an overwrite re-adds a key."""
    yield lambda: commit_arrow(table, pa.Table.from_pylist(rows(1), schema=SCHEMA))
    yield lambda: overwrite(table, [{"id": 10, "v": "again", "dt": "d0"}, {"id": 99, "v": "o", "dt": "d0"}], {"dt": "d0"})
    yield lambda: commit_arrow(table, pa.Table.from_pylist(rows(2), schema=SCHEMA))
    yield lambda: overwrite(table, rows(3, n=3))
    yield lambda: commit_arrow(table, pa.Table.from_pylist(rows(4), schema=SCHEMA))


def table_state(table):
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted((r["id"], r["v"], r["dt"]) for r in data.to_pylist())


def replay(state: dict, data: pa.Table) -> None:
    """Apply changes to ``state`` ({(id, dt): v}); a -D must remove a row the consumer has."""
    for row in data.to_pylist():
        key = (row["id"], row["dt"])
        if row["_row_kind"] == "-D":
            assert state.get(key) == row["v"], f"-D of a row the consumer does not have: {row}"
            del state[key]
        elif row["_row_kind"] == "-U":
            state.pop(key, None)
        else:
            state[key] = row["v"]


@pytest.mark.parametrize("kind", ["append", "pk"])
def test_reading_overwrites_replays_into_the_tables_exact_state(cat, kind):
    table = make_table(cat, kind)
    commit_arrow(table, pa.Table.from_pylist(rows(0), schema=SCHEMA))
    state: dict = {}
    kinds = []

    async def main():
        async with ChangeFeed(
            table, start="earliest", overwrite="read", include_row_kind=True,
            notifier="poll", poll_interval=0.05,
        ) as feed:
            steps = list(writes(table))
            writer = threading.Thread(target=lambda: [step() for step in steps])
            writer.start()
            async for batch in feed:
                kinds.append(batch.kind)
                replay(state, await asyncio.to_thread(batch.to_arrow))
                await feed.commit(batch)
                if batch.snapshot_id == 6:
                    break
            writer.join()
            return feed.metrics()

    metrics = asyncio.run(main())
    assert kinds.count("overwrite") == 2
    assert metrics.overwrites_skipped == 0
    assert sorted((k[0], v, k[1]) for k, v in state.items()) == table_state(table)


@pytest.mark.parametrize("kind", ["append", "pk"])
def test_skipping_overwrites_is_logged_and_counted(cat, kind, caplog):
    table = make_table(cat, kind)
    commit_arrow(table, pa.Table.from_pylist(rows(0), schema=SCHEMA))
    for step in writes(table):
        step()
    delivered = []

    async def main():
        async with ChangeFeed(table, start="earliest", end=6, notifier="poll") as feed:
            async for batch in feed:
                delivered.extend(r["id"] for r in batch.to_arrow().to_pylist())
                await feed.commit(batch)
            return feed.metrics()

    with caplog.at_level(logging.WARNING, logger="paimon_feed"):
        metrics = asyncio.run(main())
    assert metrics.overwrites_skipped == 2
    skipped = [r.getMessage() for r in caplog.records if "is an OVERWRITE" in r.getMessage()]
    assert len(skipped) == 2 and "snapshot 3 " in skipped[0] and "snapshot 5 " in skipped[1]
    # only appended rows, each once: an overwrite's rows are not streamed
    assert sorted(delivered) == sorted(r["id"] for c in (0, 1, 2, 4) for r in rows(c))


def test_reading_overwrites_is_refused_on_deletion_vector_tables(cat):
    cat.create_table(
        "db.dv", Schema.from_pyarrow_schema(SCHEMA, options={"deletion-vectors.enabled": "true"}), False
    )
    with pytest.raises(ConfigurationError, match=r"db\.dv.*deletion vectors.*overwrite='skip'"):
        Planner(cat.get_table("db.dv"), overwrite="read", include_row_kind=True)


def test_reading_overwrites_needs_row_kinds(append_table):
    with pytest.raises(ConfigurationError, match="include_row_kind"):
        Planner(append_table, overwrite="read")
    with pytest.raises(ConfigurationError, match="overwrite must be one of skip, read"):
        ChangeFeed(append_table, overwrite="yes")


def test_an_overwrite_is_never_folded_into_a_catch_up(cat):
    table = make_table(cat, "append")
    for c in range(5):
        commit_arrow(table, pa.Table.from_pylist(rows(c), schema=SCHEMA))
    overwrite(table, [{"id": 90, "v": "o", "dt": "d1"}], {"dt": "d1"})
    for c in range(5, 10):
        commit_arrow(table, pa.Table.from_pylist(rows(c), schema=SCHEMA))
    planner = Planner(table, overwrite="read", include_row_kind=True, catch_up_threshold=2)
    batches, _ = plan_rounds(planner, 1, limit=1)  # one batch a round, as a feed far behind
    assert [(b.kind, b.first_snapshot_id, b.snapshot_id) for b in batches] == [
        ("catch-up", 1, 5), ("overwrite", 6, 6), ("catch-up", 7, 11),
    ]
    changes = sorted((r["_row_kind"], r["id"]) for r in batches[1].to_arrow().to_pylist())
    assert changes == [("+I", 90)] + sorted(
        ("-D", r["id"]) for c in range(5) for r in rows(c) if r["dt"] == "d1"
    )
