"""Consume a feed in a test and check what it delivered against what was written."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field

from support.tables import rows_for


@dataclass
class Delivered:
    batches: list = field(default_factory=list)  # FeedBatch, in delivery order
    rows: list = field(default_factory=list)  # (batch index, row dict)

    @property
    def commits(self) -> list[int]:
        return [row["commit"] for _, row in self.rows]

    def assert_tiled(self) -> None:
        """Batches come in strictly increasing snapshot order and cover the ids without gaps."""
        for before, after in zip(self.batches, self.batches[1:]):
            assert after.snapshot_id > before.snapshot_id, (before, after)
            assert after.first_snapshot_id == before.snapshot_id + 1, (before, after)

    def assert_exactly(self, table, commits, *, row_kind: bool = False) -> None:
        """Every row of ``commits`` delivered exactly once, commits in order."""
        self.assert_tiled()
        delivered = self.commits
        assert delivered == sorted(delivered), "rows of a later commit came before an earlier one"
        by_commit = defaultdict(list)
        for _, row in self.rows:
            by_commit[row["commit"]].append(row)
        assert sorted(by_commit) == sorted(commits), (sorted(by_commit), sorted(commits))
        for n in commits:
            expected = rows_for(table, n)
            if row_kind:
                expected = [{**row, "_row_kind": row.get("op", "+I")} for row in expected]
            key = lambda row: sorted(row.items())  # noqa: E731
            assert sorted(by_commit[n], key=key) == sorted(expected, key=key), f"commit {n}"


async def consume(feed, *, until, commit: bool = True, timeout: float = 90) -> Delivered:
    """Read batches until ``until(delivered)`` is true, committing each if asked."""
    delivered = Delivered()

    async def run() -> None:
        async for batch in feed:
            index = len(delivered.batches)
            delivered.batches.append(batch)
            # read in a thread: a hung data read must not block the loop, and so the timeout
            rows = await asyncio.to_thread(lambda: batch.to_arrow().to_pylist())
            delivered.rows.extend((index, row) for row in rows)
            if commit:
                await feed.commit(batch)
            if until(delivered):
                return

    await asyncio.wait_for(run(), timeout)
    return delivered


def has_commit(n: int):
    return lambda delivered: n in delivered.commits
