"""The one duration grammar (``paimon_feed._units``) and the places that read durations with it:
start positions (``-1h``), ``consumers --expire-older-than``, the CLI's ``--poll-interval``, the
Python arguments (``poll_interval``, ``reconcile_interval``, ``discovery_interval``,
``PollingNotifier``), the Spark source's options and the Lambda handler's deadline margin."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
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


@pytest.mark.parametrize("text", ["", "s", "1 x", "1mss", "-1h", "1e3s", "1,5h", "١s", "-2"])
def test_anything_else_is_refused_naming_the_grammar(text):
    with pytest.raises(ConfigurationError, match="give a number and a unit, e.g. 500ms, 2s, 1m, 1h, 1d or 1w"):
        parse_duration(text)


def test_a_bare_number_is_seconds_as_text_or_as_a_python_number_and_a_timedelta_is_taken():
    assert parse_duration("90") == parse_duration(90) == parse_duration(90.0) == 90.0
    assert parse_duration(" 0.5 ") == parse_duration(0.5) == parse_duration(timedelta(milliseconds=500)) == 0.5
    assert parse_duration_ms(timedelta(hours=1, microseconds=1500)) == 3_600_001
    assert parse_duration_ms("250", bare_unit="ms") == 250  # a name that carries its unit
    for wrong in (-1, float("nan"), float("inf"), timedelta(seconds=-1)):
        with pytest.raises(ConfigurationError, match=r"poll_interval: invalid duration"):
            parse_duration(wrong, what="poll_interval")
    with pytest.raises(ConfigurationError, match=r"invalid duration of type bool"):
        parse_duration(True)
    with pytest.raises(ConfigurationError, match=r"--x: invalid duration '90x'.*\(a bare number is in seconds, or a timedelta\)"):
        parse_duration("90x", what="--x")


def test_a_relative_start_still_needs_a_unit():
    # '-90' reads like a snapshot id: a relative time names its unit
    assert parse_start("-90s", now_ms=10**6).timestamp_ms == 10**6 - 90_000
    with pytest.raises(InvalidStartError):
        parse_start("time:-90", now_ms=10**6)


@pytest.mark.parametrize("given", [2, 2.0, "2", "2s", "2000ms", timedelta(seconds=2)])
def test_every_python_duration_argument_takes_the_grammar(given, tmp_path):
    from pypaimon import CatalogFactory, Schema

    from paimon_feed import ChangeFeed, PollingNotifier, WarehouseFeed

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(pa.schema([("id", pa.int64())])), False)
    table = catalog.get_table("db.t")
    feed = ChangeFeed(table, poll_interval=given, reconcile_interval=given)
    assert (feed.options.poll_interval, feed.options.reconcile_interval) == (2.0, 2.0)
    assert PollingNotifier(poll_interval=given, max_poll_interval=given).max_poll_interval == 2.0
    assert WarehouseFeed(str(tmp_path), discovery_interval=given).discovery_interval == 2.0


def test_python_duration_arguments_refuse_garbage_and_zero_naming_the_argument(tmp_path):
    from pypaimon import CatalogFactory, Schema

    from paimon_feed import ChangeFeed

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(pa.schema([("id", pa.int64())])), False)
    table = catalog.get_table("db.t")
    with pytest.raises(ConfigurationError, match=r"poll_interval: invalid duration '2 seconds'"):
        ChangeFeed(table, poll_interval="2 seconds")
    with pytest.raises(ConfigurationError, match=r"reconcile_interval must be greater than zero, got '0s'"):
        ChangeFeed(table, reconcile_interval="0s")


@pytest.mark.parametrize("given, seconds", [("2", 2.0), ("2s", 2.0), ("500ms", 0.5), ("1m", 60.0)])
def test_spark_options_read_the_same_grammar(given, seconds):
    from paimon_feed.spark.options import parse_options

    options = parse_options({"warehouse": "/wh", "table": "db.t", "pollInterval": given, "reconcileInterval": given})
    assert (options.poll_interval, options.reconcile_interval) == (seconds, seconds)


@pytest.mark.parametrize(
    "env, margin_ms",
    [({"PAIMON_FEED_DEADLINE_MARGIN": "2"}, 2000), ({"PAIMON_FEED_DEADLINE_MARGIN": "500ms"}, 500),
     ({"PAIMON_FEED_DEADLINE_MARGIN": "1m"}, 60_000), ({"PAIMON_FEED_DEADLINE_MARGIN_MS": "2000"}, 2000),
     ({"PAIMON_FEED_DEADLINE_MARGIN_MS": "2s"}, 2000), ({}, None)],
)
def test_the_lambda_deadline_margin_reads_the_same_grammar(env, margin_ms):
    from paimon_feed.aws.config import _margin

    assert _margin(env) == margin_ms


def test_the_lambda_deadline_margin_is_set_once():
    from paimon_feed.aws.config import _margin

    with pytest.raises(ConfigurationError, match="set one of PAIMON_FEED_DEADLINE_MARGIN and PAIMON_FEED_DEADLINE_MARGIN_MS"):
        _margin({"PAIMON_FEED_DEADLINE_MARGIN": "2s", "PAIMON_FEED_DEADLINE_MARGIN_MS": "2000"})


def test_relative_starts_gained_units_and_still_refuse_garbage():
    # consumers --expire-older-than took no 1w or 500ms before; relative starts took no '-2H'.
    assert consumers_duration("1w") == 604800.0
    assert parse_start("time:-2H", now_ms=8 * 3_600_000).timestamp_ms == 6 * 3_600_000
    with pytest.raises(InvalidStartError):
        parse_start("-1y")
