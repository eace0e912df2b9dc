"""Figure blocks of the core benchmarks: latency and idle cost (core_bench.py), catch-up,
reliability, native reads, the integrity checks' cost."""

from __future__ import annotations

from benchmarks._common.figures import count, ms, table, wrap
from benchmarks.figures.s3 import s3_modes


def core_table(r: dict) -> str:
    """The benchmark's own latency table (core_bench.py renders it into its JSON); catch-up
    figures come from catchup.json, measured against pypaimon in one run (see ``catchup``)."""
    table = r["core"]["table"].strip()
    return table.split("\n\n| catch-up", 1)[0].strip()


def core_summary(r: dict) -> str:
    lat = r["core"]["latency"]
    pypaimon, local, poll, coarse = lat["pypaimon"], lat["local"], lat["poll"], lat["local-20ms"]
    return wrap(
        f"Local push delivers a commit in {local['p50_ms']:.0f} ms at the median and "
        f"{local['p99_ms']:.0f} ms at p99, {pypaimon['p50_ms'] / local['p50_ms']:.0f}× faster than "
        f"pypaimon's poll, and an idle table costs two storage calls per 60 s safety check, the "
        f"next snapshot and the history check ({local['idle_calls_per_hour']:.0f} an hour as "
        f"measured over the {local['idle_seconds']:.0f} s window, 120 in steady state) instead of "
        f"{count(pypaimon['idle_calls_per_hour'])} local storage calls (on S3 a check of a missing "
        f"file is two requests: see below).\n"
        f"`PollingNotifier` matches pypaimon's median latency at "
        f"1/{pypaimon['idle_calls_per_hour'] / poll['idle_calls_per_hour']:.0f} of its idle cost "
        f"(it checks only the next snapshot and backs off to 5 s). Catch-up is measured below.\n"
        f"Push is not free while idle, though: the inotify watcher (watchfiles) looks for events every "
        f"2 ms, and its process spent {local['idle_cpu_percent']:.1f}% of a core on an idle table, "
        f"against {pypaimon['idle_cpu_percent']:.2f}% for pypaimon's poll. A process that follows many "
        f"tables, or a laptop, can trade latency for it: `ChangeFeed(table, "
        f"notifier=LocalNotifier(step_ms=20))` spent {coarse['idle_cpu_percent']:.1f}% and delivered in "
        f"{coarse['p50_ms']:.0f} ms at the median, still {pypaimon['p50_ms'] / coarse['p50_ms']:.0f}× "
        f"faster than the poll."
    )


def headline(r: dict) -> str:
    """The README's one figure: commit-to-delivery latency and idle cost, against pypaimon's poll."""
    lat = r["core"]["latency"]
    pypaimon, local = lat["pypaimon"], lat["local"]
    _p, sqs, idle = s3_modes(r)
    return wrap(
        f"A local commit reaches the consumer in {local['p50_ms']:.0f} ms at the median "
        f"(pypaimon's poll: {pypaimon['p50_ms']:.0f} ms), a commit on S3 in {sqs['p50_ms']:.0f} ms "
        f"through SQS, and an idle table on S3 costs "
        f"{count(idle['idle_push60']['s3_requests_per_hour'])} requests an hour instead of "
        f"{count(idle['idle_pypaimon']['s3_requests_per_hour'])}."
    )


