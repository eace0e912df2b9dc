"""Older 1.x Java Paimon versions of the compatibility table, on the tables of the scenario
modules (which run the newest). Before 1.2 the driver cannot write ``bucket = -1`` tables
(no append compaction coordinator, no dynamic-bucket assigner there), so 1.0.1 runs the
fixed-bucket ones. Paimon 0.9 has its own module, as pypaimon cannot read it."""

from __future__ import annotations

import fetch_java
import pytest
from scenarios import APPEND_TABLES, COLUMNS, PRIMARY_KEY_TABLES, check_append_table, check_primary_key_table


def _cases(tables: dict) -> list:
    cases = []
    for version in (fetch_java.MIDDLE_1X, fetch_java.OLDEST_1X):
        for name, options in tables.items():
            if version == fetch_java.OLDEST_1X and options["bucket"] == "-1":
                continue
            cases.append(pytest.param(version, options, id=f"{version}-{name}"))
    return cases


@pytest.mark.parametrize("version, options", _cases(APPEND_TABLES))
def test_append_table_of_an_older_java_version_is_delivered_exactly(java_at, warehouse, version, options):
    check_append_table(java_at(version).table(warehouse, "db.events").create(COLUMNS, options=options))


@pytest.mark.parametrize("version, options", _cases(PRIMARY_KEY_TABLES))
def test_primary_key_table_of_an_older_java_version_is_delivered_exactly(java_at, warehouse, version, options):
    table = java_at(version).table(warehouse, "db.orders")
    check_primary_key_table(table.create(COLUMNS, primary_keys=["id"], options=options))
