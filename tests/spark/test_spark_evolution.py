"""The Spark source on a table that changes under a running query: a schema change stops the
query before anything of the new schema is read, and a restart from the checkpoint resumes
exactly there with the new schema; overwrites are skipped or read as -D/+I.

Oracles: the rows the writer wrote, and pypaimon's batch read of the table."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange
from spark_support import QUERY_TIMEOUT_S, BatchSink, commit, start_query, wait_until

from paimon_feed.tables import commit_arrow

BIG = 2**40


def _committed_ids(sink):
    return sorted(row["id"] for row in sink.rows())


def test_a_schema_change_stops_the_query_and_a_restart_resumes_with_the_new_schema(
    spark, paimon, tmp_path
):
    table = paimon.create_append_table()
    for n in range(1, 4):
        commit(table, n)
    options = paimon.options(table, startingPosition="earliest", pollInterval="0.1")
    checkpoint = str(tmp_path / "checkpoint")
    sink = BatchSink()
    query = start_query(spark, options, sink, checkpoint, processingTime="0 seconds")
    wait_until(lambda: len(sink.rows()) == 9, QUERY_TIMEOUT_S, "the first three commits")

    # Widen `commit` and add a column, then commit values only the new schema can hold.
    paimon.catalog.alter_table("db.events", [
        SchemaChange.update_column_type("commit", AtomicType("BIGINT")),
        SchemaChange.add_column("note", AtomicType("STRING")),
    ])
    evolved = paimon.catalog.get_table("db.events")
    new_schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64()),
        ("payload", pa.string()), ("note", pa.string()),
    ])
    new_rows = [{"id": 9000 + i, "commit": BIG + i, "payload": "p", "note": "n"} for i in range(3)]
    commit_arrow(evolved, pa.Table.from_pylist(new_rows, schema=new_schema))

    with pytest.raises(Exception) as caught:
        query.awaitTermination(QUERY_TIMEOUT_S)
    message = str(caught.value)
    assert "schema 1" in message and "schema 0" in message and "Restart the query" in message
    assert "note" in message
    assert _committed_ids(sink) == sorted(n * 1000 + i for n in range(1, 4) for i in range(3))

    restarted = BatchSink()
    query = start_query(spark, options, restarted, checkpoint, availableNow=True)
    assert query.awaitTermination(QUERY_TIMEOUT_S) and query.exception() is None
    rows = restarted.rows()
    assert sorted(r["id"] for r in rows) == [9000, 9001, 9002]  # nothing before it again
    assert sorted(r["commit"] for r in rows) == [BIG, BIG + 1, BIG + 2]  # exact, not cast down
    assert {r["note"] for r in rows} == {"n"}


def test_overwrite_read_delivers_removed_and_added_rows(spark, paimon, tmp_path):
    table = paimon.create_append_table()
    for n in range(1, 3):
        commit(table, n)
    builder = table.new_batch_write_builder().overwrite()
    writer, committer = builder.new_write(), builder.new_commit()
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64()), ("payload", pa.string())])
    writer.write_arrow(pa.Table.from_pylist([{"id": 77, "commit": 3, "payload": "o"}], schema=schema))
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()
    commit(table, 4)

    def run(overwrite, extra):
        sink = BatchSink()
        options = paimon.options(table, startingPosition="earliest", overwrite=overwrite, **extra)
        query = start_query(spark, options, sink, str(tmp_path / overwrite), availableNow=True)
        assert query.awaitTermination(QUERY_TIMEOUT_S) and query.exception() is None
        return sink.rows()

    read = run("read", {"includeRowKind": "true"})
    state: dict = {}
    for row in read:  # replay in snapshot order: micro-batch order, -D before +I within one
        if row["_row_kind"] == "-D":
            del state[row["id"]]
        else:
            state[row["id"]] = row["commit"]
    scan = table.new_read_builder()
    oracle = scan.new_read().to_arrow(scan.new_scan().plan().splits()).to_pylist()
    assert sorted(state.items()) == sorted((r["id"], r["commit"]) for r in oracle)
    assert sorted(r["id"] for r in read if r["_row_kind"] == "-D") == [1000, 1001, 1002, 2000, 2001, 2002]

    skipped = run("skip", {})
    assert sorted(r["id"] for r in skipped) == [1000, 1001, 1002, 2000, 2001, 2002, 4000, 4001, 4002]


def test_a_batch_read_from_a_tag_is_the_tagged_state(spark, paimon):
    table = paimon.create_append_table()
    for n in range(1, 4):
        commit(table, n)
    table.create_tag("before-4")
    commit(table, 4)
    options = paimon.options(table, startingPosition="tag:before-4")
    rows = spark.read.format("paimon_feed").options(**options).load().collect()
    assert sorted(row["id"] for row in rows) == sorted(n * 1000 + i for n in range(1, 4) for i in range(3))
