"""Older 1.x Java Paimon versions of the compatibility table, on the tables every version
writes (fixed buckets). The newest is covered by the scenario modules, with dynamic buckets,
bucket-unaware compaction and deletion vectors; Paimon 0.9 has its own module, as pypaimon
cannot read it."""

from __future__ import annotations

import pytest

import fetch_java
from scenarios import COLUMNS, check_append_table, check_primary_key_table

VERSIONS = [fetch_java.OLDEST_1X]


@pytest.mark.parametrize("version", VERSIONS)
def test_append_table_of_each_java_version_is_delivered_exactly(java_at, warehouse, version):
    table = java_at(version).table(warehouse, "db.events")
    check_append_table(table.create(COLUMNS, options={"bucket": "2", "bucket-key": "id"}))


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
@pytest.mark.parametrize("version", VERSIONS)
def test_primary_key_table_of_each_java_version_is_delivered_exactly(java_at, warehouse, version, producer):
    table = java_at(version).table(warehouse, "db.orders")
    options = {"bucket": "2", "changelog-producer": producer}
    check_primary_key_table(table.create(COLUMNS, primary_keys=["id"], options=options))
