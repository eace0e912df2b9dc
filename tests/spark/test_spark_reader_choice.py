"""The ``reader`` option without Paimon's connector on the classpath (the project's own Spark
line: no connector Maven serves runs on it): ``connector`` is a ConfigurationError naming the
option, the jar and how to add it; ``auto`` reads with this project's executors and says why;
options no hand-off can honour are refused; the source reads with its own executors only.
The hand-off itself: ``test_spark_handoff.py`` (Spark 3.5 with the connector)."""

from __future__ import annotations

import logging

import pyarrow as pa
import pytest
from spark_support import new_spark_session

from paimon_feed.errors import ConfigurationError, InvalidOptionError
from paimon_feed.spark import foreach_batch
from paimon_feed.spark.options import parse_options
from paimon_feed.tables import commit_arrow
from tests.support.tables import PK_SCHEMA, catalog, create_pk_table

pytestmark = [pytest.mark.spark]


@pytest.fixture(scope="module")
def spark():
    session = new_spark_session("paimon-feed-reader-choice")
    yield session
    session.stop()


@pytest.fixture
def table(tmp_path):
    pk = create_pk_table(catalog(str(tmp_path)), "db.orders")
    commit_arrow(pk, pa.Table.from_pylist([{"id": 1, "commit": 1, "payload": "a", "op": "+I"}], schema=PK_SCHEMA))
    return pk


def _run(spark, tmp_path, sink, **options):
    return foreach_batch(spark, sink, warehouse=str(tmp_path), table="db.orders", consumer_id="etl",
                         available_now=True, **options)


def test_connector_without_the_jar_names_the_option_the_jar_and_how_to_add_it(spark, tmp_path, table):
    calls = []
    with pytest.raises(ConfigurationError) as raised:
        _run(spark, tmp_path, lambda df, batch_id: calls.append(batch_id), reader="connector")
    message = str(raised.value)
    assert "db.orders" in message and "reader=connector" in message
    assert "spark.jars.packages" in message and "org.apache.paimon:paimon-spark-3.5:0.9.0" in message
    assert calls == []
    assert table.consumer_manager().consumer("etl") is None  # nothing was stored


def test_auto_without_the_connector_reads_with_our_executors_and_logs_why_once(spark, tmp_path, table, caplog):
    rows = []
    with caplog.at_level(logging.INFO, logger="paimon_feed.spark.planning"):
        _run(spark, tmp_path, lambda df, _: rows.extend(tuple(r) for r in df.collect()))
    assert rows == [(1, 1, "a", "+I")]
    choices = [r.getMessage() for r in caplog.records if "batches read by" in r.getMessage()]
    assert len(choices) == 1 and "db.orders" in choices[0] and "by feed" in choices[0]
    assert "not found" in choices[0] and "paimon-feed's executors" in choices[0]


def test_connector_with_row_kinds_is_refused_before_any_batch(spark, tmp_path, table):
    with pytest.raises(ConfigurationError, match="includeRowKind=true.*no row kind column"):
        _run(spark, tmp_path, lambda df, _: None, reader="connector", includeRowKind=True)


def test_the_source_reads_with_its_own_executors_only(spark, tmp_path, table):
    reader = spark.read.format("paimon_feed").options(warehouse=str(tmp_path), table="db.orders")
    with pytest.raises(Exception, match="reader=connector is foreach_batch's"):
        reader.option("reader", "connector").load().collect()
    assert reader.option("reader", "feed").load().count() == 1


def test_reader_takes_three_values():
    base = {"warehouse": "/tmp/wh", "table": "db.t"}
    assert parse_options(base).reader == "auto"
    assert parse_options({**base, "READER": "Connector"}).reader == "connector"
    with pytest.raises(InvalidOptionError, match="option reader must be one of auto, feed, connector"):
        parse_options({**base, "reader": "java"})
