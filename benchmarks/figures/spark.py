"""Figure blocks of the Spark benchmarks (spark_bench.py and its parts, spark_long_running.py,
spark_merged_bench.py, consumer_commit_bench.py)."""

from __future__ import annotations

from benchmarks._common.figures import met, table, wrap

READERS = (
    ("source", "this source (`paimon_feed`)"),
    ("java_connector", "Paimon's Java connector"),
    ("python_ceiling", "do-nothing Python source"),
    ("spark_parquet", "Spark's Parquet reader"),
)


def _java_ran(r: dict) -> bool:
    return bool(r["spark"]["java_connector"].get("jars"))


def _java_versions(r: dict) -> str:
    """``0.9.0 on Spark 3.5.9``: the connector's version and the Spark its process ran."""
    java = r["spark"]["java_connector"]
    return f"{java['artifact'].rsplit(':', 1)[1]} on Spark {java['process']['spark']}"


def _reader_label(r: dict, key: str, label: str) -> str:
    if key == "source":
        return f"{label}, PySpark {r['spark']['environment']['pyspark']}"
    if key == "java_connector":
        return f"{label} {_java_versions(r)}, own process"
    return label


def _mrows(cases: dict, case: str) -> str:
    return f"{cases[case]['rows_per_s'] / 1e6:.1f}" if case in cases else "–"


def _millions(rows: int) -> str:
    return f"{rows / 1e6:g}M"


def spark_vs_java(r: dict) -> str:
    """The side-by-side table: one column per reader, one row per figure the source is measured by."""
    s = r["spark"]
    readers = [(key, label) for key, label in READERS if key != "java_connector" or _java_ran(r)]
    rows = []
    for size, t in sorted(s["throughput"].items(), key=lambda item: int(item[0])):
        for mode, mode_label in (("available_now", "`AvailableNow`"), ("batch", "batch read")):
            for sink in ("noop", "parquet"):
                rows.append([f"M rows/s, append {_millions(int(size))}, {mode_label} → `{sink}`"]
                            + [_mrows(t["cases"], f"{key}/{mode}/{sink}") for key, _ in readers])
    pk = s["throughput_pk"]
    for mode, mode_label, rows_read in (("available_now", "`AvailableNow` (changelog)", pk["stream_rows"]),
                                        ("batch", "batch read (merged state)", pk["batch_rows"])):
        for sink in ("noop", "parquet"):
            rows.append([f"M rows/s, primary key {_millions(rows_read)} rows, {mode_label} → `{sink}`"]
                        + [_mrows(pk["cases"], f"{key}/{mode}/{sink}") for key, _ in readers])
    long = r["spark_long_running"]["long_running"]
    for sink in ("noop", "parquet"):
        rows.append([f"M rows/s, append {_millions(long['rows'])}, long-running, one commit per micro-batch → `{sink}`"]
                    + [_mrows(long["cases"], f"{key}/{sink}") for key, _ in readers])
    rows.append(["… its micro-batch p50, ms (→ `noop`)"]
                + [f"{long['cases'][f'{key}/noop']['batch_ms_p50']:,.0f}" if f"{key}/noop" in long["cases"] else "–"
                   for key, _ in readers])
    startup = s["startup"]["cases"]
    rows.append(["`AvailableNow` on a 10-row table, start to termination, s"]
                + [f"{startup[key]['median_s']:.2f}" if key in startup else "–" for key, _ in readers])
    # Commit -> end on a local table: this source as it comes (a storage check on every trigger
    # there), the connector (a storage check on every trigger), the do-nothing Python source (a
    # listing of the snapshot directory on every trigger, nothing read) and Spark's file source
    # (a listing of the bucket directories on every trigger). Idle requests on S3: this source
    # with push through SQS.
    followers = {"java_connector": "java_connector", "python_ceiling": "python_ceiling",
                 "spark_parquet": "spark_parquet"}
    for trigger in ("0 seconds", "1 second"):
        latency = s["latency"][trigger]
        rows.append([f"commit → end of micro-batch on a local table, p50 / p95 ms, `processingTime=\"{trigger}\"`"]
                    + [f"{latency[mode]['p50_ms']:.0f} / {latency[mode]['p95_ms']:.0f}" if mode in latency else "–"
                       for mode in (followers.get(key, "auto") for key, _ in readers)])
    idle = s["idle_s3"]["modes"]
    rows.append(["S3 requests per idle minute (moto, counted at the server; this source: push through SQS)"]
                + [f"{idle[mode]['s3_requests_per_minute']:,.1f}" if mode in idle else "–"
                   for mode in (followers.get(key, "push") for key, _ in readers)])
    return table(["figure"] + [_reader_label(r, key, label) for key, label in readers],
                 ["---"] + ["---:"] * len(readers), rows)


