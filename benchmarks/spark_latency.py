"""Spark benchmark, part 3: commit to the end of the micro-batch, for this source (default and
push), the do-nothing Python source, Spark's file source and the Java connector, at a 0 s and
a 1 s trigger (run by :mod:`benchmarks.spark_bench`)."""

from __future__ import annotations

import math
import os
import random
import time

from benchmarks._common.java_connector import STARTED_MESSAGES, JavaFollow
from benchmarks._common.spark_readers import Readers
from benchmarks._common.spark_setup import SMALL_DDL, WARM_UP_COMMITS, commit_small, driver_stats, load, wait_for
from benchmarks._common.stats import percentile
from benchmarks.java_connector_worker import ArrivalSink
from paimon_feed._layout import local_url

#: How this source follows the local latency table: the default (on a local file system a
#: storage check, a ``stat``, on every trigger) and inotify push, asked for by name.
MODES = {
    "auto": {"notifier": "auto"},
    "push": {"notifier": "local"},
}
#: The floor under any Python stream source's latency: :class:`SnapshotIdsSource`.
PYTHON_CEILING = "python_ceiling"
LABELS = {
    "auto": "notifier=auto, the default (on a local table: a storage check on every trigger)",
    "push": "push (notifier=local: inotify)",
    "storage-per-trigger": "poll storage on every latestOffset",
    PYTHON_CEILING: "do-nothing Python source (lists the snapshot directory on every trigger, reads nothing)",
    "spark_parquet": "Spark's file source on the table's Parquet files (lists the bucket directories on every trigger)",
    "java_connector": "Paimon's Java connector (it checks storage on every trigger)",
}
TRIGGERS = {"0 seconds": "0 seconds", "1 second": "1 second"}


