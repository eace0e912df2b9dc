"""What S3 requests cost: the kind each request in ``moto_server``'s log is billed as, and what
a window of requests costs over a month. Shared by the S3 and Spark benchmarks.

Prices are S3 Standard request prices in us-east-1 at the time of writing, USD per 1,000
requests (check the current price list): LIST and PUT (with POST and COPY) $0.005; GET and HEAD
$0.0004; DELETE free.
"""

from __future__ import annotations

import collections
import re
import time
import urllib.parse
from typing import Any

S3_USD_PER_1000 = {"LIST": 0.005, "PUT": 0.005, "GET": 0.0004, "HEAD": 0.0004, "DELETE": 0.0}

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
#: One S3 request in moto's log (path-style addressing): method, bucket, key, query.
_S3_REQUEST = re.compile(r'"(?P<method>[A-Z]+) /(?P<bucket>[^/?\s]+)/?(?P<key>[^?\s]*)(?:\?(?P<query>\S*))? HTTP')

MONTH_S = 30 * 24 * 3600
#: One SQS request in moto's log (a POST to a queue URL or to the service root).
SQS_REQUEST = re.compile(r'"POST /(?:[0-9]{12}/\S*)? HTTP')


def s3_request_kind(line: str) -> str | None:
    """What an S3 request in a (URL-decoded) moto log line is billed as: ``LIST`` (a GET of a
    bucket, with or without a prefix), ``GET``, ``HEAD``, ``PUT`` (PUT, POST and COPY) or
    ``DELETE``; ``None`` for a line that is no S3 request."""
    match = _S3_REQUEST.search(_ANSI_ESCAPE.sub("", line))  # moto colours non-200 answers
    if match is None:
        return None
    method = match["method"]
    if method == "GET":
        return "LIST" if not match["key"] else "GET"
    if method in ("PUT", "POST"):
        return "PUT"
    return method if method in S3_USD_PER_1000 else None


def usd_per_month(counts_by_kind: dict[str, int], window_s: float) -> float:
    """What requests counted over ``window_s`` seconds cost over 30 days at the same rate."""
    scale = MONTH_S / window_s
    return sum(n * scale * S3_USD_PER_1000.get(kind, 0.0) / 1000 for kind, n in counts_by_kind.items())


def idle_log_window(server: Any, idle_seconds: float) -> tuple[float, list[str]]:
    """Wait ``idle_seconds`` and return the window's length and the (URL-decoded) lines moto's
    log gained in it: what everything following the server asked while nothing was committed."""
    offset = server.log_path.stat().st_size
    started = time.time()
    time.sleep(idle_seconds)
    window = time.time() - started
    with open(server.log_path, "rb") as handle:
        handle.seek(offset)
        lines = handle.read().decode(errors="replace").splitlines()
    return window, [urllib.parse.unquote(line) for line in lines]


def requests_of_table(lines: list[str], table: str, window_s: float, per_s: float) -> dict[str, Any]:
    """The S3 requests in ``lines`` naming ``table`` (``db.db/<table>``), by kind, per ``per_s``
    seconds, and what they cost a month."""
    names_table = re.compile(rf"db\.db/{table}\b")
    mine = [line for line in lines if names_table.search(line)]
    kinds = collections.Counter(s3_request_kind(line) or "other" for line in mine)
    return {"table": table, "s3_requests": len(mine), "s3_requests_per_window": len(mine) * per_s / window_s,
            "s3_requests_by_kind": dict(kinds), "usd_per_month": usd_per_month(kinds, window_s)}
