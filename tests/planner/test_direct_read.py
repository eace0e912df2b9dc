"""Plain append splits and a primary-key table's change splits are read with pyarrow directly;
the result must be identical to pypaimon's reader on every table shape, rows and their order.
The oracle is pypaimon's own read of the same splits (``PAIMON_FEED_DIRECT_READ=0``), and a
test fails if the direct path was not taken where it should have been (or was taken where it
must not be: a primary-key table's merged full state)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from support.direct_read import spy_direct_reads
from support.planning import plan_rounds

from paimon_feed import Planner
from paimon_feed.planner import _direct_read
from paimon_feed.tables import commit_arrow

WIDE = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    ("i", pa.int32()), ("s", pa.int16()), ("f", pa.float64()), ("b", pa.bool_()),
    ("t", pa.string()), ("d", pa.date32()), ("ts", pa.timestamp("us")),
    ("dec", pa.decimal128(10, 2)), ("bin", pa.binary()),
    pa.field("dt", pa.string(), nullable=False),
])


def wide_rows(commit: int) -> list[dict]:
    rows = []
    for k in range(6):
        rows.append({
            "id": commit * 100 + k, "i": k, "s": k, "f": k / 3, "b": k % 2 == 0, "t": f"r{k}",
            "d": dt.date(2026, 1, 1 + k), "ts": dt.datetime(2026, 1, 1, 0, 0, k),
            "dec": Decimal(f"{k}.{k}0"), "bin": bytes([k]), "dt": f"p{k % 2}",
        })
    rows.append({"id": commit * 100 + 99, "dt": "p0"})  # nulls in every nullable column
    return rows


SHAPES = {
    "append": {},
    "partitioned": {"partition_keys": ["dt"]},
    "bucketed": {"options": {"bucket": "3", "bucket-key": "id"}},
    "primary-key": {"primary_keys": ["id", "dt"], "partition_keys": ["dt"],
                    "options": {"bucket": "2", "changelog-producer": "input"}},
    "deletion-vectors": {"options": {"deletion-vectors.enabled": "true"}},
}


def build(cat, shape, evolve=False):
    cat.create_table("db.w", Schema.from_pyarrow_schema(WIDE, **SHAPES[shape]), False)
    table = cat.get_table("db.w")
    for commit in range(4):
        commit_arrow(table, pa.Table.from_pylist(wide_rows(commit), schema=WIDE))
    if evolve:
        cat.alter_table("db.w", [SchemaChange.update_column_type("i", AtomicType("BIGINT"))])
        evolved = WIDE.set(WIDE.get_field_index("i"), pa.field("i", pa.int64()))
        commit_arrow(cat.get_table("db.w"), pa.Table.from_pylist(wide_rows(4), schema=evolved))
    return table


def read_all(table, monkeypatch, direct, **planner_args):
    used = spy_direct_reads(monkeypatch, direct=direct)
    planner = Planner(table, catch_up_threshold=2, **planner_args)
    latest = planner.latest_snapshot_id()
    batches = [planner.full_batch(latest), *plan_rounds(planner, 2, limit=1)[0]]
    tables = [b.to_arrow() for b in batches]
    streamed = [pa.Table.from_batches(list(b.to_batches()), schema=b.schema) for b in batches]
    return tables, streamed, used


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("variant", ["plain", "row-kind", "projected", "filtered", "evolved"])
def test_direct_reads_equal_pypaimons_reads(cat, monkeypatch, shape, variant):
    table = build(cat, shape, evolve=variant == "evolved")
    args = {}
    if variant == "row-kind":
        args["include_row_kind"] = True
    elif variant == "projected":
        args["projection"] = ["ts", "id", "dec"]
    elif variant == "filtered":
        builder = table.new_read_builder().new_predicate_builder()
        args["predicate"] = builder.and_predicates([builder.equal("dt", "p1"), builder.greater_than("i", 2)])
        args["projection"] = ["id", "t"]
    direct, direct_streamed, used = read_all(table, monkeypatch, True, **args)
    oracle, _, _ = read_all(table, monkeypatch, False, **args)
    assert len(direct) == len(oracle)
    for got, streamed, want in zip(direct, direct_streamed, oracle):
        assert got.schema == want.schema
        assert streamed.schema == want.schema
        assert got.to_pylist() == want.to_pylist()  # the rows, in pypaimon's order
        assert streamed.to_pylist() == want.to_pylist()
    direct_shapes = ("append", "partitioned", "bucketed", "primary-key")
    assert any(used) == (shape in direct_shapes), used  # taken exactly where it is provable
    if variant == "evolved" and shape in direct_shapes:
        assert not all(used)  # files of the older schema went through pypaimon


OPS = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("op", pa.string())])


@pytest.mark.parametrize("producer", ["input", "none"])
def test_change_reads_of_a_primary_key_table_keep_every_row_kind_in_order(cat, monkeypatch, producer):
    """Inserts, updates (``-U``/``+U``) and deletes written through ``rowkind.field``: the
    direct read of each snapshot's changelog (``input``) or delta (``none``) files gives
    pypaimon's rows, kinds and order, and the kinds the writer wrote."""
    options = {"bucket": "2", "rowkind.field": "op", "changelog-producer": producer}
    cat.create_table("db.ops", Schema.from_pyarrow_schema(OPS, primary_keys=["id"], options=options), False)
    table = cat.get_table("db.ops")
    # One row per key per commit: the writer keeps only a key's last row of a commit.
    commits = [
        [(k, f"a{k}", "+I") for k in range(8)],
        [(1, "a1", "-U"), (2, None, "-D"), (9, "a9", "+I")],
        [(1, "b1", "+U"), (9, None, "-D"), (5, "a5", "-U")],
        [(5, "b5", "+U")],
    ]
    for rows in commits:
        commit_arrow(table, pa.Table.from_pylist([dict(zip(OPS.names, row)) for row in rows], schema=OPS))

    def changes(direct):
        used = spy_direct_reads(monkeypatch, direct=direct)
        batches = plan_rounds(Planner(table, include_row_kind=True), 1, limit=1)[0]
        return [b.to_arrow().to_pylist() for b in batches], [list(b.to_batches()) for b in batches], used

    got, streamed, used = changes(True)
    want, _, _ = changes(False)
    assert used and all(used)
    assert got == want
    assert [pa.Table.from_batches(b).to_pylist() for b in streamed] == want
    written = [sorted((row[2], row[0]) for row in rows) for rows in commits]
    assert [sorted((r["_row_kind"], r["id"]) for r in rows) for rows in got] == written



