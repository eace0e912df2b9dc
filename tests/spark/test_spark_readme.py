"""The Spark page's example job, run as written, against an ``s3://bucket/warehouse`` on a real
``moto_server`` that Spark's Python workers reach through ``AWS_ENDPOINT_URL`` alone (no
``catalog.fs.s3.endpoint``): it defines its own session and sink, and after its
``Trigger.AvailableNow`` query ends, the Parquet it wrote is pypaimon's read of the table,
Paimon's consumer file holds the position after the last batch Spark committed, and running the
job again reads nothing twice.

Only the two local paths are replaced (the page's ``/checkpoints/...`` and ``/data/...`` are not
writable here). ``getOrCreate()`` in the job returns this module's session, which carries moto's
endpoint and credentials to the workers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from spark_support import QUERY_TIMEOUT_S, commit, new_spark_session

PAGE = Path(__file__).resolve().parents[2] / "docs" / "spark.md"
BUCKET, REGION = "bucket", "eu-west-1"
CONSUMER_KEY = "warehouse/shop.db/orders/consumer/consumer-orders-to-delta"
CHECKPOINT, OUTPUT = '"/checkpoints/orders-to-delta"', '"/data/orders-changes/batch_id={batch_id}"'


def example_job() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    return next(block for block in blocks if "availableNow=True" in block)


@pytest.fixture(scope="module")
def spark(moto_server):
    env = {**moto_server.credentials_env, "AWS_ENDPOINT_URL": moto_server.endpoint_url}
    session = new_spark_session("paimon-feed-readme", worker_env=env)
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture
def orders(moto_server, monkeypatch):
    """shop.orders at s3://bucket/warehouse on moto, written by pypaimon with explicit options."""
    from pypaimon import CatalogFactory, Schema
    from support.tables import APPEND_SCHEMA

    for name, value in moto_server.credentials_env.items():
        monkeypatch.setenv(name, value)
    s3 = moto_server.client("s3")
    s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
    catalog = CatalogFactory.create({
        "warehouse": f"s3://{BUCKET}/warehouse",
        "fs.s3.endpoint": moto_server.endpoint_url,
        "fs.s3.region": REGION,
        "fs.s3.path-style-access": "true",
    })
    catalog.create_database("shop", True)
    catalog.create_table("shop.orders", Schema.from_pyarrow_schema(APPEND_SCHEMA), False)
    return catalog.get_table("shop.orders"), s3


def run_job(spark, run: Path) -> list[dict]:
    """The job as the page writes it, with local paths under ``run``; the rows it wrote."""
    code = example_job()
    assert CHECKPOINT in code and OUTPUT in code
    output = run / "orders-changes"
    code = code.replace(CHECKPOINT, repr(str(run / "checkpoint")))
    code = code.replace(OUTPUT, repr(f"{output}/batch_id={{batch_id}}"))  # still an f-string
    namespace: dict = {"__name__": "example"}
    exec(compile(code, str(PAGE), "exec"), namespace)
    assert namespace["spark"] is spark  # the job's getOrCreate() found this session
    query = namespace["query"]
    assert not query.isActive and query.exception() is None
    namespace["current"].schema  # the batch read's load() works on the same settings
    if not output.exists():
        return []
    rows = pq.read_table(output).to_pylist()
    return sorted(({k: v for k, v in r.items() if k != "batch_id"} for r in rows), key=str)


def pypaimon_rows(table) -> list[dict]:
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(({"_row_kind": "+I", **row} for row in rows), key=str)


@pytest.mark.timeout(QUERY_TIMEOUT_S * 3)
def test_the_example_job_writes_the_table_and_leaves_the_consumer_file_after_its_last_batch(
    spark, orders, tmp_path
):
    table, s3 = orders
    for n in range(1, 13):
        commit(table, n)
    assert run_job(spark, tmp_path / "first") == pypaimon_rows(table)  # the state at snapshot 12
    stored = json.loads(s3.get_object(Bucket=BUCKET, Key=CONSUMER_KEY)["Body"].read())
    assert stored == {"nextSnapshot": 13}

    # The next scheduled run (a new checkpoint, the same consumer) has nothing to read ...
    assert run_job(spark, tmp_path / "second") == []
    # ... and after one more commit, reads exactly that.
    commit(table, 13)
    third = run_job(spark, tmp_path / "third")
    assert {row["commit"] for row in third} == {13} and len(third) == 3
    stored = json.loads(s3.get_object(Bucket=BUCKET, Key=CONSUMER_KEY)["Body"].read())
    assert stored == {"nextSnapshot": 14}
