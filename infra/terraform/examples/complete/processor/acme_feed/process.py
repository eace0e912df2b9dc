"""The processor the example's ``processor = "acme_feed.process:handle_batch"`` names.

The handler calls it once per batch; the table's checkpoint advances after it returns, and a
raise makes the batch's messages fail and come back. Make it idempotent per
``(batch.table, batch.snapshot_id)``: delivery is at least once.
"""

from __future__ import annotations

import json
import logging

logger = logging.getLogger(__name__)


def handle_batch(batch) -> None:
    rows = batch.to_arrow()
    logger.info(json.dumps({
        "table": batch.table,
        "kind": batch.kind,
        "snapshots": [batch.first_snapshot_id, batch.snapshot_id],
        "rows": rows.num_rows,
    }))
