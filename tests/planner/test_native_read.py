"""Merged state read by pypaimon-rust (``planner/_native_read.py``) is the feed's read without
it and pypaimon's own batch read, row for row, on pypaimon-written tables of every merge
engine pypaimon merges; a split Rust cannot take, or fails on, goes to pypaimon.
(``tests/interop/test_interop_native.py`` holds the same reads against Java's.)"""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal

import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from support.native import require_native, spy_native_reads

from paimon_feed import Planner
from paimon_feed.planner import _native_read
from paimon_feed.tables import commit_arrow


@pytest.fixture(autouse=True)
def _native_installed():
    require_native()


ROWS = pa.schema([
    pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("n", pa.int64()),
    ("score", pa.float64()), ("price", pa.decimal128(20, 4)), ("at", pa.timestamp("us")),
    ("day", pa.date32()), ("tags", pa.list_(pa.string())), pa.field("dt", pa.string(), nullable=False),
])


def commits(count: int = 4) -> list[pa.Table]:
    """Overlapping keys, partial nulls: every state split needs a merge."""
    out = []
    for c in range(count):
        rows = []
        for k in range(c * 4, c * 4 + 10):
            rows.append({
                "id": k % 13, "name": None if (k + c) % 3 == 0 else f"n{c}-{k}", "n": k + c,
                "score": None if k % 4 == 0 else (k % 5) * 0.5, "price": Decimal(f"{k}.{c}5"),
                "at": dt.datetime(2026, 1, 1, 0, c, k % 60, 17), "day": dt.date(2026, 1, 1 + c),
                "tags": [f"t{c}", f"k{k}"], "dt": f"p{k % 2}",
            })
        unique = {(row["id"], row["dt"]): row for row in rows}
        out.append(pa.Table.from_pylist(list(unique.values()), schema=ROWS))
    return out


ENGINES = {
    "partial-update": {"merge-engine": "partial-update"},
    "partial-update-sequence-field": {"merge-engine": "partial-update", "sequence.field": "n"},
    "aggregation": {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                    "fields.score.aggregate-function": "max", "fields.price.aggregate-function": "sum",
                    "fields.name.aggregate-function": "last_non_null_value"},
    "deduplicate-orc": {"file.format": "orc"},
    "deduplicate-avro-sequence-field": {"file.format": "avro", "sequence.field": "n"},
    "partial-update-orc": {"merge-engine": "partial-update", "file.format": "orc"},
}


def build(cat, options: dict, partitioned: bool = False, name: str = "db.merged"):
    shape = {"partition_keys": ["dt"]} if partitioned else {}
    cat.create_table(name, Schema.from_pyarrow_schema(
        ROWS, primary_keys=["id", "dt"], options={"bucket": "2", **options}, **shape), False)
    table = cat.get_table(name)
    for data in commits():
        commit_arrow(table, data)
    return table


def full_batch(table, monkeypatch, *, native: bool, **planner_args):
    used = spy_native_reads(monkeypatch, native=native)
    planner = Planner(table, **planner_args)
    batch = planner.full_batch(planner.latest_snapshot_id())
    data = batch.to_arrow()
    streamed = pa.Table.from_batches(list(batch.to_batches()), schema=batch.schema)
    assert streamed.equals(data)
    return data, used


@pytest.mark.parametrize("variant", ["plain", "row-kind", "projected", "filtered", "partitioned"])
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_native_merged_state_equals_the_feeds_read_without_it_and_pypaimons(cat, monkeypatch, engine, variant):
    table = build(cat, ENGINES[engine], partitioned=variant == "partitioned")
    args = {}
    if variant == "row-kind":
        args["include_row_kind"] = True
    elif variant == "projected":
        args["projection"] = ["price", "id", "tags"]
    elif variant == "filtered":
        builder = table.new_read_builder().new_predicate_builder()
        args["predicate"] = builder.and_predicates([builder.equal("dt", "p1"), builder.greater_than("n", 6)])
        args["projection"] = ["id", "name"]
    native, used = full_batch(table, monkeypatch, native=True, **args)
    python, _ = full_batch(table, monkeypatch, native=False, **args)
    assert native.schema == python.schema
    assert native.to_pylist() == python.to_pylist()  # the rows, in pypaimon's order
    assert native.num_rows > 0
    keeps_kinds = variant == "row-kind" and not engine.startswith(("partial-update", "aggregation"))
    assert (bool(used) and all(used)) != keeps_kinds, used  # deduplicate's +U: left to pypaimon
    if variant == "plain":
        splits = table.new_read_builder().new_scan().plan().splits()
        batch_read = table.new_read_builder().new_read().to_arrow(splits)  # pypaimon's own
        assert native.to_pylist() == batch_read.to_pylist()


