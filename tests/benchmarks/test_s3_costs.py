"""The benchmarks' S3 request classification for their idle-cost figures (``s3_costs.py``),
checked against what a real ``moto_server`` logs for requests whose kinds are known (sent with
boto3, and with pyarrow's S3 file system as pypaimon uses it)."""

from __future__ import annotations

import importlib
import time
import urllib.parse
from collections import Counter

import pytest


@pytest.fixture(scope="module")
def bench():
    return importlib.import_module("benchmarks._common.s3_costs")


def _kinds_logged(bench, server, since: int) -> Counter:
    """Kinds of the requests moto logged after offset ``since``, once its log stops growing (it
    writes a request's line after answering it)."""
    size = -1
    while size != server.log_path.stat().st_size:
        size = server.log_path.stat().st_size
        time.sleep(0.3)
    with open(server.log_path, "rb") as handle:
        handle.seek(since)
        lines = [urllib.parse.unquote(line) for line in handle.read().decode(errors="replace").splitlines()]
    return Counter(kind for kind in map(bench.s3_request_kind, lines) if kind is not None)


def test_requests_moto_logs_are_billed_by_kind(bench, moto_server):
    import pyarrow.fs as pafs

    s3 = moto_server.client("s3")
    moto_server.create_bucket("costs")
    since = moto_server.log_path.stat().st_size
    for n in range(3):
        s3.put_object(Bucket="costs", Key=f"wh/db.db/t/snapshot/snapshot-{n}", Body=b"{}")
    s3.copy_object(Bucket="costs", Key="wh/db.db/t/snapshot/LATEST",
                   CopySource={"Bucket": "costs", "Key": "wh/db.db/t/snapshot/snapshot-2"})
    s3.get_object(Bucket="costs", Key="wh/db.db/t/snapshot/snapshot-1")
    s3.head_object(Bucket="costs", Key="wh/db.db/t/snapshot/snapshot-2")
    s3.list_objects_v2(Bucket="costs", Prefix="wh/db.db/t/snapshot/", Delimiter="/")
    s3.list_objects(Bucket="costs", Prefix="wh/db.db/t/")
    s3.delete_object(Bucket="costs", Key="wh/db.db/t/snapshot/snapshot-0")
    assert _kinds_logged(bench, moto_server, since) == {"PUT": 4, "GET": 1, "HEAD": 1, "LIST": 2, "DELETE": 1}

    since = moto_server.log_path.stat().st_size
    fs = pafs.S3FileSystem(endpoint_override=moto_server.endpoint_url, scheme="http",
                           access_key=moto_server.access_key, secret_key=moto_server.secret_key,
                           region=moto_server.region)
    info = fs.get_file_info("costs/wh/db.db/t/snapshot/snapshot-9")  # missing: HEAD, then a LIST
    assert info.type == pafs.FileType.NotFound
    kinds = _kinds_logged(bench, moto_server, since)
    assert kinds["HEAD"] >= 1 and kinds["LIST"] >= 1 and set(kinds) <= {"HEAD", "LIST"}


def test_a_month_of_requests_is_priced_per_kind(bench):
    month = 30 * 24 * 3600
    assert bench.usd_per_month({"LIST": 1000}, month) == pytest.approx(0.005)
    assert bench.usd_per_month({"GET": 10, "HEAD": 10}, month / 100) == pytest.approx(0.0008)
    assert bench.usd_per_month({"DELETE": 10, "other": 3}, 60) == 0.0
    assert bench.s3_request_kind('127.0.0.1 - - [x] "POST /123456789012/q HTTP/1.1" 200 -') == "PUT"
    assert bench.s3_request_kind("a line that is no request") is None
