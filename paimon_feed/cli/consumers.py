"""``paimon-feed consumers``: the operator's commands on consumer files.

``consumers WAREHOUSE DB.TABLE`` lists a table's consumers; ``reset ID --to POSITION``,
``delete ID`` and ``--expire-older-than DURATION`` change them, and only with ``--yes`` (or
``--create`` for a new id) when the change could lose data; without it they print what they would
do. ``consumers WAREHOUSE`` lists the consumers of every table. The work itself is the library's
:mod:`paimon_feed.consumers`; this module checks the arguments and prints.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_feed.cli.parser import EXIT_OK, note
from paimon_feed.errors import ConfigurationError

if TYPE_CHECKING:
    from paimon_feed.consumers import ConsumerInfo

__all__ = ["run_consumers"]

_COLUMNS = ("consumer", "next snapshot", "lag", "oldest unread", "last written", "holds expiry")


def run_consumers(args: argparse.Namespace) -> int:
    """``paimon-feed consumers``; returns the exit code."""
    from paimon_feed.consumers import list_consumers, parse_duration
    from paimon_feed.tables import check_reachable, open_table

    if args.table is None:
        return _run_consumers_warehouse(args)
    if args.action != "list" and not args.consumer_id:
        raise ConfigurationError(f"consumers {args.action} needs the consumer id: consumers WH DB.TABLE {args.action} ID")
    if args.action == "list" and args.consumer_id:
        raise ConfigurationError(f"unexpected {args.consumer_id!r}: use 'reset ID --to POSITION' or 'delete ID'")
    if (args.action == "reset") != (args.position is not None):
        raise ConfigurationError("--to POSITION goes with reset, and reset needs it")
    if args.create and args.action != "reset":
        raise ConfigurationError("--create goes with reset: consumers WH DB.TABLE reset ID --to POSITION --create")
    if args.yes and args.action == "list" and not args.expire_older_than:
        raise ConfigurationError("--yes confirms delete, reset or --expire-older-than; there is nothing to confirm")
    older_than = parse_duration(args.expire_older_than) if args.expire_older_than else None
    options = dict(args.catalog_option)
    check_reachable(args.warehouse, options)
    table = open_table(args.warehouse, args.table, options)
    if older_than is not None:
        _expire(table, older_than, args)
    if args.action == "reset":
        _reset(table, args)
    elif args.action == "delete":
        _delete(table, args)
    consumers = list_consumers(table)
    if args.format == "json":
        print(json.dumps([consumer.to_dict() for consumer in consumers], indent=2))
        return EXIT_OK
    now_ms = int(time.time() * 1000)
    lines = [_cells(consumer, now_ms) for consumer in consumers]
    if not lines:
        print(f"table {args.table} has no consumers")
        return EXIT_OK
    _print_columns(_COLUMNS, lines)
    return EXIT_OK


def _run_consumers_warehouse(args: argparse.Namespace) -> int:
    from paimon_feed.consumers import list_consumers
    from paimon_feed.routing import TableSelector, list_tables
    from paimon_feed.tables import check_reachable, open_catalog, open_table

    if args.action != "list" or args.consumer_id or args.expire_older_than or args.position:
        raise ConfigurationError(
            "consumers WAREHOUSE without a table only lists; name the table to reset, delete "
            "or expire consumers: consumers WAREHOUSE DB.TABLE ..."
        )
    options = dict(args.catalog_option)
    check_reachable(args.warehouse, options)
    catalog = open_catalog(args.warehouse, options)
    found: list[tuple[str, ConsumerInfo]] = []
    for name in list_tables(catalog, TableSelector(None)):
        table = open_table(args.warehouse, name, catalog=catalog)
        found.extend((name, consumer) for consumer in list_consumers(table))
    if args.format == "json":
        print(json.dumps([{"table": name, **consumer.to_dict()} for name, consumer in found], indent=2))
        return EXIT_OK
    if not found:
        print(f"no table of {args.warehouse} has consumers")
        return EXIT_OK
    now_ms = int(time.time() * 1000)
    lines = [(name, *_cells(consumer, now_ms)) for name, consumer in found]
    _print_columns(("table", *_COLUMNS), lines)
    return EXIT_OK


def _cells(consumer: Any, now_ms: int) -> tuple[str, ...]:
    """One consumer's row of the listing, under :data:`_COLUMNS`."""
    return (
        consumer.consumer_id,
        str(consumer.next_snapshot_id),
        str(consumer.lag_snapshots),
        _age(now_ms, consumer.oldest_unread_commit_ms),
        "-" if consumer.last_modified_ms is None else datetime.datetime.fromtimestamp(
            consumer.last_modified_ms / 1000, tz=datetime.timezone.utc
        ).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "yes" if consumer.holds_expiry else "",
    )


