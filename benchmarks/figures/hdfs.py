"""Figure block of the HDFS benchmark (hdfs_bench.py): NameNode calls and push latency."""

from __future__ import annotations

from benchmarks._common.figures import count, table


def hdfs_table(r: dict) -> str:
    """What one idle table costs the NameNode per hour, by notifier, and push latency."""
    n = r["hdfs"]
    labels = {
        "push": "`auto` with superuser rights: push (inotify stream)",
        "hdfs-poll": "`auto` without: a look at `snapshot/` every 10 s",
        "poll": "`poll`: the generic prober (1 s, backing off to 5 s)",
    }
    rows = [[labels[mode], count(row["table_calls_per_hour"]),
             count(row["stream_calls_per_hour"]) if mode == "push" else "-"]
            for mode, row in n["idle"].items()]
    latency = n["latency_ms"]
    return (
        table(["how", "NameNode calls / idle table-hour", "the stream's calls / hour (one per process)"],
              ["---", "---:", "---:"], rows)
        + f"\n\nPush: a commit reaches the consumer {latency['p50']:.0f} ms after the NameNode stamped "
        f"`snapshot-N` at the median, {latency['p99']:.0f} ms at p99 ({latency['n']} commits). "
        f"Hadoop {n['hadoop']}, {n['idle_seconds']:.0f} s idle per row, `reconcile_interval` 60 s, "
        f"{n['machine']['cpus']} cores; counted from the NameNode's per-method RPC metrics."
    )
