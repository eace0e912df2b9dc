"""Paimon's Java Spark connector in a process of its own, driven by ``spark_bench.py``.

The connector (``paimon-spark-3.5`` 0.9.0, see ``benchmarks/java/pom.xml``) runs on Spark 3.5,
not on the project's PySpark 4.3, so ``spark_bench.py`` starts this script with the Python of a
PySpark 3.5 venv. It holds one long-lived ``local[2]`` SparkSession, so each case pays what the
same case pays in the benchmark's own session (no session start-up), and answers JSON-line
commands: one JSON object a line on stdin, one JSON object a line on stdout, in order.

    python java_connector_worker.py '{"jars": [...], "conf": {...}}'
    -> {"ready": true, "spark": "3.5.9", ...}
    {"op": "available_now", "path": ..., "sink": "noop", "out": ..., "checkpoint": ..., "options": {}}
    -> {"rows": 4000000}
    {"op": "batch", "path": ..., "sink": "parquet", "out": ..., "options": {}}   -> {}
    {"op": "digest", "path": ..., "stream": false, "options": {}, "checkpoint": ..., "out": ...}
    -> {"digest": {...}}
    {"op": "follow", "name": ..., "path": ..., "trigger": "0 seconds", "checkpoint": ..., "options": {}}
    -> {}   (a foreachBatch query that records when each commit number arrived)
    {"op": "arrivals", "name": ...} -> {"entered": {...}, "ended": {...}, "batches": n, ...}
    {"op": "stop", "name": ...}    -> {}
    {"op": "long_running", "path": ..., "sink": ..., "out": ..., "checkpoint": ..., "options": {},
     "rows": n}  -> {"progress": [...]}   (processingTime="0 seconds" until n rows were read)
    {"op": "quit"}

A failed command answers ``{"error": "<traceback>"}`` and the worker goes on. Only the Python
standard library and PySpark are imported: the venv holds nothing else. Spark's and the JVM's own
output go to stderr, so stdout carries answers only.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback

__all__ = ["DIGEST_SQL", "ArrivalSink", "into_sink", "main", "progress_reports", "run_until_rows"]

#: An order-free fingerprint of a read's rows, computed the same way on both sides of the
#: comparison (this script's copy and ``spark_bench.py``'s must stay equal). Session time zone
#: UTC on both, so ``ts`` renders alike whether a reader maps it to TIMESTAMP or TIMESTAMP_NTZ.
DIGEST_SQL = (
    "count(*) AS row_count", "sum(id) AS sum_id",
    "sum(`commit`) AS sum_commit", "sum(cast(xxhash64(id, `commit`, payload, value, cast(ts AS string)) AS decimal(38, 0))) AS row_hash",
)


class ArrivalSink:
    """foreachBatch sink: for each commit number, when its micro-batch reached the sink (entry)
    and when the sink returned after reading the micro-batch's rows (end), epoch seconds. The
    same as ``spark_bench.ArrivalSink``."""

    def __init__(self) -> None:
        self.entered: dict[int, float] = {}
        self.ended: dict[int, float] = {}
        self.batches = 0
        self._lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        entered = time.time()
        commits = {row["commit"] for row in df.select("commit").distinct().collect()}
        ended = time.time()
        with self._lock:
            self.batches += 1
            for n in commits:
                self.entered.setdefault(n, entered)
                self.ended.setdefault(n, ended)

    def snapshot(self) -> dict:
        with self._lock:
            return {"entered": dict(self.entered), "ended": dict(self.ended), "batches": self.batches}


def progress_reports(query) -> list[dict]:
    """The query's recent progress reports as dicts (PySpark 3.5 gives dicts, 4.x objects)."""
    return [p if isinstance(p, dict) else json.loads(p.json) for p in query.recentProgress]


