"""``foreach_batch(reader="connector")``: batches handed to Paimon's own Spark connector
(``paimon-spark-3.5`` 0.9.0 on the session's classpath) hold exactly the rows our own reader
gives for the same batch, full and delta, on partial-update, aggregation and deduplicate
tables written by pypaimon and by Java Paimon; shapes Paimon 0.9 cannot read exactly are read
by our executors. ``reader="auto"`` picks the connector for primary-key tables.

Oracles outside the hand-off: the rows each commit wrote, our own reader (``reader="feed"``,
pypaimon in the executors) and Java's own read at the snapshot (``scan.snapshot-id``).

The connector serves Spark 3.5 only: on other lines the module is skipped. Marked
``spark_lines``: ``.ci/spark-lines`` fetches the jar and runs it on PySpark 3.5. The jar must be
on the JVM's classpath when the JVM starts, so this module's session is the first of its test
process there (modules run in name order); a session started earlier fails the tests loudly.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pypaimon import Schema
from spark_support import new_spark_session

from paimon_feed.spark import foreach_batch
from paimon_feed.tables import commit_arrow
from tests.interop.fetch_java import cache_dir

pyspark = pytest.importorskip("pyspark")
pytestmark = [pytest.mark.spark, pytest.mark.spark_lines]

if not pyspark.__version__.startswith("3.5."):
    pytest.skip("Paimon's Spark connector Maven serves (paimon-spark-3.5 0.9.0) runs on Spark 3.5 only",
                allow_module_level=True)

CONNECTOR_JAR = cache_dir() / "m2/org/apache/paimon/paimon-spark-3.5/0.9.0/paimon-spark-3.5-0.9.0.jar"
JAVA_WRITER = "1.0.1"
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("qty", pa.int64()), ("note", pa.string())])
ENGINES = {
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.qty.aggregate-function": "sum",
                    "fields.note.aggregate-function": "last_non_null_value"},
    "deduplicate": {},
}
#: Four commits: keys overlap (a key has up to three versions), nulls left for a merge to fill.
COMMITS = [
    {"id": [1, 2, 3, 4], "qty": [1, None, 3, 4], "note": [None, "b1", "c1", None]},
    {"id": [1, 2, 5], "qty": [10, 20, None], "note": ["a2", None, "e2"]},
    {"id": [2, 6], "qty": [200, 6], "note": [None, "f3"]},
    {"id": [1, 2, 7], "qty": [None, 30, 7], "note": ["a4", None, None]},
]


@pytest.fixture(scope="module")
def spark():
    if not CONNECTOR_JAR.is_file():
        message = (f"the connector jar is not at {CONNECTOR_JAR}: run .ci/spark-lines (it fetches it) "
                   f"or mvn dependency:get -Dartifact=org.apache.paimon:paimon-spark-3.5:0.9.0")
        if os.environ.get("PAIMON_FEED_REQUIRE_JAVA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    session = new_spark_session("paimon-feed-handoff", register=False,
                                conf={"spark.jars": str(CONNECTOR_JAR), "spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


class Batches:
    """``fn``: each batch's rows (sorted tuples) by batch id, and whether the connector read it
    (its plan reads a DataSource V2 relation, Paimon's, and no ``mapInArrow`` of our executors)."""

    def __init__(self) -> None:
        self.rows: dict[int, list[tuple]] = {}
        self.by_connector: dict[int, bool] = {}

    def __call__(self, df, batch_id: int) -> None:
        plan = df._jdf.queryExecution().analyzed().toString()
        self.by_connector[batch_id] = "MapInArrow" not in plan and "RelationV2" in plan
        self.rows[batch_id] = sorted(tuple(row) for row in df.collect())


def _run(spark, warehouse, table: str, reader: str, consumer: str, **options) -> Batches:
    sink = Batches()
    foreach_batch(spark, sink, warehouse=str(warehouse), table=table, consumer_id=consumer,
                  available_now=True, reader=reader, **options)
    return sink


def _java_read(spark, path: str, snapshot_id: int) -> list[tuple]:
    df = spark.read.format("paimon").option("scan.snapshot-id", str(snapshot_id)).load(path)
    return sorted(tuple(row) for row in df.select("id", "qty", "note").collect())


def _pypaimon_table(warehouse: Path, engine: str):
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", True)
    options = {"bucket": "2", **ENGINES[engine]}
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options), False)
    return catalog.get_table("db.t")


def _written(n: int) -> list[tuple]:
    return sorted(zip(*COMMITS[n].values()))


def _merged(engine: str, commits: int) -> list[tuple]:
    """The table's state after the first ``commits`` commits, merged here by ``engine``'s rules."""
    state: dict[int, tuple] = {}
    for n in range(commits):
        for key, qty, note in _written(n):
            old = state.get(key, (key, None, None))
            if engine == "partial-update":
                state[key] = (key, qty if qty is not None else old[1], note if note is not None else old[2])
            elif engine == "aggregation":
                total = None if qty is None and old[1] is None else (qty or 0) + (old[1] or 0)
                state[key] = (key, total, note if note is not None else old[2])
            else:
                state[key] = (key, qty, note)
    return sorted(state.values())


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_handed_off_batches_hold_our_readers_rows_and_javas_full_and_delta(spark, tmp_path, engine):
    table = _pypaimon_table(tmp_path, engine)
    path = str(table.table_path)
    for n in (0, 1):
        commit_arrow(table, pa.table(COMMITS[n], schema=SCHEMA))
    full = {reader: _run(spark, tmp_path, "db.t", reader, reader) for reader in ("connector", "feed")}
    assert list(full["connector"].by_connector.values()) == [True]
    assert list(full["feed"].by_connector.values()) == [False]
    (state,) = full["connector"].rows.values()
    assert [state] == list(full["feed"].rows.values())
    assert state == _java_read(spark, path, 2) == _merged(engine, 2)

    for n in (2, 3):  # the same consumers go on: a backlog of two snapshots' changes
        commit_arrow(table, pa.table(COMMITS[n], schema=SCHEMA))
    delta = {reader: _run(spark, tmp_path, "db.t", reader, reader) for reader in ("connector", "feed")}
    assert list(delta["connector"].by_connector.values()) == [True]
    assert list(delta["connector"].rows.values()) == list(delta["feed"].rows.values())
    # each change as written: key 2 changed in both snapshots, twice here (0.9's range read of
    # 3..4 would merge them into one row)
    assert list(delta["connector"].rows.values()) == [sorted(_written(2) + _written(3))]
    assert _java_read(spark, path, 4) == _merged(engine, 4)


