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
    SnapshotExpiredError,
    TableNotFoundError,
)
from paimon_feed.filters import BoundFilter, bind_filters, parse_filter, table_schema, to_predicate
from paimon_feed.output import FORMATS, RowWriter, rows_from_arrow

__all__ = ["main"]

logger = logging.getLogger("paimon_feed.cli")  # not __main__ under python -m

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
_EXIT_BY_SIGNAL = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}
# Options whose value may start with '-' ('--from -30m', 'consumers reset --to -1h'); argparse
# would take it for an option.
_DASH_VALUE_OPTIONS = ("--from", "--to")


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (argparse prints the whole usage first)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _catalog_option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"invalid catalog option {text!r}: use KEY=VALUE")
    return key, value


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
    tail.add_argument("--to", dest="end", default=None, help="last snapshot id to read (inclusive); then exit")
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
    tail.add_argument("--notifier", choices=("auto", "local", "poll", "sqs"), default="auto")
    tail.add_argument("--sqs-queue-url", help="SQS queue with the warehouse's S3 events (notifier sqs/auto)")
    tail.add_argument("--include-row-kind", action="store_true", help="add _row_kind (+I, -U, +U, -D)")
    tail.add_argument("-c", "--columns", help="comma-separated columns to output")
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
    tail.add_argument("--poll-interval", type=int, default=1000, help="poll interval in ms (notifier poll)")
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
    demo.add_argument("--interval", type=float, default=0.1, help="seconds between commits (default 0.1)")
    demo.add_argument("--warehouse", help="warehouse directory (default: a new temp dir, removed at exit)")


def _add_consumers_arguments(consumers: argparse.ArgumentParser) -> None:
    consumers.add_argument("warehouse", help="warehouse path or URL (e.g. /data/wh, s3://bucket/wh)")
    consumers.add_argument(
        "table", nargs="?", help="table as DATABASE.TABLE (default: list the consumers of every table)"
    )
    consumers.add_argument(
        "action", nargs="?", choices=("list", "reset", "delete"), default="list",
        help="list (default), reset ID --to POSITION, or delete ID",
    )
    consumers.add_argument("consumer_id", nargs="?", metavar="ID", help="the consumer to reset or delete")
    consumers.add_argument(
        "--to", dest="position", metavar="POSITION",
        help="reset: the snapshot to read next: ID, earliest, latest (only later commits), "
        "time:<ISO-8601> or a relative time such as -1h",
    )
    consumers.add_argument(
        "--expire-older-than", metavar="DURATION",
        help="first delete consumers whose file was not written for this long (7d, 12h, 30m): "
        "Paimon's consumer.expiration-time rule",
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


def _note(text: str) -> None:
    print(f"paimon-feed: note: {text}", file=sys.stderr, flush=True)


def _prepare_tail(args: argparse.Namespace) -> _TailPlan:
    """Check the arguments and open the table, before any event loop or signal handler, so a
    Ctrl-C while a slow store answers is a plain ``KeyboardInterrupt``."""
    from paimon_feed.start import parse_end, parse_start
    from paimon_feed.tables import check_reachable, open_table

    if args.limit is not None and args.limit < 1:
        raise ConfigurationError(f"--limit must be >= 1, got {args.limit}")
    if args.poll_interval < 1:
        raise ConfigurationError(f"--poll-interval must be >= 1 ms, got {args.poll_interval}")
    if args.metrics_port is not None:
        if not 0 <= args.metrics_port <= 65535:
            raise ConfigurationError(f"--metrics-port must be 0-65535, got {args.metrics_port}")
        from paimon_feed.metrics import FeedCollector

        FeedCollector()  # without prometheus-client: the install hint, before the table opens
    parse_start(args.start or "latest")
    parse_end(args.end)
    options = dict(args.catalog_option)
    check_reachable(args.warehouse, options)
    table = open_table(args.warehouse, args.table, options)
    filters = bind_filters(table_schema(table), [parse_filter(text) for text in args.filter])
    columns = [name.strip() for name in args.columns.split(",")] if args.columns else None
    if columns is not None:
        known = [field.name for field in table.fields]
        unknown = [name for name in columns if name not in known]
        if unknown:
            raise ConfigurationError(f"--columns: unknown columns {unknown}; the table has {known}")
    if args.consumer_id is not None:
        _note_checkpoint(table, args)
    # The feed applies the predicate exactly and follows its columns (and --columns) through
    # renames, so nothing is filtered or selected here again.
    return _TailPlan(table, filters, to_predicate(table, filters), columns)


def _note_checkpoint(table: Any, args: argparse.Namespace) -> None:
    from paimon_feed.checkpoint import CheckpointStore

    stored = CheckpointStore.for_table(table, args.consumer_id).load()
    if stored is None:
        return
    if args.start is not None:
        _note(
            f"consumer {args.consumer_id} resumes at its checkpoint, snapshot {stored}; "
            f"--from {args.start} applies only to a consumer without one (use another "
            f"--consumer-id to start elsewhere)"
        )
    else:
        logger.info("consumer %s resumes at its checkpoint, snapshot %d", args.consumer_id, stored)


async def _tail(args: argparse.Namespace, plan: _TailPlan, writer: RowWriter) -> int:
    from paimon_feed.feed import ChangeFeed

    async with ChangeFeed(
        plan.table,
        consumer_id=args.consumer_id,
        start=args.start or "latest",
        end=args.end,
        notifier=args.notifier,
        poll_interval=args.poll_interval / 1000,
        include_row_kind=args.include_row_kind or args.overwrite == "read",
        projection=plan.columns,
        predicate=plan.predicate,
        sqs_queue_url=args.sqs_queue_url,
        on_expired=args.on_expired,
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

    from paimon_feed.consumers import (
        delete_consumer,
        expire_consumers,
        list_consumers,
        parse_duration,
        reset_consumer,
    )
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
    older_than = parse_duration(args.expire_older_than) if args.expire_older_than else None
    options = dict(args.catalog_option)
    check_reachable(args.warehouse, options)
    table = open_table(args.warehouse, args.table, options)
    if older_than is not None:
        for consumer_id in expire_consumers(table, older_than):
            _note(f"deleted consumer {consumer_id}: not written for over {args.expire_older_than}")
    if args.action == "reset":
        next_id = reset_consumer(table, args.consumer_id, args.position)
        _note(f"consumer {args.consumer_id} now reads snapshot {next_id} next")
    elif args.action == "delete":
        delete_consumer(table, args.consumer_id)
        _note(f"deleted consumer {args.consumer_id}")
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


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if verbosity < 2:
        for handler in logging.getLogger().handlers:
            handler.addFilter(_DropReraisedFailure())
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
