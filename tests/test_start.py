"""Start and end position grammar."""

import pytest

from paimon_feed import InvalidStartError, StartPosition, parse_end, parse_start

NOW = 1_800_000_000_000


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("latest-full", StartPosition("latest-full")),
        ("LATEST", StartPosition("latest")),
        (" earliest ", StartPosition("earliest")),
        (42, StartPosition("snapshot", snapshot_id=42)),
        ("42", StartPosition("snapshot", snapshot_id=42)),
        ("snapshot:7", StartPosition("snapshot", snapshot_id=7)),
        ("time:-1h", StartPosition("time", timestamp_ms=NOW - 3_600_000)),
        ("-30m", StartPosition("time", timestamp_ms=NOW - 1_800_000)),
        ("time:-7d", StartPosition("time", timestamp_ms=NOW - 7 * 86_400_000)),
        ("time:-90s", StartPosition("time", timestamp_ms=NOW - 90_000)),
        ("time:1970-01-01T00:00:01Z", StartPosition("time", timestamp_ms=1000)),
        ("time:1970-01-02", StartPosition("time", timestamp_ms=86_400_000)),
        ("time:1970-01-01T01:00:00+01:00", StartPosition("time", timestamp_ms=0)),
    ],
)
def test_start_specs_parse(spec, expected):
    assert parse_start(spec, now_ms=NOW) == expected


@pytest.mark.parametrize(
    "spec", ["", "latest_full", "snapshot:", "snapshot:x", 0, -1, True, 1.5, None, "time:", "time:-1y", "-h"]
)
def test_bad_start_specs_name_the_grammar(spec):
    with pytest.raises(InvalidStartError, match="position|snapshot ids"):
        parse_start(spec, now_ms=NOW)


def test_start_positions_round_trip_through_their_string_form():
    for spec in ["latest-full", "latest", "earliest", "snapshot:3", "time:2026-11-20T08:00:00.250Z"]:
        position = parse_start(spec, now_ms=NOW)
        assert parse_start(position.to_spec(), now_ms=NOW) == position


def test_end_positions():
    assert parse_end(None) is None
    assert parse_end(9) == 9
    assert parse_end("snapshot:9") == 9
    for bad in ("soon", 0, "snapshot:0", True):
        with pytest.raises(InvalidStartError):
            parse_end(bad)