@pytest.fixture(scope="module")
def java_writer():
    """Java Paimon 1.0.1 (``tests/interop``: the oldest 1.x; pypaimon 2.1 cannot plan 0.9's own
    manifests, docs/compatibility.md) as the writer and the oracle of Java-written tables."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
    from java_paimon import JavaPaimon, missing_java

    reason = missing_java(JAVA_WRITER)
    if reason is not None:
        if os.environ.get("PAIMON_FEED_REQUIRE_JAVA") == "1":
            pytest.fail(f"Java Paimon is required here: {reason}")
        pytest.skip(reason)
    java = JavaPaimon(JAVA_WRITER)
    yield java
    java.close()


def test_a_table_java_paimon_wrote_is_handed_off_with_the_rows_java_reads(spark, tmp_path, java_writer):
    table = java_writer.table(str(tmp_path), "db.t").create(
        [("id", "BIGINT NOT NULL"), ("qty", "BIGINT"), ("note", "STRING")], primary_keys=["id"],
        options={"bucket": "2", "merge-engine": "partial-update"})
    for n in (0, 1):
        table.write([dict(zip(("id", "qty", "note"), row)) for row in _written(n)], wait_compaction=False)
    full = {reader: _run(spark, tmp_path, "db.t", reader, reader) for reader in ("connector", "feed")}
    assert list(full["connector"].by_connector.values()) == [True]
    (state,) = full["connector"].rows.values()
    assert [state] == list(full["feed"].rows.values())
    assert state == sorted((r["id"], r["qty"], r["note"]) for r in table.read(2)) == _merged("partial-update", 2)

    for n in (2, 3):
        table.write([dict(zip(("id", "qty", "note"), row)) for row in _written(n)], wait_compaction=False)
    delta = {reader: _run(spark, tmp_path, "db.t", reader, reader) for reader in ("connector", "feed")}
    assert list(delta["connector"].by_connector.values()) == [True]
    assert list(delta["connector"].rows.values()) == list(delta["feed"].rows.values())
    assert list(delta["connector"].rows.values()) == [sorted(_written(2) + _written(3))]


def test_retractions_are_not_handed_off_the_batch_is_read_by_our_executors(spark, tmp_path, caplog):
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", True)
    schema = pa.schema([*SCHEMA, ("op", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(
        schema, primary_keys=["id"], options={"bucket": "1", "rowkind.field": "op"}), False)
    table = catalog.get_table("db.t")
    commit_arrow(table, pa.table({"id": [1, 2], "qty": [1, 2], "note": ["a", "b"], "op": ["+I", "+I"]}, schema=schema))
    _run(spark, tmp_path, "db.t", "connector", "etl")  # the full state, handed off
    commit_arrow(table, pa.table({"id": [1, 3], "qty": [1, 3], "note": ["a", "c"], "op": ["-D", "+I"]}, schema=schema))
    with caplog.at_level(logging.INFO, logger="paimon_feed.spark.planning"):
        handed = _run(spark, tmp_path, "db.t", "connector", "etl")
    assert list(handed.by_connector.values()) == [False]
    # the change as written, the -D row too (Paimon 0.9's read would have dropped it)
    assert list(handed.rows.values()) == [[(1, 1, "a", "-D"), (3, 3, "c", "+I")]]
    assert any("retractions unrecorded" in r.getMessage() and "db.t" in r.getMessage() for r in caplog.records)


def test_auto_hands_primary_key_tables_to_the_connector_and_reads_append_tables_itself(spark, tmp_path, caplog):
    from pypaimon import CatalogFactory

    table = _pypaimon_table(tmp_path, "partial-update")
    commit_arrow(table, pa.table(COMMITS[0], schema=SCHEMA))
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_table("db.log", Schema.from_pyarrow_schema(SCHEMA), False)
    commit_arrow(catalog.get_table("db.log"), pa.table(COMMITS[0], schema=SCHEMA))
    with caplog.at_level(logging.INFO, logger="paimon_feed.spark.planning"):
        keyed = _run(spark, tmp_path, "db.t", "auto", "auto")
        log = _run(spark, tmp_path, "db.log", "auto", "auto")
    assert list(keyed.by_connector.values()) == [True] and list(log.by_connector.values()) == [False]
    assert list(keyed.rows.values()) == list(log.rows.values()) == [_written(0)]
    choices = [r.getMessage() for r in caplog.records if "batches read by" in r.getMessage()]
    assert any("db.t" in m and "by connector" in m and "primary-key" in m for m in choices), choices
    assert any("db.log" in m and "by feed" in m and "not a primary-key table" in m for m in choices), choices