def spark_java_status(r: dict) -> str:
    java = r["spark"]["java_connector"]
    if not java.get("jars"):
        return wrap(
            f"Paimon's Java connector is not in this table: Maven could not supply `{java['artifact']}` "
            f"on this machine (its answer, recorded in `benchmarks/results/spark.json`: \"{java['error']}\"). "
            f"The benchmark fetches it with `benchmarks/java/pom.xml` and runs it in the same run once "
            f"Maven can."
        )
    s = r["spark"]
    process = java["process"]
    tables = [(f"append {_millions(int(size))}", t["reads_compared"]) for size, t in sorted(
        s["throughput"].items(), key=lambda item: int(item[0]))] + [("primary key", s["throughput_pk"]["reads_compared"])]
    differ = [f"{name} ({kind})" for name, compared in tables for kind in ("batch", "stream")
              if not compared[f"{kind}_equal"]]
    reads = ("Both read the same rows from every table, batch and stream (row count, sum of keys and of "
             "a hash of every row, compared in the same run)." if not differ else
             f"Their reads differ on: {', '.join(differ)} (fingerprints in `benchmarks/results/spark.json`).")
    return wrap(
        f"The Java connector is `{java['artifact']}`, the newest Paimon Spark connector Maven serves "
        f"here: no 1.x release of any `paimon-spark-*` artifact and none for Spark 4, so none runs on "
        f"this project's PySpark {s['environment']['pyspark']}. So it runs on "
        f"the newest Spark it supports, PySpark {process['spark']}, in a process of its own on the same "
        f"machine (`benchmarks/java_connector_worker.py`: one long-lived `local[2]` session taking "
        f"JSON-line commands), its cases interleaved round by round with the others'; its times are "
        f"taken in the benchmark's process around each request (a round trip costs "
        f"{process['ipc_round_trip_ms']:.2f} ms). {reads} {_spark_load(s)}"
    )


def _spark_load(s: dict) -> str:
    """The range of 1-minute load averages spark_bench.py recorded, and the run's length."""
    parts = [s["throughput_pk"], s["startup"], s["latency"], s["idle_s3"], *s["throughput"].values()]
    loads = [part[key][0] for part in parts for key in ("load_before", "load_after")]
    loads += [s["environment"]["load_at_start"][0], s["environment"]["load_at_end"][0]]
    run = f" The run took {s['environment']['run_s'] / 60:.0f} minutes." if "run_s" in s["environment"] else ""
    return (f"The machine ({s['environment']['cpus']} cores) was shared: 1-minute load averages from "
            f"{min(loads):.1f} to {max(loads):.1f} during the run, so compare readers within a row, not "
            f"with other runs.{run}")


