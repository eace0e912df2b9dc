"""``paimon-feed tail``: stream rows as tables commit.

``tail WAREHOUSE DB.TABLE`` follows one table through a :class:`~paimon_feed.ChangeFeed`, with
row filters (:mod:`paimon_feed.cli.filters`), columns and a ``--to`` end checked against the
table before the feed starts. ``tail WAREHOUSE`` follows every table (new ones included), ``tail
WAREHOUSE 'sales.*' ops.events`` the matching ones, through one
:class:`~paimon_feed.WarehouseFeed`; each row then carries ``_table``, its first column. Rows
are written by :mod:`paimon_feed.cli.output`; a batch is committed once it is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from paimon_feed.cli.filters import (
    BoundFilter,
    bind_filters,
    parse_filter,
    table_schema,
    to_predicate,
)
from paimon_feed.cli.output import RowWriter, rows_from_arrow
from paimon_feed.cli.parser import EXIT_OK, note, until_signalled
from paimon_feed.errors import (
    ConfigurationError,
    InvalidStartError,
    SnapshotExpiredError,
    TableNotFoundError,
)
from paimon_feed.start import StartPosition, parse_start

__all__ = ["follows_one_table", "run_tail"]

logger = logging.getLogger("paimon_feed.cli")  # the name the CLI's log lines have always carried


def follows_one_table(names: Sequence[str]) -> bool:
    """Whether ``tail`` names exactly one table (no pattern): the single-table form."""
    return len(names) == 1 and not set("*?[") & set(names[0])


def run_tail(args: argparse.Namespace) -> int:
    """``paimon-feed tail``: one table, or the warehouse form; returns the exit code."""
    if not follows_one_table(args.table):
        return _run_tail_warehouse(args)
    args.table = args.table[0]
    plan = _prepare_tail(args)
    writer = RowWriter(args.format, sys.stdout)
    try:
        return asyncio.run(until_signalled(_tail(args, plan, writer)))
    finally:
        writer.close()


# one table ------------------------------------------------------------------------------------
@dataclass
class _TailPlan:
    """What ``tail`` checked and opened before the feed starts."""

    table: Any
    filters: list[BoundFilter]
    predicate: Any
    columns: list[str] | None
    start: str
    end: int | None


def _prepare_tail(args: argparse.Namespace) -> _TailPlan:
    """Check the arguments and open the table, before any event loop or signal handler, so a
    Ctrl-C while a slow store answers is a plain ``KeyboardInterrupt``."""
    from paimon_feed.start import parse_start
    from paimon_feed.tables import check_reachable, open_table

    if args.limit is not None and args.limit < 1:
        raise ConfigurationError(f"--limit must be >= 1, got {args.limit}")
    if args.poll_interval < 0.001:
        raise ConfigurationError(f"--poll-interval must be at least 1ms, got {args.poll_interval:g}s")
    if args.metrics_port is not None:
        if not 0 <= args.metrics_port <= 65535:
            raise ConfigurationError(f"--metrics-port must be 0-65535, got {args.metrics_port}")
        from paimon_feed.metrics import FeedCollector

        FeedCollector()  # without prometheus-client: the install hint, before the table opens
    parse_start(args.start or "latest")
    end = _parse_end(args.end)
    options = dict(args.catalog_option)
    check_reachable(args.warehouse, options)
    table = open_table(args.warehouse, args.table, options)
    filters = bind_filters(table_schema(table), [parse_filter(text) for text in args.filter])
    columns = _columns(args.columns, [field.name for field in table.fields])
    stored = _note_checkpoint(table, args) if args.consumer_id is not None else None
    start = args.start or "latest"
    end_id = None
    if end is not None:
        end_id, start = _check_range(table, args, end, stored)
    # The feed applies the predicate exactly and follows its columns (and --columns) through
    # renames, so nothing is filtered or selected here again.
    return _TailPlan(table, filters, to_predicate(table, filters), columns, start, end_id)


def _columns(values: list[str] | None, known: list[str]) -> list[str] | None:
    """The columns of every ``-c``, in order, each once."""
    if not values:
        return None
    columns = list(dict.fromkeys(name.strip() for value in values for name in value.split(",") if name.strip()))
    unknown = [name for name in columns if name not in known]
    if unknown:
        raise ConfigurationError(
            f"--columns: unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"the table has {', '.join(known)}"
        )
    return columns


def _parse_end(text: str | None) -> StartPosition | None:
    """``--to``: any position of the start grammar but ``latest-full`` (an end is a snapshot)."""
    from paimon_feed.start import parse_start

    if text is None:
        return None
    try:
        end = parse_start(text)
    except InvalidStartError as exc:
        if not str(exc).startswith("invalid start position"):
            raise InvalidStartError(f"--to: {exc}") from None
        raise InvalidStartError(
            f"--to: invalid position {text!r}: use a snapshot id ('42' or 'snapshot:42'), "
            f"'latest', 'earliest', 'tag:<name>', 'time:<ISO-8601>' or a relative time such as '-1h'"
        ) from None
    if end.kind == "latest-full":
        raise InvalidStartError("--to latest-full: an end is a snapshot, not a full read; use --to latest")
    return end


def _check_range(table: Any, args: argparse.Namespace, end: StartPosition, stored: int | None) -> tuple[int, str]:
    """Resolve ``--to`` to a snapshot id against the table now, and refuse an end before the
    start whatever the form of either. Returns the end and the start to give the feed: the
    start as resolved here, so a commit landing meanwhile cannot move it past the end."""
    import time

    from paimon_feed.planner import Planner

    planner = Planner(table)
    now_ms = int(time.time() * 1000)
    end_id = _resolve_end(planner, args.end, end, now_ms)
    start_text = args.start or "latest"
    if stored is not None:
        if end_id < stored - 1:
            raise InvalidStartError(
                f"--to {_shown(args.end, end_id)} is before the start: consumer {args.consumer_id} "
                f"has read up to snapshot {stored - 1} already; give an end at or after "
                f"{stored - 1}, or another --consumer-id"
            )
        return end_id, start_text
    start = parse_start(start_text, now_ms=now_ms)
    if start.kind == "latest-full":
        return end_id, start_text  # the full state at the end, if the end is older than latest
    try:
        resolution = planner.resolve_start(start)
    except SnapshotExpiredError:
        return end_id, start_text  # the feed reports it or restarts, as --on-expired says
    if resolution is None:
        return end_id, start_text
    first = resolution.full_snapshot_id or resolution.next_snapshot_id
    # An empty range is fine when the start is "after now" (latest, or a past time nothing
    # was committed after): reading "up to now" then has nothing to read. A start the user
    # names as a snapshot, a tag or a future time is after an earlier end, though.
    named = start.kind in ("snapshot", "tag", "earliest") or (
        start.kind == "time" and start.timestamp_ms is not None and start.timestamp_ms > now_ms
    )
    if end_id < first - 1 or (named and end_id < first):
        raise InvalidStartError(
            f"--to {_shown(args.end, end_id)} is before the start: --from {start_text} starts "
            f"at snapshot {first} of table {args.table}; give an end at or after {first}"
        )
    if start.kind in ("latest", "time"):  # positions that move as commits land
        start_text = f"snapshot:{resolution.next_snapshot_id}"
    return end_id, start_text


def _resolve_end(planner: Any, text: str, end: StartPosition, now_ms: int) -> int:
    """The snapshot id ``--to`` names: for a time, the last snapshot committed at or before it."""
    if end.kind == "snapshot":
        assert end.snapshot_id is not None  # parse_start sets it for a snapshot
        return end.snapshot_id
    if end.kind == "time" and end.timestamp_ms is not None and end.timestamp_ms > now_ms:
        raise InvalidStartError(
            f"--to {text} is in the future: give a time that has passed, or a snapshot id to "
            f"wait for"
        )
    if planner.latest_snapshot_id() is None:
        raise InvalidStartError(
            f"--to {text}: table {planner.table_name} has no snapshot yet; give a snapshot id "
            f"to wait for instead"
        )
    resolution = planner.resolve_start(end)
    if end.kind == "tag":
        return resolution.full_snapshot_id
    if end.kind == "earliest":
        return resolution.next_snapshot_id
    end_id = resolution.next_snapshot_id - 1  # latest, time: the snapshot before the next one
    if end_id < 1:
        raise InvalidStartError(
            f"--to {text}: table {planner.table_name} has no snapshot committed by then"
        )
    return end_id


def _shown(text: str, end_id: int) -> str:
    """``--to`` as given, with the snapshot it resolved to if it was not one."""
    stripped = text.strip().lower().removeprefix("snapshot:")
    return text if stripped == str(end_id) else f"{text} (snapshot {end_id})"


def _note_checkpoint(table: Any, args: argparse.Namespace) -> int | None:
    """The consumer's stored next snapshot, noting that it wins over ``--from``."""
    from paimon_feed.checkpoint import CheckpointStore

    stored = CheckpointStore.for_table(table, args.consumer_id).load()
    if stored is None:
        return None
    if args.start is not None:
        note(
            f"consumer {args.consumer_id} resumes at its checkpoint, snapshot {stored}; "
            f"--from {args.start} applies only to a consumer without one (use another "
            f"--consumer-id to start elsewhere)"
        )
    else:
        logger.info("consumer %s resumes at its checkpoint, snapshot %d", args.consumer_id, stored)
    return stored


