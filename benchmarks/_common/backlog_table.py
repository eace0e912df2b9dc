"""The append-only backlog table of ``spark_backlog_bench.py``: its rows, written once by pypaimon
and cached between runs, and an order-free digest of a Parquet output read back with
``pyarrow.dataset`` (not through paimon-feed or Spark).

The table (``db.backlog``, no primary key, ``bucket=-1``) holds ``rows`` rows in ``commits``
commits; each row is a function of its ``id``, so a reader's output is checked row by row
against the generator (:func:`parquet_digest`'s ``mismatches``) as well as by its digest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from paimon_feed.tables import commit_arrow

__all__ = ["BACKLOG", "BACKLOG_DDL", "TABLE", "backlog_rows", "cached_backlog", "parquet_digest", "rows_of"]

BACKLOG = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    ("commit", pa.int32()),
    ("user_id", pa.int64()),
    ("category", pa.int32()),
    ("payload", pa.string()),
    ("value", pa.float64()),
    ("ts", pa.timestamp("us")),
])
BACKLOG_DDL = ("id bigint not null, commit int, user_id bigint, category int, payload string, "
               "value double, ts timestamp_ntz")
TABLE = "db.backlog"
#: Bump when the generator changes: the cache key holds it.
GENERATOR_VERSION = 1
_EPOCH_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


def backlog_rows(start: int, stop: int, commit: int) -> pa.Table:
    """Rows ``start..stop-1`` of the table (those of commit ``commit``)."""
    return rows_of(pa.array(np.arange(start, stop, dtype=np.int64)), commit)


def rows_of(ids: pa.Array, commit: int) -> pa.Table:
    """The generator's rows of ``ids``, with ``commit`` as their commit number."""
    return pa.table({
        "id": ids,
        "commit": pa.array(np.full(len(ids), commit, dtype=np.int32)),
        "user_id": pc.bit_wise_and(pc.multiply(ids, 2654435761), 0xFFFFF),
        "category": pc.cast(pc.bit_wise_and(ids, 63), pa.int32()),
        "payload": pc.binary_join_element_wise("order-", pc.cast(ids, pa.string()), "-paid", ""),
        "value": pc.multiply(pc.cast(ids, pa.float64()), 0.25),
        "ts": pc.cast(pc.add(pc.multiply(ids, 1000), _EPOCH_US), pa.timestamp("us")),
    }, schema=BACKLOG)


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "paimon-feed" / "bench"


def cached_backlog(rows: int, commits: int) -> str:
    """The warehouse holding ``db.backlog`` of ``rows`` rows in ``commits`` commits: written once
    under ``~/.cache/paimon-feed/bench`` keyed by its parameters and the pypaimon version,
    reused by later runs (a stamp file marks it complete)."""
    import importlib.metadata

    from pypaimon import CatalogFactory, Schema

    key = f"{rows}-{commits}-v{GENERATOR_VERSION}-pypaimon{importlib.metadata.version('pypaimon')}"
    root = _cache_root() / f"backlog-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    warehouse, stamp = root / "warehouse", root / ".complete"
    if stamp.is_file() and stamp.read_text() == key:
        # the consumers of earlier runs (the runner's consumer files, marks, batch records) go
        shutil.rmtree(warehouse / "db.db" / TABLE.split(".")[1] / "consumer", ignore_errors=True)
        return str(warehouse)
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", True)
    catalog.create_table(TABLE, Schema.from_pyarrow_schema(BACKLOG, options={"bucket": "-1"}), False)
    table = catalog.get_table(TABLE)
    per_commit = rows // commits
    for n in range(commits):
        stop = rows if n == commits - 1 else (n + 1) * per_commit
        commit_arrow(table, backlog_rows(n * per_commit, stop, n))
    stamp.write_text(key)
    print(f"wrote {rows:,} rows in {commits} commits to {warehouse} in {time.perf_counter() - started:.0f} s",
          flush=True)
    return str(warehouse)


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _mixed(values: np.ndarray, salt: int) -> np.ndarray:
    x = values.astype(np.uint64, copy=False) * _MIX + np.uint64(salt)
    x ^= x >> np.uint64(29)
    return x * np.uint64(0xBF58476D1CE4E5B9)


def parquet_digest(path: str, rows: int) -> dict:
    """Read the Parquet files under ``path`` with ``pyarrow.dataset``: the row count, the ids'
    coverage (each of ``0..rows-1`` exactly once), rows that differ from the generator's row of
    their id, and an order-free hash of every column (a sum of per-row hashes)."""
    seen = np.zeros(rows, dtype=np.uint8)
    count = mismatches = outside = 0
    row_hash = np.uint64(0)
    dataset = ds.dataset(path, format="parquet", exclude_invalid_files=True)
    with np.errstate(over="ignore"):
        for batch in dataset.to_batches(columns=list(BACKLOG.names)):
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch]).cast(BACKLOG, safe=False) if batch.schema != BACKLOG \
                else pa.Table.from_batches([batch])
            ids = table.column("id").to_numpy()
            count += len(ids)
            in_range = ids[(ids >= 0) & (ids < rows)]
            outside += len(ids) - len(in_range)
            seen[in_range] += 1  # a repeat inside one batch counts once, but leaves another id unseen
            mismatches += _mismatches(table)
            h = _mixed(ids, 1)
            for salt, name in enumerate(("commit", "user_id", "category"), 2):
                h ^= _mixed(table.column(name).to_numpy(), salt)
            h ^= _mixed(table.column("value").to_numpy().view(np.uint64), 5)
            h ^= _mixed(table.column("ts").cast(pa.int64()).to_numpy(), 6)
            h ^= _mixed(_string_hashes(table.column("payload").combine_chunks()), 7)
            row_hash += h.sum(dtype=np.uint64)
    return {"rows": count, "ids_each_once": bool(count == rows and not outside and (seen == 1).all()),
            "mismatches": mismatches, "row_hash": f"{int(row_hash):016x}"}


def _string_hashes(strings: pa.Array) -> np.ndarray:
    """A hash of each string's bytes (a null hashes as an empty string), vectorized: the sum of
    each byte times a mix of its place in the string, plus the string's length."""
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset:strings.offset + len(strings) + 1]
    data = np.frombuffer(strings.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]].astype(np.uint64)
    lengths = np.diff(offsets).astype(np.int64)
    place = np.arange(len(data), dtype=np.uint64) - np.repeat((offsets[:-1] - offsets[0]).astype(np.uint64), lengths)
    weighted = data * _mixed(place, 11)
    sums = np.zeros(len(strings), dtype=np.uint64)
    filled = lengths > 0
    if filled.any():
        sums[filled] = np.add.reduceat(weighted, (offsets[:-1] - offsets[0])[filled])
    return sums + lengths.astype(np.uint64)


def _mismatches(table: pa.Table) -> int:
    """Rows whose columns (but ``commit``, which depends on the writer's split) are not the
    generator's for their id."""
    expected = rows_of(table.column("id").combine_chunks(), 0)
    bad = pc.invert(pc.and_(pc.equal(table.column("user_id"), expected.column("user_id")),
                            pc.equal(table.column("category"), expected.column("category"))))
    for name in ("payload", "value", "ts"):
        bad = pc.or_(bad, pc.invert(pc.equal(table.column(name), expected.column(name))))
    return int(pc.sum(pc.fill_null(bad, True)).as_py() or 0)