def spark_targets(r: dict) -> str:
    """Issue 13's four targets, each as the ratio measured in this run."""
    s, t = r["spark"], r["spark"]["targets"]
    size = _millions(max(int(k) for k in s["throughput"]))
    rows = []
    java_missing = "not measured (no Java connector)"
    for key, label in (("parquet_sink_vs_java", "`AvailableNow`"), ("parquet_sink_batch_vs_java", "batch read")):
        ratio = t.get(key)
        rows.append([f"{size} rows into a Parquet sink ≥ 0.85× Paimon's Java connector ({label})",
                     java_missing if ratio is None else f"{ratio:.2f}×", "–" if ratio is None else met(ratio >= 0.85)])
    for key, label in (("noop_vs_python_ceiling", "batch read"), ("noop_available_now_vs_python_ceiling", "`AvailableNow`")):
        rows.append([f"{size} rows into `noop` ≥ 0.75× the do-nothing Python source ({label})",
                     f"{t[key]:.2f}×", met(t[key] >= 0.75)])
    extra = t["startup_minus_python_ceiling_s"]
    rows.append(["`AvailableNow` start-up ≤ do-nothing Python source + 0.25 s", f"{extra:+.2f} s", met(extra <= 0.25)])
    latency = t["latency_p50_vs_java"]
    for trigger in ("0 seconds", "1 second"):
        ratio = None if latency is None else latency[trigger]
        rows.append([f"commit → end of micro-batch p50 ≤ the Java connector's (local table, `notifier=auto`), `processingTime=\"{trigger}\"`",
                     java_missing if ratio is None else f"{ratio:.2f}×", "–" if ratio is None else met(ratio <= 1)])
    idle = t.get("idle_requests_java_over_push")
    idle_label = "… with ≥ 100× fewer idle storage requests than the Java connector (`s3://` on moto; this source: push through SQS)"
    if not _java_ran(r):
        rows.append([idle_label, java_missing, "–"])
    elif idle is None:
        rows.append([idle_label,
                     "push made no request in the window", "met"])
    else:
        rows.append([idle_label,
                     f"{idle:,.0f}× fewer", met(idle >= 100)])
    return table(["target", "this run", ""], ["---", "---:", "---"], rows)


def spark_long_running(r: dict) -> str:
    """What a query that is already up sustains, against the connector and the do-nothing source."""
    long = r["spark_long_running"]["long_running"]
    c = long["cases"]

    def ratio(reader: str, sink: str) -> str:
        return f"{c[f'source/{sink}']['rows_per_s'] / c[f'{reader}/{sink}']['rows_per_s']:.2f}×"

    against_java = (f"{ratio('java_connector', 'noop')} the Java connector's rows/s into `noop` and "
                    f"{ratio('java_connector', 'parquet')} into Parquet, " if "java_connector/noop" in c else "")
    return wrap(
        f"Once a query is up (the long-running rows: {long['commits']} micro-batches of one commit, "
        f"{long['rows'] / long['commits'] / 1e6:g}M rows each), this source sustains {against_java}"
        f"and {ratio('python_ceiling', 'noop')} the do-nothing Python source's into `noop`; its "
        f"micro-batch takes {c['source/noop']['batch_ms_p50']:,.0f} ms at the median"
        + (f" against the connector's {c['java_connector/noop']['batch_ms_p50']:,.0f} ms." if against_java else ".")
    )


def spark_startup_parts(r: dict) -> str:
    """Where a Python process of the source that opens the table spends its start-up
    (``python -X importtime``)."""
    one = r["spark"]["startup"]["one_process"]
    m = one["modules_s"]
    return wrap(
        f"A Python process of this source that plans or reads spends {one['import_source_s']:.2f} s importing it "
        f"(PySpark's data source module alone: {m['pyspark.sql.datasource']:.2f} s) and "
        f"{one['open_table_s']:.2f} s opening the table, of which pypaimon's table module brings in "
        f"pandas ({m['pandas']:.2f} s), polars ({m['polars']:.2f} s) and requests "
        f"({m['requests']:.2f} s), none of which this source uses (medians of {one['repeats']} fresh "
        f"interpreters, `python -X importtime`, same run). Without those three, opening the table "
        f"would still take {one['open_table_s'] - m['pandas'] - m['polars'] - m['requests']:.2f} s "
        f"(pyarrow and pypaimon's own modules); a process that read only snapshot, schema and consumer "
        f"files with pypaimon's classes for them, leaving split planning to the executors, would "
        f"still import for {one['metadata_only_s']:.2f} s after this source's module."
    )


