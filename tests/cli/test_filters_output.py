"""Row filters and output formats of the CLI, on real Arrow data."""

import io

import pytest

from paimon_feed.cli.filters import (
    RowFilter,
    bind_filters,
    parse_filter,
    table_schema,
    to_predicate,
)
from paimon_feed.cli.output import RowWriter
from paimon_feed.errors import ConfigurationError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a=1", RowFilter("a", "=", "1")),
        ("a!=x", RowFilter("a", "!=", "x")),
        ("a>=2", RowFilter("a", ">=", "2")),
        ("a<2", RowFilter("a", "<", "2")),
        ("name=ab*", RowFilter("name", "prefix", "ab")),
        ("a=", RowFilter("a", "=", "")),
        ("a==1", RowFilter("a", "=", "1")),
        (" a = b c ", RowFilter("a", "=", "b c")),
        ("a >= 2", RowFilter("a", ">=", "2")),
    ],
)
def test_parse(text, expected):
    assert parse_filter(text) == expected


@pytest.mark.parametrize("text", ["", "=1", "a~1", "1a=2", "a===1", "a=>1", "a<>1", "a!=b*"])
def test_parse_rejects(text):
    with pytest.raises(ConfigurationError):
        parse_filter(text)


def test_predicates_build_for_the_table_types(append_table):
    assert to_predicate(append_table, []) is None
    schema = table_schema(append_table)
    filters = bind_filters(schema, [parse_filter("commit>=1"), parse_filter("payload=c1*")])
    assert [f.value for f in filters] == [1, "c1"]
    assert to_predicate(append_table, filters) is not None
    with pytest.raises(ConfigurationError, match="not a valid"):
        bind_filters(schema, [parse_filter("commit>x")])


def test_writers():
    rows = [{"a": 1, "b": [1, 2], "c": None}, {"a": 22, "b": [], "c": "x"}]
    out = io.StringIO()
    RowWriter("csv", out).write(rows)
    assert out.getvalue() == 'a,b,c\n1,"[1, 2]",\n22,[],x\n'
    out = io.StringIO()
    RowWriter("table", out).write(rows)
    assert "| 22 | []     | x    |" in out.getvalue()
    out = io.StringIO()
    RowWriter("jsonl", out).write(rows)
    assert out.getvalue().splitlines()[0] == '{"a": 1, "b": [1, 2], "c": null}'
