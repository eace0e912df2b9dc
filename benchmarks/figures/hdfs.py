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


def hdfs_warehouse_table(r: dict) -> str:
    """A hundred tables: one WarehouseFeed against pypaimon readers and Paimon Java's discovery."""
    w = r["hdfs"]["warehouse"]
    feed, readers = w["warehouse_feed"], w["pypaimon"]
    scaled = "" if readers["readers"] == w["tables"] else f", scaled from {readers['readers']} readers"
    rows = [
        [f"one `WarehouseFeed`, push (stream {count(feed['stream_calls_per_hour'])}, "
         f"tables {count(feed['tables_calls_per_hour'])})", count(feed["calls_per_hour"]),
         f"{feed['latency_ms']['p50']:.0f} ms"],
        [f"{w['tables']} pypaimon streaming reads (1 s poll{scaled})",
         count(readers["calls_per_hour"] * w["tables"] / readers["readers"]), "within 1 s"],
        ["Paimon Java's discovery, every 10 s (computed: 360 per table-hour)",
         count(w["java_computed_calls_per_hour"]), "within 10 s"],
    ]
    load = w["load_average"]
    return (
        table([f"{w['tables']} idle tables", "NameNode calls / idle hour, in all", "commit → batch, p50"],
              ["---", "---:", "---:"], rows)
        + f"\n\nThe `WarehouseFeed` row: {feed['seconds']:.0f} s idle, `reconcile_interval` and "
        f"`discovery_interval` at their defaults (60 s), p50 over {feed['latency_ms']['n']} commits "
        f"to tables in turn (p99 {feed['latency_ms']['p99']:.0f} ms); pypaimon: {readers['seconds']:.0f} s "
        f"idle. A shared, loaded machine ({r['hdfs']['machine']['cpus']} cores, load average "
        f"{load['before'][0]:.1f} before, {load['after'][0]:.1f} after): pypaimon's readers share one "
        f"event loop and fall behind their 1 s poll on it, so their row is a floor."
    )


def hdfs_python_rpc(r: dict) -> str:
    """The time-boxed experiment: ``getEditsFromTxid`` from Python beside the JVM helper."""
    x = r["hdfs"]["python_rpc"]
    helper, python = x["helper"], x["python"]
    rows = [
        ["the JVM helper (`HdfsInotify.java`, Hadoop's client)", f"{helper['ready_s']:.2f} s",
         f"{helper['rss_mb']:.0f} MB", f"{helper['rename_ms']:.0f} ms"],
        ["Hadoop IPC from Python (the experiment)", f"{python['ready_s'] * 1000:.1f} ms",
         "a socket", f"{python['rename_ms']:.0f} ms"],
    ]
    load = x["load_average"]
    return (
        table(["inotify stream read by", "start → first answer", "memory added", "rename → seen (median)"],
              ["---", "---:", "---:", "---:"], rows)
        + f"\n\nMedians of {x['repeats']} starts on one MiniDFSCluster, a call every "
        f"{x['poll_interval_s']} s while idle as the helper does; one idle call from Python takes "
        f"{python['call_ms']:.1f} ms. {x['cpus']} cores, load average {load['before'][0]} before, "
        f"{load['after'][0]} after (`python -m benchmarks.hdfs_python_rpc`)."
    )
