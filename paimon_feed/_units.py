"""The project's one duration grammar: a number and a unit, ``ms``, ``s``, ``m``, ``h``, ``d``
or ``w`` (``500ms``, ``2s``, ``1.5h``, ``1w``; units in any case, blanks allowed around), and a
bare number is seconds (``"2"`` and ``2`` are two seconds); from Python a :class:`~datetime.timedelta`
too.

Pure: no I/O, no clock. Every duration of our own options is read here, whoever gives it: the
CLI (``--poll-interval``, ``--expire-older-than``, ``demo --interval``), Python
(``ChangeFeed(poll_interval=..., reconcile_interval=...)``, ``WarehouseFeed(discovery_interval=...)``,
``PollingNotifier``), the Spark source's options (``pollInterval``, ``reconcileInterval``) and the
Lambda handler's environment (``PAIMON_FEED_DEADLINE_MARGIN``), so the same text means the same
time everywhere. A bare number is seconds because that is what the Python arguments always
took; a name that carries its unit (``PAIMON_FEED_DEADLINE_MARGIN_MS``) reads a bare number in
that unit (``bare_unit``). Two places take no bare number: a relative start time (``-1h``: a bare
``-90`` would read like a snapshot id) passes ``bare_unit=None``. Paimon's own table options,
passed through to pypaimon, keep Paimon's grammar.

>>> parse_duration("500ms"), parse_duration("2s"), parse_duration("1.5h"), parse_duration("1w")
(0.5, 2.0, 5400.0, 604800.0)
>>> parse_duration("90"), parse_duration(90), parse_duration(0.25)
(90.0, 90.0, 0.25)
>>> from datetime import timedelta
>>> parse_duration(timedelta(minutes=2))
120.0
>>> parse_duration_ms("1d"), parse_duration_ms("250", bare_unit="ms")
(86400000, 250)
>>> parse_duration("1000", bare_unit=None)
Traceback (most recent call last):
...
paimon_feed.errors.ConfigurationError: invalid duration '1000': give a number and a unit, e.g. 500ms, 2s, 1m, 1h, 1d or 1w
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from decimal import Decimal

from paimon_feed.errors import ConfigurationError

__all__ = ["DURATION_EXAMPLES", "DURATION_UNITS_MS", "Duration", "parse_duration", "parse_duration_ms"]

#: What a duration may be given as: text of the grammar, a number of seconds, a timedelta.
Duration = str | int | float | timedelta

DURATION_UNITS_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
DURATION_EXAMPLES = "500ms, 2s, 1m, 1h, 1d or 1w"
_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ms|s|m|h|d|w)?\s*", re.IGNORECASE)


def parse_duration_ms(value: Duration, *, bare_unit: str | None = "s", what: str = "duration") -> int:
    """Milliseconds in ``value``, exactly (a fraction of a millisecond is dropped).

    ``bare_unit`` is the unit of a bare number (text or a Python number); ``None`` refuses one.
    ``what`` names the duration in the error (an option such as ``--poll-interval``).

    >>> parse_duration_ms("1.5s"), parse_duration_ms(" 2 M "), parse_duration_ms("0.5ms")
    (1500, 120000, 0)
    """
    amount, unit = _split(value, bare_unit, what)
    return int(amount * DURATION_UNITS_MS[unit])  # Decimal: exact, and no float overflow


def parse_duration(value: Duration, *, bare_unit: str | None = "s", what: str = "duration") -> float:
    """Seconds in ``value`` (see :func:`parse_duration_ms` for the arguments).

    >>> parse_duration("7d"), parse_duration("90m"), parse_duration(".25s"), parse_duration(" 3 ")
    (604800.0, 5400.0, 0.25, 3.0)
    """
    amount, unit = _split(value, bare_unit, what)
    return float(amount * DURATION_UNITS_MS[unit] / 1000)


def _split(value: Duration, bare_unit: str | None, what: str) -> tuple[Decimal, str]:
    if isinstance(value, timedelta):
        if value < timedelta(0):
            raise _invalid(value, bare_unit, what, "a duration cannot be negative")
        return Decimal(value // timedelta(microseconds=1)) / 1000, "ms"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and bare_unit is not None:
        if not math.isfinite(value) or value < 0:
            raise _invalid(value, bare_unit, what, "a duration is a finite number >= 0")
        return Decimal(value), bare_unit
    match = _DURATION.fullmatch(value) if isinstance(value, str) else None
    if match is None or (match.group(2) is None and bare_unit is None):
        raise _invalid(value, bare_unit, what, None)
    return Decimal(match.group(1)), (match.group(2) or bare_unit or "").lower()


def _invalid(value: object, bare_unit: str | None, what: str, reason: str | None) -> ConfigurationError:
    shown = repr(value) if isinstance(value, (str, int, float, timedelta)) and not isinstance(value, bool) else (
        f"of type {type(value).__name__}"
    )
    prefix = "invalid duration" if what == "duration" else f"{what}: invalid duration"
    if reason is not None:
        return ConfigurationError(f"{prefix} {shown}: {reason}")
    if bare_unit is None:
        return ConfigurationError(f"{prefix} {shown}: give a number and a unit, e.g. {DURATION_EXAMPLES}")
    extra = ", or a timedelta" if bare_unit == "s" else ""
    return ConfigurationError(
        f"{prefix} {shown}: give a number and a unit, e.g. {DURATION_EXAMPLES} (a bare number is in "
        f"{_UNIT_NAMES[bare_unit]}{extra})"
    )


_UNIT_NAMES = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
