"""Scenario 6: Java evolves the schema while a feed reads (add a column, rename one, widen
INT to BIGINT), on an append table and on primary-key tables with ``input`` and ``lookup``
changelogs.

Every batch is compared with Java reading the same snapshots with the schema they were
committed with: a full batch with Java's batch read at its snapshot (time travel reads with
that snapshot's schema), a change batch with Java's streaming read of its snapshots with the
batch's schema. The batch's ``schema_id`` must be the one Java recorded in those snapshots and
its columns and types Java's fields of that schema. A consumer starting after the changes reads
the older files into the newest schema as Java's batch read does.
"""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pytest
from interop_support import FEED_OPTIONS, assert_same_rows, follow, last_changed_snapshot, py_table

from paimon_feed import ChangeFeed

COLUMNS = [("id", "BIGINT NOT NULL"), ("commit", "INT"), ("n", "INT"), ("payload", "STRING")]
WIDE = 2**40  # only BIGINT holds n from stage 3 on

TABLES = {
    "append": dict(options={"bucket": "2", "bucket-key": "id"}),
    "primary-key-input": dict(primary_keys=["id"], options={"bucket": "2", "changelog-producer": "input"}),
    "primary-key-lookup": dict(primary_keys=["id"], options={"bucket": "2", "changelog-producer": "lookup"}),
}
# Stage k's schema is reached by the first k of these (schema ids 1, 2, 3).
CHANGES = [
    {"add": "extra", "type": "STRING"},
    {"rename": "payload", "to": "label"},
    {"update_type": "n", "type": "BIGINT"},
]


def rows(n: int, stage: int, primary_key: bool) -> list[dict]:
    """Commit n in the columns of schema ``stage``; on primary-key tables it also updates key
    (n-1)*10 and deletes key (n-2)*10+1, rows written under earlier schemas."""

    def row(key: int, i: int, kind: str) -> dict:
        out = {"id": key, "commit": n, "n": (WIDE if stage >= 3 else 0) + n * 10 + i}
        out["label" if stage >= 2 else "payload"] = f"{kind}-{n}-{i}"
        if stage >= 1:
            out["extra"] = f"x{n}" if i != 1 else None
        if primary_key:
            out["_kind"] = kind
        return out

    out = [row(n * 10 + i, i, "+I") for i in range(3)]
    if primary_key and n >= 2:
        out.append(row((n - 1) * 10, 5, "+U"))
    if primary_key and n >= 3:
        out.append(row((n - 2) * 10 + 1, 6, "-D"))
    return out


def _type_name(arrow_type: pa.DataType) -> str:
    if pa.types.is_int64(arrow_type):
        return "BIGINT"
    if pa.types.is_int32(arrow_type):
        return "INT"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "STRING"
    return str(arrow_type)


def assert_schema_is_javas(batch, java_answer: dict) -> None:
    assert batch.schema_id == java_answer["schema_id"], (batch, java_answer["schema_id"])
    feed_fields = [(f.name, _type_name(f.type)) for f in batch.schema if f.name != "_row_kind"]
    java_fields = [(name, java_type.replace(" NOT NULL", "")) for name, java_type in java_answer["fields"]]
    assert feed_fields == java_fields, (batch, feed_fields, java_fields)


def _rows_of(delivered, index: int) -> list[dict]:
    out = []
    for i, row in delivered.rows:
        if i == index:
            row = dict(row)
            row["_kind"] = row.pop("_row_kind")
            out.append(row)
    return out


@pytest.mark.parametrize("kind", TABLES.values(), ids=TABLES.keys())
def test_java_schema_changes_mid_stream_arrive_as_java_reads_each_snapshot(java, warehouse, kind):
    primary_key = bool(kind.get("primary_keys"))
    table = java.table(warehouse, "db.evolving").create(COLUMNS, **kind)
    table.write(rows(1, 0, primary_key))
    table.write(rows(2, 0, primary_key))

    def during() -> None:
        table.write(rows(3, 0, primary_key))
        for stage, change in enumerate(CHANGES, start=1):
            assert table.alter(change)["schema_id"] == stage
            table.write(rows(3 + stage, stage, primary_key))
        table.compact()  # rewrites files of every schema into the newest
        table.write(rows(7, 3, primary_key))

    async def run(java_writes):
        async with ChangeFeed(py_table(table), start="latest-full", include_row_kind=True, **FEED_OPTIONS) as feed:
            return await follow(feed, java_writes, lambda: last_changed_snapshot(table))

    delivered = asyncio.run(run(during))
    full = delivered.batches[0]
    assert full.kind == "full" and full.schema_id == 0
    java_full = table.read_with_schema(full.snapshot_id)
    assert_schema_is_javas(full, java_full)
    assert_same_rows([{k: v for k, v in r.items() if k != "_kind"} for r in _rows_of(delivered, 0)], java_full["rows"])

    java_commits = set()
    for index, batch in enumerate(delivered.batches[1:], start=1):
        java = table.changes(after=batch.first_snapshot_id - 1, to=batch.snapshot_id, schema_id=batch.schema_id)
        # Java's snapshots with changes in this batch were all committed with the batch's schema.
        assert set(java["snapshot_schema_ids"].values()) <= {batch.schema_id}, (batch, java["snapshot_schema_ids"])
        assert_schema_is_javas(batch, java)
        assert_same_rows(_rows_of(delivered, index), java["rows"], with_kind=True)
        java_commits |= {row["commit"] for row in java["rows"]}
    assert {3, 4, 5, 6, 7} <= java_commits, ("Java missed commits", java_commits)
    assert {b.schema_id for b in delivered.batches} == {0, 1, 2, 3}
    assert any(row.get("n", 0) >= WIDE for _, row in delivered.rows), "no value only BIGINT holds"

    # Started after the changes: older files read into the newest schema, as Java reads them.
    after = asyncio.run(run(None))
    latest = table.read_with_schema()
    assert after.batches[0].kind == "full" and latest["schema_id"] == 3
    assert_schema_is_javas(after.batches[0], latest)
    assert_same_rows([{k: v for k, v in r.items() if k != "_kind"} for r in _rows_of(after, 0)], latest["rows"])