def run_until_rows(query, rows: int, timeout: float = 3600) -> list[dict]:
    """Let a running ``query`` read ``rows`` rows, then stop it; its progress reports."""
    deadline = time.monotonic() + timeout
    while sum(p["numInputRows"] for p in progress_reports(query)) < rows:
        if query.exception() is not None or not query.isActive:
            raise RuntimeError(f"the query stopped before reading {rows} rows: {query.exception()}")
        if time.monotonic() > deadline:
            query.stop()
            raise TimeoutError(f"the query read fewer than {rows} rows in {timeout:.0f} s")
        time.sleep(0.05)
    query.stop()
    return progress_reports(query)


def into_sink(writer, sink: str, out: str):
    """``writer`` into the ``noop`` sink, or into a Parquet file sink at ``out``."""
    return writer.format("noop") if sink == "noop" else writer.format("parquet").option("path", out)


class Worker:
    def __init__(self, spark) -> None:
        self.spark = spark
        self.follows: dict[str, tuple] = {}

    def stream(self, path: str, options: dict):
        return self.spark.readStream.format("paimon").options(**options).load(path)

    def available_now(self, path, sink, out, checkpoint, options) -> dict:
        writer = self.stream(path, options).writeStream.option("checkpointLocation", checkpoint)
        query = into_sink(writer.trigger(availableNow=True), sink, out).start()
        query.awaitTermination()
        return {"rows": sum(p["numInputRows"] for p in query.recentProgress)}

    def long_running(self, path, sink, out, checkpoint, options, rows) -> dict:
        writer = self.stream(path, options).writeStream.option("checkpointLocation", checkpoint)
        query = into_sink(writer.trigger(processingTime="0 seconds"), sink, out).start()
        return {"progress": run_until_rows(query, rows)}

    def batch(self, path, sink, out, options) -> dict:
        df = self.spark.read.format("paimon").options(**options).load(path)
        if sink == "noop":
            df.write.format("noop").mode("overwrite").save()
        else:
            df.write.mode("overwrite").parquet(out)
        return {}

    def digest(self, path, stream, options, checkpoint, out) -> dict:
        if stream:  # through a Parquet sink, not the memory sink: 32M rows do not fit the driver
            self.available_now(path, "parquet", out, checkpoint, options)
            df = self.spark.read.parquet(out)
        else:
            df = self.spark.read.format("paimon").options(**options).load(path)
        row = df.selectExpr(*DIGEST_SQL).collect()[0]
        return {"digest": {key: (None if value is None else int(value)) for key, value in row.asDict().items()}}

    def follow(self, name, path, trigger, checkpoint, options) -> dict:
        sink = ArrivalSink()
        query = (self.stream(path, options).writeStream.foreachBatch(sink)
                 .option("checkpointLocation", checkpoint).trigger(processingTime=trigger).start())
        self.follows[name] = (query, sink)
        return {}

    def arrivals(self, name) -> dict:
        query, sink = self.follows[name]
        exception = query.exception()
        return {**sink.snapshot(), "active": query.isActive, "progress": len(query.recentProgress),
                "message": query.status["message"], "exception": None if exception is None else str(exception)}

    def stop(self, name) -> dict:
        query, _sink = self.follows.pop(name)
        query.stop()
        return {}


def main() -> None:
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the JVM (started below, inheriting fd 1) and any print go to stderr
    config = json.loads(sys.argv[1])
    started = time.perf_counter()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("paimon-java-connector")
    for key, value in {"spark.jars": ",".join(config["jars"]), **config.get("conf", {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    worker = Worker(spark)
    answers.write(json.dumps({"ready": True, "spark": spark.version, "python": sys.version.split()[0],
                              "session_start_s": time.perf_counter() - started}) + "\n")
    for line in sys.stdin:
        command = json.loads(line)
        op = command.pop("op")
        if op == "quit":
            break
        try:
            answer = {"ping": lambda: {}, "available_now": worker.available_now, "batch": worker.batch,
                      "digest": worker.digest, "follow": worker.follow, "arrivals": worker.arrivals,
                      "stop": worker.stop, "long_running": worker.long_running}[op](**command)
        except Exception:  # answered to the caller, which raises it there
            answer = {"error": traceback.format_exc()}
        answers.write(json.dumps(answer) + "\n")
    for query, _sink in worker.follows.values():
        query.stop()
    spark.stop()


if __name__ == "__main__":
    main()
