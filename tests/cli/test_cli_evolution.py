"""`paimon-feed tail` on a table whose schema changed and that was overwritten, run as users
run it. Oracle: the rows the test wrote."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pyarrow as pa
from pypaimon import Schema
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange

from paimon_feed.tables import commit_arrow

V0 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int32())])
V1 = pa.schema([pa.field("id", pa.int64(), nullable=False), ("m", pa.int64()), ("s", pa.string())])


def paimon_feed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", *args], capture_output=True, text=True, timeout=120
    )


def evolved_table(cat):
    """Snapshot 1: (id, n int) rows 1-2; snapshot 2: n widened, renamed m, s added, rows 3-4."""
    cat.create_table("db.e", Schema.from_pyarrow_schema(V0), False)
    commit_arrow(cat.get_table("db.e"), pa.Table.from_pylist([{"id": 1, "n": 1}, {"id": 2, "n": 2}], schema=V0))
    cat.alter_table("db.e", [
        SchemaChange.update_column_type("n", AtomicType("BIGINT")),
        SchemaChange.rename_column("n", "m"),
        SchemaChange.add_column("s", AtomicType("STRING")),
    ])
    rows = [{"id": 3, "m": 2**40, "s": "x"}, {"id": 4, "m": 2**41, "s": None}]
    commit_arrow(cat.get_table("db.e"), pa.Table.from_pylist(rows, schema=V1))


def test_jsonl_rows_carry_each_snapshots_columns(warehouse, cat):
    evolved_table(cat)
    result = paimon_feed("tail", warehouse, "db.e", "--from", "earliest", "--to", "2")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"id": 1, "n": 1}, {"id": 2, "n": 2},
        {"id": 3, "m": 2**40, "s": "x"}, {"id": 4, "m": 2**41, "s": None},
    ]
    # A note like the CLI's own, not a logging line ("2026-... WARNING paimon_feed.feed: ...").
    (note,) = result.stderr.splitlines()
    assert note.startswith("paimon-feed: note: table db.e: schema changed from 0 to 1 at snapshot 2;")


def test_csv_prints_a_new_header_when_the_columns_change(warehouse, cat):
    evolved_table(cat)
    result = paimon_feed("tail", warehouse, "db.e", "--from", "earliest", "--to", "2", "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert list(csv.reader(io.StringIO(result.stdout))) == [
        ["id", "n"], ["1", "1"], ["2", "2"],
        ["id", "m", "s"], ["3", str(2**40), "x"], ["4", str(2**41), ""],
    ]


def test_columns_and_filters_follow_a_renamed_column(warehouse, cat):
    """-c and -f name the table's columns as they are now; older snapshots show them under
    the name they had then."""
    evolved_table(cat)
    result = paimon_feed("tail", warehouse, "db.e", "--from", "earliest", "--to", "2",
                         "-c", "m", "-f", "m>=2")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"n": 2}, {"m": 2**40}, {"m": 2**41},
    ]


def test_overwrite_read_prints_removed_and_added_rows(warehouse, cat):
    cat.create_table("db.o", Schema.from_pyarrow_schema(V0), False)
    table = cat.get_table("db.o")
    commit_arrow(table, pa.Table.from_pylist([{"id": 1, "n": 1}], schema=V0))
    builder = table.new_batch_write_builder().overwrite()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(pa.Table.from_pylist([{"id": 2, "n": 2}], schema=V0))
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()
    read = paimon_feed("tail", warehouse, "db.o", "--from", "earliest", "--to", "2", "--overwrite", "read")
    assert read.returncode == 0, read.stderr
    assert [json.loads(line) for line in read.stdout.splitlines()] == [
        {"_row_kind": "+I", "id": 1, "n": 1},
        {"_row_kind": "-D", "id": 1, "n": 1},
        {"_row_kind": "+I", "id": 2, "n": 2},
    ]
    skipped = paimon_feed("tail", warehouse, "db.o", "--from", "earliest", "--to", "2")
    assert [json.loads(line) for line in skipped.stdout.splitlines()] == [{"id": 1, "n": 1}]
    (note,) = skipped.stderr.splitlines()
    assert note.startswith("paimon-feed: note: table db.o: snapshot 2 is an OVERWRITE")