def start_follow_query(readers: Readers, name: str, mode: str, trigger: str, sink, workdir: str, tag: str,
                       extra: dict | None = None):
    stats = driver_stats(local_url(os.path.join(readers.warehouse, "db.db", name)))
    stream = readers.stream("source", name, SMALL_DDL, startingPosition="latest",
                            **MODES.get(mode, {}), **(extra or {}))
    query = (
        stream.writeStream.foreachBatch(sink)
        .option("checkpointLocation", os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
        .trigger(processingTime=trigger)
        .start()
    )
    # Started means: the source answered its first offsets (it writes stats from then on).
    wait_for(lambda: bool(stats()), 120, f"the {mode} query to start")
    return query, stats


class SourceFollow:
    """This source following ``name`` from its latest snapshot in the benchmark's session."""

    def __init__(self, readers: Readers, name: str, mode: str, trigger: str, workdir: str, tag: str) -> None:
        self.sink = ArrivalSink()
        self.query, stats = start_follow_query(readers, name, mode, trigger, self.sink, workdir, tag)
        wait_for(lambda: stats()["latest_calls"] >= 3, 120, f"{mode} triggers")

    def arrivals(self) -> dict:
        return self.sink.snapshot()

    def stop(self) -> None:
        self.query.stop()


class StreamFollow:
    """A stream DataFrame of the benchmark's session following a table into an
    :class:`ArrivalSink`. Started means its query answered a first trigger."""

    def __init__(self, stream, trigger: str, checkpoint: str) -> None:
        self.sink = ArrivalSink()
        self.query = (stream.writeStream.foreachBatch(self.sink).option("checkpointLocation", checkpoint)
                      .trigger(processingTime=trigger).start())
        wait_for(lambda: self.query.status["message"] in STARTED_MESSAGES,
                 120, "the query to start")

    def arrivals(self) -> dict:
        return self.sink.snapshot()

    def stop(self) -> None:
        self.query.stop()


def commit_delay(rng: random.Random, trigger_s: float) -> float:
    """Seconds to wait before the next commit: 0.2-0.6 s with a 0 s trigger; with a longer one,
    to a random phase of the next trigger interval at least 0.2 s away (Spark fires
    ``processingTime`` triggers on multiples of the interval since the epoch)."""
    if trigger_s <= 0:
        return rng.uniform(0.2, 0.6)
    now = time.time()
    at = (now // trigger_s + 1) * trigger_s + rng.uniform(0, trigger_s)
    return at - now if at - now >= 0.2 else at - now + trigger_s


def measure_latency(readers, table, mode: str, trigger: str, numbers: list[int], workdir: str, tag: str,
                    seed: int) -> dict:
    """End and entry latencies (ms) of the commits ``numbers``, after ``WARM_UP_COMMITS``
    unmeasured ones (the first micro-batches also start the executors' Python workers).
    ``mode`` is one of :data:`MODES` for this source, :data:`PYTHON_CEILING`,
    ``spark_parquet`` or ``java_connector``."""
    snapshot_dir = os.path.join(readers.warehouse, "db.db", "small", "snapshot")
    if mode == "java_connector":
        follow = JavaFollow(readers.java, readers.table_uri("small"), trigger,
                            os.path.join(workdir, f"checkpoint-{mode}-{tag}"), tag=f"latency-{tag}")
    elif mode == PYTHON_CEILING:  # its rows carry snapshot ids, not commit numbers
        stream = readers.spark.readStream.format("snapshot_ids").option("snapshotDir", snapshot_dir).load()
        follow = StreamFollow(stream, trigger, os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
    elif mode == "spark_parquet":
        follow = StreamFollow(readers.stream(mode, "small", SMALL_DDL), trigger,
                              os.path.join(workdir, f"checkpoint-{mode}-{tag}"))
    else:
        follow = SourceFollow(readers, "small", mode, trigger, workdir, tag)
    rng = random.Random(seed)
    warm_up = [-(n + 1) - 1000 * seed for n in range(WARM_UP_COMMITS)]
    snapshot_of = {}
    trigger_s = float(trigger.split()[0])

    def key(n):  # what the sink saw of commit n: its number, or its snapshot id (the ceiling)
        return snapshot_of[n] if mode == PYTHON_CEILING else n

    try:
        for n in warm_up + numbers:
            time.sleep(commit_delay(rng, trigger_s))
            commit_small(table, n)
            snapshot_of[n] = table.snapshot_manager().get_latest_snapshot().id
            if n in warm_up:
                wait_for(lambda n=n: key(n) in follow.arrivals()["ended"], 300, f"{mode}: warm-up commit")
        wait_for(lambda: all(key(n) in follow.arrivals()["ended"] for n in numbers), 300, f"{mode}: every commit")
        arrived = follow.arrivals()
    finally:
        follow.stop()
    committed = {n: os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_of[n]}")).st_mtime_ns / 1e9 for n in numbers}
    ended, entered = arrived["ended"], arrived["entered"]
    measured = {
        "end_ms": [(ended[key(n)] - committed[n]) * 1000 for n in numbers],
        "entry_ms": [(entered[key(n)] - committed[n]) * 1000 for n in numbers],
        "micro_batches": len({ended[key(n)] for n in numbers}),
    }
    if trigger_s > 0:  # from the first trigger after the commit (Spark fires on multiples of it)
        measured["tick_to_end_ms"] = [(ended[key(n)] - math.ceil(committed[n] / trigger_s) * trigger_s) * 1000
                                      for n in numbers]
    return measured


def measure_latencies(readers, table, commits: int, rounds: int, workdir: str) -> dict:
    """Every (trigger, mode) in alternating rounds, so drift in the machine's load hits all alike;
    the readers of a round share a seed (the same commit intervals and phases)."""
    modes = list(MODES) + [PYTHON_CEILING, "spark_parquet"] + (["java_connector"] if readers.java else [])
    keys = [(trigger, mode) for trigger in TRIGGERS for mode in modes]
    measured: dict[tuple[str, str], list[dict]] = {key: [] for key in keys}
    per_round, next_number = max(1, commits // rounds), 1
    before = load()
    for round_index in range(rounds):
        for trigger, mode in keys:
            numbers = list(range(next_number, next_number + per_round))
            next_number += per_round
            print(f"latency: {mode}, trigger {trigger}, round {round_index + 1}/{rounds} ...", flush=True)
            measured[trigger, mode].append(measure_latency(
                readers, table, mode, TRIGGERS[trigger], numbers, workdir,
                tag=f"{trigger.replace(' ', '')}-{round_index}", seed=7 + 10 * round_index))
    result: dict = {"load_before": before, "load_after": load()}
    for (trigger, mode), runs in measured.items():
        result.setdefault(trigger, {})[mode] = latency_summary(mode, runs)
    return result


def latency_summary(mode: str, runs: list[dict]) -> dict:
    """The latencies of ``runs`` of :func:`measure_latency` for ``mode`` pooled: percentiles,
    raw lists kept."""
    end_ms = [ms for run in runs for ms in run["end_ms"]]
    entry_ms = [ms for run in runs for ms in run["entry_ms"]]
    summary = {
        "label": LABELS[mode], "commits": len(end_ms), "micro_batches": sum(run["micro_batches"] for run in runs),
        "end_ms": end_ms, "entry_ms": entry_ms,
        "p50_ms": percentile(end_ms, 0.5), "p95_ms": percentile(end_ms, 0.95),
        "max_ms": max(end_ms), "entry_p50_ms": percentile(entry_ms, 0.5),
    }
    if all("tick_to_end_ms" in run for run in runs):
        tick_ms = [ms for run in runs for ms in run["tick_to_end_ms"]]
        summary.update(tick_to_end_ms=tick_ms, tick_to_end_p50_ms=percentile(tick_ms, 0.5))
    return summary
