"""Reliability suite: try hard to break DESIGN.md's invariants, and count what happens.

    python -m benchmarks.reliability [--kills 50] [--soak 10000]

Scenarios (each also runs, reduced, as a test in tests/reliability/):

- crash:    a consumer process checkpointing after every batch is SIGKILLed at random points
            while a writer process commits; restarted each time.
- chaos:    hints dropped (30%), duplicated, reordered and delayed by a ChaosNotifier.
- faults:   transient storage errors injected into pypaimon's FileIO (10% of calls).
- fault-permanent: storage fails for good; the error must reach the consumer, checkpoint untouched.
- expiry:   snapshots expired under a lagging consumer, with and without its consumer file.
- soak:     thousands of snapshots through one feed: memory, descriptors, tasks stay flat.

Prints a table (scenario, runs, committed batches, lost, duplicated and whether allowed,
out-of-order, max delay) and writes benchmarks/results/reliability.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field

import pyarrow as pa

from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

from benchmarks._common.scratch import removes_scratch, scratch_dir

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


# --- chaos and faults: in-process feeds against a writer process ----------------------------------


class FaultyFileIO:
    """pypaimon FileIO that fails a fraction of storage calls with an OSError."""

    CALLS = {"exists", "read_file_utf8", "list_status", "get_file_status", "new_input_stream"}

    def __init__(self, inner, rate: float, seed: int = 3) -> None:
        self._inner, self.rate, self._random = inner, rate, random.Random(seed)
        self.injected = 0
        self.broken = False

    def exists_batch(self, paths):
        return {path: self.exists(path) for path in paths}

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if name not in self.CALLS or not callable(attribute):
            return attribute

        def maybe_fail(*args, **kwargs):
            if self.broken or self._random.random() < self.rate:
                self.injected += 1
                raise OSError(f"injected storage fault in {name}")
            return attribute(*args, **kwargs)

        return maybe_fail


async def _follow(feed, last_snapshot: int, visible_at) -> tuple[list, float]:
    """Consume until ``last_snapshot``; return (rows, max visible→delivered delay in ms)."""
    rows, max_delay = [], 0.0
    previous = None
    out_of_order = 0
    async for batch in feed:
        if previous is not None and batch.first_snapshot_id != previous + 1:
            out_of_order += 1
        previous = batch.snapshot_id
        now = time.time()
        for snapshot_id in range(batch.first_snapshot_id, batch.snapshot_id + 1):
            visible = visible_at(snapshot_id)
            if visible is not None:
                max_delay = max(max_delay, 1000 * (now - visible))
        rows.extend((row["commit"], row["id"]) for row in batch.to_arrow().to_pylist())
        await feed.commit(batch)
        if batch.snapshot_id >= last_snapshot:
            break
    return rows, max_delay, out_of_order


def _snapshot_mtime(warehouse: str):
    snapshot_dir = os.path.join(warehouse, "db.db", "t", "snapshot")

    def visible_at(snapshot_id: int) -> float | None:
        try:
            return os.stat(os.path.join(snapshot_dir, f"snapshot-{snapshot_id}")).st_mtime
        except FileNotFoundError:
            return None

    return visible_at


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


@removes_scratch
def run_chaos(commits: int, *, reconcile_interval: float = 0.5, seed: int = 5) -> Outcome:
    from paimon_feed import ChangeFeed, LocalNotifier
    from paimon_feed.notifiers.chaos import ChaosNotifier

    warehouse = scratch_dir("paimon-feed-chaos-")
    table = open_table(warehouse)
    commit(table, 0)

    async def main():
        chaos = ChaosNotifier(LocalNotifier(), drop=0.3, duplicate=0.2, reorder=0.2, max_delay=0.2, seed=seed)
        async with chaos, ChangeFeed(
            table, notifier=chaos, start="earliest", reconcile_interval=reconcile_interval, catch_up_threshold=10**6
        ) as feed:
            writer = start_writer(warehouse, first=1, count=commits, interval=0.03)
            rows, max_delay, out_of_order = await _follow(feed, commits + 1, _snapshot_mtime(warehouse))
            last_commit = await asyncio.to_thread(last_written, writer)
            return rows, max_delay, out_of_order, last_commit, feed.metrics(), dict(chaos.stats)

    rows, max_delay, out_of_order, last_commit, metrics, stats = asyncio.run(main())
    outcome = _score("chaos", rows, range(last_commit + 1), out_of_order, metrics.batches_delivered)
    outcome.max_delay_ms = max_delay
    outcome.notes = {"chaos": stats, "reconcile_interval_s": reconcile_interval, "reconciles": metrics.reconciles}
    return outcome


@removes_scratch
def run_faults(commits: int, *, rate: float = 0.1) -> Outcome:
    from paimon_feed import ChangeFeed

    warehouse = scratch_dir("paimon-feed-faults-")
    writer_table = open_table(warehouse)
    for n in range(commits):
        commit(writer_table, n)
    table = open_table(warehouse, create=False)
    faulty = FaultyFileIO(table.file_io, rate)
    table.file_io = faulty

    async def main():
        async with ChangeFeed(table, start="earliest", catch_up_threshold=10**6, max_pending=4) as feed:
            rows, _, out_of_order = await _follow(feed, commits, lambda _: None)
            return rows, out_of_order, feed.metrics()

    rows, out_of_order, metrics = asyncio.run(main())
    outcome = _score("faults", rows, range(commits), out_of_order, metrics.batches_delivered)
    outcome.notes = {"injected_faults": faulty.injected, "storage_retries": metrics.storage_retries, "rate": rate}
    return outcome


@removes_scratch
def run_permanent_fault() -> Outcome:
    """Storage breaks for good mid-stream: the consumer gets a FeedError, the checkpoint stays."""
    from paimon_feed import ChangeFeed, FeedError

    warehouse = scratch_dir("paimon-feed-broken-")
    writer_table = open_table(warehouse)
    for n in range(5):
        commit(writer_table, n)
    table = open_table(warehouse, create=False)
    faulty = FaultyFileIO(table.file_io, 0.0)
    table.file_io = faulty
    consumer_file = os.path.join(warehouse, "db.db", "t", "consumer", "consumer-broken")

    async def main():
        delivered, error = 0, None
        try:
            async with ChangeFeed(table, consumer_id="broken", start="earliest", catch_up_threshold=10**6) as feed:
                async for batch in feed:
                    delivered += 1
                    await feed.commit(batch)
                    if batch.snapshot_id == 5:
                        with open(consumer_file) as handle:
                            before = handle.read()
                        faulty.broken = True
                        commit(writer_table, 5)
        except FeedError as exc:
            error = exc
        with open(consumer_file) as handle:
            after = handle.read()
        return delivered, error, before, after

    delivered, error, before, after = asyncio.run(main())
    outcome = Outcome("fault-permanent", committed_batches=delivered, expected_rows=5 * ROWS_PER_COMMIT)
    outcome.notes = {
        "error": f"{type(error).__name__}: {error}" if error else None,
        "checkpoint_untouched": before == after,
    }
    if error is None or before != after:
        outcome.lost = 1  # the failure was swallowed or progress moved: count it as a loss
    return outcome


# --- expiry: a consumer file protects unread snapshots --------------------------------------------


def expire_like_paimon(table, retain_last: int) -> int:
    """Expire snapshots as Java Paimon's ExpireSnapshotsImpl does, consumers included.

    Java keeps the newest ``snapshot.num-retained`` snapshots and never expires a snapshot at or
    after ``ConsumerManager.minNextSnapshot()``; it deletes the files of the older ones and
    writes ``EARLIEST``. pypaimon 2.1 has no expiration, so this follows the Java rule, reading
    consumers with pypaimon's port of ConsumerManager. Returns the new earliest snapshot id.
    """
    latest = table.snapshot_manager().get_latest_snapshot().id
    boundary = latest - retain_last + 1
    protected = table.consumer_manager().min_next_snapshot()
    if protected is not None:
        boundary = min(boundary, protected)
    snapshot_dir = os.path.join(str(table.table_path), "snapshot")
    for name in os.listdir(snapshot_dir):
        if name.startswith("snapshot-") and int(name.split("-")[1]) < boundary:
            os.remove(os.path.join(snapshot_dir, name))
    with open(os.path.join(snapshot_dir, "EARLIEST"), "w") as handle:
        handle.write(str(boundary))
    return boundary


@removes_scratch
def run_expiry() -> Outcome:
    from paimon_feed import ChangeFeed, SnapshotExpiredError

    warehouse = scratch_dir("paimon-feed-expiry-")
    table = open_table(warehouse)
    for n in range(4):
        commit(table, n)

    async def read_some(consumer_id, count):
        async with ChangeFeed(table, consumer_id=consumer_id, start="earliest", catch_up_threshold=10**6) as feed:
            rows = []
            async for batch in feed:
                rows.extend((r["commit"], r["id"]) for r in batch.to_arrow().to_pylist())
                await feed.commit(batch)
                if batch.snapshot_id >= count:
                    return rows

    protected_rows = asyncio.run(read_some("protected", 2))  # next snapshot 3, then lags
    for n in range(4, 30):
        commit(table, n)
    earliest = expire_like_paimon(table, retain_last=5)
    protected_rows += asyncio.run(read_some("protected", 30))

    # Without a consumer file nothing protects the reader: expiry raises, never skips silently.
    async def unprotected():
        try:
            async with ChangeFeed(table, start="snapshot:3") as feed:
                await feed.__anext__()
        except SnapshotExpiredError as exc:
            return exc
        return None

    expire_like_paimon(table, retain_last=5)  # the consumer has moved on: expiry proceeds
    os.remove(os.path.join(str(table.table_path), "consumer", "consumer-protected"))
    error = asyncio.run(unprotected())
    outcome = _score("expiry", protected_rows, range(30), 0, 0)
    outcome.notes = {
        "earliest_after_expiry_with_consumer": earliest,
        "unprotected_error": str(error) if error else None,
    }
    if error is None:
        outcome.lost += 1
    return outcome


# --- soak: many snapshots through one feed, resources flat ----------------------------------------


def _resources() -> dict:
    with open("/proc/self/status") as handle:
        rss_kb = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS"))
    return {
        "rss_mb": round(rss_kb / 1024, 1),
        "open_fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
    }


@removes_scratch
def run_soak(snapshots: int) -> Outcome:
    from paimon_feed import ChangeFeed

    warehouse = scratch_dir("paimon-feed-soak-")
    table = open_table(warehouse)
    commit(table, 0)

    async def main():
        samples = []
        async with ChangeFeed(table, consumer_id="soak", start="earliest", max_pending=8) as feed:
            writer = start_writer(warehouse, first=1, count=snapshots - 1, interval=0.0)
            rows, previous, out_of_order, batches = [], None, 0, 0
            started = time.time()
            async for batch in feed:
                batches += 1
                if previous is not None and batch.first_snapshot_id != previous + 1:
                    out_of_order += 1
                previous = batch.snapshot_id
                rows.extend((r["commit"], r["id"]) for r in batch.to_arrow().to_pylist())
                await feed.commit(batch)
                if batches % 200 == 1 or batch.snapshot_id >= snapshots:
                    samples.append(
                        {
                            "snapshot": batch.snapshot_id,
                            "seconds": round(time.time() - started, 2),
                            "tasks": len(asyncio.all_tasks()),
                            "latency_ms_p50": feed.metrics().latency_ms_p50,
                            **_resources(),
                        }
                    )
                if batch.snapshot_id >= snapshots:
                    break
            await asyncio.to_thread(last_written, writer)
            return rows, out_of_order, batches, samples

    rows, out_of_order, batches, samples = asyncio.run(main())
    outcome = _score("soak", rows, range(snapshots), out_of_order, batches)
    first, last = samples[0], samples[-1]
    outcome.notes = {
        "snapshots": snapshots,
        "start": first,
        "end": last,
        "rss_growth_mb_after_warm_up": round(last["rss_mb"] - samples[min(1, len(samples) - 1)]["rss_mb"], 1),
        "snapshots_per_s": round(snapshots / max(last["seconds"], 1e-9), 1),
        "samples": samples,
    }
    return outcome


# --- report ---------------------------------------------------------------------------------------


def report(outcomes: list[Outcome]) -> str:
    lines = [
        "| scenario | runs | committed batches | expected rows | lost | duplicated (allowed?) | out-of-order | max delay ms |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for o in outcomes:
        delay = f"{o.max_delay_ms:.0f}" if o.max_delay_ms is not None else "–"
        allowed = "yes" if o.duplicates_allowed else "NO"
        lines.append(
            f"| {o.scenario} | {o.runs} | {o.committed_batches} | {o.expected_rows} | {o.lost} | "
            f"{o.duplicated} ({allowed}) | {o.out_of_order} | {delay} |"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_write":
        return writer_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    if len(sys.argv) > 1 and sys.argv[1] == "_consume":
        return consumer_main(sys.argv[2], sys.argv[3], sys.argv[4])
    parser = argparse.ArgumentParser(description="paimon-feed reliability suite")
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--chaos-commits", type=int, default=150)
    parser.add_argument("--fault-commits", type=int, default=150)
    parser.add_argument("--soak", type=int, default=10_000)
    args = parser.parse_args()
    outcomes = [
        run_crash(args.kills),
        run_chaos(args.chaos_commits),
        run_faults(args.fault_commits),
        run_permanent_fault(),
        run_expiry(),
        run_soak(args.soak),
    ]
    table = report(outcomes)
    print(table)
    for o in outcomes:
        notes = {k: v for k, v in o.notes.items() if k != "samples"}
        print(f"- {o.scenario}: {json.dumps(notes, default=str)}")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "reliability.json"), "w") as handle:
        json.dump({"outcomes": [asdict(o) | {"ok": o.ok} for o in outcomes], "table": table}, handle, indent=1, default=str)


if __name__ == "__main__":
    main()
