"""Does ``asyncProgressTrackingEnabled`` keep the source's restart exactly-once? (issue 13)

    PYTHONPATH=tests:tests/spark python -m benchmarks.spark_async_progress

(It reuses the Spark tests' helpers, ``tests/spark/spark_support.py`` and ``tests/support``, so
those folders go on ``PYTHONPATH``.)

The restart scenario of ``tests/spark/test_spark_stream.py`` (a writer commits 16 times while a
query with ``maxSnapshotsPerTrigger=2`` runs, is stopped and restarted on the same checkpoint,
then two more commits) with the option off and on. Spark refuses the option for ``foreachBatch``
and file sinks, so the query writes to ``noop`` and the rows each micro-batch read are taken from
Spark's progress reports. Prints, per table kind and setting, the rows read against the rows
committed and the micro-batch ids each query ran: a batch id run by both queries was read twice.
An evaluation, not a test.
"""

from __future__ import annotations

import os
import tempfile
import time

try:
    from spark_support import (
        Warehouse,
        WriterThread,
        commit,
        expected_changes,
        new_spark_session,
        wait_until,
    )
except ImportError as exc:  # run without the test helpers on the path
    raise SystemExit(
        f"{exc}: run PYTHONPATH=tests:tests/spark python -m benchmarks.spark_async_progress"
    ) from exc


def rows_read(query) -> int:
    return sum(progress.numInputRows for progress in query.recentProgress)


def batches(query) -> list[int]:
    return [progress.batchId for progress in query.recentProgress if progress.numInputRows]


def restart(spark, kind: str, async_progress: bool) -> dict:
    workdir = tempfile.mkdtemp(prefix="paimon-feed-async-")
    paimon = Warehouse(os.path.join(workdir, "warehouse"))
    table = paimon.create_append_table() if kind == "append" else paimon.create_pk_table()
    options = paimon.options(table, startingPosition="earliest", includeRowKind="true", maxSnapshotsPerTrigger=2)

    def start():
        return (
            spark.readStream.format("paimon_feed").options(**options).load()
            .writeStream.format("noop")
            .option("checkpointLocation", os.path.join(workdir, "checkpoint"))
            .option("asyncProgressTrackingEnabled", str(async_progress).lower())
            .trigger(processingTime="100 milliseconds").start()
        )

    writer = WriterThread(table, 1, 16, interval=0.1).start()
    first = start()
    wait_until(lambda: rows_read(first) >= 12, 120, "a first few commits")
    first.stop()
    second = start()
    writer.join()
    for n in (17, 18):
        commit(table, n)
    committed = len(expected_changes(table, range(1, 19)))
    wait_until(lambda: rows_read(first) + rows_read(second) >= committed, 120, "every commit")
    time.sleep(3)  # anything read twice shows up too
    second.stop()
    return {"rows_read": rows_read(first) + rows_read(second), "rows_committed": committed,
            "first_query_batches": batches(first), "second_query_batches": batches(second)}


def main() -> None:
    import paimon_feed.spark

    spark = new_spark_session("paimon-feed-async-progress")
    paimon_feed.spark.register(spark)
    for kind in ("append", "primary-key"):
        for async_progress in (False, True):
            result = restart(spark, kind, async_progress)
            print(f"{kind:<12} asyncProgressTrackingEnabled={str(async_progress).lower():<5} {result}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
