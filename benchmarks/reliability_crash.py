"""Reliability scenario crash: a consumer process checkpointing after every batch is SIGKILLed at
random points while a writer process commits; its consumer process (run by
:mod:`benchmarks.reliability`)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time

from benchmarks._common.reliability_setup import (
    ROWS_PER_COMMIT,
    Outcome,
    commit,
    expected_rows,
    last_written,
    open_table,
    start_writer,
)
from benchmarks._common.scratch import removes_scratch, scratch_dir

# --- crash: SIGKILL a checkpointing consumer at random points --------------------------------------


def consumer_main(warehouse: str, sink_path: str, end: str) -> None:
    """Deliver batches into an append-only sink, committing after each durable write."""
    from paimon_feed import ChangeFeed

    table = open_table(warehouse, create=False)
    sink = open(sink_path, "a")

    def record(entry: dict) -> None:
        sink.write(json.dumps(entry) + "\n")
        sink.flush()
        os.fsync(sink.fileno())

    async def run() -> None:
        async with ChangeFeed(
            table, consumer_id="crash", start="earliest", end=None if end == "-" else int(end)
        ) as feed:
            record({"t": "start"})
            async for batch in feed:
                rows = [[row["commit"], row["id"]] for row in batch.to_arrow().to_pylist()]
                record({"t": "batch", "first": batch.first_snapshot_id, "last": batch.snapshot_id, "rows": rows})
                await feed.commit(batch)
                record({"t": "commit", "next": batch.next_snapshot_id})

    asyncio.run(run())


def verify_sink(sink_path: str, commits: range) -> Outcome:
    """Check a crash sink: no gap, tiled order per run, repeats only of uncommitted batches."""
    outcome = Outcome("crash", runs=0, expected_rows=len(commits) * ROWS_PER_COMMIT)
    seen: dict[tuple[int, int], int] = {}
    durable_next = 1  # the checkpoint a restart must resume from (start=earliest on an unexpired table)
    last_recorded_end = 0  # last snapshot of the last fully recorded batch
    allowed_repeat_from = None
    previous_last = None
    with open(sink_path) as handle:
        lines = handle.read().split("\n")
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # torn by a kill mid-write; the batch was not committed, so it comes again
        if entry["t"] == "start":
            outcome.runs += 1
            previous_last = None
            allowed_repeat_from = durable_next
        elif entry["t"] == "batch":
            first, last = entry["first"], entry["last"]
            if previous_last is None:
                # a restart resumes at the checkpoint: the last commit record, or one batch later
                # if the kill came between the consumer-file write and its record
                if first not in (durable_next, last_recorded_end + 1):
                    outcome.out_of_order += 1
            elif first != previous_last + 1:
                outcome.out_of_order += 1
            previous_last = last
            for row in entry["rows"]:
                key = tuple(row)
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > 1:
                    outcome.duplicated += 1
                    if allowed_repeat_from is None or first < allowed_repeat_from:
                        outcome.duplicates_allowed = False
            last_recorded_end = last
        elif entry["t"] == "commit":
            durable_next = entry["next"]
            outcome.committed_batches += 1
    outcome.lost = len(expected_rows(commits) - set(seen))
    return outcome


def _count_starts(sink: str) -> int:
    try:
        with open(sink) as handle:
            return handle.read().count('"t": "start"')
    except FileNotFoundError:
        return 0


@removes_scratch
def run_crash(kills: int, *, seed: int = 1, interval: float = 0.02) -> Outcome:
    rng = random.Random(seed)
    workdir = scratch_dir("paimon-feed-crash-")
    warehouse, sink, stop = os.path.join(workdir, "wh"), os.path.join(workdir, "sink.jsonl"), os.path.join(workdir, "stop")
    table = open_table(warehouse)
    commit(table, 0)
    writer = start_writer(warehouse, first=1, interval=interval, stop_file=stop)
    killed = 0
    try:
        while killed < kills:
            starts = _count_starts(sink)
            consumer = subprocess.Popen([sys.executable, "-m", __spec__.name, "_consume", warehouse, sink, "-"])
            if rng.random() < 0.2:
                time.sleep(rng.uniform(0.0, 1.0))  # during start-up, before the first batch
            else:
                deadline = time.time() + 60
                while _count_starts(sink) == starts and time.time() < deadline and consumer.poll() is None:
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.0, 1.5))  # while streaming
            if consumer.poll() is None:
                consumer.send_signal(signal.SIGKILL)
                killed += 1
            consumer.wait()
    finally:
        open(stop, "w").close()
        last_commit = last_written(writer)
    last_snapshot = last_commit + 1  # commit n is snapshot n + 1
    final = subprocess.run([sys.executable, "-m", __spec__.name, "_consume", warehouse, sink, str(last_snapshot)], timeout=300)
    assert final.returncode == 0, "the final consumer run failed"
    outcome = verify_sink(sink, range(0, last_commit + 1))
    outcome.notes = {"kills": killed, "commits": last_commit + 1}
    return outcome


if __name__ == "__main__":  # the consumer process
    consumer_main(sys.argv[2], sys.argv[3], sys.argv[4])