def _feed_options(args: argparse.Namespace) -> dict[str, Any]:
    """The feed options one table and a whole warehouse take alike from the command line."""
    return {
        "consumer_id": args.consumer_id,
        "notifier": args.notifier,
        "poll_interval": args.poll_interval,
        "include_row_kind": args.include_row_kind or args.overwrite == "read",
        "sqs_queue_url": args.sqs_queue_url,
        "on_expired": args.on_expired,
        "on_history_rewritten": args.on_history_rewritten,
        "overwrite": args.overwrite,
    }


async def _tail(args: argparse.Namespace, plan: _TailPlan, writer: RowWriter) -> int:
    from paimon_feed.feed import ChangeFeed

    async with ChangeFeed(
        plan.table,
        start=plan.start,
        end=plan.end,
        projection=plan.columns,
        predicate=plan.predicate,
        **_feed_options(args),
    ) as feed:
        with _metrics_server(args, feed):
            return await _print_rows(args, feed, writer)


@contextlib.contextmanager
def _metrics_server(args: argparse.Namespace, feed: Any) -> Iterator[None]:
    """Serve ``feed``'s Prometheus metrics while the block runs, if ``--metrics-port`` asks."""
    if args.metrics_port is None:
        yield
        return
    from paimon_feed.metrics import FeedCollector, serve_metrics

    try:
        server, _thread = serve_metrics(FeedCollector([feed]), args.metrics_port, args.metrics_address)
    except OSError as exc:
        raise ConfigurationError(
            f"--metrics-port {args.metrics_port}: cannot listen on "
            f"{args.metrics_address}:{args.metrics_port}: {exc.strerror or exc}"
        ) from exc
    note(f"serving metrics on http://{args.metrics_address}:{server.server_port}/metrics")
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


