"""The ``paimon-feed`` command.

``paimon-feed tail WAREHOUSE DB.TABLE`` streams a table's rows as they commit (``tail WAREHOUSE``
or ``tail WAREHOUSE 'sales.*' ops.events``: every or the matching tables, rows with ``_table``);
``paimon-feed demo`` builds a local warehouse, commits to it and tails it live;
``paimon-feed consumers WAREHOUSE DB.TABLE`` lists, resets, deletes or expires consumers. Bare
``paimon-feed`` prints the help on stderr and exits 2.

Exit codes: 0 done; 1 the feed failed (expired snapshot, storage error, unreachable object
store, any unexpected error); 2 bad input (unknown table or column, bad position or filter,
invalid consumer id, corrupt checkpoint, ...); 130 interrupted (Ctrl-C); 143 terminated
(SIGTERM). Every failure is one line on stderr; ``-vv`` adds the traceback. This is the only
module that configures logging handlers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from paimon_feed.errors import (
    CheckpointError,
    ConfigurationError,
    FeedError,
    HistoryRewrittenError,
    InvalidStartError,
    SnapshotExpiredError,
    TableNotFoundError,
)
from paimon_feed.filters import (
    BoundFilter,
    bind_filters,
    parse_filter,
    table_schema,
    to_predicate,
)
from paimon_feed.output import FORMATS, RowWriter, rows_from_arrow
from paimon_feed.start import StartPosition, parse_start

__all__ = ["main"]

logger = logging.getLogger("paimon_feed.cli")  # not __main__ under python -m

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
_EXIT_BY_SIGNAL = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}
# Options whose value may start with '-' ('--from -30m', 'consumers reset --to -1h'); argparse
# would take it for an option.
_DASH_VALUE_OPTIONS = ("--from", "--to")


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (argparse prints the whole usage first) and no
    abbreviated options: ``--form`` must not pass for ``--format``, nor ``--consumer`` for
    ``--consumer-id``. Sub-commands' parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _catalog_option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"invalid catalog option {text!r}: use KEY=VALUE")
    return key, value


def _duration(default_unit: str | None = None) -> Any:
    """An argparse type: seconds in a duration of the project's one grammar (``500ms``, ``2s``,
    ``1m``, ``1h``, ``1d``, ``1w``)."""
    from paimon_feed._units import parse_duration

    def parse(text: str) -> float:
        try:
            return parse_duration(text, default_unit=default_unit)
        except ConfigurationError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from paimon_feed import __version__

    try:
        pypaimon = version("pypaimon")
    except PackageNotFoundError:  # pragma: no cover - pypaimon is a hard dependency
        pypaimon = "not installed"
    return f"paimon-feed {__version__} (pypaimon {pypaimon}, Python {sys.version.split()[0]})"


def _add_verbose(parser: argparse.ArgumentParser, dest: str) -> None:
    parser.add_argument(
        "-v", "--verbose", dest=dest, action="count", default=0,
        help="more logs on stderr (-vv: debug logs and tracebacks); allowed before or after the command",
    )


def _add_tail_arguments(tail: argparse.ArgumentParser) -> None:
    """The options of ``tail``, in the order ``--help`` lists them."""
    tail.add_argument("warehouse", help="warehouse path or URL (e.g. /data/wh, s3://bucket/wh)")
    tail.add_argument(
        "table", nargs="*", metavar="TABLE",
        help="tables as DATABASE.TABLE or patterns such as 'sales.*' (default: every table of "
        "the warehouse, new ones included; rows then carry _table)",
    )
    tail.add_argument(
        "--from", dest="start", default=None, metavar="POSITION",
        help="start position: latest (default), latest-full, earliest, snapshot:ID or ID, "
        "time:<ISO-8601>, time:-1h / -30m / -7d. A stored checkpoint of --consumer-id wins",
    )
    tail.add_argument(
        "--to", dest="end", default=None, metavar="POSITION",
        help="read up to this snapshot (inclusive), then exit: ID or snapshot:ID, latest (the "
        "latest snapshot when the command starts), earliest, tag:NAME, time:<ISO-8601> or "
        "-1h (the last snapshot committed by then). An end before the start is an error",
    )
    tail.add_argument(
        "--format", choices=FORMATS, default="jsonl",
        help="output format (default jsonl; json prints one array for the whole run)",
    )
    tail.add_argument("--consumer-id", help="checkpoint progress in the table's consumer file under this id")
    tail.add_argument(
        "--overwrite", choices=("skip", "read"), default="skip",
        help="OVERWRITE commits (insert overwrite, truncate): skip them (default, as Java "
        "Paimon does; a warning names each) or read them as removed (-D) and added (+I) rows "
        "(implies --include-row-kind)",
    )
    tail.add_argument(
        "--on-expired", choices=("error", "earliest", "latest-full"), default="error",
        help="if the next snapshot expired before it was read: fail (default), or restart at the "
        "earliest snapshot or the full latest state, accepting the gap",
    )
    tail.add_argument(
        "--on-history-rewritten", choices=("error", "latest-full"), default="error",
        help="if the table's history was rewritten under the consumer (rolled back, dropped and "
        "re-created): fail (default), or print the whole table as it is now, then its changes",
    )
    tail.add_argument("--notifier", choices=("auto", "local", "poll", "sqs"), default="auto")
    tail.add_argument("--sqs-queue-url", help="SQS queue with the warehouse's S3 events (notifier sqs/auto)")
    tail.add_argument("--include-row-kind", action="store_true", help="add _row_kind (+I, -U, +U, -D)")
    tail.add_argument(
        "-c", "--columns", action="append", metavar="COLUMNS",
        help="columns to output, comma-separated (repeatable: -c id -c price is -c id,price)",
    )
    tail.add_argument(
        "-f", "--filter", action="append", default=[], metavar="EXPR",
        help="row filter: col=value (or ==), col!=value, col>value, col>=value, col<value, "
        "col<=value, col=prefix* (repeatable; all must match). Values are read as the "
        "column's type: 42, 5.10, true, 2026-01-05, 2026-01-05T08:00:00[Z]",
    )
    tail.add_argument(
        "--limit", type=int,
        help="exit after printing this many rows (a batch printed in part stays uncommitted)",
    )
    tail.add_argument(
        "--poll-interval", type=_duration(), default=1.0, metavar="DURATION",
        help="how often notifier poll looks for a commit (default 1s; 500ms, 2s, 1m, ...)",
    )
    tail.add_argument(
        "--metrics-port", type=int, metavar="PORT",
        help="serve Prometheus metrics on http://ADDRESS:PORT/metrics while tailing (0: a free "
        "port, named on stderr); needs pip install 'paimon-feed[metrics]'",
    )
    tail.add_argument(
        "--metrics-address", default="0.0.0.0", metavar="ADDRESS",
        help="address the metrics server listens on (default 0.0.0.0, as prometheus_client)",
    )
    tail.add_argument(
        "--catalog-option", action="append", default=[], type=_catalog_option, metavar="KEY=VALUE",
        help="extra catalog option, e.g. fs.s3.endpoint=http://127.0.0.1:9000 (repeatable)",
    )


def _add_demo_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--commits", type=int, default=40, help="commits per table (default 40)")
    demo.add_argument("--backlog", type=int, default=25, help="commits made before tailing starts, to show catch-up")
    demo.add_argument(
        "--interval", type=_duration(default_unit="s"), default=0.1, metavar="DURATION",
        help="time between commits (default 100ms; a bare number is in seconds)",
    )
    demo.add_argument("--warehouse", help="warehouse directory (default: a new temp dir, removed at exit)")


def _add_consumers_arguments(consumers: argparse.ArgumentParser) -> None:
    consumers.add_argument("warehouse", help="warehouse path or URL (e.g. /data/wh, s3://bucket/wh)")
    consumers.add_argument(
        "table", nargs="?", help="table as DATABASE.TABLE (default: list the consumers of every table)"
    )
    consumers.add_argument(
        "action", nargs="?", choices=("list", "reset", "delete"), default="list",
        help="list (default), reset ID --to POSITION, or delete ID (with --yes)",
    )
    consumers.add_argument("consumer_id", nargs="?", metavar="ID", help="the consumer to reset or delete")
    consumers.add_argument(
        "--to", dest="position", metavar="POSITION",
        help="reset: the snapshot to read next: ID, earliest, latest (only later commits), "
        "tag:NAME, time:<ISO-8601> or a relative time such as -1h",
    )
    consumers.add_argument(
        "--expire-older-than", metavar="DURATION",
        help="first delete consumers whose file was not written for this long (1w, 7d, 12h, "
        "30m; with --yes): Paimon's consumer.expiration-time rule",
    )
    consumers.add_argument(
        "--yes", action="store_true",
        help="do it: without --yes, delete, --expire-older-than and a reset onto expired "
        "snapshots only print what they would do",
    )
    consumers.add_argument(
        "--create", action="store_true",
        help="reset: create the consumer if it does not exist (a consumer keeps Paimon from "
        "expiring the snapshots it has not read)",
    )
    consumers.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    consumers.add_argument(
        "--catalog-option", action="append", default=[], type=_catalog_option, metavar="KEY=VALUE",
        help="extra catalog option (repeatable)",
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="paimon-feed",
        description="Event-driven change feed for Apache Paimon tables: push instead of poll.",
        epilog="Exit codes: 0 done, 1 the feed failed, 2 bad input, 130 Ctrl-C, 143 SIGTERM.",
    )
    _add_verbose(parser, "verbose")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    tail = commands.add_parser(
        "tail",
        help="stream a table's rows as they are committed",
        description="Stream a table's rows as they are committed, woken by storage events.",
    )
    _add_tail_arguments(tail)
    _add_verbose(tail, "command_verbose")

    demo = commands.add_parser(
        "demo",
        help="create a local warehouse, commit to it and tail it live",
        description="Create a local warehouse with an append table and a primary-key table, "
        "commit to both from a writer thread, tail them live and print commit-to-delivery "
        "latency per batch, then a summary.",
    )
    _add_demo_arguments(demo)
    _add_verbose(demo, "command_verbose")

    consumers = commands.add_parser(
        "consumers",
        help="list, reset, delete or expire a table's consumers",
        description="List a table's consumers (id, next snapshot, lag, age of the oldest unread "
        "commit, last written, and which one holds back snapshot expiry), or reset, delete or "
        "expire them.",
    )
    _add_consumers_arguments(consumers)
    _add_verbose(consumers, "command_verbose")
    return parser


def _join_dash_values(argv: Sequence[str]) -> list[str]:
    """``--from -30m`` -> ``--from=-30m``, so argparse does not read ``-30m`` as an option."""
    joined: list[str] = []
    items = iter(argv)
    for item in items:
        if item in _DASH_VALUE_OPTIONS:
            value = next(items, None)
            joined.append(item if value is None else f"{item}={value}")
        else:
            joined.append(item)
    return joined


# tail -----------------------------------------------------------------------------------------
@dataclass
class _TailPlan:
    """What ``tail`` checked and opened before the feed starts."""

    table: Any
    filters: list[BoundFilter]
    predicate: Any
    columns: list[str] | None
    start: str
    end: int | None


def _note(text: str) -> None:
    print(f"paimon-feed: note: {text}", file=sys.stderr, flush=True)


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
        start.kind == "time" and start.timestamp_ms > now_ms
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
        return end.snapshot_id
    if end.kind == "time" and end.timestamp_ms > now_ms:
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
        _note(
            f"consumer {args.consumer_id} resumes at its checkpoint, snapshot {stored}; "
            f"--from {args.start} applies only to a consumer without one (use another "
            f"--consumer-id to start elsewhere)"
        )
    else:
        logger.info("consumer %s resumes at its checkpoint, snapshot %d", args.consumer_id, stored)
    return stored


async def _tail(args: argparse.Namespace, plan: _TailPlan, writer: RowWriter) -> int:
    from paimon_feed.feed import ChangeFeed

    async with ChangeFeed(
        plan.table,
        consumer_id=args.consumer_id,
        start=plan.start,
        end=plan.end,
        notifier=args.notifier,
        poll_interval=args.poll_interval,
        include_row_kind=args.include_row_kind or args.overwrite == "read",
        projection=plan.columns,
        predicate=plan.predicate,
        sqs_queue_url=args.sqs_queue_url,
        on_expired=args.on_expired,
        on_history_rewritten=args.on_history_rewritten,
        overwrite=args.overwrite,
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
    _note(f"serving metrics on http://{args.metrics_address}:{server.server_port}/metrics")
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
                _note(
                    f"--limit {args.limit} stopped inside the batch of snapshots "
                    f"{batch.first_snapshot_id}..{batch.snapshot_id} ({len(rows)} of "
                    f"{data.num_rows} rows printed); it stays uncommitted, so consumer "
                    f"{args.consumer_id} starts with it again next time"
                )
            break
        await feed.commit(batch)
    return EXIT_OK


async def _until_signalled(coroutine: Any) -> int:
    """Run ``coroutine``; SIGINT or SIGTERM cancels it (so ``async with`` closes the feed)
    and gives 130 or 143. A second signal acts as if no handler were installed."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        loop.remove_signal_handler(signum)  # the next one interrupts as usual
        task.cancel()

    for signum in _EXIT_BY_SIGNAL:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await coroutine
    except asyncio.CancelledError:
        if not received:
            raise
        return _EXIT_BY_SIGNAL[received[0]]
    finally:
        for signum in _EXIT_BY_SIGNAL:
            loop.remove_signal_handler(signum)


