"""The backlog benchmark's oracle (``benchmarks/_common/backlog_table.py``): a Parquet output read
back with pyarrow.dataset is told apart from the table's rows when a row differs, repeats, or is
missing, whatever the files' order."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks._common.backlog_table import backlog_rows, parquet_digest

ROWS = 1000


def _write(path, *tables: pa.Table) -> str:
    path.mkdir()
    for n, part in enumerate(tables):
        pq.write_table(part, path / f"part-{n}.parquet")
    return str(path)


def test_the_digest_is_the_same_in_any_file_order_and_names_each_fault(tmp_path):
    rows = backlog_rows(0, ROWS, 0)
    good = parquet_digest(_write(tmp_path / "a", rows.slice(0, 400), rows.slice(400)), ROWS)
    assert good == {**good, "rows": ROWS, "ids_each_once": True, "mismatches": 0}
    # another split into files, another commit column (the writer's split), another order
    shuffled = rows.slice(500).set_column(1, "commit", pa.array([7] * 500, pa.int32()))
    assert parquet_digest(_write(tmp_path / "b", shuffled, rows.slice(0, 500)), ROWS)["row_hash"] != good["row_hash"]
    assert parquet_digest(_write(tmp_path / "c", rows.slice(700), rows.slice(0, 700)), ROWS) == good

    changed = rows.set_column(4, "payload", pc.if_else(pc.equal(rows["id"], 3), "order-x-paid", rows["payload"]))
    faulty = parquet_digest(_write(tmp_path / "d", changed), ROWS)
    assert faulty["mismatches"] == 1 and faulty["row_hash"] != good["row_hash"]
    repeated = pa.concat_tables([rows.slice(0, ROWS - 1), rows.slice(0, 1)])
    assert parquet_digest(_write(tmp_path / "e", repeated), ROWS)["ids_each_once"] is False
    missing = parquet_digest(_write(tmp_path / "f", rows.slice(1)), ROWS)
    assert missing["rows"] == ROWS - 1 and missing["ids_each_once"] is False
