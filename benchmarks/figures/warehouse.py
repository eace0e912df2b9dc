"""Figure block of the warehouse benchmark (warehouse_bench.py): many tables in one process."""

from __future__ import annotations

from benchmarks._common.figures import count, ms, table


def warehouse_table(r: dict) -> str:
    """Many tables in one process (``benchmarks/warehouse_bench.py``): local, then on S3 (moto)."""
    n = r["warehouse"]
    rows = [
        [f"{row['tables']:,}", row["mode"], f"{row['p50_ms']:.1f}", f"{row['p99_ms']:.1f}",
         f"{row['max_ms']:.1f}", f"{row['idle_cpu_pct']:.1f}", str(row["threads"]), str(row["fds"]),
         str(row["inotify_instances"]), f"{row['peak_rss_mb']:.0f}",
         "-" if row["new_table_first_batch_ms"] is None else f"{row['new_table_first_batch_ms']:.1f}",
         f"{row['startup_s']:.2f}"]
        for row in n["rows"]
    ]
    text = (
        table(["tables", "mode", "p50 ms", "p99 ms", "max ms", "idle CPU %", "threads", "fds",
               "inotify", "peak RSS MB", "new table ms", "start-up s"],
              ["---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"],
              rows)
        + f"\n\n{n['commits']} commits to random tables, {n['idle_seconds']:.0f} s idle, "
        f"{n['machine']['cpus']} cores."
    )
    s3 = n.get("s3", {}).get("rows", [])
    if not s3:
        return text
    rows = [
        [f"{row['tables']:,}", row["mode"], row["wiring"], ms(row["p50_ms"]), ms(row["p99_ms"]),
         ms(row["p50_from_commit_ms"]), f"{row['idle_cpu_pct']:.1f}", str(row["threads"]),
         str(row["fds"]), f"{row['peak_rss_mb']:.0f}", count(row["s3_requests_per_table_hour"]),
         count(row["s3_warehouse_level_per_hour"]), count(row["sqs_requests_per_table_hour"]),
         "-" if row["new_table_first_batch_ms"] is None else ms(row["new_table_first_batch_ms"]),
         f"{row['startup_s']:.2f}", _optional(row, "idle_requests_per_table_hour_at_default", "{:.1f}"),
         _optional(row, "check_s", "{:.2f}")]
        for row in s3
    ]
    first = s3[0]
    by_wiring = {row["wiring"]: row["discovery_interval_s"] for row in s3 if row["discovery_interval_s"]}
    discovery = ", ".join(f"{seconds:.0f} s with {wiring} wiring" for wiring, seconds in by_wiring.items())
    text += "\n\nOn S3 (`--s3`, moto_server, one bucket, one SQS queue, one `SqsNotifier`):\n\n" + table(
        ["tables", "mode", "wiring", "p50 ms", "p99 ms", "p50 ms from commit", "idle CPU %",
         "threads", "fds", "peak RSS MB", "S3 req / idle table-hour", "listing req / hour",
         "SQS req / idle table-hour", "new table ms", "start-up s",
         "idle req / table-hour, pipe proven", "check s"],
        ["---:", "---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:",
         "---:", "---:", "---:", "---:", "---:", "---:"],
        rows,
    )
    text += (
        f"\n\n{first['commits']} commits to random tables, {first['idle_seconds']:.0f} s idle, "
        f"`reconcile_interval` 60 s (the default)"
        + (f", `discovery_interval` {discovery} (the default is 60)" if discovery else "")
        + "; S3 requests per table-hour include the listing's."
        + (" With EventBridge wiring a new table is found by its first commit's event, not by "
           "the listing." if "eventbridge" in by_wiring else "")
    )
    proven = [row for row in s3 if row.get("proven_interval_s")]
    if proven:
        row = proven[-1]
        text += (
            f" The {row['tables']:,}-table row ran with the pipe check on (a probe every 60 s) and "
            f"`proven_interval` {row['proven_interval_s']:.0f} s, so each table's safety checks fall "
            f"in its {row['idle_seconds']:.0f} s idle window ({row['idle_safety_checks_per_table_hour']:g} "
            f"per table-hour); \"pipe proven\" scales the tables' own requests "
            f"({row['s3_table_requests_per_table_hour']:g} per table-hour there) to the default "
            f"`proven_interval` of 1,800 s and adds the warehouse's shared ones (probes, listing, "
            f"SQS) as measured. `check s` is `paimon-feed check` on the wired warehouse, start to "
            f"answer (the probe's event after {ms(row['check_event_delay_ms'])} ms)."
        )
    return text


def _optional(row: dict, key: str, spec: str) -> str:
    return "-" if row.get(key) is None else spec.format(row[key])


def warehouse_memory(r: dict) -> str:
    """What a followed table costs in memory (``benchmarks/warehouse_memory.py``)."""
    memory = r["warehouse"].get("memory")
    if memory is None:
        return "Not measured yet: run `python -m benchmarks.warehouse_memory`."
    packages = sorted({name for row in memory["rows"] for name in row["traced_mb"]})
    rows = [
        [f"{row['tables']:,}", f"{row['rss_before_mb']:.0f}", f"{row['rss_after_mb']:.0f}",
         f"{row['rss_after_mb'] - row['rss_before_mb']:.0f}",
         *(f"{row['traced_mb'].get(name, 0.0):.1f}" for name in packages)]
        for row in memory["rows"]
    ]
    return (
        table(["tables", "RSS after imports MB", "RSS started MB", "RSS for the tables MB",
               *(f"traced {name} MB" for name in packages)],
              ["---:"] * (4 + len(packages)), rows)
        + f"\n\nAbout {memory['rss_kb_per_table']:.0f} KB of RSS per followed table (the slope "
        f"between the smallest and the largest size)."
    )
