"""start="tag:NAME": the table as a tag holds it, then every change after the tag's snapshot,
even when the tagged snapshot's own file has expired (a tag keeps its data).

Oracle: the rows the test wrote up to the tag, and after it."""

from __future__ import annotations

import asyncio

import pytest
from support.tables import append_rows, commit, expire_snapshots

from paimon_feed import ChangeFeed, InvalidStartError, Planner, parse_start


def test_a_feed_starts_from_a_tag_even_after_its_snapshot_expired(append_table):
    for n in range(4):
        commit(append_table, n)
    append_table.create_tag("nightly", snapshot_id=3)
    for n in range(4, 7):
        commit(append_table, n)
    expire_snapshots(append_table, keep_from=4)  # snapshot-3 is gone; the tag still holds it

    async def main():
        async with ChangeFeed(append_table, start="tag:nightly", end=7, notifier="poll") as feed:
            return [(b.kind, b.snapshot_id, sorted(r["id"] for r in b.to_arrow().to_pylist()))
                    async for b in feed]

    batches = asyncio.run(main())
    assert batches[0] == ("full", 3, sorted(r["id"] for n in range(3) for r in append_rows(n)))
    changes = sorted(i for kind, _, ids in batches[1:] for i in ids)
    assert changes == sorted(r["id"] for n in range(3, 7) for r in append_rows(n))


def test_an_unknown_tag_names_the_tags_there_are(append_table):
    commit(append_table, 0)
    append_table.create_tag("v1")
    with pytest.raises(InvalidStartError, match=r"no tag 'v2'.*\['v1'\]"):
        Planner(append_table).resolve_start("tag:v2")


@pytest.mark.parametrize("spec", ["tag:", "tag:a/b", "tag: ../x"])
def test_a_malformed_tag_start_is_refused(spec):
    with pytest.raises(InvalidStartError, match="tag"):
        parse_start(spec)
