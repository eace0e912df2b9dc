"""The ``paimon-feed`` command.

``paimon-feed tail WAREHOUSE DB.TABLE`` streams a table's rows as they commit;
``paimon-feed demo`` builds a local warehouse, commits to it and tails it live.

Exit codes: 0 done, 1 the feed failed (expired snapshot, storage error), 2 bad input (unknown table, bad position, invalid
consumer id, corrupt checkpoint, ...), 130 interrupted. This is the only module that configures
logging handlers.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Sequence

from paimon_feed.errors import CheckpointError, ConfigurationError, FeedError, TableNotFoundError
from paimon_feed.filters import apply_filters, bind_filters, parse_filter, table_schema, to_predicate
from paimon_feed.output import FORMATS, RowWriter

__all__ = ["main"]

logger = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _catalog_option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"invalid catalog option {text!r}: use KEY=VALUE")
    return key, value


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paimon-feed",
        description="Event-driven change feed for Apache Paimon tables: push instead of poll.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logs on stderr (-vv: debug)")
    commands = parser.add_subparsers(dest="command", required=True)

    tail = commands.add_parser(
        "tail",
        help="stream a table's rows as they are committed",
        description="Stream a table's rows as they are committed, woken by storage events.",
    )
    tail.add_argument("warehouse", help="warehouse path or URL (e.g. /data/wh, s3://bucket/wh)")
    tail.add_argument("table", help="table as DATABASE.TABLE")
    tail.add_argument(
        "--from", dest="start", default="latest",
        help="start position: latest (default), latest-full, earliest, snapshot:ID or ID, "
        "time:<ISO-8601>, time:-1h / -30m / -7d",
    )
    tail.add_argument("--to", dest="end", default=None, help="last snapshot id to read (inclusive); then exit")
    tail.add_argument("--format", choices=FORMATS, default="jsonl", help="output format (default jsonl)")
    tail.add_argument("--consumer-id", help="checkpoint progress in the table's consumer file under this id")
    tail.add_argument("--notifier", choices=("auto", "local", "poll", "sqs"), default="auto")
    tail.add_argument("--sqs-queue-url", help="SQS queue with the warehouse's S3 events (notifier sqs/auto)")
    tail.add_argument("--include-row-kind", action="store_true", help="add _row_kind (+I, -U, +U, -D)")
    tail.add_argument("-c", "--columns", help="comma-separated columns to output")
    tail.add_argument(
        "-f", "--filter", action="append", default=[], metavar="EXPR",
        help="row filter: col=value, col!=value, col>value, col>=value, col<value, col<=value, "
        "col=prefix* (repeatable; all must match)",
    )
    tail.add_argument("--limit", type=int, help="exit after printing this many rows")
    tail.add_argument("--poll-interval", type=int, default=1000, help="poll interval in ms (notifier poll)")
    tail.add_argument(
        "--catalog-option", action="append", default=[], type=_catalog_option, metavar="KEY=VALUE",
        help="extra catalog option, e.g. fs.s3.endpoint=http://127.0.0.1:9000 (repeatable)",
    )

    demo = commands.add_parser(
        "demo",
        help="create a local warehouse, commit to it and tail it live",
        description="Create a local warehouse with an append table and a primary-key table, "
        "commit to both from a writer thread, tail them live and print commit-to-delivery "
        "latency per batch, then a summary.",
    )
    demo.add_argument("--commits", type=int, default=40, help="commits per table (default 40)")
    demo.add_argument("--backlog", type=int, default=25, help="commits made before tailing starts, to show catch-up")
    demo.add_argument("--interval", type=float, default=0.1, help="seconds between commits (default 0.1)")
    demo.add_argument("--warehouse", help="warehouse directory (default: a new temp dir, removed at exit)")
    return parser


async def _tail(args: argparse.Namespace) -> int:
    from paimon_feed.feed import ChangeFeed
    from paimon_feed.tables import open_table

    if args.limit is not None and args.limit < 1:
        raise ConfigurationError(f"--limit must be >= 1, got {args.limit}")
    if args.poll_interval < 1:
        raise ConfigurationError(f"--poll-interval must be >= 1 ms, got {args.poll_interval}")
    table = open_table(args.warehouse, args.table, dict(args.catalog_option))
    filters = bind_filters(table_schema(table), [parse_filter(text) for text in args.filter])
    predicate = to_predicate(table, filters)
    columns = [name.strip() for name in args.columns.split(",")] if args.columns else None
    if columns is not None:
        known = [field.name for field in table.fields]
        unknown = [name for name in columns if name not in known]
        if unknown:
            raise ConfigurationError(f"--columns: unknown columns {unknown}; the table has {known}")
    # Read the filter columns too, drop them after filtering.
    projection = None
    if columns is not None:
        projection = columns + [f.column for f in filters if f.column not in columns]

    writer = RowWriter(args.format, sys.stdout)
    printed = 0
    async with ChangeFeed(
        table,
        consumer_id=args.consumer_id,
        start=args.start,
        end=args.end,
        notifier=args.notifier,
        poll_interval=args.poll_interval / 1000,
        include_row_kind=args.include_row_kind,
        projection=projection,
        predicate=predicate,
        sqs_queue_url=args.sqs_queue_url,
    ) as feed:
        async for batch in feed:
            data = apply_filters(batch.to_arrow(), filters)
            if columns is not None:
                keep = (["_row_kind"] if args.include_row_kind else []) + columns
                data = data.select(keep)
            rows = data.to_pylist()
            if args.limit is not None:
                rows = rows[: args.limit - printed]
            writer.write(rows)
            printed += len(rows)
            logger.info(
                "snapshot %d (%s): %d rows", batch.snapshot_id, batch.kind, len(rows)
            )
            if args.limit is not None and printed >= args.limit:
                # Commit only what was printed: a partly printed batch stays uncommitted.
                if len(rows) == data.num_rows:
                    await feed.commit(batch)
                break
            await feed.commit(batch)
    return EXIT_OK


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if verbosity < 2:
        # pypaimon and watchfiles log every commit and change at INFO.
        for noisy in ("pypaimon", "watchfiles"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        if args.command == "tail":
            return asyncio.run(_tail(args))
        from paimon_feed.demo import run_demo

        return run_demo(
            commits=args.commits, backlog=args.backlog, interval=args.interval, warehouse=args.warehouse
        )
    except (ConfigurationError, TableNotFoundError, CheckpointError) as exc:
        print(f"paimon-feed: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FeedError as exc:
        print(f"paimon-feed: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped to a reader that went away (| head): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
