"""Sessions and sinks for the ``foreach_batch`` runner tests, on every supported Spark line.

The runner needs no Python data source, so its session is built without
``paimon_feed.spark.register`` (Spark 3.5 has no data source API). A sink records what ``fn``
got per batch id, as a Delta sink keyed by ``txnVersion`` would.
"""

from __future__ import annotations

import threading

RUN_TIMEOUT_S = 180  # bounds a hang only; nothing asserts on durations


class IdempotentSink:
    """Keeps ``batch id -> rows`` and skips a batch id it already committed (what Delta does
    with ``txnAppId``/``txnVersion``), after checking a replay holds the same rows.

    ``fail_on`` makes the call for that batch id raise (once) *after* the sink committed, or,
    with ``fail_before_sink``, before: the two crash points of a real sink.
    """

    def __init__(self, fail_on: int | None = None, fail_before_sink: bool = False) -> None:
        self._lock = threading.Lock()
        self.batches: dict[int, list[dict]] = {}
        self.calls: list[int] = []
        self.columns: dict[int, list[str]] = {}
        self.replays: list[int] = []
        self.fail_on = fail_on
        self.fail_before_sink = fail_before_sink

    def __call__(self, df, batch_id: int) -> None:
        with self._lock:
            self.calls.append(batch_id)
        if batch_id == self.fail_on and self.fail_before_sink:
            self.fail_on = None
            raise RuntimeError(f"sink crashed before writing batch {batch_id}")
        rows = [row.asDict() for row in df.collect()]
        with self._lock:
            if batch_id in self.batches:
                self.replays.append(batch_id)
                assert _key(self.batches[batch_id]) == _key(rows), f"batch {batch_id} came again with other rows"
            else:
                self.batches[batch_id] = rows
                self.columns[batch_id] = list(df.columns)
        if batch_id == self.fail_on:
            self.fail_on = None
            raise RuntimeError(f"crash after the sink wrote batch {batch_id}")

    def rows(self) -> list[dict]:
        with self._lock:
            return [row for batch_id in sorted(self.batches) for row in self.batches[batch_id]]

    def commits(self) -> list[int]:
        return sorted(row["commit"] for row in self.rows())


def _key(rows: list[dict]) -> list:
    return sorted(tuple(sorted((k, repr(v)) for k, v in row.items())) for row in rows)


def table_rows(table, snapshot_id: int | None = None) -> list[dict]:
    """pypaimon's own batch read of ``table`` (at ``snapshot_id``: by time travel)."""
    if snapshot_id is not None:
        table = table.copy({"scan.snapshot-id": str(snapshot_id)})
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()


def tables_open(key: tuple, rendezvous: str, tasks: int, batches):
    """``mapInArrow`` probe: whether this Python worker has the table ``key`` open (the
    runner's read path keeps it, :func:`paimon_feed.spark.table.worker_table`). Each task
    waits in ``rendezvous`` (a directory) until ``tasks`` tasks arrived, so they run at once,
    each in a worker of its own."""
    import os
    import time

    import pyarrow as pa

    from paimon_feed.spark import table

    open(os.path.join(rendezvous, str(os.getpid())), "w").close()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while len(os.listdir(rendezvous)) < tasks and time.monotonic() < deadline:
        time.sleep(0.05)
    for batch in batches:
        yield pa.RecordBatch.from_pydict(
            {"pid": [os.getpid()] * batch.num_rows, "open": [key in table._WORKER_TABLES] * batch.num_rows}
        )
