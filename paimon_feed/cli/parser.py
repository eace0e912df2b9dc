"""The ``paimon-feed`` command line: its parser, its exit codes and its one-line messages.

Exit codes: 0 done; 1 the feed failed (expired snapshot, storage error, unreachable object
store, any unexpected error); 2 bad input (unknown table or column, bad position or filter,
invalid consumer id, corrupt checkpoint, ...); 130 interrupted (Ctrl-C); 143 terminated
(SIGTERM). Every failure is one line on stderr (:func:`fail`); ``-vv`` adds the traceback.
Warnings and notices are ``paimon-feed: note:`` lines (:func:`note`, :func:`configure_logging`:
the CLI is the only place that configures logging handlers).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from paimon_feed.cli.arguments import duration_seconds
from paimon_feed.cli.exits import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
)
from paimon_feed.cli.output import FORMATS
from paimon_feed.cli.wire import add_check_arguments, add_wire_arguments
from paimon_feed.errors import (
    FeedError,
    HistoryRewrittenError,
    SnapshotExpiredError,
)

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "build_parser",
    "configure_logging",
    "fail",
    "join_dash_values",
    "note",
    "until_signalled",
]

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
        "table", nargs="*", default=[], metavar="TABLE",
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
    tail.add_argument("--notifier", choices=("auto", "local", "poll", "sqs", "hdfs"), default="auto")
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
        "--poll-interval", type=duration_seconds, default=1.0, metavar="DURATION",
        help="how often notifier poll looks for a commit (default 1s; 500ms, 2, 2s, 1m, ...; a bare number is seconds)",
    )
    tail.add_argument(
        "--discovery-interval", type=duration_seconds, default=60.0, metavar="DURATION",
        help="how often a warehouse tail lists it for new and dropped tables (default 1m; with "
        "S3 push wired by 'paimon-feed wire' a new table's first commit is found at once)",
    )
    tail.add_argument(
        "--metrics-port", type=int, metavar="PORT",
        help="serve Prometheus metrics on http://ADDRESS:PORT/metrics while tailing (0: a free "
        "port, named on stderr); needs the [metrics] extra",
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
        "--interval", type=duration_seconds, default=0.1, metavar="DURATION",
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="paimon-feed",
        description="Event-driven change feed for Apache Paimon tables: push instead of poll.",
        epilog="Exit codes: 0 done, 1 the feed failed, 2 bad input, 130 Ctrl-C, 143 SIGTERM.",
    )
    _add_verbose(parser, "verbose")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    commands_and_arguments: list[tuple[str, str, str, Any]] = [
        ("tail", "stream a table's rows as they are committed",
         "Stream a table's rows as they are committed, woken by storage events.",
         _add_tail_arguments),
        ("demo", "create a local warehouse, commit to it and tail it live",
         "Create a local warehouse with an append table and a primary-key table, commit to both "
         "from a writer thread, tail them live and print commit-to-delivery latency per batch, "
         "then a summary; a WarehouseFeed follows both tables too.",
         _add_demo_arguments),
        ("wire", "set up S3 push for every table of an S3 warehouse (queue, policy, rule)",
         "Create or update the SQS queue (with a dead-letter queue), its policy and the "
         "EventBridge rule (or the bucket notification rule, merged into the bucket's "
         "configuration) that push every table's commits of an S3 warehouse, new tables "
         "included. Idempotent: a second run changes nothing.",
         add_wire_arguments),
        ("check", "prove that a commit under an S3 warehouse reaches its queue",
         "Put a probe object that the warehouse's rule matches (and no reader lists), wait for "
         "its event, report the delay, and say what is wrong when it does not arrive. Exit 0: "
         "push works; 1: it does not; 2: bad arguments.",
         add_check_arguments),
        ("consumers", "list, reset, delete or expire a table's consumers",
         "List a table's consumers (id, next snapshot, lag, age of the oldest unread commit, "
         "last written, and which one holds back snapshot expiry), or reset, delete or expire "
         "them.",
         _add_consumers_arguments),
    ]
    for name, summary, description, add_arguments in commands_and_arguments:
        command = commands.add_parser(name, help=summary, description=description)
        add_arguments(command)
        _add_verbose(command, "command_verbose")
    return parser


def join_dash_values(argv: Sequence[str]) -> list[str]:
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


def note(text: str) -> None:
    """A ``paimon-feed: note:`` line on stderr."""
    print(f"paimon-feed: note: {text}", file=sys.stderr, flush=True)


async def until_signalled(coroutine: Any) -> int:
    """Run ``coroutine``; SIGINT or SIGTERM cancels it (so ``async with`` closes the feed)
    and gives 130 or 143. A second signal acts as if no handler were installed."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None  # awaited, so inside a task
    received: list[signal.Signals] = []

    def on_signal(signum: signal.Signals) -> None:
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


def configure_logging(verbosity: int) -> None:
    """Logs on stderr: warnings as note lines by default, ``-v`` info, ``-vv`` debug."""
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    log_format = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    # Only the handler basicConfig adds is ours: a program (or a test runner) that configured
    # logging before keeps its handlers, formats and filters as they were.
    theirs = set(logging.getLogger().handlers)
    logging.basicConfig(level=level, stream=sys.stderr, format=log_format)
    if verbosity < 2:
        for handler in logging.getLogger().handlers:
            if handler not in theirs:
                handler.addFilter(_DropReraisedFailure())
                handler.setFormatter(_NoteFormatter(log_format))
        # pypaimon and watchfiles log every commit and change at INFO; pypaimon's REST client
        # logs every request under its class names ("[rest] requestId:... url:..."), not
        # under "pypaimon": a REST warehouse followed with -v would print a line a request.
        for noisy in ("pypaimon", "watchfiles", "HttpClient", "RESTApi", "DLFAuthProvider"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def fail(exc: BaseException, code: int, verbosity: int) -> int:
    """Print ``exc`` as one error line (and its traceback at ``-vv``); returns ``code``."""
    if verbosity >= 2:
        traceback.print_exception(exc, file=sys.stderr)
    hint = "" if isinstance(exc, FeedError) or verbosity >= 2 else " (-vv shows the traceback)"
    print(f"paimon-feed: error: {_one_line(exc)}{hint}", file=sys.stderr, flush=True)
    return code
