"""Catch-up benchmark: a consumer with a backlog, paimon-feed vs pypaimon's
``AsyncStreamingTableScan``, same run, same tables, interleaved.

    python -m benchmarks.catchup_bench [--snapshots 1000] [--s3-snapshots 1000]
                                       [--memory-snapshots 3000] [--repeats 3]
                                       [--local-repeats 11]
                                       [--delay-ms 20] [--sqs-tables 10] [--sqs-commits 100]

1. Catch-up of ``--snapshots`` local snapshots (5 rows each): time until every row is planned
   and read; pypaimon and paimon-feed alternate run by run (median of ``--local-repeats``).
   Then planning alone (no data read), both ways: what bounds the local ratio from below.
2. Catch-up on S3 (``moto_server``), every request delayed ``--delay-ms`` by the fault proxy
   (``tests/reliability/fault_proxy.py``) so the figures reflect round trips; requests counted
   at the proxy. The table is written locally and uploaded as it is (a Paimon table is its
   files; their paths are relative). At 20 ms a request pypaimon needs about 40 s per run for
   1,000 snapshots here (``--s3-snapshots``), the feed about 14 s.
3. ``to_arrow`` rows/s on the catch-up batch's splits: ``batch.to_arrow()`` vs pypaimon's
   ``TableRead.to_arrow`` on the same splits, alternating.
4. Commit → batch through SQS on moto with ``--sqs-tables`` tables on one queue: the machinery
   of ``s3_bench.py`` (its consumer and writer processes), with the writer committing to every
   table in turn.
5. A primary-key table (``changelog-producer=input``, 2 buckets) ``--pk-snapshots`` commits of
   ``--pk-rows`` rows behind, every commit after the first half rewriting earlier keys: the
   changes with row kinds (pypaimon's scan vs a ``ChangeFeed``, one batch per snapshot: a
   primary-key table has no set-diff catch-up), and the merged state at the last snapshot
   (pypaimon's batch read vs the feed's full batch). Both sides' rows are compared before
   anything is timed.
6. Memory while catching up ``--memory-snapshots`` local snapshots: RSS of a fresh process
   sampled every 50 ms, for pypaimon and for the feed (catch-up batches and one batch per
   snapshot), with the feed's cache sizes at the end. The table is written once and kept under
   ``$PAIMON_FEED_BENCH_DATA`` (default ``~/.cache/paimon-feed-bench``) for later runs.

Prints a table and writes ``benchmarks/results/catchup.json``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import pyarrow as pa

from paimon_feed.tables import commit_arrow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")

from benchmarks import s3_bench  # (commit -> batch through SQS on moto)
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks.core_bench import feed_catch_up, pypaimon_catch_up  # (shared catch-up runs)
from tests.reliability.fault_proxy import FaultProxy
from tests.s3_support import s3_catalog_options, start_moto_server

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
ROWS_PER_COMMIT = 5


def data_dir() -> str:
    """Where written tables are kept between runs."""
    default = os.path.join(os.path.expanduser("~"), ".cache", "paimon-feed-bench")
    return os.environ.get("PAIMON_FEED_BENCH_DATA", default)


# --- tables ---------------------------------------------------------------------------------------


def build_warehouse(path: str, snapshots: int) -> str:
    """A local warehouse whose table ``db.bench`` has ``snapshots`` append snapshots of
    ``ROWS_PER_COMMIT`` rows each. Written to a temp name and renamed, so an interrupted build
    is never reused."""
    from pypaimon import CatalogFactory, Schema

    if os.path.exists(os.path.join(path, "COMPLETE")):
        return path
    building = path + ".building"
    shutil.rmtree(building, ignore_errors=True)
    os.makedirs(building)
    catalog = CatalogFactory.create({"warehouse": building})
    catalog.create_database("db", True)
    catalog.create_table("db.bench", Schema.from_pyarrow_schema(SCHEMA), True)
    table = catalog.get_table("db.bench")
    started = time.monotonic()
    for n in range(snapshots):
        ids = range(n * ROWS_PER_COMMIT, (n + 1) * ROWS_PER_COMMIT)
        commit_arrow(table, pa.table({"id": list(ids), "payload": [f"r{n}"] * ROWS_PER_COMMIT}, schema=SCHEMA))
        if n and n % 1000 == 0:
            print(f"  {n} commits written ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    open(os.path.join(building, "COMPLETE"), "w").close()
    shutil.rmtree(path, ignore_errors=True)
    os.rename(building, path)
    return path


def kept_warehouse(snapshots: int) -> str:
    """The kept warehouse of ``snapshots`` commits, written on first use."""
    return build_warehouse(os.path.join(data_dir(), f"append-{snapshots}"), snapshots)


def open_bench_table(options: dict):
    from pypaimon import CatalogFactory

    return CatalogFactory.create(options).get_table("db.bench")


# --- measurements ---------------------------------------------------------------------------------


def interleaved(runs: dict, repeats: int) -> dict:
    """Each run of ``runs`` (name -> callable returning ``(seconds, rows)``) ``repeats`` times,
    taking turns (the order flips every round, so neither always goes first): the median."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    rows: dict[str, int] = {}
    names = list(runs)
    for round_ in range(repeats):
        for name in names if round_ % 2 == 0 else names[::-1]:
            elapsed, rows[name] = runs[name]()
            times[name].append(elapsed)
    return {
        name: {"median_s": statistics.median(t), "runs_s": t, "rows": rows[name]}
        for name, t in times.items()
    }