def test_an_overwrites_removed_and_added_state_is_read_natively(cat, monkeypatch):
    table = build(cat, ENGINES["partial-update"], partitioned=True)
    writer = table.new_batch_write_builder().overwrite({"dt": "p1"})
    write, commit = writer.new_write(), writer.new_commit()
    write.write_arrow(commits(1)[0].filter(pa.compute.equal(commits(1)[0]["dt"], "p1")))
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()

    def overwrite_rows(native):
        used = spy_native_reads(monkeypatch, native=native)
        planner = Planner(table, overwrite="read", include_row_kind=True)
        latest = planner.latest_snapshot_id()
        batch = planner.batches.of_snapshot(latest, planner.timeline.snapshot_or_tag(latest), 0.0)
        assert batch.kind == "overwrite"
        return batch.to_arrow().to_pylist(), used

    native, used = overwrite_rows(True)
    assert native == overwrite_rows(False)[0]
    assert {row["_row_kind"] for row in native} == {"-D", "+I"}
    assert used and all(used)


def test_files_of_an_older_schema_go_to_pypaimon(cat, monkeypatch):
    build(cat, ENGINES["partial-update"])
    cat.alter_table("db.merged", [SchemaChange.update_column_type("n", AtomicType("DECIMAL(20, 0)"))])
    evolved = cat.get_table("db.merged")
    data = commits(1)[0]
    commit_arrow(evolved, data.set_column(2, pa.field("n", pa.decimal128(20, 0)), data["n"].cast(pa.decimal128(20, 0))))
    native, used = full_batch(evolved, monkeypatch, native=True)
    python, _ = full_batch(evolved, monkeypatch, native=False)
    assert native.equals(python)
    assert not used  # every split holds files of schema 0 too: not offered to Rust


def _failing(self):
    def read(splits):
        raise RuntimeError("simulated Rust failure")
    return read


def _other_types(self):
    from pypaimon.read.native_plan import _prepare_native_read

    read = _prepare_native_read(self._table, read_type=self._read_type)
    return lambda splits: (batch.cast(pa.schema([
        pa.field(f.name, pa.large_string() if pa.types.is_string(f.type) else f.type) for f in batch.schema
    ])) for batch in read(splits))


@pytest.mark.parametrize("failure", [_failing, _other_types], ids=["error", "other-types"])
def test_a_rust_read_that_fails_or_differs_goes_to_pypaimon_with_a_warning(cat, monkeypatch, caplog, failure):
    table = build(cat, ENGINES["partial-update"])
    python, _ = full_batch(table, monkeypatch, native=False)
    monkeypatch.setattr(_native_read.NativeRead, "_new_reader", failure)
    with caplog.at_level(logging.WARNING, logger=_native_read.__name__):
        native, used = full_batch(table, monkeypatch, native=True)
    assert native.equals(python)  # never a cast: the differing batch was not delivered
    assert used and not any(used)
    assert "through pypaimon" in caplog.text


def test_without_the_switch_or_the_package_nothing_is_read_natively(cat, monkeypatch):
    table = build(cat, ENGINES["aggregation"])
    monkeypatch.setenv(_native_read.ENVIRONMENT_SWITCH, "0")
    assert _native_read.NativeRead.for_table(table, None, None) is None
    monkeypatch.setenv(_native_read.ENVIRONMENT_SWITCH, "1")
    assert _native_read.NativeRead.for_table(table, None, None) is not None
    monkeypatch.setattr(_native_read, "_runtime_available", lambda: False)
    assert _native_read.NativeRead.for_table(table, None, None) is None


def test_rust_batches_are_joined_up_to_the_read_batch_size_in_order():
    """pypaimon-rust yields ~1k-row batches; a Spark executor asks for 65,536-row ones."""
    import pyarrow as pa

    from paimon_feed.planner._native_read import _joined

    small = [pa.record_batch({"id": list(range(n, n + 3))}) for n in range(0, 30, 3)]
    empty = pa.record_batch({"id": pa.array([], pa.int64())})
    joined = list(_joined(iter([empty, *small]), 7))
    assert [b.num_rows for b in joined] == [9, 9, 9, 3]
    assert [v for b in joined for v in b.column(0).to_pylist()] == list(range(30))
    assert list(_joined(iter([small[0]]), 7)) == [small[0]]
    assert list(_joined(iter([]), 7)) == []