def merged_reads(table, monkeypatch, direct, **planner_args):
    """The full state at every snapshot, each read as one batch, and whether each went direct."""
    used = spy_direct_reads(monkeypatch, direct=direct)
    planner = Planner(table, **planner_args)
    states = [planner.full_batch(n).to_arrow().to_pylist()
              for n in range(1, planner.latest_snapshot_id() + 1)]
    return states, used


KEYED = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("n", pa.int32(), nullable=False),
                   pa.field("dt", pa.string(), nullable=False), ("v", pa.int64()), ("op", pa.string())])


def write_versions(table, commits: int = 6) -> None:
    """Every commit rewrites a third of the keys, deletes some and re-inserts others: each
    state split holds several versions of a key, across files, and retractions."""
    for c in range(commits):
        rows = []
        for i in range(30):
            if (i + c) % 3:
                continue
            op = "-D" if (i * 7 + c) % 5 == 0 else ("+U" if c else "+I")
            rows.append({"k": f"k{i % 10}é", "n": i // 10, "dt": f"p{i % 2}", "v": c * 100 + i, "op": op})
        commit_arrow(table, pa.Table.from_pylist(rows, schema=KEYED))


@pytest.mark.parametrize("variant", ["plain", "row-kind", "projected", "filtered"])
@pytest.mark.parametrize("partitioned", [False, True])
def test_merged_state_of_a_deduplicated_table_equals_pypaimons_merge(cat, monkeypatch, variant, partitioned):
    """The deduplicate engine's merge done with pyarrow gives pypaimon's merged rows, kinds and
    order at every snapshot: latest version per key, retracted keys gone."""
    shape = {"partition_keys": ["dt"]} if partitioned else {}
    options = {"bucket": "2", "rowkind.field": "op"}
    cat.create_table("db.keyed", Schema.from_pyarrow_schema(
        KEYED, primary_keys=["k", "n", "dt"], options=options, **shape), False)
    table = cat.get_table("db.keyed")
    write_versions(table)
    args = {}
    if variant == "row-kind":
        args["include_row_kind"] = True
    elif variant == "projected":
        args["projection"] = ["v", "k"]  # keys that are not all read still merge
    elif variant == "filtered":
        builder = table.new_read_builder().new_predicate_builder()
        args["predicate"] = builder.greater_than("v", 250)
    direct, used = merged_reads(table, monkeypatch, True, **args)
    oracle, _ = merged_reads(table, monkeypatch, False, **args)
    assert direct == oracle
    assert any(used), used
    assert sum(len(state) for state in direct) > 0


@pytest.mark.parametrize("options", [
    {"sequence.field": "v"},
    {"ignore-delete": "true"},
    {"merge-engine": "partial-update"},
    {"merge-engine": "first-row"},
])
def test_merged_state_under_other_merge_rules_is_pypaimons(cat, monkeypatch, options):
    cat.create_table("db.keyed", Schema.from_pyarrow_schema(
        KEYED, primary_keys=["k", "n", "dt"], options={"bucket": "1", **options}), False)
    table = cat.get_table("db.keyed")
    for c in range(3):
        rows = [{"k": f"k{i}", "n": 0, "dt": "p", "v": c * 10 + i} for i in range(4)]
        commit_arrow(table, pa.Table.from_pylist(rows, schema=KEYED))
    direct, used = merged_reads(table, monkeypatch, True)
    oracle, _ = merged_reads(table, monkeypatch, False)
    assert direct == oracle
    assert used and not any(used)


def test_a_float_key_is_merged_by_pypaimon(cat, monkeypatch):
    schema = pa.schema([pa.field("x", pa.float64(), nullable=False), ("v", pa.int64())])
    cat.create_table("db.fk", Schema.from_pyarrow_schema(schema, primary_keys=["x"], options={"bucket": "1"}), False)
    table = cat.get_table("db.fk")
    for c in range(3):
        commit_arrow(table, pa.Table.from_pylist([{"x": -0.0 if c else 0.0, "v": c}, {"x": 1.5, "v": c}], schema=schema))
    direct, used = merged_reads(table, monkeypatch, True)
    oracle, _ = merged_reads(table, monkeypatch, False)
    assert direct == oracle
    assert used and not any(used)


def test_a_state_split_too_large_to_merge_in_memory_is_merged_by_pypaimon(cat, monkeypatch):
    cat.create_table("db.keyed", Schema.from_pyarrow_schema(
        KEYED, primary_keys=["k", "n", "dt"], options={"bucket": "2", "rowkind.field": "op"}), False)
    table = cat.get_table("db.keyed")
    write_versions(table)
    monkeypatch.setattr(_direct_read, "MERGE_SPLIT_BYTES", 1)
    direct, used = merged_reads(table, monkeypatch, True)
    oracle, _ = merged_reads(table, monkeypatch, False)
    assert direct == oracle
    assert used and not any(used)
