"""A table whose schema changes under a running feed: every batch is read with the schema of
its snapshots, widened values are exact, added columns appear, renamed columns follow.

The oracle is what the writer wrote (and a pypaimon batch read of the evolved table)."""

from __future__ import annotations

import asyncio
import threading

import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from support.planning import plan_rounds

from paimon_feed import ChangeFeed, Planner
from paimon_feed.tables import commit_arrow

BIG = 2**40


def _write(cat, name, rows, schema):
    commit_arrow(cat.get_table(name), pa.Table.from_pylist(rows, schema=schema))


V0 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int32())])
V1 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int64())])
V2 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int64()), ("s", pa.string())])
V3 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("m", pa.int64()), ("s", pa.string())])

#: What the writer commits, by schema: (schema change before it, Arrow schema, rows).
EVOLUTION = [
    (None, V0, [{"id": i, "n": i} for i in range(3)]),
    (SchemaChange.update_column_type("n", AtomicType("BIGINT")), V1,
     [{"id": 3 + i, "n": BIG + i} for i in range(3)]),
    (SchemaChange.add_column("s", AtomicType("STRING")), V2,
     [{"id": 6 + i, "n": BIG * 2 + i, "s": f"s{i}"} for i in range(2)]),
    (SchemaChange.rename_column("n", "m"), V3, [{"id": 8, "m": BIG * 3, "s": "renamed"}]),
]


def _create(cat, name="db.evolving", **schema_args):
    cat.create_table(name, Schema.from_pyarrow_schema(V0, **schema_args), False)
    return cat.get_table(name)


def _evolve(cat, name, steps, commits_per_step=1):
    for change, schema, rows in steps:
        if change is not None:
            cat.alter_table(name, [change])
        for _ in range(commits_per_step):
            _write(cat, name, rows, schema)


def test_a_running_feed_reads_each_snapshot_with_its_own_schema(cat):
    table = _create(cat)
    _evolve(cat, "db.evolving", EVOLUTION[:1])
    delivered = []

    async def main():
        async with ChangeFeed(table, start="earliest", notifier="poll", poll_interval=0.05) as feed:
            writer = threading.Thread(target=_evolve, args=(cat, "db.evolving", EVOLUTION[1:]))
            writer.start()
            async for batch in feed:
                data = await asyncio.to_thread(batch.to_arrow)
                delivered.append((batch, data))
                await feed.commit(batch)
                if any(row["id"] == 8 for row in data.to_pylist()):
                    break
            writer.join()
            return feed.metrics()

    metrics = asyncio.run(main())
    rows = {row["id"]: row for _, data in delivered for row in data.to_pylist()}
    written = {row["id"]: row for _, _, step in EVOLUTION for row in step}
    assert rows == written  # exact values, the columns each snapshot had, under their names
    assert [batch.schema_id for batch, _ in delivered] == [0, 1, 2, 3]
    for batch, data in delivered:
        assert data.schema == batch.schema
    assert [batch.schema.field("n" if batch.schema_id < 3 else "m").type for batch, _ in delivered] \
        == [pa.int32(), pa.int64(), pa.int64(), pa.int64()]
    assert metrics.schema_changes == 3 and metrics.current_schema_id == 3


@pytest.mark.parametrize("options", [{}, {"bucket": "2", "bucket-key": "id"}])
def test_catch_up_never_spans_two_schemas(cat, options):
    """Far behind, each schema's run is one catch-up batch; together they hold every row."""
    table = _create(cat, options=options)
    steps = EVOLUTION
    _evolve(cat, "db.evolving", steps, commits_per_step=4)
    planner = Planner(table, catch_up_threshold=2)
    batches, _ = plan_rounds(planner, 1)
    assert [b.kind for b in batches] == ["catch-up"] * len(steps)
    assert [b.schema_id for b in batches] == list(range(len(steps)))
    assert [(b.first_snapshot_id, b.snapshot_id) for b in batches] == [
        (1 + 4 * i, 4 + 4 * i) for i in range(len(steps))
    ]
    got = sorted(
        tuple(sorted(row.items())) for b in batches for row in b.to_arrow().to_pylist()
    )
    expected = sorted(tuple(sorted(row.items())) for _, _, rows in steps for row in rows * 4)
    assert got == expected


def test_a_full_batch_reads_older_files_into_the_snapshots_schema(cat):
    table = _create(cat)
    _evolve(cat, "db.evolving", EVOLUTION)
    latest = cat.get_table("db.evolving")
    full = Planner(table).full_batch(4)
    oracle = latest.new_read_builder().new_read()
    oracle_rows = oracle.to_arrow(latest.new_read_builder().new_scan().plan().splits())
    assert full.schema_id == 3 and full.schema.names == ["id", "m", "s"]
    key = lambda row: row["id"]  # noqa: E731
    assert sorted(full.to_arrow().to_pylist(), key=key) == sorted(oracle_rows.to_pylist(), key=key)


def test_projection_and_predicate_follow_a_renamed_column(cat):
    table = _create(cat)
    _evolve(cat, "db.evolving", EVOLUTION)
    predicate = table.new_read_builder().new_predicate_builder().greater_or_equal("n", 2)
    planner = Planner(table, projection=["n"], predicate=predicate, catch_up_threshold=100)
    batches = planner.next_batches(1, limit=10).batches
    got = [(b.schema_id, row) for b in batches for row in b.to_arrow().to_pylist()]
    assert got == [
        (0, {"n": 2}),
        *[(1, {"n": BIG + i}) for i in range(3)],
        *[(2, {"n": BIG * 2 + i}) for i in range(2)],
        (3, {"m": BIG * 3}),
    ]


@pytest.mark.parametrize("method,expected", [
    ("equal", [1]),  # rows after the drop have no s: null, never equal to 'a'
    ("is_null", [2]),
    ("is_not_null", [1]),
])
def test_a_predicate_on_a_dropped_column_reads_it_as_null(cat, method, expected):
    cat.create_table("db.d", Schema.from_pyarrow_schema(V2), False)
    table = cat.get_table("db.d")
    _write(cat, "db.d", [{"id": 1, "n": 1, "s": "a"}], V2)
    cat.alter_table("db.d", [SchemaChange.drop_column("s")])
    _write(cat, "db.d", [{"id": 2, "n": 2}], V1)
    builder = table.new_read_builder().new_predicate_builder()
    predicate = getattr(builder, method)(*(["s", "a"] if method == "equal" else ["s"]))
    planner = Planner(table, predicate=predicate, catch_up_threshold=100)
    batches = planner.next_batches(1, limit=10).batches
    assert sorted(r["id"] for b in batches for r in b.to_arrow().to_pylist()) == expected


def test_a_predicate_on_a_column_added_later_reads_older_rows_as_null(cat):
    _create(cat)
    _evolve(cat, "db.evolving", EVOLUTION[:3])  # s is added in schema 2
    latest = cat.get_table("db.evolving")
    builder = latest.new_read_builder().new_predicate_builder()
    both = builder.or_predicates([builder.equal("s", "s1"), builder.less_than("n", 1)])
    for predicate, expected in (
        (builder.equal("s", "s1"), [7]),
        (builder.is_null("s"), [0, 1, 2, 3, 4, 5]),
        (both, [0, 7]),
    ):
        planner = Planner(latest, predicate=predicate, catch_up_threshold=100)
        batches = planner.next_batches(1, limit=10).batches
        got = sorted(r["id"] for b in batches for r in b.to_arrow().to_pylist())
        assert got == expected, predicate
