"""Offsets of the ``paimon_feed`` streaming source: positions in a table's snapshot sequence.

Spark keeps offsets as JSON dicts of primitives and journals each micro-batch's *end* offset in
its checkpoint. Every offset here carries ``snapshot``, the **next snapshot id**: the first
snapshot whose changes have *not* been delivered (the same convention as Paimon's consumer
files, ``{"nextSnapshot": N}``). The other keys say what the micro-batch that ends at the offset
holds, so a batch can be planned again from its end offset alone::

    {"snapshot": N}                    a position: nothing pending, changes from N on come next
    {"snapshot": N, "first": M}        end of a batch holding the changes of snapshots M..N-1
    {"snapshot": S+1, "full": S}       end of a batch holding the full table state at S
    {"snapshot": S+1, "pendingFull": S}  the initial offset of ``latest-full``: nothing
                                       delivered yet, the first batch is the full state at S

Any offset may also carry ``"mark"``: the digest of the commit that snapshot ``N-1`` was when the
offset was made (:meth:`paimon_feed.batch.SnapshotMark.digest`). The next micro-batch checks that
the table still has that commit, and a replayed one that its range is still the commits it was,
so a rolled-back or re-created table stops the query instead of feeding it another history.

Why the end describes its own batch: Spark journals only end offsets. If a query dies before
its first micro-batch commits, Spark asks ``initialOffset()`` again on restart, and for a start
like ``latest-full`` or ``time:-1h`` that answer moves with the table. Planning from the end
offset (``full``/``first``) keeps the replayed batch identical to the journaled one.

>>> FeedOffset.from_json({"snapshot": 8, "first": 5}).to_json()
{'snapshot': 8, 'first': 5}
>>> FeedOffset.position(5).after_changes(7).to_json()
{'snapshot': 8, 'first': 5}
>>> FeedOffset.pending_full(4).after_full().to_json()
{'snapshot': 5, 'full': 4}
>>> FeedOffset.position(5).after_changes(7, mark="9f2c").to_json()
{'snapshot': 8, 'first': 5, 'mark': '9f2c'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, overload

from paimon_feed.errors import InvalidOffsetError, brief_repr
from paimon_feed.start import MAX_SNAPSHOT_ID

__all__ = ["FeedOffset", "InvalidOffsetError"]


@overload
def _snapshot_id(data: Mapping[str, Any], key: str, required: Literal[True]) -> int: ...
@overload
def _snapshot_id(data: Mapping[str, Any], key: str, required: bool = False) -> int | None: ...
def _snapshot_id(data: Mapping[str, Any], key: str, required: bool = False) -> int | None:
    value = data.get(key)
    if value is None:
        if required:
            raise InvalidOffsetError(
                f"offset {_shown(data)} has no {key!r}; was this checkpoint written by another "
                f"source? Use a new checkpoint location"
            )
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SNAPSHOT_ID:
        raise InvalidOffsetError(f"offset {_shown(data)}: {key!r} must be a snapshot id")
    return value


def _mark(data: Mapping[str, Any]) -> str | None:
    value = data.get("mark")
    if value is not None and (not isinstance(value, str) or not 0 < len(value) <= 64):
        raise InvalidOffsetError(f"offset {_shown(data)}: 'mark' must be a commit digest")
    return value


def _shown(data: Mapping[str, Any]) -> str:
    return brief_repr(dict(data), limit=200)


@dataclass(frozen=True)
class FeedOffset:
    """One point of the feed; see the module docstring for the JSON form.

    ``next_snapshot_id`` is exclusive (the first snapshot not delivered); ``first_snapshot_id``
    and ``full_snapshot_id`` are inclusive snapshot ids.
    """

    next_snapshot_id: int
    first_snapshot_id: int | None = None
    full_snapshot_id: int | None = None
    pending_full_snapshot_id: int | None = None
    mark: str | None = None
    """Digest of the commit snapshot ``next_snapshot_id - 1`` was (``None``: not known)."""

    def __post_init__(self) -> None:
        set_keys = [
            key
            for key, value in (
                ("first", self.first_snapshot_id),
                ("full", self.full_snapshot_id),
                ("pendingFull", self.pending_full_snapshot_id),
            )
            if value is not None
        ]
        if len(set_keys) > 1:
            raise InvalidOffsetError(f"an offset has at most one of first/full/pendingFull, got {set_keys}")
        if self.next_snapshot_id < 1:
            raise InvalidOffsetError(f"next snapshot id must be >= 1, got {self.next_snapshot_id}")
        if self.first_snapshot_id is not None and not (
            1 <= self.first_snapshot_id < self.next_snapshot_id
        ):
            raise InvalidOffsetError(
                f"offset range {self.first_snapshot_id}..{self.next_snapshot_id - 1} is empty"
            )
        for full in (self.full_snapshot_id, self.pending_full_snapshot_id):
            if full is not None and full + 1 != self.next_snapshot_id:
                raise InvalidOffsetError(
                    f"a full-state offset at snapshot {full} must have next snapshot {full + 1}, "
                    f"got {self.next_snapshot_id}"
                )

    # constructors ------------------------------------------------------------------------
    @classmethod
    def position(cls, next_snapshot_id: int, mark: str | None = None) -> FeedOffset:
        """Nothing pending; the changes of ``next_snapshot_id`` come next."""
        return cls(next_snapshot_id, mark=mark)

    @classmethod
    def pending_full(cls, snapshot_id: int) -> FeedOffset:
        """The start of a ``latest-full`` stream: the full state at ``snapshot_id`` comes next."""
        return cls(snapshot_id + 1, pending_full_snapshot_id=snapshot_id)

    def after_full(self, mark: str | None = None) -> FeedOffset:
        """The end of the batch holding the pending full state."""
        if self.pending_full_snapshot_id is None:
            raise InvalidOffsetError(f"offset {self.to_json()} has no pending full state")
        return FeedOffset(
            self.next_snapshot_id, full_snapshot_id=self.pending_full_snapshot_id, mark=mark
        )

    def after_changes(self, last_snapshot_id: int, mark: str | None = None) -> FeedOffset:
        """The end of the batch holding the changes from here to ``last_snapshot_id`` (inclusive)."""
        return FeedOffset(last_snapshot_id + 1, first_snapshot_id=self.next_snapshot_id, mark=mark)

    # JSON --------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeedOffset:
        if not isinstance(data, Mapping):
            raise InvalidOffsetError(f"offset must be a JSON object, got {brief_repr(data)}")
        unknown = set(data) - {"snapshot", "first", "full", "pendingFull", "mark"}
        if unknown:
            names = ", ".join(sorted(map(brief_repr, unknown)))  # keys of any type sort as text
            raise InvalidOffsetError(
                f"offset {_shown(data)} has unknown keys {names}; was this checkpoint "
                f"written by another source? Use a new checkpoint location"
            )
        return cls(
            _snapshot_id(data, "snapshot", required=True),
            first_snapshot_id=_snapshot_id(data, "first"),
            full_snapshot_id=_snapshot_id(data, "full"),
            pending_full_snapshot_id=_snapshot_id(data, "pendingFull"),
            mark=_mark(data),
        )

    def to_json(self) -> dict[str, int | str]:
        data: dict[str, int | str] = {"snapshot": self.next_snapshot_id}
        if self.first_snapshot_id is not None:
            data["first"] = self.first_snapshot_id
        if self.full_snapshot_id is not None:
            data["full"] = self.full_snapshot_id
        if self.pending_full_snapshot_id is not None:
            data["pendingFull"] = self.pending_full_snapshot_id
        if self.mark is not None:
            data["mark"] = self.mark
        return data

    # what a batch ending here holds ------------------------------------------------------
    @property
    def change_range(self) -> tuple[int, int] | None:
        """Inclusive ``(first, last)`` snapshot ids of the changes in the batch ending here."""
        if self.first_snapshot_id is None:
            return None
        return self.first_snapshot_id, self.next_snapshot_id - 1

    @property
    def snapshot_count(self) -> int:
        """How many snapshot ids the batch ending here covers (a full state counts as one)."""
        if self.full_snapshot_id is not None:
            return 1
        if self.first_snapshot_id is not None:
            return self.next_snapshot_id - self.first_snapshot_id
        return 0
