"""What the reliability suite's scenarios share (:mod:`benchmarks.reliability`): the table, its
commits and the rows they must deliver, the writer process, and an :class:`Outcome` with how
it is scored."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pyarrow as pa

from benchmarks._common.scratch import scratch_dir
from paimon_feed.tables import commit_arrow

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64())])
ROWS_PER_COMMIT = 2


@dataclass
class Outcome:
    scenario: str
    runs: int = 1
    committed_batches: int = 0
    expected_rows: int = 0
    lost: int = 0
    duplicated: int = 0
    duplicates_allowed: bool = True
    out_of_order: int = 0
    max_delay_ms: float | None = None
    notes: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.out_of_order == 0 and self.duplicates_allowed


# --- tables ---------------------------------------------------------------------------------------


def open_table(warehouse: str, create: bool = True):
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    if create:
        catalog.create_database("db", True)
        catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA), True)
    return catalog.get_table("db.t")


def commit(table, n: int) -> None:
    commit_arrow(
        table,
        pa.table({"id": [n * 10 + i for i in range(ROWS_PER_COMMIT)], "commit": [n] * ROWS_PER_COMMIT}, schema=SCHEMA),
    )


def committed_table(prefix: str, commits: int):
    """A new scratch warehouse (see :func:`benchmarks._common.scratch.scratch_dir`) whose table
    holds commits ``0 .. commits - 1``: the warehouse's path and the table."""
    warehouse = scratch_dir(prefix)
    table = open_table(warehouse)
    for n in range(commits):
        commit(table, n)
    return warehouse, table


def expected_rows(commits: range) -> set[tuple[int, int]]:
    return {(n, n * 10 + i) for n in commits for i in range(ROWS_PER_COMMIT)}


def writer_main(warehouse: str, first: int, count: int, interval: float, stop_file: str) -> None:
    """Commit ``first``, ``first + 1``, ... — ``count`` of them, or with ``count`` < 0 until
    ``stop_file`` exists — and print the last commit number."""
    table = open_table(warehouse, create=False)
    n = first
    while (count < 0 and not os.path.exists(stop_file)) or (0 <= count and n < first + count):
        commit(table, n)
        n += 1
        time.sleep(interval)
    print(n - 1, flush=True)


def start_writer(warehouse: str, *, first: int, count: int = -1, interval: float, stop_file: str = "-") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", __spec__.name, "_write", warehouse, str(first), str(count), str(interval), stop_file],
        stdout=subprocess.PIPE,
        text=True,
    )


def last_written(writer: subprocess.Popen) -> int:
    out, _ = writer.communicate(timeout=600)
    assert writer.returncode == 0, "the writer process failed"
    return int(out.strip())


def _score(name: str, rows: list, commits: range, out_of_order: int, batches: int) -> Outcome:
    counts: dict = {}
    for row in rows:
        counts[row] = counts.get(row, 0) + 1
    return Outcome(
        name,
        committed_batches=batches,
        expected_rows=len(commits) * ROWS_PER_COMMIT,
        lost=len(expected_rows(commits) - set(counts)),
        duplicated=sum(count - 1 for count in counts.values()),
        duplicates_allowed=all(count == 1 for count in counts.values()),
        out_of_order=out_of_order,
    )


if __name__ == "__main__":  # the writer process
    writer_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
