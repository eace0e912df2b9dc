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


@pytest.fixture
def paimon(tmp_path) -> Warehouse:
    return Warehouse(tmp_path / "warehouse")
