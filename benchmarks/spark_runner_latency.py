"""Runner benchmark, latency: commit -> ``fn`` called (entry) and -> the commit's rows collected in
``fn`` (end), for ``foreach_batch`` and, beside it, Paimon's Java connector with Spark's default
trigger (``0 seconds``) entering and ending its ``foreachBatch`` (run by
:mod:`benchmarks.spark_runner_bench`).

- Local table: the runner pushed by inotify; the commit's moment is its snapshot file's mtime.
- S3 on ``moto_server``: the runner pushed by SQS (the bucket's snapshot events, one prefix rule
  per table), the connector on ``s3a://``; the commit's moment is moto's time of the snapshot
  file's ``ObjectCreated`` event (ms), read from an observing queue, on the same clock.

Each round commits ``WARM_UP_COMMITS`` unmeasured commits (the runner warms its Python workers
when it starts; the connector's first micro-batches warm its JVM), then the measured ones at
random intervals of 0.2-0.6 s; a round's readers get the same intervals.
"""

from __future__ import annotations

import os
import random
import statistics
import threading
import time
from collections.abc import Callable

from benchmarks._common.java_connector import JavaFollow
from benchmarks._common.s3_setup import _drain, _event_times
from benchmarks._common.spark_setup import SMALL, WARM_UP_COMMITS, commit_small, create_table, load, wait_for
from benchmarks._common.stats import percentile
from benchmarks.s3_latency import _notify
from benchmarks.spark_latency import commit_delay, measure_latency
from paimon_feed.spark import foreach_batch

RUNNER_LOCAL = "foreach_batch, inotify push"
RUNNER_S3 = "foreach_batch on S3 (moto), SQS push"
JAVA_LOCAL = "Paimon's Java connector, default trigger (0 seconds)"
JAVA_S3 = "Paimon's Java connector on s3a:// (moto), default trigger (0 seconds)"


class LatencySink:
    """``fn`` of the latency case: when it was entered per batch id, and when each commit's rows
    were in hand (collected)."""

    def __init__(self) -> None:
        self.entered: dict[int, float] = {}
        self.ended: dict[int, float] = {}
        self._lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        entered = time.time()
        commits = {row["commit"] for row in df.select("commit").collect()}
        ended = time.time()
        with self._lock:
            self.entered[batch_id] = entered
            self.ended.update({n: ended for n in commits})


def commit_round(table, numbers: list[int], seed: int, arrived: Callable[[int], bool]) -> dict[int, int]:
    """Warm-up commits (each waited for), then ``numbers``; waits until every one ``arrived``.
    Returns each number's snapshot id."""
    rng = random.Random(seed)
    warm_up = [-(n + 1) - 1000 * seed for n in range(WARM_UP_COMMITS)]
    snapshot_of = {}
    for n in warm_up + numbers:
        time.sleep(commit_delay(rng, 0))
        commit_small(table, n)
        snapshot_of[n] = table.snapshot_manager().get_latest_snapshot().id
        if n in warm_up:
            wait_for(lambda n=n: arrived(n), 300, "a warm-up commit")
    wait_for(lambda: all(arrived(n) for n in numbers), 300, "every commit")
    return snapshot_of


def runner_round(spark, table, numbers: list[int], seed: int, committed_at: Callable[[int], float],
                 **runner_options) -> dict:
    """The runner following ``table`` from its latest snapshot while ``numbers`` are committed;
    ``committed_at(snapshot_id)`` is a commit's moment (asked after the round)."""
    sink = LatencySink()
    runner = foreach_batch(spark, sink, table=table.identifier.get_full_name(), start="latest",
                           consumer_id=f"latency-{seed}", **runner_options)
    try:
        snapshot_of = commit_round(table, numbers, seed, lambda n: n in sink.ended)
    finally:
        runner.stop()
    runner.await_termination(0)
    committed = {n: committed_at(snapshot_of[n]) for n in numbers}
    entry = {n: sink.entered[min(b for b in sink.entered if b >= snapshot_of[n])] for n in numbers}
    return {"entry_ms": [(entry[n] - committed[n]) * 1000 for n in numbers],
            "end_ms": [(sink.ended[n] - committed[n]) * 1000 for n in numbers],
            "batches": len(set(entry.values()))}


