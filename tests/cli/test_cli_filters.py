"""``paimon-feed tail -f``: filter values read as the column's Arrow type, on a real table with
a column of each type (rows 0, 1, 2; see ``support.tables.typed_rows``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.tables import create_typed_table

from paimon_feed.cli import main


@pytest.fixture
def typed_table(cat):
    return create_typed_table(cat)


def tail_rows(capsys, warehouse, *filters: str) -> list[int]:
    """Which rows (by ``i64``) ``tail --from earliest --to 1`` prints with these filters."""
    args = ["tail", warehouse, "db.typed", "--from", "earliest", "--to", "1", "--columns", "i64"]
    for expression in filters:
        args += ["-f", expression]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    return sorted(json.loads(line)["i64"] for line in out.splitlines())


@pytest.mark.parametrize(
    "expression, rows",
    [
        ("i8=1", [1]),
        ("i8>=1", [1, 2]),
        ("i32<20", [0, 1]),
        ("i64 != 1", [0, 2]),
        ("f32=1.1", [1]),  # compared as float32, as stored: 1.1 is not exactly a float32
        ("f64>1", [1, 2]),
        ("price=5.10", [0]),  # was compared as a float and matched nothing
        ("price=5.1", [0]),
        ("price>6", [1, 2]),
        ("flag=true", [1]),
        ("flag==FALSE", [0, 2]),
        ("status==shipped", [0]),
        ("status = shipped", [0]),
        ("status=ship*", [0, 2]),
        ("day=2026-01-05", [0]),
        ("day>2026-01-05", [1, 2]),
        ("ts>2026-01-01T00:00:09", [2]),
        ("ts=2026-01-01 00:00:08", [0]),
        ("tsz>=2026-01-01T00:00:09Z", [1, 2]),
        ("tsz=2026-01-01T01:00:08+01:00", [0]),
        ("tsz=2026-01-01T00:00:08", [0]),  # no offset on a zoned column: UTC
    ],
)
def test_filter_values_are_read_as_the_column_type(capsys, warehouse, typed_table, expression, rows):
    assert tail_rows(capsys, warehouse, expression) == rows


def test_filters_combine_across_types(capsys, warehouse, typed_table):
    assert tail_rows(capsys, warehouse, "price>=6", "day<2026-01-07", "flag=true") == [1]


@pytest.mark.parametrize(
    "expression, message",
    [
        ("i8=300", "column i8 is int8; '300' is not a valid value"),
        ("i64=1.5", "column i64 is int64; '1.5' is not a valid value"),
        ("i64=1*", "a prefix match (value*) needs a string column"),
        ("price=5.123", "column price is decimal128(10, 2); '5.123' is not a valid value"),
        ("price=abc", "'abc' is not a valid value for it: at most the column's scale in decimal places (not a decimal number)"),
        ("flag=yes", "not a valid boolean: use true or false"),
        ("flag>true", "use = or != on a boolean"),
        ("day=2026-13-01", "column day is date32[day]; '2026-13-01' is not a valid value for it: use YYYY-MM-DD"),
        ("ts=2026-01-01T00:00:08Z", "give the time without an offset"),
        ("tsz=yesterday", "is not a valid value for it: use YYYY-MM-DDTHH:MM"),
        ("raw=a", "filters work on numbers, strings, booleans, dates and times"),
        ("status===shipped", "operator ==="),
        ("status=>a", "operator =>"),
        ("status!=ship*", "works only with '='"),
        ("ghost=1", "unknown column 'ghost'"),
    ],
)
def test_a_value_or_operator_that_does_not_fit_is_one_line_rc_2(warehouse, typed_table, expression, message):
    result = subprocess.run(
        [sys.executable, "-m", "paimon_feed.cli", "tail", warehouse, "db.typed", "--to", "1", "-f", expression],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("paimon-feed: error: "), result.stderr
    assert message in lines[0]
    assert "<class" not in lines[0]  # was "([<class 'decimal.ConversionSyntax'>])" for price=abc
