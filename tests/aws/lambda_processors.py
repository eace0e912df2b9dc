"""Processors for the Lambda handler tests, loaded by the handler from PAIMON_FEED_PROCESSOR.

``record`` keeps what it was given in module state the tests read and reset; ``FAIL_TABLES``
makes it raise for some tables (before recording), and ``ON_BATCH`` hooks run after each
recorded batch (to spend a fake Lambda context's time, or to slow a batch down).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

DELIVERED: list[Delivery] = []
FAIL_TABLES: set[str] = set()
ON_BATCH: list = []
_lock = threading.Lock()


@dataclass(frozen=True)
class Delivery:
    table: str
    first_snapshot_id: int
    snapshot_id: int
    kind: str
    rows: tuple
    thread: str


def reset() -> None:
    with _lock:
        DELIVERED.clear()
        FAIL_TABLES.clear()
        ON_BATCH.clear()


def record(batch) -> None:
    if batch.table in FAIL_TABLES:
        raise RuntimeError(f"processor refuses table {batch.table}")
    rows = tuple(sorted(tuple(sorted(row.items())) for row in batch.to_arrow().to_pylist()))
    delivery = Delivery(
        batch.table,
        batch.first_snapshot_id,
        batch.snapshot_id,
        batch.kind,
        rows,
        threading.current_thread().name,
    )
    with _lock:
        DELIVERED.append(delivery)
        hooks = list(ON_BATCH)
    for hook in hooks:
        hook(delivery)


NOT_CALLABLE = 42
