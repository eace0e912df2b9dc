"""Catch-up benchmark, parts 2 and 4: the local backlog uploaded to ``moto_server`` and read
through the fault proxy's delay, and commit -> batch through SQS with many tables on one queue
(run by :mod:`benchmarks.catchup_bench`)."""

from __future__ import annotations

import contextlib
import os

from benchmarks import s3_bench  # (commit -> batch through SQS on moto)
from benchmarks._common.catchup_setup import open_bench_table
from benchmarks.catchup_local import measure_catch_up
from tests.reliability.fault_proxy import FaultProxy
from tests.s3_support import s3_catalog_options, start_moto_server


def upload(local_warehouse: str, server, bucket: str, threads: int = 8) -> int:
    """Every file of the local warehouse to ``s3://bucket/wh/`` as it is; returns the count."""
    from concurrent.futures import ThreadPoolExecutor

    server.create_bucket(bucket)
    client = server.client("s3")
    files = [
        os.path.join(directory, name)
        for directory, _, names in os.walk(local_warehouse)
        for name in names
        if name != "COMPLETE"
    ]

    def put(path: str) -> None:
        key = "wh/" + os.path.relpath(path, local_warehouse)
        with open(path, "rb") as handle:
            client.put_object(Bucket=bucket, Key=key, Body=handle.read())

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(put, files))
    return len(files)


@contextlib.contextmanager
def moto_with_credentials():
    """A fresh ``moto_server``, its fake credentials in the environment while it runs."""
    server = start_moto_server()
    saved = {name: os.environ.get(name) for name in server.credentials_env}
    os.environ.update(server.credentials_env)
    try:
        yield server
    finally:
        server.close()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def measure_s3(local_warehouse: str, snapshots: int, repeats: int, delay_ms: float) -> dict:
    """The local table uploaded to moto, read through the proxy at ``delay_ms`` per request."""
    with moto_with_credentials() as server:
        uploaded = upload(local_warehouse, server, "catchup-lake")
        with FaultProxy(server.endpoint_url, delay_ms=delay_ms) as proxy:
            options = s3_catalog_options(server, "catchup-lake")
            options["fs.s3.endpoint"] = proxy.endpoint_url
            table = open_bench_table(options)
            results = measure_catch_up(table, snapshots, repeats, counter=lambda: proxy.requests)
    results["delay_ms"] = delay_ms
    results["objects"] = uploaded
    return results


def measure_sqs(tables: int, commits: int) -> dict:
    """Commit -> batch through one SQS queue following ``tables`` tables (s3_bench.py's
    consumer and writer processes, push only, no idle phase)."""
    with moto_with_credentials() as server:
        result = s3_bench.measure_latency_and_idle(server, commits, 0.0, tables=tables, modes=("sqs",))
    push = result["modes"]["sqs"]
    return {
        "tables": tables,
        "commits": commits,
        "snapshots": push["snapshots"],
        "missing": push["missing"],
        "p50_ms": push["p50_ms"],
        "p99_ms": push["p99_ms"],
        "p50_ms_from_commit": push["p50_ms_from_commit"],
        "stages_ms_p50": push.get("stages_ms_p50"),
        "latency_ms": push["latency_ms_from_visible"],
    }
