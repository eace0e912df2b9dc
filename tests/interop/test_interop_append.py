"""Scenarios 1 and 3 (append): append tables written and compacted by Java Paimon."""

from __future__ import annotations

import pytest

from scenarios import APPEND_TABLES, COLUMNS, check_append_table

@pytest.mark.parametrize("options", APPEND_TABLES.values(), ids=APPEND_TABLES.keys())
def test_append_table_compacted_by_java_is_delivered_exactly(java, warehouse, options):
    check_append_table(java.table(warehouse, "db.events").create(COLUMNS, options=options))
