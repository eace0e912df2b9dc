"""Fuzzing the start/end grammar: any input is a position or an InvalidStartError, and every
position a spec parses to reads back from its own ``to_spec()``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import example, given
from hypothesis import strategies as st

from paimon_feed.errors import InvalidStartError
from paimon_feed.start import StartPosition, parse_end, parse_start

NOW_MS = 1_795_000_000_000  # a fixed "now" so relative times are reproducible

UNICODE_DIGITS = "0123456789٠١٢٣٤٥٦٧٨٩０１２３４５６７８９۳߂१৪"
digits = st.text(alphabet=UNICODE_DIGITS, min_size=1, max_size=30)
huge_digits = st.integers(min_value=4000, max_value=6000).map(lambda n: "9" * n)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=2**62, max_value=2**70),
    st.integers(min_value=-(2**70), max_value=1),
).map(str)
relative = st.builds(
    lambda sign, amount, space, unit: f"{sign}{amount}{space}{unit}",
    st.sampled_from(["-", "", "+", "--"]),
    st.one_of(
        st.integers(min_value=0, max_value=10**30).map(str),
        st.floats(min_value=0, allow_nan=False, allow_infinity=False).map(repr),
        st.from_regex(r"[0-9]{1,400}(\.[0-9]{1,20})?", fullmatch=True),
        digits,
    ),
    st.sampled_from(["", " ", "\t", "  "]),
    st.sampled_from(["ms", "s", "m", "h", "d", "w", "H", "y", "", "µs"]),
)
timezones = st.one_of(  # ISO-8601 offsets are whole minutes (CPython drops a seconds part)
    st.none(),
    st.just(timezone.utc),
    st.integers(min_value=-1439, max_value=1439).map(lambda m: timezone(timedelta(minutes=m))),
)
iso_instants = st.builds(
    lambda moment, sep, spec, zulu: _iso(moment, sep, spec, zulu),
    st.datetimes(timezones=timezones),
    st.sampled_from(["T", " "]),
    st.sampled_from(["auto", "hours", "minutes", "seconds", "milliseconds", "microseconds"]),
    st.booleans(),
)
iso_dates = st.dates().map(lambda day: day.isoformat())


def _iso(moment: datetime, sep: str, timespec: str, zulu: bool) -> str:
    text = moment.isoformat(sep=sep, timespec=timespec)
    return text.replace("+00:00", "Z") if zulu else text


bodies = st.one_of(
    digits, huge_digits, numbers, relative, iso_instants, iso_dates, st.text(max_size=40)
)
prefixes = st.sampled_from(
    ["", "snapshot:", "time:", "tag:", "SNAPSHOT:", "Time:", "TAG:", "snapshot: ", " time:",
     "tag: ", "snapshot", "time", "tag:tag:", "latest", "latest-full", "earliest"]
)
specs = st.one_of(
    st.builds(lambda prefix, body: prefix + body, prefixes, bodies),
    st.sampled_from(["latest-full", "LATEST", " earliest ", "latest-", "earliest-full"]),
    st.text(),
)
non_strings = st.one_of(
    st.integers(),
    st.integers(min_value=10**4000, max_value=10**4400),
    st.booleans(),
    st.none(),
    st.floats(),
    st.binary(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.complex_numbers(),
)


@given(st.one_of(specs, non_strings))
@example("snapshot:" + "9" * 5000)  # int() of over 4300 digits raised a bare ValueError
@example(10**5000)  # str() of a huge int raised a bare ValueError
@example("time:-" + "9" * 400 + "w")  # float('9'*400) is inf: int() raised OverflowError
@example("time:-100000000000w")  # before year 1: to_spec() raised OverflowError
@example("time:0001-01-01T00:00:00+01:00")  # before year 1 in UTC: OverflowError
@example("time:9999-12-31T23:59:59-01:00")  # after year 9999 in UTC
@example("time:1970-01-01T00:00:00.001Z")
def test_any_start_spec_is_a_position_or_an_invalid_start_error(spec):
    try:
        position = parse_start(spec, now_ms=NOW_MS)
    except InvalidStartError as error:
        assert str(error)
        return
    assert isinstance(position, StartPosition)
    assert position.kind in ("latest-full", "latest", "earliest", "snapshot", "time", "tag")
    if position.kind == "snapshot":
        assert isinstance(position.snapshot_id, int) and position.snapshot_id >= 1
    if position.kind == "time":
        assert isinstance(position.timestamp_ms, int)
    # Whatever parses must read back from its own spec, unchanged.
    assert parse_start(position.to_spec(), now_ms=0) == position


end_prefixes = st.sampled_from(["", "snapshot:", " SNAPSHOT: "])
end_specs = st.builds(lambda prefix, body: prefix + body, end_prefixes, bodies)


@given(st.one_of(end_specs, st.text(), non_strings))
@example("9" * 5000)
@example(10**5000)
def test_any_end_spec_is_a_snapshot_id_or_an_invalid_start_error(spec):
    try:
        end = parse_end(spec)
    except InvalidStartError as error:
        assert str(error)
        return
    if spec is None:
        assert end is None
        return
    assert isinstance(end, int) and end >= 1
    assert parse_end(str(end)) == parse_end(f"snapshot:{end}") == end


@given(st.integers(min_value=1, max_value=2**63 - 1))
def test_snapshot_positions_round_trip(snapshot_id):
    specs = (snapshot_id, str(snapshot_id), f"snapshot:{snapshot_id}", f" Snapshot: {snapshot_id} ")
    for spec in specs:
        position = parse_start(spec)
        assert position == StartPosition("snapshot", snapshot_id=snapshot_id)
        assert parse_start(position.to_spec()) == position
    assert parse_end(snapshot_id) == parse_end(f"snapshot:{snapshot_id}") == snapshot_id


@given(st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,60}", fullmatch=True))
def test_tag_positions_round_trip(name):
    position = parse_start(f"tag:{name}")
    assert position == StartPosition("tag", tag=name)
    assert parse_start(position.to_spec()) == position


@given(st.datetimes(datetime(1, 1, 2), datetime(9999, 12, 30), timezones=timezones))
@example(datetime(2249, 1, 1, 0, 0, 0, 1000))  # float seconds: to_spec() read back 1 ms later
@example(datetime(1969, 1, 1, 0, 0, 0, 1))  # int() of a negative float rounded towards 0
def test_iso_times_resolve_to_their_instant_to_the_millisecond(moment):
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    expected_ms = (aware - epoch) // timedelta(milliseconds=1)
    position = parse_start(f"time:{moment.isoformat()}")
    assert position.timestamp_ms == expected_ms
    assert parse_start(position.to_spec()) == position


@given(
    st.integers(min_value=0, max_value=10**5),
    st.sampled_from(sorted({"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
                            "w": 604_800_000}.items())),
)
def test_relative_times_count_back_from_now(amount, unit):
    name, unit_ms = unit
    for spec in (f"time:-{amount}{name}", f"-{amount}{name}", f"time: -{amount} {name}"):
        position = parse_start(spec, now_ms=NOW_MS)
        assert position == StartPosition("time", timestamp_ms=NOW_MS - amount * unit_ms)
