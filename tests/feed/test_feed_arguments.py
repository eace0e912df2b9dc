"""Wrong-typed ``ChangeFeed`` arguments are a ``ConfigurationError`` naming the argument, not an
``AttributeError`` or ``TypeError`` from deep inside planning."""

from __future__ import annotations

import pytest

from paimon_feed import ChangeFeed, ConfigurationError


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
