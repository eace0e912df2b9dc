"""The backlog benchmark's own cases, on a real local session at toy size: the runner and the
source read the whole cached table into Parquet, and the outputs, read back with pyarrow.dataset,
hold the table's rows (the figures themselves are measurements, never asserted)."""

from __future__ import annotations

import importlib

ROWS = 20_000


def test_the_runner_and_the_source_write_every_row_of_the_backlog_to_parquet(spark, tmp_path, monkeypatch):
    bench = importlib.import_module("benchmarks.spark_backlog_bench")
    table = importlib.import_module("benchmarks._common.backlog_table")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    warehouse = table.cached_backlog(ROWS, 4)
    assert table.cached_backlog(ROWS, 4) == warehouse  # the second call finds it
    outputs: dict[str, str] = {}
    cases = bench.make_cases(spark, None, None, warehouse, str(tmp_path), ROWS, "earliest", outputs)
    assert set(cases) == {"runner", "source"}
    for run in cases.values():
        run()
    digests = {case: table.parquet_digest(out, ROWS) for case, out in outputs.items()}
    assert digests["runner"] == digests["source"]
    assert digests["runner"]["rows"] == ROWS and digests["runner"]["ids_each_once"]
    assert digests["runner"]["mismatches"] == 0