def java_round(java, table, path: str, numbers: list[int], seed: int, committed_at: Callable[[int], float],
               workdir: str, tag: str) -> dict:
    follow = JavaFollow(java, path, "0 seconds", os.path.join(workdir, f"checkpoint-{tag}"), tag=tag)
    try:
        snapshot_of = commit_round(table, numbers, seed, lambda n: n in follow.arrivals()["ended"])
        arrived = follow.arrivals()
    finally:
        follow.stop()
    committed = {n: committed_at(snapshot_of[n]) for n in numbers}
    return {"entry_ms": [(arrived["entered"][n] - committed[n]) * 1000 for n in numbers],
            "end_ms": [(arrived["ended"][n] - committed[n]) * 1000 for n in numbers],
            "micro_batches": len({arrived["ended"][n] for n in numbers})}


def summary(runs: list[dict], label: str) -> dict:
    entry = [v for run in runs for v in run["entry_ms"]]
    end = [v for run in runs for v in run["end_ms"]]
    return {"label": label, "commits": len(end),
            "entry_ms_p50": statistics.median(entry), "entry_ms_p99": percentile(entry, 0.99),
            "end_ms_p50": statistics.median(end), "end_ms_p99": percentile(end, 0.99), "runs": runs}


def measure_local(spark, readers, warehouse: str, table, commits: int, rounds: int, workdir: str) -> dict:
    """The local table ``db.small``: the runner (inotify), then the connector, round by round."""
    snapshot_dir = os.path.join(warehouse, "db.db", "small", "snapshot")

    def mtime(snapshot_id: int) -> float:
        return os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_id}")).st_mtime_ns / 1e9

    before = load()
    runner_runs, java_runs = [], []
    for seed in range(rounds):
        print(f"  local latency round {seed + 1}/{rounds}, load {load()}", flush=True)
        numbers = [seed * 1000 + n for n in range(commits)]
        runner_runs.append(runner_round(spark, table, numbers, seed, mtime, warehouse=warehouse))
        if readers.java:
            numbers = [50_000 + seed * 1000 + n for n in range(commits)]
            java_runs.append(measure_latency(readers, table, "java_connector", "0 seconds", numbers,
                                             workdir, f"runner-bench-{seed}", seed + 100))
    result = {"load_before": before, "load_after": load(), "runner": summary(runner_runs, RUNNER_LOCAL)}
    if java_runs:
        result["java_connector"] = summary(java_runs, JAVA_LOCAL)
    return result


def measure_s3(spark, server, java, commits: int, rounds: int, workdir: str) -> dict:
    """Tables ``lat_runner`` and ``lat_java`` on moto: the runner (SQS push), then the connector
    (``s3a://``), round by round."""
    from pypaimon import CatalogFactory

    from benchmarks._common.s3_setup import BUCKET
    from tests.s3_support import s3_catalog_options

    server.create_bucket(BUCKET)
    feed, observer = server.create_queue("runner-latency"), server.create_queue("runner-latency-observer")
    options = s3_catalog_options(server, BUCKET)
    catalog = CatalogFactory.create(options)
    catalog.create_database("db", True)
    names = {"runner": "lat_runner", **({"java_connector": "lat_java"} if java else {})}
    tables = {mode: create_table(catalog, f"db.{name}", SMALL) for mode, name in names.items()}
    for table in tables.values():
        commit_small(table, -1_000_000)  # a number no round commits (the connector may read it first)
    _notify(server, feed.queue_arn, observer.queue_arn, [names["runner"]], list(names.values()))
    _drain(server, feed.queue_url)  # moto's s3:TestEvent
    events: dict[str, dict[int, float]] = {}

    def event_time(name: str) -> Callable[[int], float]:
        def at(snapshot_id: int) -> float:
            for table, times in _event_times(_drain(server, observer.queue_url)).items():
                events.setdefault(table, {}).update(times)
            return events[name][snapshot_id]
        return at

    catalog_options = {f"catalog.{k}": v for k, v in options.items() if k != "warehouse"}
    before = load()
    runner_runs, java_runs = [], []
    for seed in range(rounds):
        print(f"  S3 latency round {seed + 1}/{rounds}, load {load()}", flush=True)
        numbers = [seed * 1000 + n for n in range(commits)]
        runner_runs.append(runner_round(
            spark, tables["runner"], numbers, seed, event_time(names["runner"]), warehouse=options["warehouse"],
            notifier="sqs", queueUrl=feed.queue_url, **catalog_options))
        if java:
            java_runs.append(java_round(
                java, tables["java_connector"], f"s3a://{BUCKET}/wh/db.db/{names['java_connector']}", numbers,
                seed, event_time(names["java_connector"]), workdir, f"runner-s3-{seed}"))
    result = {"load_before": before, "load_after": load(), "runner": summary(runner_runs, RUNNER_S3)}
    if java_runs:
        result["java_connector"] = summary(java_runs, JAVA_S3)
    return result
