"""The ``paimon-feed`` command.

``paimon-feed tail WAREHOUSE DB.TABLE`` streams a table's rows as they commit (``tail WAREHOUSE``
or ``tail WAREHOUSE 'sales.*' ops.events``: every or the matching tables, rows with ``_table``);
``paimon-feed demo`` builds a local warehouse, commits to it and tails it live;
``paimon-feed consumers WAREHOUSE DB.TABLE`` lists, resets, deletes or expires consumers;
``paimon-feed wire s3://BUCKET/WH --queue NAME`` sets up S3 push for a warehouse and
``paimon-feed check s3://BUCKET/WH --queue-url URL`` proves it works. Bare
``paimon-feed`` prints the help on stderr and exits 2.

One module per job: :mod:`~paimon_feed.cli.parser` (arguments, exit codes, one-line messages,
logging), :mod:`~paimon_feed.cli.tail` (with :mod:`~paimon_feed.cli.filters` and
:mod:`~paimon_feed.cli.output`), :mod:`~paimon_feed.cli.consumers` and
:mod:`~paimon_feed.cli.demo`, :mod:`~paimon_feed.cli.wire` (wire and check). :func:`main` parses, dispatches and maps what fails to an exit
code (see :mod:`~paimon_feed.cli.parser`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from paimon_feed.cli.consumers import run_consumers
from paimon_feed.cli.parser import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    build_parser,
    configure_logging,
    fail,
    join_dash_values,
    until_signalled,
)
from paimon_feed.cli.tail import run_tail
from paimon_feed.cli.wire import run_check, run_wire
from paimon_feed.errors import CheckpointError, ConfigurationError, StorageError, TableNotFoundError

__all__ = ["main"]


def _run_demo(args: argparse.Namespace) -> int:
    from paimon_feed.cli.demo import run_demo

    return run_demo(
        commits=args.commits, backlog=args.backlog, interval=args.interval, warehouse=args.warehouse,
        run=lambda coroutine: asyncio.run(until_signalled(coroutine)),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(join_dash_values(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    verbosity = args.verbose + args.command_verbose
    configure_logging(verbosity)
    try:
        run = {"tail": run_tail, "demo": _run_demo, "consumers": run_consumers, "wire": run_wire,
               "check": run_check}[args.command]
        return run(args)
    except StorageError as exc:  # a checkpoint write on a full disk too: storage, not input
        return fail(exc, EXIT_FAILURE, verbosity)
    except (ConfigurationError, TableNotFoundError, CheckpointError) as exc:
        return fail(exc, EXIT_USAGE, verbosity)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped to a reader that went away (| head): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the boundary: one line and an exit code
        return fail(exc, EXIT_FAILURE, verbosity)