def _run_tail(args: argparse.Namespace) -> int:
    from paimon_feed.cli_warehouse import follows_one_table, run_tail_warehouse

    if not follows_one_table(args.table):
        return run_tail_warehouse(args, _until_signalled, _print_rows, _metrics_server)
    args.table = args.table[0]
    plan = _prepare_tail(args)
    writer = RowWriter(args.format, sys.stdout)
    try:
        return asyncio.run(_until_signalled(_tail(args, plan, writer)))
    finally:
        writer.close()


def _run_demo(args: argparse.Namespace) -> int:
    from paimon_feed.demo import run_demo

    return run_demo(
        commits=args.commits, backlog=args.backlog, interval=args.interval, warehouse=args.warehouse,
        run=lambda coroutine: asyncio.run(_until_signalled(coroutine)),
    )


# consumers ------------------------------------------------------------------------------------
def _age(now_ms: int, then_ms: int | None) -> str:
    if then_ms is None:
        return "-"
    seconds = max(0, (now_ms - then_ms) // 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds}s"


def _run_consumers(args: argparse.Namespace) -> int:
    import datetime
    import json
    import time

    from paimon_feed.consumers import list_consumers, parse_duration
    from paimon_feed.tables import check_reachable, open_table

    if args.table is None:
        from paimon_feed.cli_warehouse import run_consumers_warehouse

        return run_consumers_warehouse(args, _age)
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
    header = ("consumer", "next snapshot", "lag", "oldest unread", "last written", "holds expiry")
    lines = [
        (
            consumer.consumer_id,
            str(consumer.next_snapshot_id),
            str(consumer.lag_snapshots),
            _age(now_ms, consumer.oldest_unread_commit_ms),
            "-" if consumer.last_modified_ms is None else datetime.datetime.fromtimestamp(
                consumer.last_modified_ms / 1000, tz=datetime.timezone.utc
            ).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "yes" if consumer.holds_expiry else "",
        )
        for consumer in consumers
    ]
    if not lines:
        print(f"table {args.table} has no consumers")
        return EXIT_OK
    widths = [max(len(row[i]) for row in (header, *lines)) for i in range(len(header))]
    for row in (header, *lines):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return EXIT_OK


def _unconfirmed(what: str) -> None:
    _note(f"nothing changed: add --yes to {what}")


def _expire(table: Any, older_than: float, args: argparse.Namespace) -> None:
    from paimon_feed.consumers import expire_consumers

    expired = expire_consumers(table, older_than, dry_run=not args.yes)
    verb = "deleted" if args.yes else "would delete"
    for consumer_id in expired:
        _note(f"{verb} consumer {consumer_id}: not written for over {args.expire_older_than}")
    if not expired:
        _note(f"no consumer of {args.table} went unwritten for over {args.expire_older_than}")
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
        if plan.creates:
            verb, move = "create", f"create consumer {args.consumer_id} at snapshot {plan.next_snapshot_id}"
        else:
            verb = "move"
            move = (
                f"move consumer {args.consumer_id} from snapshot {plan.current_next_snapshot_id} "
                f"to {plan.next_snapshot_id}"
            )
        _note(
            f"would {move}, but snapshots {plan.next_snapshot_id} to {plan.earliest_snapshot_id - 1} "
            f"expired (the earliest retained is {plan.earliest_snapshot_id}): its next read would "
            f"fail with 'snapshot expired' unless it runs with --on-expired"
        )
        _unconfirmed(f"{verb} it anyway")
        return
    next_id = apply_reset(table, plan, create=args.create, past_expired=args.yes)
    if plan.creates:
        _note(f"created consumer {args.consumer_id}: it reads snapshot {next_id} next")
    else:
        _note(f"consumer {args.consumer_id} now reads snapshot {next_id} next")


def _delete(table: Any, args: argparse.Namespace) -> None:
    from paimon_feed.consumers import delete_consumer

    delete_consumer(table, args.consumer_id, dry_run=not args.yes)
    if args.yes:
        _note(f"deleted consumer {args.consumer_id}")
    else:
        _note(f"would delete consumer {args.consumer_id}")
        _unconfirmed("delete it")


# errors and logging -----------------------------------------------------------------------
def _one_line(exc: BaseException) -> str:
    """The error as one line: a ``FeedError``'s own message; for anything else its type and
    message and those of its cause."""
    if isinstance(exc, SnapshotExpiredError):
        retained = (
            f"the earliest retained snapshot is {exc.earliest_snapshot_id}"
            if exc.earliest_snapshot_id is not None
            else "no snapshot is retained"
        )
        text = (
            f"table {exc.table}: snapshot {exc.snapshot_id} expired before it was read "
            f"({retained}); the changes in between are lost to this consumer. Run again with "
            f"--on-expired earliest (or latest-full) to accept the gap, and follow the table "
            f"with a --consumer-id, whose checkpoint keeps Paimon from expiring unread snapshots"
        )
    elif isinstance(exc, HistoryRewrittenError):
        text = (
            f"table {exc.table}: its history was rewritten after snapshot {exc.snapshot_id}, the "
            f"last one read ({exc.change}). Rebuild what you derived from it: run again with "
            f"--on-history-rewritten latest-full (the whole table as it is now, then its "
            f"changes), or reset the consumer"
        )
    elif isinstance(exc, FeedError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
        cause = exc.__cause__ or exc.__context__
        if cause is not None and str(cause):
            text += f" (caused by {type(cause).__name__}: {cause})"
    return " ".join(text.split())


class _DropReraisedFailure(logging.Filter):
    """The feed logs its failure as it hands it to the consumer; the CLI prints that error
    itself, so the log record would say it twice."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "paimon_feed.feed" and str(record.msg).startswith("feed for %s failed"))


class _NoteFormatter(logging.Formatter):
    """Warnings (a schema change, a skipped OVERWRITE, a fallback to polling) as the CLI's own
    ``paimon-feed: note:`` lines, one line each; what ``-v`` adds keeps the log format, whose
    time stamps and logger names help when debugging."""

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno < logging.WARNING:
            return super().format(record)
        label = "note" if record.levelno == logging.WARNING else "warning"
        return f"paimon-feed: {label}: {' '.join(record.getMessage().split())}"


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    log_format = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=level, stream=sys.stderr, format=log_format)
    if verbosity < 2:
        for handler in logging.getLogger().handlers:
            handler.addFilter(_DropReraisedFailure())
            handler.setFormatter(_NoteFormatter(log_format))
        # pypaimon and watchfiles log every commit and change at INFO.
        for noisy in ("pypaimon", "watchfiles"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def _fail(exc: BaseException, code: int, verbosity: int) -> int:
    if verbosity >= 2:
        traceback.print_exception(exc, file=sys.stderr)
    hint = "" if isinstance(exc, FeedError) or verbosity >= 2 else " (-vv shows the traceback)"
    print(f"paimon-feed: error: {_one_line(exc)}{hint}", file=sys.stderr, flush=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(_join_dash_values(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    verbosity = args.verbose + args.command_verbose
    _configure_logging(verbosity)
    try:
        run = {"tail": _run_tail, "demo": _run_demo, "consumers": _run_consumers}[args.command]
        return run(args)
    except (ConfigurationError, TableNotFoundError, CheckpointError) as exc:
        return _fail(exc, EXIT_USAGE, verbosity)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped to a reader that went away (| head): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the boundary: one line and an exit code
        return _fail(exc, EXIT_FAILURE, verbosity)


if __name__ == "__main__":
    sys.exit(main())
