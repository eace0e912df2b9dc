"""Spark benchmark, part 1: throughput of every reader into ``noop`` and Parquet sinks, as
``AvailableNow`` queries and batch reads, and what this source and the Java connector read,
compared (run by :mod:`benchmarks.spark_bench`)."""

from __future__ import annotations

import os
import shutil
import statistics

from benchmarks._common.spark_readers import Readers
from benchmarks._common.spark_setup import WIDE_DDL, interleaved, load


def measure_throughput(readers: Readers, name: str, rows: int, repeats: int, workdir: str, *,
                       batch_rows: int, stream_rows: int, with_ceilings: bool,
                       stream_options: dict[str, dict] | None = None) -> dict:
    """Every reader x {noop, parquet} x {AvailableNow, batch}, interleaved; then, untimed, what
    this source and the Java connector read compared (:meth:`Readers.digest`).
    ``stream_options`` are per reader (the primary-key table is streamed from its first
    snapshot)."""
    runs = iter(range(1_000_000))
    ddl = WIDE_DDL
    stream_options = stream_options or {}
    paimon_readers = ("source", "java_connector")  # what reads Paimon's semantics, not files
    cases = {}
    for reader in readers.names():
        if not with_ceilings and reader in ("python_ceiling", "spark_parquet"):
            continue
        for sink in ("noop", "parquet"):
            def stream_case(reader=reader, sink=sink):
                n = next(runs)
                out = os.path.join(workdir, f"out-{name}-{n}")
                read = readers.available_now(reader, name, ddl, sink, out, os.path.join(workdir, f"checkpoint-{name}-{n}"),
                                             **stream_options.get(reader, {}))
                shutil.rmtree(out, ignore_errors=True)
                expected = stream_rows if reader in paimon_readers else rows
                assert read == expected, (reader, sink, read, expected)

            def batch_case(reader=reader, sink=sink):
                out = os.path.join(workdir, f"out-{next(runs)}")
                readers.run_batch(reader, name, ddl, sink, out)
                shutil.rmtree(out, ignore_errors=True)

            cases[f"{reader}/available_now/{sink}"] = stream_case
            cases[f"{reader}/batch/{sink}"] = batch_case
    before = load()
    seconds = interleaved(cases, repeats)
    result = {"rows": rows, "batch_rows": batch_rows, "stream_rows": stream_rows, "repeats": repeats,
              "load_before": before, "load_after": load(), "cases": {}}
    for case, durations in seconds.items():
        reader, mode, _sink = case.split("/")
        case_rows = stream_rows if mode == "available_now" and reader in paimon_readers else (
            batch_rows if reader in paimon_readers else rows)
        result["cases"][case] = {"seconds": durations, "median_s": statistics.median(durations),
                                 "rows_per_s": case_rows / statistics.median(durations)}
    result["stream_options"] = stream_options
    result["reads_compared"] = compare_reads(readers, name, workdir, stream_options)
    return result


def compare_reads(readers: Readers, name: str, workdir: str, stream_options: dict[str, dict]) -> dict:
    """Untimed: the :data:`DIGEST_SQL` fingerprint of the batch read and of the ``AvailableNow``
    stream of this source and of the Java connector, and whether they agree."""
    digests = {}
    for reader in [r for r in ("source", "java_connector") if r in readers.names()]:
        for kind in ("batch", "stream"):
            where = os.path.join(workdir, f"digest-{name}-{reader}-{kind}")
            digests[f"{reader}/{kind}"] = readers.digest(
                reader, name, stream=kind == "stream", checkpoint=where + "-checkpoint", out_dir=where,
                **(stream_options.get(reader, {}) if kind == "stream" else {}))
            shutil.rmtree(where, ignore_errors=True)
    compared = {"digests": digests}
    if "java_connector/batch" in digests:
        for kind in ("batch", "stream"):
            compared[f"{kind}_equal"] = digests[f"source/{kind}"] == digests[f"java_connector/{kind}"]
    return compared


def measure_pypaimon(table, rows: int, repeats: int) -> dict:
    """pypaimon's own ``to_arrow`` of a full scan (no Spark): the reference the issue started from."""
    from paimon_feed.spark.driver import READ_BATCH_ROWS

    def read(batch_rows):
        def run():
            source = table if batch_rows is None else table.copy({"read.batch-size": str(batch_rows)})
            builder = source.new_read_builder()
            assert builder.new_read().to_arrow(builder.new_scan().plan().splits()).num_rows == rows

        return run

    seconds = interleaved({"default": read(None), "batch_65536": read(READ_BATCH_ROWS)}, repeats)
    return {name: rows / statistics.median(values) for name, values in seconds.items()}
