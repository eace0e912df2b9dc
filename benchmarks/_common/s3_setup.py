"""What the S3 benchmark's parts share (:mod:`benchmarks.s3_bench`, and the benchmarks that
reuse its machinery): the bucket, the table schema, commits, the catalog, and reading the
S3 events an observing queue received."""

from __future__ import annotations

import asyncio
import json
import os
import re
from datetime import datetime, timezone

import pyarrow as pa

from paimon_feed.tables import commit_arrow
from tests.s3_support import MotoServer

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("payload", pa.string())])
BUCKET = "bench-lake"
LATENCY_TABLE = "bench"


def commit(table, n: int, rows: int = 10) -> None:
    data = pa.table(
        {"id": [n * rows + i for i in range(rows)], "payload": [f"r{n}"] * rows}, schema=SCHEMA
    )
    commit_arrow(table, data)


def open_catalog(options: dict):
    from pypaimon import CatalogFactory

    return CatalogFactory.create(options)


async def _wait_for_file(path: str) -> None:
    while not os.path.exists(path):
        await asyncio.sleep(0.1)


def _drain(server: MotoServer, queue_url: str) -> list[dict]:
    sqs = server.client("sqs")
    bodies = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            return bodies
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


def _event_times(bodies: list[dict]) -> dict[str, dict[int, float]]:
    """table -> snapshot id -> epoch seconds of its ObjectCreated event (moto's clock, ms
    precision)."""
    times: dict[str, dict[int, float]] = {}
    for body in bodies:
        for record in body.get("Records", []):
            key = record["s3"]["object"]["key"].replace("%2F", "/")
            match = re.search(r"db\.db/([^/]+)/snapshot/snapshot-([0-9]+)$", key)
            if match and record["eventName"].startswith("ObjectCreated"):
                stamp = datetime.strptime(record["eventTime"], "%Y-%m-%dT%H:%M:%S.%fZ")
                stamp = stamp.replace(tzinfo=timezone.utc).timestamp()
                times.setdefault(match.group(1), {})[int(match.group(2))] = stamp
    return times
