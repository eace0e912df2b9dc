"""The long-running Spark benchmark's own functions, on a real local session at toy size: every
reader it runs in this session reads every row, one commit per micro-batch, and the steady-state
figures come from the progress reports as documented (the figures themselves are measurements,
never asserted)."""

from __future__ import annotations

import importlib

import pytest

ROWS, COMMITS = 6_000, 3


@pytest.fixture(scope="module")
def bench():
    return importlib.import_module("benchmarks.spark_long_running")


def report(batch_id: int, rows: int, started: str, ms: int) -> dict:
    return {"batchId": batch_id, "numInputRows": rows, "timestamp": started, "durationMs": {"triggerExecution": ms}}


def test_steady_state_counts_from_the_end_of_the_first_batch_to_the_end_of_the_last(bench):
    progress = [
        report(2, 100, "2026-01-01T00:00:02.000Z", 500),  # ends at 2.5 s
        report(0, 100, "2026-01-01T00:00:00.000Z", 1000),  # ends at 1.0 s: the first
        report(1, 0, "2026-01-01T00:00:01.000Z", 5),  # read nothing: left out
        report(3, 200, "2026-01-01T00:00:03.000Z", 1000),  # ends at 4.0 s
    ]
    figures = bench.steady_state(progress, 400)
    assert figures["batches"] == 3
    assert figures["steady_s"] == pytest.approx(3.0)
    assert figures["rows_per_s"] == pytest.approx(300 / 3.0)  # batch 0's rows are start-up's
    assert figures["first_batch_s"] == pytest.approx(1.0)
    assert figures["batch_ms_p50"] == 750


def test_steady_state_refuses_reports_that_miss_rows_or_hold_one_batch(bench):
    with pytest.raises(ValueError, match="expected 300 rows"):
        bench.steady_state([report(0, 100, "2026-01-01T00:00:00Z", 1), report(1, 100, "2026-01-01T00:00:01Z", 1)], 300)
    with pytest.raises(ValueError, match="in 1"):
        bench.steady_state([report(0, 300, "2026-01-01T00:00:00Z", 1)], 300)


def test_each_reader_streams_every_row_one_commit_per_micro_batch(bench, spark, tmp_path):
    from pypaimon import CatalogFactory

    from benchmarks._common import spark_setup
    from benchmarks._common.spark_readers import Readers
    from benchmarks._common.spark_sources import ArrowFilesSource

    ArrowFilesSource.register(spark)
    warehouse = str(tmp_path / "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    spark_setup.fill_wide_table(spark_setup.create_table(catalog, "db.wide", spark_setup.WIDE), ROWS, COMMITS)
    readers = Readers(spark, warehouse, java=None)
    result = bench.measure(readers, "wide", ROWS, COMMITS, 1, str(tmp_path))
    assert set(result["cases"]) == {f"{r}/{s}" for r in ("source", "python_ceiling", "spark_parquet")
                                    for s in ("noop", "parquet")}
    for case, figures in result["cases"].items():
        assert figures["batches"] == COMMITS, case
        assert figures["rows_per_s"] > 0, case