def catchup(r: dict) -> str:
    """catchup_bench.py: each figure against the issue's target, then memory."""
    c = r["catchup"]
    local, s3, arrow, plan, sqs = c["local"], c["s3"], c["to_arrow"], c["planning"], c["sqs"]
    n, s3_n = c["args"]["snapshots"], c["args"]["s3_snapshots"]
    rows = [
        [f"catch-up of {n:,} snapshots, local (s)", f"{local['pypaimon']['median_s']:.2f}",
         f"{local['paimon-feed']['median_s']:.2f}", f"{local['ratio']:.2f}×", "≤ 0.5×"],
        [f"catch-up of {s3_n:,} snapshots, S3 on moto, {s3['delay_ms']:.0f} ms per request (s)",
         f"{s3['pypaimon']['median_s']:.1f}", f"{s3['paimon-feed']['median_s']:.1f}",
         f"{s3['ratio']:.2f}×", "≤ 0.5×"],
        ["S3 requests in that catch-up", count(s3["pypaimon"]["requests"]),
         count(s3["paimon-feed"]["requests"]), "", ""],
        [f"`to_arrow` of the catch-up batch ({count(arrow['files'])} files, rows/s)",
         count(arrow["pypaimon"]["rows_per_s"]), count(arrow["paimon-feed"]["rows_per_s"]),
         f"{arrow['ratio']:.2f}×", "≥ 1.0×"],
        ["planning the local catch-up alone (s)", f"{plan['pypaimon']['median_s']:.2f}",
         f"{plan['paimon-feed']['median_s']:.2f}", f"{plan['ratio']:.2f}×", ""],
        [f"commit → batch via SQS, {sqs['tables']} tables on one queue, p50 / p99 ms", "",
         f"{ms(sqs['p50_ms'])} / {ms(sqs['p99_ms'])}", "", "≤ 50 / ≤ 150"],
    ]
    pk = c["primary_key"]
    size = f"{count(pk['snapshots'])} commits of {count(pk['rows_per_commit'])} rows"
    for part, label in (("changes", "changes with row kinds"), ("state", "merged state")):
        rows.append([f"primary key, {size}: {label} (rows/s)", count(pk[part]["pypaimon"]["rows_per_s"]),
                     count(pk[part]["paimon-feed"]["rows_per_s"]), f"{pk[part]['ratio']:.1f}×", ""])
    scan = pk["pypaimon_default_scan"]
    kinds = ", ".join(f"{count(n)} `{kind}`" for kind, n in sorted(scan["row_kinds"].items()))
    memory_rows = []
    for result in c["memory"].values():
        q = result["quarters_mib"]
        memory_rows.append([
            result["label"], f"{result['seconds']:.1f}", f"{result['start_mib']:.0f}",
            f"{result['peak_mib']:.0f}", " / ".join(f"{v:.0f}" for v in q[1:]),
            f"{result['second_half_growth_mib']:+.0f}",
        ])
    feed = c["memory"]["per-snapshot"]
    return (
        table(["figure", "pypaimon", "paimon-feed", "ratio", "target"],
              ["---", "---:", "---:", "---:", "---"], rows)
        + f"\n\nThe primary-key rows: both sides delivered the same rows, checked before timing; "
        f"pypaimon's scan with its diff catch-up switched off (as it comes, {count(pk['snapshots'])} "
        f"snapshots behind, it planned {scan['plans']} batch of the merged state, {kinds} rows, "
        f"instead of the {count(scan['changes'])} changes).\n\nMemory catching up {count(c['args']['memory_snapshots'])} snapshots (RSS of a "
        f"fresh process, MiB; the feed with `max_pending=8`):\n\n"
        + table(["consumer", "s", "start", "peak", "at 25 / 50 / 75 / 100 % of the run",
                 "growth over the 2nd half"], ["---", "---:", "---:", "---:", "---", "---:"],
                memory_rows)
        + f"\n\nCaches at the end of the batch-per-snapshot run: "
        f"{count(feed['snapshot_cache_entries'])} of {count(feed['snapshot_cache_limit'])} "
        f"snapshots; {count(feed['manifest_cache_entries'])} of "
        f"{count(feed['manifest_cache_limits'][0])} manifest entries, "
        f"{feed['manifest_cache_bytes'] / 2**20:.1f} of "
        f"{feed['manifest_cache_limits'][1] / 2**20:.0f} MiB."
    )


def catchup_phases(r: dict) -> str:
    """Where one local catch-up's time goes (catchup_bench.py's phase timings)."""
    c = r["catchup"]
    phases, arrow = c["phases_s"], c["to_arrow"]
    n = c["args"]["snapshots"]
    return wrap(
        f"Where the time goes (one local catch-up of {n:,} snapshots, phase by phase, medians): "
        f"resolving `earliest` {phases['resolve_start']:.3f} s (it looks for `snapshot-1` before "
        f"listing the snapshot directory, whose listing stats every file); reading the range's "
        f"{n:,} snapshot files for the safety check (is every one an append of one schema?) "
        f"{phases['snapshot_reads']:.3f} s; the set-diff plan {phases['plan']:.3f} s, pypaimon's "
        f"own scanners reading the last snapshot's manifests (one per commit here) through the "
        f"manifest cache, each decoded on the planning thread where pypaimon hands every manifest "
        f"to a pool of one thread per core; reading the rows with pyarrow directly "
        f"{phases['read']:.3f} s, against {arrow['pypaimon']['median_s']:.3f} s for pypaimon's "
        f"reader on the same splits."
    )


