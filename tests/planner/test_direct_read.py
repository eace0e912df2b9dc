"""Plain append splits are read with pyarrow directly; the result must be identical to
pypaimon's reader on every table shape. The oracle is pypaimon's own read of the same splits
(``PAIMON_FEED_DIRECT_READ=0``), and a test fails if the direct path was not taken where it
should have been."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange

from paimon_feed import Planner
from paimon_feed.tables import commit_arrow
from support.direct_read import spy_direct_reads
from support.planning import plan_rounds

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


def canonical(data: pa.Table) -> list:
    return sorted(tuple((k, repr(v)) for k, v in row.items()) for row in data.to_pylist())


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
        assert canonical(got) == canonical(want)
        assert canonical(streamed) == canonical(want)
    plain_append = shape in ("append", "partitioned", "bucketed")
    assert any(used) == plain_append, used  # taken exactly where the data is plain
    if variant == "evolved" and plain_append:
        assert not all(used)  # files of the older schema went through pypaimon
