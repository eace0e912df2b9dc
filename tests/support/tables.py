"""Real pypaimon tables for tests: a filesystem catalog in a temp dir and deterministic writes.

Every committed row says which commit wrote it (``commit`` column), so a test can check what a
feed delivered against what was written, without trusting snapshot numbering.
"""

from __future__ import annotations

import os

import pyarrow as pa
from pypaimon import CatalogFactory, Schema

from paimon_feed.tables import commit_arrow

APPEND_SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64()), ("payload", pa.string())]
)
PK_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("commit", pa.int64()),
        ("payload", pa.string()),
        ("op", pa.string()),
    ]
)
PK_OPTIONS = {"bucket": "2", "changelog-producer": "input", "rowkind.field": "op"}


def catalog(warehouse: str, options: dict | None = None):
    cat = CatalogFactory.create({"warehouse": str(warehouse), **(options or {})})
    cat.create_database("db", True)
    return cat


def create_append_table(cat, name: str = "db.events"):
    cat.create_table(name, Schema.from_pyarrow_schema(APPEND_SCHEMA), False)
    return cat.get_table(name)


def create_pk_table(cat, name: str = "db.orders"):
    cat.create_table(
        name, Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=PK_OPTIONS), False
    )
    return cat.get_table(name)


def append_rows(commit: int, rows_per_commit: int = 3) -> list[dict]:
    return [
        {"id": commit * 1000 + i, "commit": commit, "payload": f"c{commit}-r{i}"}
        for i in range(rows_per_commit)
    ]


def pk_rows(commit: int) -> list[dict]:
    """Commit n inserts key n, updates key n-1 and deletes key n-2: every row kind appears."""
    rows = [{"id": commit, "commit": commit, "payload": f"new-{commit}", "op": "+I"}]
    if commit >= 1:
        rows.append({"id": commit - 1, "commit": commit, "payload": f"upd-{commit}", "op": "+U"})
    if commit >= 2:
        rows.append({"id": commit - 2, "commit": commit, "payload": f"del-{commit}", "op": "-D"})
    return rows


def rows_for(table, commit: int) -> list[dict]:
    return pk_rows(commit) if table.is_primary_key_table else append_rows(commit)


def write(table, rows: list[dict]) -> None:
    schema = PK_SCHEMA if table.is_primary_key_table else APPEND_SCHEMA
    commit_arrow(table, pa.Table.from_pylist(rows, schema=schema))


def commit(table, n: int) -> None:
    """Write commit number ``n`` (deterministic rows)."""
    write(table, rows_for(table, n))


def overwrite(table, n: int) -> None:
    """Replace the whole table with commit ``n``'s rows: an OVERWRITE snapshot."""
    builder = table.new_batch_write_builder().overwrite()
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(pa.Table.from_pylist(rows_for(table, n), schema=APPEND_SCHEMA))
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()


def table_dir(table) -> str:
    path = str(table.table_path)
    return path[len("file://"):] if path.startswith("file://") else path


def expire_snapshots(table, keep_from: int) -> None:
    """Expire like Paimon does: delete snapshot files older than ``keep_from``, write EARLIEST."""
    snapshot_dir = os.path.join(table_dir(table), "snapshot")
    for name in os.listdir(snapshot_dir):
        if name.startswith("snapshot-") and int(name.split("-")[1]) < keep_from:
            os.remove(os.path.join(snapshot_dir, name))
    with open(os.path.join(snapshot_dir, "EARLIEST"), "w") as handle:
        handle.write(str(keep_from))


TYPED_SCHEMA = pa.schema(
    [
        ("i8", pa.int8()),
        ("i32", pa.int32()),
        ("i64", pa.int64()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("price", pa.decimal128(10, 2)),
        ("flag", pa.bool_()),
        ("status", pa.string()),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("tsz", pa.timestamp("us", tz="UTC")),
        ("raw", pa.binary()),
    ]
)


def typed_rows() -> list[dict]:
    """Three rows that differ in every column of ``TYPED_SCHEMA`` (row ``n`` has ``i64 == n``)."""
    import datetime
    import decimal

    utc = datetime.timezone.utc
    return [
        {
            "i8": n, "i32": 10 * n, "i64": n, "f32": 1.1 * n, "f64": 0.5 + n,
            "price": decimal.Decimal(f"{5 + n}.10"), "flag": n % 2 == 1,
            "status": ("shipped", "open", "shipping")[n],
            "day": datetime.date(2026, 1, 5 + n),
            "ts": datetime.datetime(2026, 1, 1, 0, 0, 8 + n),
            "tsz": datetime.datetime(2026, 1, 1, 0, 0, 8 + n, tzinfo=utc),
            "raw": bytes([n]),
        }
        for n in range(3)
    ]


def create_typed_table(cat, name: str = "db.typed"):
    """An append table with a column of each Arrow type a CLI filter reads, holding
    :func:`typed_rows` in one commit."""
    cat.create_table(name, Schema.from_pyarrow_schema(TYPED_SCHEMA), False)
    table = cat.get_table(name)
    commit_arrow(table, pa.Table.from_pylist(typed_rows(), schema=TYPED_SCHEMA))
    return table
