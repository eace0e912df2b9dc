"""Scenarios 2, 3 and 5: primary-key tables written by Java Paimon, with its changelog
producers, compaction, deletion vectors and dynamic buckets.

Each run: Java commits, a feed starts (``latest-full``, with row kinds), Java goes on
committing and compacting; the feed's full batch must equal Java's batch read at that
snapshot, its changes what Java's streaming read delivers, and replaying them onto the full
batch must rebuild Java's table exactly.
"""

from __future__ import annotations

import pytest

from scenarios import COLUMNS, check_primary_key_table

TABLES = {
    "input": {"bucket": "2", "changelog-producer": "input"},
    "lookup": {"bucket": "2", "changelog-producer": "lookup"},
    "full-compaction": {"bucket": "2", "changelog-producer": "full-compaction"},
    "no-changelog": {"bucket": "2"},
    # scenario 3: deletion vectors
    "deletion-vectors": {"bucket": "2", "deletion-vectors.enabled": "true"},
    "deletion-vectors-lookup": {"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    # scenario 5: dynamic buckets, small enough that the keys spread over several
    "dynamic-bucket-input": {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "changelog-producer": "input"},
    "dynamic-bucket-lookup": {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "changelog-producer": "lookup"},
}


@pytest.mark.parametrize("options", TABLES.values(), ids=TABLES.keys())
def test_primary_key_changes_equal_java_streaming_read_and_replay_to_java_state(java, warehouse, options):
    check_primary_key_table(java.table(warehouse, "db.orders").create(COLUMNS, primary_keys=["id"], options=options))
