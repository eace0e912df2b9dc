"""The one duration grammar (``paimon_feed._units``) and the places that read durations with it:
start positions (``-1h``), ``consumers --expire-older-than``, the CLI's ``--poll-interval``."""

from __future__ import annotations

import pytest

from paimon_feed._units import parse_duration, parse_duration_ms
from paimon_feed.consumers import parse_duration as consumers_duration
from paimon_feed.errors import ConfigurationError, InvalidStartError
from paimon_feed.start import parse_start


@pytest.mark.parametrize(
    "text, seconds",
    [("500ms", 0.5), ("2s", 2.0), ("1m", 60.0), ("1h", 3600.0), ("1d", 86400.0), ("1w", 604800.0),
     ("1.5h", 5400.0), (".5s", 0.5), (" 2 M ", 120.0), ("3W", 1814400.0)],
)
def test_every_unit_means_the_same_everywhere(text, seconds):
    assert parse_duration(text) == seconds
    assert parse_duration_ms(text) == seconds * 1000
    assert consumers_duration(text) == seconds
    assert parse_start(f"-{text.strip()}", now_ms=10**13).timestamp_ms == 10**13 - seconds * 1000


@pytest.mark.parametrize("text", ["", "1000", "s", "1 x", "1mss", "-1h", "1e3s", "1,5h", "١s"])
def test_anything_else_is_refused_naming_the_grammar(text):
    with pytest.raises(ConfigurationError, match="give a number and a unit, e.g. 500ms, 2s, 1m, 1h, 1d or 1w"):
        parse_duration(text)


def test_a_bare_number_needs_the_callers_unit():
    assert parse_duration("90", default_unit="s") == 90.0
    assert parse_duration_ms("250", default_unit="ms") == 250
    with pytest.raises(ConfigurationError, match=r"--x: invalid duration '90x'.*\(a bare number is in m\)"):
        parse_duration("90x", default_unit="m", what="--x")


def test_relative_starts_gained_units_and_still_refuse_garbage():
    # consumers --expire-older-than took no 1w or 500ms before; relative starts took no '-2H'.
    assert consumers_duration("1w") == 604800.0
    assert parse_start("time:-2H", now_ms=8 * 3_600_000).timestamp_ms == 6 * 3_600_000
    with pytest.raises(InvalidStartError):
        parse_start("-1y")
