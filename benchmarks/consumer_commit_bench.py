"""What Spark's commit of a micro-batch costs the Spark source with ``consumerId`` on S3.

    python -m benchmarks.consumer_commit_bench [--commits 60]

Spark commits micro-batch N to its source after journaling micro-batch N+1's offsets and before
running it, so whatever the source's ``commit`` does sits on every micro-batch's path. With
``consumerId`` that is a write of Paimon's consumer file. On an ``s3://`` table on a
``moto_server`` process this measures, in the same run:

- ``write``: one write of the consumer file (``CheckpointStore.save``), what a ``commit`` that
  writes it itself waits for, and its S3 requests counted in moto's log;
- ``commit``: ``StreamDriver.commit`` as it is, which hands the position to the source's
  consumer-file thread (:class:`~paimon_feed.spark.consumer_file.ConsumerFileWriter`) and returns;
  50 ms apart, about a micro-batch's spacing, and the file is read back after ``close()``.

Writes ``benchmarks/results/consumer_commit.json``. A measurement, not a test: nothing here
fails on time. moto answers on the loopback, so a real S3 PUT adds its own round trip to
``write``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

from benchmarks._common.s3_costs import s3_request_kind  # (how the S3 benchmarks read moto's log)
from paimon_feed.spark.driver import StreamDriver
from paimon_feed.spark.offsets import FeedOffset
from paimon_feed.spark.options import parse_options
from tests.s3_support import commit_rows, create_table, paimon_catalog, s3_catalog_options, start_moto_server

BUCKET = "consumer-commit-bench"
SPACING_S = 0.05


def summary(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    return {"median_ms": statistics.median(ms), "p95_ms": ms[int(0.95 * (len(ms) - 1))], "n": len(ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--out", default=os.path.join(RESULTS, "consumer_commit.json"))
    args = parser.parse_args()
    server = start_moto_server()
    try:
        server.create_bucket(BUCKET)
        table = create_table(paimon_catalog(server, BUCKET), "db.t")
        commit_rows(table, [1])
        catalog_options = s3_catalog_options(server, BUCKET)
        options = {f"catalog.{k}": v for k, v in catalog_options.items() if k != "warehouse"}
        options.update(warehouse=catalog_options["warehouse"], table="db.t", consumerId="bench",
                       notifier="storage-per-trigger")
        driver = StreamDriver(parse_options(options))
        writes, commits = [], []
        offset = server.log_path.stat().st_size
        for n in range(args.commits):
            started = time.perf_counter()
            driver.checkpoint.save(2 + n)
            writes.append(time.perf_counter() - started)
        logged = server.log_path.read_bytes()[offset:].decode(errors="replace").splitlines()
        consumer_requests = [line for line in logged if "/consumer" in line and s3_request_kind(line)]
        requests_per_write = len(consumer_requests) / args.commits
        last = 1000 + args.commits
        for n in range(1000, last):
            started = time.perf_counter()
            driver.commit(FeedOffset.position(n))
            commits.append(time.perf_counter() - started)
            time.sleep(SPACING_S)
        driver.close()
        stored = driver.checkpoint.load()
    finally:
        server.close()
    result = {"table": "s3:// on moto_server", "spacing_s": SPACING_S,
              "write": {**summary(writes), "s3_requests": requests_per_write},
              "commit": summary(commits), "stored_after_close": stored, "expected_after_close": last - 1}
    print(f"consumer file write (what a commit that writes it waits for): "
          f"median {result['write']['median_ms']:.1f} ms, p95 {result['write']['p95_ms']:.1f} ms, "
          f"{requests_per_write:g} S3 requests")
    print(f"StreamDriver.commit: median {result['commit']['median_ms']:.3f} ms, "
          f"p95 {result['commit']['p95_ms']:.3f} ms; file after close: {stored} (expected {last - 1})")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
