"""What the warehouse benchmark's parts share (:mod:`benchmarks.warehouse_bench`): the schema,
the modes, creating a warehouse's tables (locally, or on S3 by copying one table's metadata),
commits, the counts both sides take and the plain table each prints."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pyarrow as pa

from benchmarks._common.figures import table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
MODES = ("warehouse", "changefeeds")
NEW_TABLE = "db.new_table"


def catalog(warehouse: str):
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": warehouse})


def create_tables(warehouse: str, count: int) -> list[str]:
    from pypaimon import Schema

    cat = catalog(warehouse)
    cat.create_database("db", True)
    names = [f"db.t{i:04d}" for i in range(count)]
    for name in names:
        cat.create_table(name, Schema.from_pyarrow_schema(SCHEMA), False)
    return names


def commit(table, n: int) -> None:
    from paimon_feed.tables import commit_arrow

    commit_arrow(table, pa.Table.from_pylist([{"id": n, "payload": f"c{n}"}], schema=SCHEMA))


def snapshot_mtime(table_path: str, snapshot_id: int) -> float:
    return os.stat(os.path.join(table_path, "snapshot", f"snapshot-{snapshot_id}")).st_mtime


def inotify_instances() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return count


def create_tables_at(url: str, options: dict, count: int, server=None) -> list[str]:
    """``count`` empty tables ``db.t0000``...: the first made by pypaimon, the others (on S3)
    by copying its metadata server-side, which moto does in a request per file instead of the
    dozen pypaimon's create_table takes."""
    from pypaimon import Schema

    from paimon_feed.tables import open_catalog

    cat = open_catalog(url, options)
    cat.create_database("db", True)
    names = [f"db.t{i:04d}" for i in range(count)]
    for name in names[: 1 if server is not None else count]:
        cat.create_table(name, Schema.from_pyarrow_schema(SCHEMA), False)
    if server is not None and count > 1:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        s3 = server.client("s3")
        template = f"{prefix}/db.db/t0000/"
        keys = [item["Key"] for item in s3.list_objects_v2(Bucket=bucket, Prefix=template)["Contents"]]
        for name in names[1:]:
            table = f"{prefix}/db.db/{name.split('.')[1]}/"
            for key in keys:
                s3.copy_object(Bucket=bucket, Key=table + key[len(template):],
                               CopySource={"Bucket": bucket, "Key": key})
    return names


def markdown(columns: Sequence[tuple[str, str]], rows: list[dict]) -> str:
    """The table a run prints and keeps in ``warehouse.json``: one column per ``(header, key)``,
    each cell the row's value as measured, ``-`` where the row has none."""

    def cell(row: dict, key: str) -> str:
        value = row.get(key)
        return "-" if value is None else str(value)

    return table([header for header, _ in columns], ["---"] * len(columns),
                 [[cell(row, key) for _, key in columns] for row in rows])