def spark_latency(r: dict) -> str:
    s = r["spark"]
    followers = [("auto", "this source, `notifier=auto` (the default; on a local table, a storage check on every trigger)"),
                 ("push", "this source, inotify push (`notifier=local`)"),
                 ("python_ceiling", "do-nothing Python source (lists the snapshot directory on every trigger, reads nothing)"),
                 ("spark_parquet", "Spark's file source on the table's Parquet files (lists the bucket directories on every trigger)")]
    if _java_ran(r):
        followers.append(("java_connector", f"Paimon's Java connector ({_java_versions(r)}; it checks storage on every trigger)"))
    rows = []
    for trigger in ("0 seconds", "1 second"):
        for key, label in followers:
            m = s["latency"][trigger][key]
            tick = f"{m['tick_to_end_p50_ms']:.0f}" if "tick_to_end_p50_ms" in m else "–"
            rows.append([f"`{trigger}`", label, f"{m['p50_ms']:.0f}", f"{m['p95_ms']:.0f}", f"{m['entry_p50_ms']:.0f}", tick])
    commits = s["latency"]["0 seconds"]["auto"]["commits"]
    return table(
        ["trigger", f"reader, {commits} commits each", "p50 ms to the end", "p95 ms to the end",
         "p50 ms to the start of `foreachBatch`", "p50 ms from the first trigger after the commit to the end"],
        ["---", "---", "---:", "---:", "---:", "---:"], rows,
    )


def spark_sockets(r: dict) -> str:
    """Commit -> end of micro-batch with the Python workers on TCP and on Unix domain sockets
    (spark_bench.py's probe processes, each with a session of its own)."""
    sockets = r["spark"]["python_sockets"]
    labels = {"tcp": "TCP (Spark's default)", "unix": f"Unix domain sockets (`{sockets['conf']}=true`)"}
    readers = (("auto", "this source"), ("python_ceiling", "do-nothing Python source"))
    rows = [[labels[kind]] + [f"{sockets[kind][mode]['p50_ms']:.0f} / {sockets[kind][mode]['p95_ms']:.0f}"
                              for mode, _ in readers] for kind in ("tcp", "unix")]
    commits = sockets["tcp"]["auto"]["commits"]
    return table([f"Python workers reach the JVM over ({commits} commits per cell, `processingTime=\"0 seconds\"`)"]
                 + [f"{label}, p50 / p95 ms to the end" for _, label in readers],
                 ["---", "---:", "---:"], rows)


def spark_consumer_commit(r: dict) -> str:
    """consumer_commit_bench.py: a consumer-file write on moto against the source's commit."""
    c = r["consumer_commit"]
    stored = ("held the last committed position" if c["stored_after_close"] == c["expected_after_close"]
              else f"held {c['stored_after_close']}, not the last committed {c['expected_after_close']},")
    return wrap(
        f"On an `s3://` table on moto one write of the consumer file took {c['write']['median_ms']:.0f} ms "
        f"(median; p95 {c['write']['p95_ms']:.0f} ms; {c['write']['s3_requests']:g} S3 request"
        f"{'' if c['write']['s3_requests'] == 1 else 's'}), which every micro-batch would wait for; the "
        f"source's `commit` returns in {c['commit']['median_ms']:.2f} ms, and the file {stored} once the "
        f"query stopped (`python -m benchmarks.consumer_commit_bench`)."
    )


