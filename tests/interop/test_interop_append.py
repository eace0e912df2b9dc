"""Scenarios 1 and 3 (append): append tables written and compacted by Java Paimon."""

from __future__ import annotations

import pytest

from scenarios import COLUMNS, check_append_table

TABLES = {
    "fixed-buckets": {"bucket": "2", "bucket-key": "id"},
    "bucket-unaware": {"bucket": "-1", "compaction.min.file-num": "2"},
    # scenario 3: deletion vectors on append tables
    "fixed-buckets-deletion-vectors": {"bucket": "2", "bucket-key": "id", "deletion-vectors.enabled": "true"},
    "bucket-unaware-deletion-vectors": {
        "bucket": "-1", "compaction.min.file-num": "2", "deletion-vectors.enabled": "true",
    },
}


@pytest.mark.parametrize("options", TABLES.values(), ids=TABLES.keys())
def test_append_table_compacted_by_java_is_delivered_exactly(java, warehouse, options):
    check_append_table(java.table(warehouse, "db.events").create(COLUMNS, options=options))
