"""The warehouse forms of ``paimon-feed tail`` and ``paimon-feed consumers``.

``paimon-feed tail WAREHOUSE`` follows every table (new ones included), ``tail WAREHOUSE
'sales.*' ops.events`` the matching ones, through one :class:`~paimon_feed.WarehouseFeed`;
each row carries ``_table``, its first column. ``paimon-feed consumers WAREHOUSE`` lists the
consumers of every table. Kept apart from :mod:`paimon_feed.cli` (which parses arguments and maps
errors to exit codes) so each entry point stays thin.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
import time
from typing import Any, Callable, Sequence

from paimon_feed.errors import ConfigurationError, TableNotFoundError

__all__ = ["follows_one_table", "run_consumers_warehouse", "run_tail_warehouse"]


def follows_one_table(names: Sequence[str]) -> bool:
    """Whether ``tail`` names exactly one table (no pattern): the single-table form."""
    return len(names) == 1 and not set("*?[") & set(names[0])


def run_tail_warehouse(
    args: argparse.Namespace,
    until_signalled: Callable[[Any], Any],
    print_rows: Callable[..., Any],
    metrics_server: Callable[[argparse.Namespace, Any], Any],
) -> int:
    from paimon_feed.output import RowWriter
    from paimon_feed.routing import TableSelector, list_tables
    from paimon_feed.start import parse_end, parse_start
    from paimon_feed.tables import check_reachable, open_catalog

    if args.filter or args.columns:
        raise ConfigurationError(
            "--filter and --columns apply to one table's columns: name one table "
            "(tail WAREHOUSE DB.TABLE) to use them"
        )
    if args.limit is not None and args.limit < 1:
        raise ConfigurationError(f"--limit must be >= 1, got {args.limit}")
    if args.poll_interval < 1:
        raise ConfigurationError(f"--poll-interval must be >= 1 ms, got {args.poll_interval}")
    if args.metrics_port is not None:
        from paimon_feed.metrics import FeedCollector

        FeedCollector()  # without prometheus-client: the install hint, before anything opens
    parse_start(args.start or "latest")
    parse_end(args.end)
    options = dict(args.catalog_option)
    check_reachable(args.warehouse, options)
    selector = TableSelector(args.table or None)
    catalog = open_catalog(args.warehouse, options)
    existing = set(list_tables(catalog, selector))
    missing = [name for name in selector.exact_names() if name not in existing]
    if missing:
        raise TableNotFoundError(
            f"table {', '.join(missing)} does not exist in warehouse {args.warehouse}"
        )
    if not existing:
        print(
            f"paimon-feed: note: no table of {args.warehouse} matches yet; waiting for one",
            file=sys.stderr, flush=True,
        )
    writer = RowWriter(args.format, sys.stdout)

    async def tail() -> int:
        from paimon_feed.warehouse import WarehouseFeed

        async with WarehouseFeed(
            catalog,
            tables=args.table or None,
            consumer_id=args.consumer_id,
            start=args.start or "latest",
            end=args.end,
            notifier=args.notifier,
            poll_interval=args.poll_interval / 1000,
            include_row_kind=args.include_row_kind or args.overwrite == "read",
            sqs_queue_url=args.sqs_queue_url,
            on_expired=args.on_expired,
            overwrite=args.overwrite,
        ) as feed:
            with metrics_server(args, feed):
                return await print_rows(args, feed, writer, label_tables=True)

    try:
        return asyncio.run(until_signalled(tail()))
    finally:
        writer.close()


def run_consumers_warehouse(args: argparse.Namespace, age: Callable[[int, int | None], str]) -> int:
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
    found = []
    for name in list_tables(catalog, TableSelector(None)):
        table = open_table(args.warehouse, name, catalog=catalog)
        found.extend((name, consumer) for consumer in list_consumers(table))
    if args.format == "json":
        print(json.dumps([{"table": name, **consumer.to_dict()} for name, consumer in found], indent=2))
        return 0
    if not found:
        print(f"no table of {args.warehouse} has consumers")
        return 0
    now_ms = int(time.time() * 1000)
    header = ("table", "consumer", "next snapshot", "lag", "oldest unread", "last written", "holds expiry")
    lines = [
        (
            name, consumer.consumer_id, str(consumer.next_snapshot_id), str(consumer.lag_snapshots),
            age(now_ms, consumer.oldest_unread_commit_ms),
            "-" if consumer.last_modified_ms is None else datetime.datetime.fromtimestamp(
                consumer.last_modified_ms / 1000, tz=datetime.timezone.utc
            ).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "yes" if consumer.holds_expiry else "",
        )
        for name, consumer in found
    ]
    widths = [max(len(row[i]) for row in (header, *lines)) for i in range(len(header))]
    for row in (header, *lines):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0
