"""argparse types shared by every subcommand's arguments (``tail``, ``demo``, ``wire``,
``check``), so a duration means the same on each: the project's one grammar (``_units.py``)."""

from __future__ import annotations

import argparse

from paimon_feed._units import parse_duration
from paimon_feed.errors import ConfigurationError

__all__ = ["duration_seconds"]


def duration_seconds(text: str) -> float:
    """An argparse type: seconds in a duration (``500ms``, ``2s``, ``1m``, ``1h``, ``1d``,
    ``1w``; a bare number is seconds).

    >>> duration_seconds("1m"), duration_seconds("2")
    (60.0, 2.0)
    """
    try:
        return parse_duration(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
