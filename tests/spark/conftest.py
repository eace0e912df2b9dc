"""Fixtures for the Spark source tests: one local Spark session per test module, and a fresh
pypaimon warehouse per test."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from spark_support import Warehouse, new_spark_session, stats_worker_env  # noqa: E402


@pytest.fixture(scope="module")
def spark(request, tmp_path_factory):
    """One ``local[2]`` session for the whole module (starting Spark is the slow part), whose
    source drivers write their counters where :func:`spark_support.driver_stats` reads them."""
    session = new_spark_session(
        f"paimon-feed-{request.module.__name__}",
        worker_env=stats_worker_env(tmp_path_factory.mktemp("driver-stats")),
    )
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture(scope="module")
def connect():
    """A Spark Connect session on a local Connect server (``remote("local[2]")``, the server
    PySpark 4 ships in its jars); skipped without PySpark 4 or Spark Connect's client."""
    import os
    import sys

    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect] (grpcio)")
    pyspark = pytest.importorskip("pyspark")
    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip("a local Spark Connect server needs PySpark 4")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote("local[2]").appName("paimon-feed-connect").getOrCreate()
    assert type(session).__module__.startswith("pyspark.sql.connect")
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture
def paimon(tmp_path) -> Warehouse:
    return Warehouse(tmp_path / "warehouse")
