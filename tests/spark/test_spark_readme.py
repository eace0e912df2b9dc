"""The README's PySpark snippet, run as written, against an ``s3://bucket/warehouse`` on a real
``moto_server`` that Spark's Python workers reach through ``AWS_ENDPOINT_URL`` alone (no
``catalog.fs.s3.endpoint``): after the ``Trigger.AvailableNow`` query ends, Paimon's consumer
file holds the position after the last batch Spark committed, and running the job again reads
nothing twice.

Only the checkpoint location is replaced (the README's ``/checkpoints/...`` is not writable
here); ``spark`` and ``upsert`` are what the snippet expects from its surroundings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from spark_support import QUERY_TIMEOUT_S, BatchSink, commit, new_spark_session

README = Path(__file__).resolve().parents[2] / "docs" / "spark.md"  # the Spark page's snippet
BUCKET, REGION = "bucket", "eu-west-1"
CONSUMER_KEY = "warehouse/shop.db/orders/consumer/consumer-orders-to-delta"


def readme_available_now_snippet() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
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


def run_snippet(spark, checkpoint: Path) -> BatchSink:
    code = readme_available_now_snippet()
    assert '"/checkpoints/orders-to-delta"' in code
    code = code.replace('"/checkpoints/orders-to-delta"', repr(str(checkpoint)))
    upsert = BatchSink()
    namespace = {"spark": spark, "upsert": upsert}
    exec(compile(code, str(README), "exec"), namespace)
    query = namespace["query"]
    assert not query.isActive and query.exception() is None
    namespace["current"].schema  # the batch read's load() works on the same settings
    return upsert


@pytest.mark.timeout(QUERY_TIMEOUT_S * 3)
def test_the_readme_available_now_job_leaves_the_consumer_file_after_its_last_batch(
    spark, orders, tmp_path
):
    table, s3 = orders
    for n in range(1, 13):
        commit(table, n)
    first = run_snippet(spark, tmp_path / "first")
    assert sorted(set(first.commits())) == list(range(1, 13))  # the full state at snapshot 12
    stored = json.loads(s3.get_object(Bucket=BUCKET, Key=CONSUMER_KEY)["Body"].read())
    assert stored == {"nextSnapshot": 13}

    # The next scheduled run (a new checkpoint, the same consumer) has nothing to read ...
    assert run_snippet(spark, tmp_path / "second").commits() == []
    # ... and after one more commit, reads exactly that.
    commit(table, 13)
    assert sorted(set(run_snippet(spark, tmp_path / "third").commits())) == [13]
    stored = json.loads(s3.get_object(Bucket=BUCKET, Key=CONSUMER_KEY)["Body"].read())
    assert stored == {"nextSnapshot": 14}