def measure_catch_up(table, snapshots: int, repeats: int, counter=None) -> dict:
    """pypaimon's scan and a ChangeFeed (one catch-up batch) from snapshot 1 to ``snapshots``.
    With a ``counter`` (a callable giving the requests served so far), requests per run too."""
    expected = snapshots * ROWS_PER_COMMIT
    requests: dict[str, list[int]] = {"pypaimon": [], "paimon-feed": []}

    def counted(name, make):
        def run():
            before = counter() if counter else 0
            result = asyncio.run(make())
            if counter:
                requests[name].append(counter() - before)
            return result
        return run

    results = interleaved(
        {
            "pypaimon": counted("pypaimon", lambda: pypaimon_catch_up(table, snapshots, expected)),
            "paimon-feed": counted("paimon-feed", lambda: feed_catch_up(table, snapshots, 10)),
        },
        repeats,
    )
    for name, result in results.items():
        result["expected_rows"] = expected
        if counter:
            result["requests"] = statistics.median(requests[name])
    results["ratio"] = results["paimon-feed"]["median_s"] / results["pypaimon"]["median_s"]
    return results


def measure_planning(table, snapshots: int, repeats: int) -> dict:
    """Planning alone, no data read: pypaimon's catch-up plan (its ``_create_catch_up_plan``,
    what its scan does for a backlog) vs the feed's planner (snapshot files of the range
    read for the safety check, then the same scanners): where the catch-up ratio's floor is."""
    from paimon_feed import Planner

    def pypaimon_plan():
        started = time.perf_counter()
        scan = table.new_stream_read_builder().new_streaming_scan()
        latest = table.snapshot_manager().get_latest_snapshot()
        files = sum(len(split.files) for split in scan._create_catch_up_plan(1, latest).splits())
        return time.perf_counter() - started, files

    def feed_plan():
        started = time.perf_counter()
        batch = Planner(table).next_batches(1, limit=16).batches[0]
        return time.perf_counter() - started, sum(len(split.files) for split in batch.splits)

    results = interleaved({"pypaimon": pypaimon_plan, "paimon-feed": feed_plan}, repeats)
    results["ratio"] = results["paimon-feed"]["median_s"] / results["pypaimon"]["median_s"]
    return results


def catch_up_batch(table, snapshots: int):
    """The feed's catch-up batch from snapshot 1 to ``snapshots``."""
    caught = []
    asyncio.run(feed_catch_up(table, snapshots, 10, on_batch=lambda feed, batch: caught.append(batch)))
    return max(caught, key=lambda batch: batch.snapshot_id - batch.first_snapshot_id)


