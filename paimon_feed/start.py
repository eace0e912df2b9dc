"""Start and end positions of a feed.

A start spec says where a consumer without a checkpoint begins:

- ``"latest-full"`` (default): the full state at the latest snapshot, then every change after it.
- ``"latest"``: only changes committed after the feed starts.
- ``"earliest"``: the changes of every retained snapshot, from the earliest one.
- ``42``, ``"42"`` or ``"snapshot:42"``: the changes of snapshot 42 and every one after it.
- ``"tag:NAME"``: the full state of the table as tagged, then every change after the tag's
  snapshot (like Java Paimon's ``scan.tag-name``).
- ``"time:2026-11-20T08:00:00Z"``, ``"time:2026-11-20"`` or ``"time:-1h"`` (also ``-30m``,
  ``-7d``, ``-90s``, ``-2w``): changes committed after that instant. A bare ``-1h`` is accepted
  too, as in ``paimon tail --from -1h``.

End positions are snapshot ids, inclusive: the feed stops by itself after delivering the batch
that covers the end snapshot.

>>> parse_start("snapshot:42")
StartPosition(kind='snapshot', snapshot_id=42, timestamp_ms=None, tag=None)
>>> parse_start("time:-1h", now_ms=7_200_000).timestamp_ms
3600000
>>> parse_start("tag:nightly-2026-11-20").to_spec()
'tag:nightly-2026-11-20'
>>> parse_end("snapshot:7")
7
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal, Union

from paimon_feed._units import parse_duration_ms
from paimon_feed.errors import ConfigurationError, InvalidStartError, brief_repr

__all__ = ["MAX_SNAPSHOT_ID", "StartPosition", "StartSpec", "parse_start", "parse_end"]

StartKind = Literal["latest-full", "latest", "earliest", "snapshot", "time", "tag"]
StartSpec = Union[str, int, "StartPosition"]

_TAG_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
MAX_SNAPSHOT_ID = 2**63 - 1  # Paimon's snapshot ids are Java longs
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS = timedelta(milliseconds=1)
# Instants to_spec() can write: years 1 to 9999 in UTC (Python's datetime range).
_MIN_MS = (datetime.min.replace(tzinfo=timezone.utc) - _EPOCH) // _ONE_MS
_MAX_MS = (datetime.max.replace(tzinfo=timezone.utc) - _EPOCH) // _ONE_MS
_GRAMMAR = (
    "use 'latest-full', 'latest', 'earliest', a snapshot id ('42' or 'snapshot:42'), "
    "'tag:<name>', 'time:<ISO-8601>' or a relative time such as 'time:-1h'"
)


@dataclass(frozen=True)
class StartPosition:
    """A parsed start spec; ``snapshot_id``, ``timestamp_ms`` and ``tag`` are set for their
    kinds."""

    kind: StartKind
    snapshot_id: int | None = None
    timestamp_ms: int | None = None
    tag: str | None = None

    def to_spec(self) -> str:
        """The string form, which :func:`parse_start` reads back."""
        if self.kind == "snapshot":
            return f"snapshot:{self.snapshot_id}"
        if self.kind == "tag":
            return f"tag:{self.tag}"
        if self.kind == "time":
            assert self.timestamp_ms is not None  # a time position always has one
            instant = _EPOCH + self.timestamp_ms * _ONE_MS  # exact; a float loses milliseconds
            return f"time:{instant.isoformat(timespec='milliseconds')}"
        return self.kind


def _now_ms() -> int:
    return int(datetime.now(tz=timezone.utc).timestamp() * 1000)


def _parse_snapshot_id(value: str | int, original: object) -> int:
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()):
            raise InvalidStartError(f"invalid snapshot id in position {original!r}: {_GRAMMAR}")
        # int() refuses over 4300 digits; anything over 19 is past the largest id anyway.
        value = int(value) if len(value.lstrip("0")) <= 19 else MAX_SNAPSHOT_ID + 1
    if value < 1:
        raise InvalidStartError(f"snapshot ids start at 1, got {brief_repr(original)}")
    if value > MAX_SNAPSHOT_ID:
        raise InvalidStartError(
            f"snapshot id too large in position {brief_repr(original)}: Paimon's snapshot ids end "
            f"at {MAX_SNAPSHOT_ID}"
        )
    return value


def _parse_instant_ms(text: str, original: object, now_ms: int) -> int:
    if _is_relative(text):
        return _in_range(now_ms - parse_duration_ms(text[1:], bare_unit=None), original)
    try:
        instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidStartError(
            f"invalid time in position {original!r}: give an ISO-8601 instant "
            f"('2026-11-20T08:00:00Z', '2026-11-20') or a relative time ('-1h', '-30m', '-7d')"
        ) from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=timezone.utc)
    return _in_range((instant - _EPOCH) // _ONE_MS, original)  # exact, floored to the ms


def _is_relative(text: str) -> bool:
    """``-1h``, ``-30m``, ...: a minus and a duration of the project's one grammar."""
    if not text.startswith("-"):
        return False
    try:
        parse_duration_ms(text[1:], bare_unit=None)
    except ConfigurationError:
        return False
    return True


