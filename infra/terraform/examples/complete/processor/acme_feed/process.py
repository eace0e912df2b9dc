"""The processor the example's ``processor = "acme_feed.process:handle_batch"`` names.

The handler calls it once per batch; the table's checkpoint advances after it returns, and a
raise makes the batch's messages fail and come back. Make it idempotent per
``(batch.table, batch.snapshot_id)``: delivery is at least once.

It prints one JSON line per batch: on Lambda, stdout goes to the function's log group; run
locally (docs/lambda.md), a first run shows what it received, where a log call at INFO would
print nothing under Python's default WARNING level.
"""

from __future__ import annotations

import json


def handle_batch(batch) -> None:
    rows = batch.to_arrow()
    print(json.dumps({
        "table": batch.table,
        "kind": batch.kind,
        "snapshots": [batch.first_snapshot_id, batch.snapshot_id],
        "rows": rows.num_rows,
    }), flush=True)
