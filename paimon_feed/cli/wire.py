"""``paimon-feed wire`` and ``paimon-feed check``: thin over :func:`paimon_feed.aws.wire`
and :func:`paimon_feed.aws.check` (their arguments, their output, their exit codes)."""

from __future__ import annotations

import argparse
import json
import sys

from paimon_feed.cli.arguments import duration_seconds
from paimon_feed.cli.exits import EXIT_FAILURE, EXIT_OK

__all__ = ["add_check_arguments", "add_wire_arguments", "run_check", "run_wire"]


def _add_aws_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("warehouse", metavar="s3://BUCKET/WAREHOUSE", help="the warehouse's S3 URL")
    parser.add_argument("--region", help="AWS region (default: AWS_DEFAULT_REGION or the profile's)")
    parser.add_argument(
        "--endpoint-url", metavar="URL",
        help="one endpoint for S3, SQS, EventBridge and STS (moto, LocalStack); default: "
        "boto's AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> or AWS itself",
    )


def add_wire_arguments(parser: argparse.ArgumentParser) -> None:
    _add_aws_arguments(parser)
    parser.add_argument("--queue", required=True, metavar="NAME",
                        help="queue name (made if missing, with NAME-dlq); one queue per consumer group")
    route = parser.add_mutually_exclusive_group()
    route.add_argument(
        "--eventbridge", dest="eventbridge", action="store_true", default=True,
        help="route through EventBridge (default): one rule for every table's snapshot files, "
        "one target per queue; turns the bucket's EventBridge notifications on",
    )
    route.add_argument(
        "--bucket-notification", dest="eventbridge", action="store_false",
        help="one S3 notification rule for the warehouse prefix, merged into the bucket's "
        "configuration (one queue per prefix: several consumer groups need --eventbridge)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the changes, make none")
    parser.add_argument("--remove", action="store_true", help="undo what wire made for this queue")
    parser.add_argument("--kms-key", metavar="KEY_ID",
                        help="encrypt the queues with this KMS key (prints the key policy statement it needs)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    _add_aws_arguments(parser)
    parser.add_argument("--queue-url", required=True, metavar="URL", help="the feed's queue")
    parser.add_argument("--timeout", type=duration_seconds, default=10.0, metavar="DURATION",
                        help="how long to wait for the probe's event (default 10s)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")


def run_wire(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from paimon_feed.aws import wire

    result = wire(
        args.warehouse, queue=args.queue, eventbridge=args.eventbridge, dry_run=args.dry_run,
        remove=args.remove, kms_key_id=args.kms_key, endpoint_url=args.endpoint_url,
        region_name=args.region,
    )
    if args.format == "json":
        document = asdict(result)
        document["changes"] = [str(change) for change in result.changes]
        print(json.dumps(document, sort_keys=True))
        return EXIT_OK
    what = "removal of the wiring" if result.removed else "wiring"
    if not result.changes:
        print(f"{result.warehouse}: {what} for queue {result.queue_name} is already in place; no change")
    else:
        done = "to make (dry run, none made)" if result.dry_run else "made"
        print(f"{result.warehouse}: {len(result.changes)} change(s) {done}:")
        for change in result.changes:
            print(f"  {change}")
    if result.queue_url and not result.removed:
        print(f"queue url: {result.queue_url}")
    if result.key_policy_statement is not None:
        print("add this statement to the KMS key's policy:")
        print(json.dumps(result.key_policy_statement, indent=2))
    return EXIT_OK


def run_check(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from paimon_feed.aws import check

    result = check(args.warehouse, queue_url=args.queue_url, timeout=args.timeout,
                   endpoint_url=args.endpoint_url, region_name=args.region)
    if args.format == "json":
        print(json.dumps(asdict(result), sort_keys=True))
    elif result.ok:
        assert result.delay is not None
        print(f"push works: the probe's event arrived after {result.delay * 1000:.0f} ms "
              f"(via {result.route}); {result.touched} consumer message(s) touched")
    else:
        print(f"push does not work for {result.warehouse} -> {result.queue_url}:")
        for problem in result.problems:
            print(f"  - {problem}")
    for warning in result.warnings:
        print(f"paimon-feed: note: {warning}", file=sys.stderr)
    if result.leftovers_removed:
        print(f"paimon-feed: note: removed {result.leftovers_removed} probe(s) left by an "
              f"interrupted check", file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_FAILURE