def _print_columns(header: Sequence[str], lines: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in (header, *lines)) for i in range(len(header))]
    for row in (header, *lines):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def _age(now_ms: int, then_ms: int | None) -> str:
    if then_ms is None:
        return "-"
    seconds = max(0, (now_ms - then_ms) // 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds}s"


def _unconfirmed(what: str) -> None:
    note(f"nothing changed: add --yes to {what}")


def _expire(table: Any, older_than: float, args: argparse.Namespace) -> None:
    from paimon_feed.consumers import expire_consumers

    expired = expire_consumers(table, older_than, dry_run=not args.yes)
    verb = "deleted" if args.yes else "would delete"
    for consumer_id in expired:
        note(f"{verb} consumer {consumer_id}: not written for over {args.expire_older_than}")
    if not expired:
        note(f"no consumer of {args.table} went unwritten for over {args.expire_older_than}")
    elif not args.yes:
        _unconfirmed("delete " + ("it" if len(expired) == 1 else "them"))


def _reset(table: Any, args: argparse.Namespace) -> None:
    from paimon_feed.consumers import apply_reset, list_consumers, plan_reset

    plan = plan_reset(table, args.consumer_id, args.position)
    if plan.creates and not args.create:
        known = ", ".join(consumer.consumer_id for consumer in list_consumers(table)) or "none"
        raise ConfigurationError(
            f"table {args.table} has no consumer {args.consumer_id} (its consumers: {known}); "
            f"add --create to create it: a consumer keeps Paimon from expiring the snapshots it "
            f"has not read, until it is deleted"
        )
    if plan.past_expired and not args.yes:
        assert plan.earliest_snapshot_id is not None  # past_expired means there is one
        if plan.creates:
            verb, move = "create", f"create consumer {args.consumer_id} at snapshot {plan.next_snapshot_id}"
        else:
            verb = "move"
            move = (
                f"move consumer {args.consumer_id} from snapshot {plan.current_next_snapshot_id} "
                f"to {plan.next_snapshot_id}"
            )
        note(
            f"would {move}, but snapshots {plan.next_snapshot_id} to {plan.earliest_snapshot_id - 1} "
            f"expired (the earliest retained is {plan.earliest_snapshot_id}): its next read would "
            f"fail with 'snapshot expired' unless it runs with --on-expired"
        )
        _unconfirmed(f"{verb} it anyway")
        return
    next_id = apply_reset(table, plan, create=args.create, past_expired=args.yes)
    if plan.creates:
        note(f"created consumer {args.consumer_id}: it reads snapshot {next_id} next")
    else:
        note(f"consumer {args.consumer_id} now reads snapshot {next_id} next")


def _delete(table: Any, args: argparse.Namespace) -> None:
    from paimon_feed.consumers import delete_consumer

    delete_consumer(table, args.consumer_id, dry_run=not args.yes)
    if args.yes:
        note(f"deleted consumer {args.consumer_id}")
    else:
        note(f"would delete consumer {args.consumer_id}")
        _unconfirmed("delete it")