def _scenario(outcome: dict) -> str:
    notes = outcome["notes"]
    name = outcome["scenario"]
    if name == "crash":
        return f"crash: consumer SIGKILLed {notes['kills']} times at random while a writer commits"
    if name == "chaos":
        c = notes["chaos"]
        # The 200 ms bound is the ChaosNotifier's max_delay setting in reliability_chaos.py.
        return (f"chaos: of {c['received']} hints {c['dropped']} dropped, {c['duplicated']} duplicated, "
                f"{c['held_back']} reordered, all delayed ≤ 200 ms")
    if name == "faults":
        return f"faults: {notes['rate']:.0%} of storage calls fail ({notes['injected_faults']} injected)"
    if name == "soak":
        return f"soak: {count(notes['snapshots'])} snapshots through one feed"
    return {
        "fault-permanent": "fault-permanent: storage breaks for good",
        "expiry": "expiry: snapshots expired under a lagging consumer",
    }.get(name, name)


def reliability(r: dict) -> str:
    rows = []
    for o in r["reliability"]["outcomes"]:
        duplicated = f"{o['duplicated']} ({'yes' if o['duplicates_allowed'] else 'no'})" if o["duplicated"] else "0"
        delay = f"{o['max_delay_ms']:.0f}" if o["max_delay_ms"] is not None else "–"
        rows.append([_scenario(o), o["runs"], o["committed_batches"], o["expected_rows"], o["lost"],
                     duplicated, o["out_of_order"], delay])
    return table(
        ["scenario", "runs", "committed batches", "expected rows", "lost", "duplicated (allowed?)", "out-of-order", "max delay ms"],
        ["---", "---:", "---:", "---:", "---:", "---", "---:", "---:"], rows,
    )


def native_table(r: dict) -> str:
    """Merged full-state reads with and without ``[native]`` (``benchmarks/native_bench.py``)."""
    n = r["native"]
    rows = []
    for engine, t in n["tables"].items():
        m = t["median_s"]
        rows.append([
            f"{engine} ({t['rows']:,} keys, {n['commits']} commits, {t['splits']} splits)",
            f"{m['feed [native]']:.2f}", f"{m['feed without [native]']:.2f}",
            f"{m['pypaimon batch read']:.2f}", f"{t['speedup_vs_pypaimon']}x",
        ])
    return (
        table(["table", "feed [native] s", "feed without [native] s", "pypaimon batch read s",
               "[native] vs pypaimon"], ["---", "---:", "---:", "---:", "---:"], rows)
        + f"\n\nMedians of {n['repeats']} runs each, interleaved ({n['machine']}); the three reads' "
        f"rows were compared (equal) before timing."
    )


def integrity_table(r: dict) -> str:
    """S3 requests of the history checks, before and after (``benchmarks/integrity_cost.py``)."""
    n = r["integrity"]
    rows = [
        [label, f"{v['requests_per_snapshot']:.1f}", f"{v['idle_requests_per_check']:.2f}",
         f"{v['idle_requests_per_hour_default']:.0f}"]
        for label, v in (
            (f"before the checks ({n['before_ref']})", n["variants"]["before"]),
            ("with the checks", n["variants"]["after"]),
        )
    ]
    return (
        table(["consumer", "S3 requests / committed snapshot", "idle requests / safety check",
               "idle requests / hour (60 s checks)"], ["---", "---:", "---:", "---:"], rows)
        + f"\n\n{n['commits']} commits and {n['idle_seconds']:.0f} s idle on moto, both consumers in "
        f"the same run, counted at the server; the writer's own requests are subtracted."
    )