async def _print_rows(
    args: argparse.Namespace, feed: Any, writer: RowWriter, *, label_tables: bool = False
) -> int:
    printed = 0
    async for batch in feed:
        data = await asyncio.to_thread(batch.to_arrow)
        rows = rows_from_arrow(data)
        if label_tables:
            rows = [{"_table": batch.table, **row} for row in rows]
        if args.limit is not None:
            rows = rows[: args.limit - printed]
        writer.write(rows)
        printed += len(rows)
        logger.info("snapshot %d (%s): %d rows", batch.snapshot_id, batch.kind, len(rows))
        if args.limit is not None and printed >= args.limit:
            # Commit only what was printed: a partly printed batch stays uncommitted.
            if len(rows) == data.num_rows:
                await feed.commit(batch)
            elif args.consumer_id is not None:
                note(
                    f"--limit {args.limit} stopped inside the batch of snapshots "
                    f"{batch.first_snapshot_id}..{batch.snapshot_id} ({len(rows)} of "
                    f"{data.num_rows} rows printed); it stays uncommitted, so consumer "
                    f"{args.consumer_id} starts with it again next time"
                )
            break
        await feed.commit(batch)
    return EXIT_OK


# the warehouse form ---------------------------------------------------------------------------
def _run_tail_warehouse(args: argparse.Namespace) -> int:
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
    if args.poll_interval < 0.001:
        raise ConfigurationError(f"--poll-interval must be at least 1ms, got {args.poll_interval:g}s")
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
        note(f"no table of {args.warehouse} matches yet; waiting for one")
    writer = RowWriter(args.format, sys.stdout)

    async def tail() -> int:
        from paimon_feed.feed.warehouse import WarehouseFeed

        async with WarehouseFeed(
            catalog,
            tables=args.table or None,
            start=args.start or "latest",
            end=args.end,
            discovery_interval=args.discovery_interval,
            **_feed_options(args),
        ) as feed:
            with _metrics_server(args, feed):
                return await _print_rows(args, feed, writer, label_tables=True)

    try:
        return asyncio.run(until_signalled(tail()))
    finally:
        writer.close()