def _in_range(timestamp_ms: int, original: object) -> int:
    if not _MIN_MS <= timestamp_ms <= _MAX_MS:
        raise InvalidStartError(
            f"time out of range in position {brief_repr(original)}: give an instant between the "
            f"years 1 and 9999 (UTC)"
        )
    return timestamp_ms


def parse_start(spec: StartSpec, *, now_ms: int | None = None) -> StartPosition:
    """Parse a start spec (see the module docstring); relative times resolve against ``now_ms``."""
    if isinstance(spec, StartPosition):
        return spec
    if isinstance(spec, bool) or not isinstance(spec, (str, int)):
        raise InvalidStartError(f"invalid start position {spec!r}: {_GRAMMAR}")
    if isinstance(spec, int):
        return StartPosition("snapshot", snapshot_id=_parse_snapshot_id(spec, spec))
    text = spec.strip()
    lowered = text.lower()
    if lowered in ("latest-full", "latest", "earliest"):
        return StartPosition(lowered)  # type: ignore[arg-type]
    now = _now_ms() if now_ms is None else now_ms
    if lowered.startswith("snapshot:"):
        return StartPosition("snapshot", snapshot_id=_parse_snapshot_id(text[9:].strip(), spec))
    if lowered.startswith("time:"):
        return StartPosition("time", timestamp_ms=_parse_instant_ms(text[5:].strip(), spec, now))
    if lowered.startswith("tag:"):
        name = text[4:].strip()
        if not _TAG_NAME.fullmatch(name):
            raise InvalidStartError(
                f"invalid tag in position {spec!r}: give 'tag:<name>' with a tag name of "
                f"letters, digits, '_', '-' or '.'"
            )
        return StartPosition("tag", tag=name)
    if text.isascii() and text.isdigit():
        return StartPosition("snapshot", snapshot_id=_parse_snapshot_id(text, spec))
    if _is_relative(text):
        return StartPosition("time", timestamp_ms=_parse_instant_ms(text, spec, now))
    raise InvalidStartError(f"invalid start position {spec!r}: {_GRAMMAR}")


def parse_end(spec: str | int | None) -> int | None:
    """Parse an end position: ``None`` (unbounded) or an inclusive snapshot id."""
    if spec is None:
        return None
    if isinstance(spec, bool) or not isinstance(spec, (str, int)):
        raise InvalidStartError(f"invalid end position {spec!r}: give a snapshot id such as 42")
    if isinstance(spec, int):
        return _parse_snapshot_id(spec, spec)  # str() of a huge int raises
    text = spec.strip()
    if text.lower().startswith("snapshot:"):
        text = text[9:].strip()
    return _parse_snapshot_id(text, spec)