def spark_idle(r: dict) -> str:
    idle = r["spark"]["idle_s3"]
    followers = [("push", "this source, push (`notifier=sqs`)"),
                 ("storage-per-trigger", "this source, checking storage on every trigger")]
    if "java_connector" in idle["modes"]:
        followers.append(("java_connector", f"Paimon's Java connector ({_java_versions(r)}, `s3a://`)"))
    def cost(mode: dict) -> str:
        return f"${mode['usd_per_month']:,.2f}" if "usd_per_month" in mode else "–"

    def kinds(mode: dict) -> str:
        by_kind = mode.get("s3_requests_by_kind", {})
        return ", ".join(f"{kind} {n:,}" for kind, n in sorted(by_kind.items(), key=lambda kv: -kv[1])) or "–"

    rows = [[label, f"{idle['modes'][key]['s3_requests_per_minute']:,.1f}", kinds(idle["modes"][key]),
             cost(idle["modes"][key])] for key, label in followers]
    rows.append(["(the SQS queue's long polls, per queue)", f"{idle['sqs_requests_per_minute']:.1f} SQS requests", "", ""])
    return table([f"an idle table on moto followed by ({idle['window_s']:.0f} s window, `processingTime=\"0 seconds\"`)",
                  "S3 requests / minute", "in the window, by kind", "USD per idle table-month"],
                 ["---", "---:", "---", "---:"], rows)


def spark_merged(r: dict) -> str:
    """Primary-key reads in Spark against the Java connector (``benchmarks/spark_merged_bench.py``)."""
    m = r["spark_merged"]
    env = m["environment"]
    rows = []

    def add(label: str, cases: dict, case: str) -> None:
        ours, theirs = cases[f"source/{case}"]["rows_per_s"], cases[f"java_connector/{case}"]["rows_per_s"]
        rows.append([label, f"{ours / 1e6:.2f}", f"{theirs / 1e6:.2f}", f"{ours / theirs:.2f}×"])

    for engine, t in m["merged"].items():
        for sink in ("noop", "parquet"):
            add(f"{engine}, {t['keys']:,} keys, batch read (merged) → `{sink}`", t["cases"], f"batch/{sink}")
    pk = m["pk"]
    for mode, label, n in (("available_now", "`AvailableNow` (changelog)", pk["stream_rows"]),
                           ("batch", "batch read (merged)", pk["batch_rows"])):
        for sink in ("noop", "parquet"):
            add(f"primary key `input`, {n:,} rows, {label} → `{sink}`", pk["cases"], f"{mode}/{sink}")
    start = m["startup"]["cases"]
    stream = pk["cases"]["source/available_now/noop"]["median_s"]
    share = start["source"]["median_s"] / stream
    loads = [x for part in [*m["merged"].values(), pk] for x in (part["load_before"][0], part["load_after"][0])]
    equal = all(t["reads_equal"] for t in m["merged"].values()) and pk["reads_compared"].get("batch_equal") \
        and pk["reads_compared"].get("stream_equal")
    return (
        table(["M rows/s (median)", "this source" + (" with `[native]`" if env["native"] else ""),
               f"Java connector {env['java_connector']}", "ratio"], ["---", "---:", "---:", "---:"], rows)
        + "\n\n" + wrap(f"`AvailableNow` on a 10-row table, start to termination: this source "
        f"{start['source']['median_s']:.2f} s, the do-nothing Python source {start['python_ceiling']['median_s']:.2f} s, "
        f"the Java connector {start['java_connector']['median_s']:.2f} s. That fixed cost is "
        f"{share:.0%} of this source's {stream:.2f} s `AvailableNow` query of the primary-key table "
        f"into `noop`: start-up, not reading, decides that case. "
        f"Both readers read the same rows in every case ({'checked, equal' if equal else 'they DIFFER'}). "
        f"Medians of {pk['repeats']} interleaved rounds; 1-minute load {min(loads):.1f} to {max(loads):.1f} "
        f"on {env['cpus']} cores (the machine was shared); the run took {env['run_s'] / 60:.0f} minutes.")
    )