def measure_to_arrow(table, snapshots: int, repeats: int) -> dict:
    """``batch.to_arrow()`` vs pypaimon's ``TableRead.to_arrow`` on the same splits: rows/s."""
    batch = catch_up_batch(table, snapshots)
    splits = list(batch.splits)
    reader = table.new_stream_read_builder().new_read()

    def timed(read):
        def run():
            started = time.perf_counter()
            rows = read().num_rows
            return time.perf_counter() - started, rows
        return run

    results = interleaved(
        {"pypaimon": timed(lambda: reader.to_arrow(splits)), "paimon-feed": timed(batch.to_arrow)},
        repeats,
    )
    for result in results.values():
        result["rows_per_s"] = result["rows"] / result["median_s"]
    results["splits"] = len(splits)
    results["files"] = sum(len(split.files) for split in splits)
    results["ratio"] = results["paimon-feed"]["rows_per_s"] / results["pypaimon"]["rows_per_s"]
    return results


PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("commit", pa.int64()), ("payload", pa.string())])


def build_pk_table(path: str, snapshots: int, rows: int):
    """``db.pk``: ``snapshots`` commits of ``rows`` rows; the second half rewrites the first
    half's keys, so the changelog holds updates and the state ``snapshots / 2 * rows`` keys."""
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": path})
    catalog.create_database("db", True)
    options = {"bucket": "2", "changelog-producer": "input"}
    catalog.create_table("db.pk", Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=options), True)
    table = catalog.get_table("db.pk")
    half = max(1, snapshots // 2)
    for n in range(snapshots):
        ids = range((n % half) * rows, (n % half + 1) * rows)
        commit_arrow(table, pa.table({"id": list(ids), "commit": [n] * rows,
                                      "payload": [f"p{n}-{i}" for i in ids]}, schema=PK_SCHEMA))
    return table


def pypaimon_state(table) -> pa.Table:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def feed_state(table) -> pa.Table:
    from paimon_feed import Planner

    planner = Planner(table)
    return planner.full_batch(planner.latest_snapshot_id()).to_arrow()


def _sorted_rows(tables: list[pa.Table], keys: list[str]) -> pa.Table:
    data = pa.concat_tables(tables)
    return data.sort_by([(key, "ascending") for key in keys])


def measure_primary_key(snapshots: int, rows: int, repeats: int) -> dict:
    """Changes (with row kinds) and merged state of a primary-key table, pypaimon vs the feed,
    interleaved; the two sides' rows are checked equal first."""
    table = build_pk_table(scratch_dir("paimon-feed-catchup-pk-"), snapshots, rows)
    expected = snapshots * rows
    seen: dict[str, list[pa.Table]] = {"pypaimon": [], "paimon-feed": []}

    def collect_feed(feed, batch):
        seen["paimon-feed"].append(batch.to_arrow())

    def pypaimon_changes(**options):
        return pypaimon_catch_up(table, snapshots, expected, include_row_kind=True, **options)

    asyncio.run(pypaimon_changes(diff_catch_up=False, on_rows=seen["pypaimon"].append))
    default_scan: list[pa.Table] = []  # what pypaimon's scan delivers as it comes
    asyncio.run(pypaimon_changes(on_rows=default_scan.append))
    default_rows = pa.concat_tables(default_scan)
    default_kinds = {entry["values"]: entry["counts"]
                     for entry in default_rows.column("_row_kind").value_counts().to_pylist()}
    asyncio.run(feed_catch_up(table, snapshots, 10**9, on_batch=collect_feed, include_row_kind=True))
    order = ["commit", "id", "_row_kind"]
    changes_equal = _sorted_rows(seen["pypaimon"], order).equals(_sorted_rows(seen["paimon-feed"], order))
    state_equal = pypaimon_state(table).sort_by("id").equals(feed_state(table).sort_by("id"))
    if not (changes_equal and state_equal):
        raise RuntimeError(f"the feed's rows differ from pypaimon's (changes equal: {changes_equal}, "
                           f"state equal: {state_equal})")
    changes = interleaved({
        "pypaimon": lambda: asyncio.run(pypaimon_changes(diff_catch_up=False)),
        "paimon-feed": lambda: asyncio.run(feed_catch_up(table, snapshots, 10**9, include_row_kind=True)),
    }, repeats)

    def timed(read):
        def run():
            started = time.perf_counter()
            data = read(table)
            return time.perf_counter() - started, data.num_rows
        return run

    state = interleaved({"pypaimon": timed(pypaimon_state), "paimon-feed": timed(feed_state)}, repeats)
    for result in (*changes.values(), *state.values()):
        result["rows_per_s"] = result["rows"] / result["median_s"]
    return {
        "snapshots": snapshots, "rows_per_commit": rows, "table": "primary key, changelog-producer=input, 2 buckets",
        "changes": {**changes, "ratio": changes["paimon-feed"]["rows_per_s"] / changes["pypaimon"]["rows_per_s"]},
        "state": {**state, "ratio": state["paimon-feed"]["rows_per_s"] / state["pypaimon"]["rows_per_s"]},
        "rows_compared": {"changes": changes_equal, "state": state_equal},
        "pypaimon_default_scan": {"rows": default_rows.num_rows, "row_kinds": default_kinds,
                                  "plans": len(default_scan), "changes": expected},
    }


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


MEMORY_MODES = {
    "pypaimon": "pypaimon AsyncStreamingTableScan",
    "catch-up": "paimon-feed, catch-up batches",
    "per-snapshot": "paimon-feed, one batch per snapshot (max_pending=8)",
}


def _rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except FileNotFoundError:
        return None
    return None


def memory_child(argv: list[str]) -> None:
    """Runs in its own process: one catch-up of ``mode``, then its figures as JSON."""
    mode, warehouse, snapshots, ready, out = argv[0], argv[1], int(argv[2]), argv[3], argv[4]
    table = open_bench_table({"warehouse": warehouse})
    caches: dict = {}

    def on_batch(feed, batch):
        planner = feed._planner
        caches.update(
            snapshot_cache_entries=len(planner.timeline._cache),
            snapshot_cache_limit=planner.timeline._cache.maxsize,
            manifest_cache_entries=len(planner.manifests),
            manifest_cache_bytes=planner.manifests.bytes,
            manifest_cache_limits=[planner.manifests.max_entries, planner.manifests.max_bytes],
            batches=caches.get("batches", 0) + 1,
        )

    open(ready, "w").close()
    expected = snapshots * ROWS_PER_COMMIT
    if mode == "pypaimon":
        seconds, rows = asyncio.run(pypaimon_catch_up(table, snapshots, expected))
    else:
        threshold = 10 if mode == "catch-up" else 10**9
        seconds, rows = asyncio.run(
            feed_catch_up(table, snapshots, threshold, on_batch=on_batch, max_pending=8)
        )
    with open(out, "w") as handle:
        json.dump({"seconds": seconds, "rows": rows, "expected_rows": expected, **caches}, handle)


def measure_memory(warehouse: str, snapshots: int, interval_s: float = 0.05) -> dict:
    """RSS of a fresh process catching up ``snapshots`` snapshots, per mode: sampled every
    ``interval_s`` from the moment its imports are done."""
    results = {}
    workdir = scratch_dir("paimon-feed-memory-")
    for mode in MEMORY_MODES:
        ready, out = os.path.join(workdir, f"ready-{mode}"), os.path.join(workdir, f"{mode}.json")
        child = subprocess.Popen(
            [sys.executable, "-m", __spec__.name, "_memory", mode, warehouse, str(snapshots), ready, out]
        )
        samples: list[tuple[float, int]] = []
        while not os.path.exists(ready) and child.poll() is None:
            time.sleep(0.01)
        started = time.monotonic()
        while child.poll() is None:
            rss = _rss_bytes(child.pid)
            if rss is not None:
                samples.append((time.monotonic() - started, rss))
            time.sleep(interval_s)
        if child.returncode != 0:
            raise RuntimeError(f"memory run {mode} exited with {child.returncode}")
        with open(out) as handle:
            result = json.load(handle)
        values = [rss for _, rss in samples]
        quarters = [values[min(len(values) - 1, int(q * (len(values) - 1)))] for q in (0, 0.25, 0.5, 0.75, 1)]
        result.update(
            label=MEMORY_MODES[mode],
            start_mib=values[0] / 2**20,
            peak_mib=max(values) / 2**20,
            quarters_mib=[v / 2**20 for v in quarters],
            samples=len(samples),
            # growth over the second half of the run: flat if memory is bounded
            second_half_growth_mib=(values[-1] - values[len(values) // 2]) / 2**20,
        )
        results[mode] = result
    return results


def measure_phases(table, snapshots: int, repeats: int) -> dict:
    """Where one local catch-up's time goes, phase by phase (medians of ``repeats``): resolving
    ``earliest``, reading the range's snapshot files for the safety check, the set-diff plan
    (snapshots already read), and reading the batch's rows."""
    from paimon_feed import Planner

    phases: dict[str, list[float]] = {"resolve_start": [], "snapshot_reads": [], "plan": [], "read": []}

    def timed(name, call):
        started = time.perf_counter()
        result = call()
        phases[name].append(time.perf_counter() - started)
        return result

    for _ in range(repeats):
        planner = Planner(table)
        timed("resolve_start", lambda: planner.resolve_start("earliest"))
        timed("snapshot_reads", lambda: planner.timeline.get_many(range(1, snapshots + 1)))
        batch = timed("plan", lambda: planner.next_batches(1, limit=16).batches[0])
        rows = timed("read", lambda: batch.to_arrow().num_rows)
        assert rows == snapshots * ROWS_PER_COMMIT, rows
    return {name: statistics.median(values) for name, values in phases.items()}


# --- report ---------------------------------------------------------------------------------------


def report(r: dict) -> str:
    local, s3, arrow, sqs, memory = r["local"], r["s3"], r["to_arrow"], r["sqs"], r["memory"]
    lines = [
        "| figure | pypaimon | paimon-feed | ratio | target |",
        "|---|---:|---:|---:|---|",
        f"| catch-up of {r['args']['snapshots']:,} snapshots, local (median s) | "
        f"{local['pypaimon']['median_s']:.2f} | {local['paimon-feed']['median_s']:.2f} | "
        f"{local['ratio']:.2f}× | ≤ 0.5× |",
        f"| the same on S3 (moto), {s3['delay_ms']:.0f} ms per request (median s) | "
        f"{s3['pypaimon']['median_s']:.1f} | {s3['paimon-feed']['median_s']:.1f} | "
        f"{s3['ratio']:.2f}× | ≤ 0.5× |",
        f"| S3 requests per catch-up | {s3['pypaimon']['requests']:,.0f} | "
        f"{s3['paimon-feed']['requests']:,.0f} | | |",
        f"| `to_arrow` on the catch-up batch ({arrow['files']:,} files, rows/s) | "
        f"{arrow['pypaimon']['rows_per_s']:,.0f} | {arrow['paimon-feed']['rows_per_s']:,.0f} | "
        f"{arrow['ratio']:.2f}× | ≥ 1.0× |",
        f"| planning the catch-up alone (median s) | {r['planning']['pypaimon']['median_s']:.2f} | "
        f"{r['planning']['paimon-feed']['median_s']:.2f} | {r['planning']['ratio']:.2f}× | |",
        f"| commit → batch via SQS, {sqs['tables']} tables on one queue, p50 / p99 ms | | "
        f"{sqs['p50_ms']:.1f} / {sqs['p99_ms']:.1f} | | ≤ 50 / ≤ 150 |",
    ]
    pk = r["primary_key"]
    for part, label in (("changes", "changes with row kinds"), ("state", "merged state")):
        lines.append(
            f"| primary key, {pk['snapshots']:,} commits of {pk['rows_per_commit']:,} rows: {label} (rows/s) | "
            f"{pk[part]['pypaimon']['rows_per_s']:,.0f} | {pk[part]['paimon-feed']['rows_per_s']:,.0f} | "
            f"{pk[part]['ratio']:.1f}× | |"
        )
    lines += [
        "",
        f"Memory catching up {r['args']['memory_snapshots']:,} snapshots (RSS of a fresh process, MiB):",
        "",
        "| consumer | s | start | peak | at 25 / 50 / 75 / 100 % of the run | growth over the 2nd half |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for result in memory.values():
        q = result["quarters_mib"]
        lines.append(
            f"| {result['label']} | {result['seconds']:.1f} | {result['start_mib']:.0f} | "
            f"{result['peak_mib']:.0f} | {q[1]:.0f} / {q[2]:.0f} / {q[3]:.0f} / {q[4]:.0f} | "
            f"{result['second_half_growth_mib']:+.0f} |"
        )
    feed = memory.get("per-snapshot", {})
    if "manifest_cache_entries" in feed:
        lines += [
            "",
            f"Caches at the end (one batch per snapshot): snapshots {feed['snapshot_cache_entries']:,} "
            f"of {feed['snapshot_cache_limit']:,}; manifests {feed['manifest_cache_entries']:,} of "
            f"{feed['manifest_cache_limits'][0]:,} entries, {feed['manifest_cache_bytes'] / 2**20:.1f} "
            f"of {feed['manifest_cache_limits'][1] / 2**20:.0f} MiB.",
        ]
    return "\n".join(lines)


def run(args) -> dict:
    """Every case at the sizes of ``args``; the results as the JSON holds them."""
    results: dict = {"args": vars(args)}
    local = kept_warehouse(args.snapshots)
    table = open_bench_table({"warehouse": local})
    print("local catch-up ...", file=sys.stderr, flush=True)
    results["local"] = measure_catch_up(table, args.snapshots, args.local_repeats)
    print("to_arrow ...", file=sys.stderr, flush=True)
    results["to_arrow"] = measure_to_arrow(table, args.snapshots, args.local_repeats)
    results["planning"] = measure_planning(table, args.snapshots, args.local_repeats)
    results["phases_s"] = measure_phases(table, args.snapshots, args.local_repeats)
    print("S3 catch-up ...", file=sys.stderr, flush=True)
    results["s3"] = measure_s3(kept_warehouse(args.s3_snapshots), args.s3_snapshots, args.repeats, args.delay_ms)
    print("SQS ...", file=sys.stderr, flush=True)
    results["sqs"] = measure_sqs(args.sqs_tables, args.sqs_commits)
    print("primary key ...", file=sys.stderr, flush=True)
    results["primary_key"] = measure_primary_key(args.pk_snapshots, args.pk_rows, args.repeats)
    print("memory ...", file=sys.stderr, flush=True)
    results["memory"] = measure_memory(kept_warehouse(args.memory_snapshots), args.memory_snapshots)
    results["table"] = report(results)
    return results


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=1000)
    # pypaimon takes ~40 s per run for 1,000 snapshots at 20 ms per request on moto here
    parser.add_argument("--s3-snapshots", type=int, default=1000)
    # The kept table is written once, by pypaimon's commits one after another, each slower than
    # the one before: here the first 1,000 took 25 s, the third 145 s (3,000 in about 4 minutes).
    parser.add_argument("--memory-snapshots", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    # local runs take about a second each and move by +-20% on a shared machine: more of them
    parser.add_argument("--local-repeats", type=int, default=11)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--sqs-tables", type=int, default=10)
    parser.add_argument("--sqs-commits", type=int, default=100)
    parser.add_argument("--pk-snapshots", type=int, default=40)
    parser.add_argument("--pk-rows", type=int, default=10_000)
    parser.add_argument("--out", default=os.path.join(RESULTS, "catchup.json"))
    return parser.parse_args(argv)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_build":
        print(kept_warehouse(int(sys.argv[2])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "_memory":
        return memory_child(sys.argv[2:])
    args = parse_args()
    results = run(args)
    print(results["table"])
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
