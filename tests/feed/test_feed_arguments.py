"""Wrong-typed ``ChangeFeed`` arguments are a ``ConfigurationError`` naming the argument, not an
``AttributeError`` or ``TypeError`` from deep inside planning."""

from __future__ import annotations

import os

import pytest

import paimon_feed
from paimon_feed import ChangeFeed, ConfigurationError
from paimon_feed.errors import UnknownArgumentError


@pytest.mark.parametrize(
    "arguments, named",
    [
        ({"table": "db.events"}, "table must be a pypaimon table"),
        ({"predicate": "x>3"}, "predicate must be a pypaimon Predicate"),
        ({"reconcile_interval": "5 s please"}, "reconcile_interval: invalid duration '5 s please': give a number"),
        ({"poll_interval": None}, "poll_interval: invalid duration of type NoneType"),
        ({"poll_interval": -1}, "poll_interval: invalid duration -1: a duration is a finite number >= 0"),
        ({"poll_interval": 0}, "poll_interval must be greater than zero, got 0"),
        ({"max_pending": 2.5}, "max_pending must be a whole number"),
        ({"max_pending": True}, "max_pending must be a whole number"),
        ({"catch_up_threshold": "10"}, "catch_up_threshold must be a whole number"),
        ({"consumer_id": 7}, "consumer_id must be a string"),
        ({"projection": "id"}, "projection must be a list of column names"),
        ({"projection": ["id", 3]}, "projection must be a list of column names"),
        ({"buckets": 3}, "buckets must be bucket ids"),
        ({"buckets": ["0"]}, "buckets must be bucket ids"),
        ({"include_row_kind": "yes"}, "include_row_kind must be True or False"),
        ({"auto_commit": 1}, "auto_commit must be True or False"),
        ({"sqs_queue_url": 5}, "sqs_queue_url must be the queue's URL"),
        ({"start": 2.5}, "invalid start position 2.5"),
        ({"notifier": 5}, "notifier must be"),
    ],
)
def test_wrong_typed_arguments_are_a_configuration_error_naming_the_argument(append_table, arguments, named):
    table = arguments.pop("table", append_table)
    with pytest.raises(ConfigurationError) as raised:
        ChangeFeed(table, **arguments)
    assert named in str(raised.value)


def test_well_typed_arguments_of_every_kind_are_accepted(append_table):
    feed = ChangeFeed(
        append_table, consumer_id="ok", reconcile_interval=5, poll_interval=0.5, projection=("id",),
        buckets=iter([0]), max_pending=2, catch_up_threshold=1, include_row_kind=True,
        auto_commit=False, sqs_queue_url=None,
    )
    assert feed.consumer_id == "ok"


def test_a_mistyped_keyword_is_refused_naming_the_one_meant(append_table):
    """Before: Python's bare 'unexpected keyword argument' TypeError."""
    with pytest.raises(UnknownArgumentError) as raised:
        ChangeFeed(append_table, consumer="x")
    message = str(raised.value)
    assert message.startswith("ChangeFeed() got an unknown keyword argument 'consumer' (did you mean 'consumer_id'?)")
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, ConfigurationError)
    with pytest.raises(UnknownArgumentError, match=r"'reconcile' \(did you mean 'reconcile_interval'\?\)"):
        ChangeFeed(append_table, reconcile=5)


def test_a_table_path_instead_of_a_table_suggests_a_call_that_opens_it(warehouse, append_table, monkeypatch):
    """Before: the hint was open_table(warehouse, 'wh/own.db/users'), which fails too."""
    parent, name = os.path.split(warehouse.rstrip("/"))
    monkeypatch.chdir(parent)
    with pytest.raises(ConfigurationError) as raised:
        ChangeFeed(f"{name}/db.db/events")
    suggested = str(raised.value).split("open it first: ", 1)[1]
    assert suggested == f"paimon_feed.open_table({name!r}, 'db.events')"
    table = eval(suggested, {"paimon_feed": paimon_feed})  # the call it suggests works
    assert table.identifier.get_full_name() == "db.events"
