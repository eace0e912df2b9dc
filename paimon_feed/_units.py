"""The project's one duration grammar: a number and a unit, ``ms``, ``s``, ``m``, ``h``, ``d``
or ``w`` (``500ms``, ``2s``, ``1.5h``, ``1w``; units in any case, blanks allowed around).

Pure: no I/O, no clock. Every place that reads a duration from a person (the CLI's
``--poll-interval`` and ``--expire-older-than``, relative start times such as ``-1h``) parses it
here, so the same text means the same time everywhere. A bare number is refused unless the
caller names the unit it means (``default_unit``), because a bare ``1000`` has meant
milliseconds in one place and seconds in another.

>>> parse_duration("500ms"), parse_duration("2s"), parse_duration("1.5h"), parse_duration("1w")
(0.5, 2.0, 5400.0, 604800.0)
>>> parse_duration("90", default_unit="s")
90.0
>>> parse_duration_ms("1d")
86400000
>>> parse_duration("1000")
Traceback (most recent call last):
...
paimon_feed.errors.ConfigurationError: invalid duration '1000': give a number and a unit, e.g. 500ms, 2s, 1m, 1h, 1d or 1w
"""

from __future__ import annotations

import re
from decimal import Decimal

from paimon_feed.errors import ConfigurationError

__all__ = ["DURATION_EXAMPLES", "DURATION_UNITS_MS", "parse_duration", "parse_duration_ms"]

DURATION_UNITS_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
DURATION_EXAMPLES = "500ms, 2s, 1m, 1h, 1d or 1w"
_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ms|s|m|h|d|w)?\s*", re.IGNORECASE)


def parse_duration_ms(text: str, *, default_unit: str | None = None, what: str = "duration") -> int:
    """Milliseconds in ``text``, exactly (a fraction of a millisecond is dropped).

    ``default_unit`` is the unit of a bare number; without it a bare number is an error.
    ``what`` names the duration in the error (an option such as ``--poll-interval``).

    >>> parse_duration_ms("1.5s"), parse_duration_ms(" 2 M "), parse_duration_ms("0.5ms")
    (1500, 120000, 0)
    """
    amount, unit = _split(text, default_unit, what)
    return int(amount * DURATION_UNITS_MS[unit])  # Decimal: exact, and no float overflow


def parse_duration(text: str, *, default_unit: str | None = None, what: str = "duration") -> float:
    """Seconds in ``text`` (see :func:`parse_duration_ms` for the arguments).

    >>> parse_duration("7d"), parse_duration("90m"), parse_duration(".25s")
    (604800.0, 5400.0, 0.25)
    """
    amount, unit = _split(text, default_unit, what)
    return float(amount * DURATION_UNITS_MS[unit] / 1000)


def _split(text: str, default_unit: str | None, what: str) -> tuple[Decimal, str]:
    match = _DURATION.fullmatch(text) if isinstance(text, str) else None
    if match is None or (match.group(2) is None and default_unit is None):
        shown = repr(text) if isinstance(text, str) else f"of type {type(text).__name__}"
        prefix = "invalid duration" if what == "duration" else f"{what}: invalid duration"
        bare = f" (a bare number is in {default_unit})" if default_unit else ""
        raise ConfigurationError(
            f"{prefix} {shown}: give a number and a unit, e.g. {DURATION_EXAMPLES}{bare}"
        )
    unit = (match.group(2) or default_unit or "").lower()
    return Decimal(match.group(1)), unit
