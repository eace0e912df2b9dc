"""A tiny fault-injecting HTTP proxy in front of a (moto) S3 server, standard library only.

Every request is forwarded to the upstream server as it came (method, path and query, headers,
body), except that a configurable fraction of them is answered by the proxy itself with S3's
HTTP 503 ``SlowDown`` or HTTP 500 ``InternalError`` and S3's XML error body. Which requests fail
is decided by a seeded random generator, optionally only for some methods (``GET``/``HEAD``) or
only for keys matching a regular expression. Clients keep their ``Host`` header, which is fine
for path-style requests to a server that does not check signatures (moto).

With ``delay_ms``, every request (forwarded or faulted) is answered that much later, as a
round trip to a real object store would be (moto on loopback answers in about a millisecond):
benchmarks use it so that S3 figures reflect round trips, not just request counts. The delay
is per request and requests are served concurrently, so concurrent clients overlap their waits.

::

    with FaultProxy(moto.endpoint_url, rate=0.25, seed=1) as proxy:
        options["fs.s3.endpoint"] = proxy.endpoint_url
        ...
        proxy.set_faults(rate=1.0)   # from now on, everything fails
        proxy.set_delay(20)          # and every answer takes 20 ms more
        proxy.injected, proxy.forwarded
        proxy.history_lines(r"/snapshot/")   # which request got which answer, oldest first

It listens on 127.0.0.1 only, on a free port, and only forwards to a loopback upstream.
"""

from __future__ import annotations

import http.client
import http.server
import random
import re
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Iterable
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

__all__ = ["FaultProxy", "FAULTS"]

# status, S3 error code, message
FAULTS = (
    (503, "SlowDown", "Please reduce your request rate."),
    (500, "InternalError", "We encountered an internal error. Please try again."),
)
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# Hop-by-hop headers (RFC 9110 7.6.1): never forwarded, in either direction.
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
_UPSTREAM_TIMEOUT = 60.0  # seconds
_HISTORY = 5000  # requests remembered for :meth:`FaultProxy.history_lines`


class FaultProxy:
    """An HTTP proxy on ``127.0.0.1:<free port>`` forwarding to ``upstream`` with faults.

    Args:
        upstream: ``http://127.0.0.1:<port>`` of the real server (loopback only).
        rate: fraction of eligible requests answered with a fault (0.0 .. 1.0).
        methods: only requests with these methods are eligible (``None``: all).
        key_pattern: only requests whose path matches this regex (``re.search``) are eligible.
        faults: ``(status, code, message)`` to choose from at random for each fault.
        seed: seed of the random generator deciding which requests fail and how.
        delay_ms: milliseconds every request waits before it is answered (0: none).
    """

    def __init__(
        self,
        upstream: str,
        *,
        rate: float = 0.0,
        methods: Iterable[str] | None = None,
        key_pattern: str | None = None,
        faults: tuple[tuple[int, str, str], ...] = FAULTS,
        seed: int = 0,
        delay_ms: float = 0.0,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or parts.hostname not in _LOOPBACK or parts.port is None:
            raise ValueError(f"upstream must be http://<loopback>:<port>, got {upstream!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self.rate = 0.0
        self.methods: frozenset[str] | None = None
        self.key_pattern: re.Pattern[str] | None = None
        self.faults = faults
        self.set_faults(rate=rate, methods=methods, key_pattern=key_pattern)
        self.delay_ms = 0.0
        self.set_delay(delay_ms)
        self.requests = 0  # every request received
        self.forwarded = 0  # requests forwarded upstream (whatever it answered)
        self.injected = 0  # requests answered with a fault by the proxy
        self.injected_by_code: Counter[str] = Counter()
        self.upstream_errors = 0  # forwarding failed (upstream down): answered 502
        # (monotonic seconds, method, path, outcome) of the latest requests, oldest first
        self.history: deque[tuple[float, str, str, str]] = deque(maxlen=_HISTORY)
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # configuration -----------------------------------------------------------------------
    def set_faults(
        self,
        *,
        rate: float | None = None,
        methods: Iterable[str] | None = ...,  # type: ignore[assignment]
        key_pattern: str | None = ...,  # type: ignore[assignment]
    ) -> None:
        """Change the fault configuration while the proxy runs (arguments left out are kept)."""
        with self._lock:
            if rate is not None:
                if not 0.0 <= rate <= 1.0:
                    raise ValueError(f"rate must be within 0..1, got {rate}")
                self.rate = rate
            if methods is not ...:
                self.methods = None if methods is None else frozenset(m.upper() for m in methods)
            if key_pattern is not ...:
                self.key_pattern = None if key_pattern is None else re.compile(key_pattern)

    def set_delay(self, delay_ms: float) -> None:
        """Answer every request ``delay_ms`` milliseconds later from now on (0: at once)."""
        if not 0.0 <= delay_ms <= 60_000:
            raise ValueError(f"delay_ms must be within 0..60000, got {delay_ms}")
        with self._lock:
            self.delay_ms = float(delay_ms)

    def _choose_fault(self, method: str, path: str) -> tuple[int, str, str] | None:
        """Count the request and decide (under the lock, so the seeded sequence is shared)."""
        with self._lock:
            self.requests += 1
            if self.methods is not None and method not in self.methods:
                return None
            if self.key_pattern is not None and not self.key_pattern.search(path):
                return None
            if self.rate <= 0.0 or self._random.random() >= self.rate:
                return None
            fault = self._random.choice(self.faults)
            self.injected += 1
            self.injected_by_code[fault[1]] += 1
            self.history.append((time.monotonic(), method, path, f"{fault[0]} {fault[1]}"))
            return fault

    def _count_forwarded(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.forwarded += 1
            self.history.append((time.monotonic(), method, path, str(status)))

    def _count_upstream_error(self, method: str, path: str) -> None:
        with self._lock:
            self.upstream_errors += 1
            self.history.append((time.monotonic(), method, path, "502 upstream failed"))

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": self.requests,
                "forwarded": self.forwarded,
                "injected": self.injected,
                "injected_by_code": dict(self.injected_by_code),
                "upstream_errors": self.upstream_errors,
            }

    def history_lines(self, pattern: str | None = None) -> list[str]:
        """The remembered requests as ``+seconds METHOD path -> outcome`` lines (oldest first),
        only those whose path matches ``pattern`` if given: which key got which fault."""
        with self._lock:
            history = list(self.history)
        if not history:
            return []
        regex = re.compile(pattern) if pattern is not None else None
        origin = history[0][0]
        return [
            f"+{at - origin:8.3f}s {method} {path} -> {outcome}"
            for at, method, path, outcome in history
            if regex is None or regex.search(path)
        ]

    # lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "proxy not started"
        return self._server.server_address[1]

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FaultProxy:
        if self._server is not None:
            return self
        handler = type("BoundFaultHandler", (_Handler,), {"proxy": self})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1},
            name=f"fault-proxy-{self.port}", daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the listening socket. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def error_body(code: str, message: str, resource: str) -> bytes:
    """S3's XML error document."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
        f"<Resource>{escape(resource)}</Resource>"
        f"<RequestId>{uuid.uuid4().hex[:16].upper()}</RequestId></Error>"
    ).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    proxy: FaultProxy  # set on the bound subclass
    protocol_version = "HTTP/1.1"  # keep-alive, as S3 clients expect; answers 100-continue
    # Headers and body go out in two writes; with Nagle's algorithm the body then waits for the
    # client's delayed ACK (~40 ms on Linux), which added ~50 ms to every GET through the proxy.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass

    def _read_body(self) -> bytes:
        """The request body, de-chunked if sent with ``Transfer-Encoding: chunked``."""
        encoding = self.headers.get("Transfer-Encoding", "")
        if "chunked" in encoding.lower():
            chunks = []
            while True:
                size_line = self.rfile.readline(65537)
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)  # CRLF after the chunk
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        method = self.command
        body = self._read_body()  # always read, so the connection stays usable after a fault
        fault = self.proxy._choose_fault(method, self.path)
        delay_ms = self.proxy.delay_ms
        if delay_ms:
            time.sleep(delay_ms / 1000)
        if fault is not None:
            status, code, message = fault
            payload = error_body(code, message, self.path.split("?", 1)[0])
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            if status == 503:
                self.send_header("Retry-After", "0")
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(payload)
            return
        self._forward(method, body)

    def _forward(self, method: str, body: bytes) -> None:
        connection = http.client.HTTPConnection(
            self.proxy.upstream_host, self.proxy.upstream_port, timeout=_UPSTREAM_TIMEOUT
        )
        try:
            connection.putrequest(method, self.path, skip_host=True, skip_accept_encoding=True)
            chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
            for name, value in self.headers.items():
                lower = name.lower()
                if lower in _HOP_BY_HOP or lower == "expect":
                    continue
                if chunked and lower == "content-length":
                    continue
                connection.putheader(name, value)
            if chunked or body or method in ("PUT", "POST"):
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body if body else None)
            response = connection.getresponse()
            payload = response.read()
            headers = response.getheaders()
            status, reason = response.status, response.reason
        except OSError as exc:
            self.proxy._count_upstream_error(method, self.path)
            payload = f"upstream failed: {exc}".encode()
            self.send_response(502)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(payload)
            return
        finally:
            connection.close()
        self.proxy._count_forwarded(method, self.path, status)
        self.send_response_only(status, reason)
        has_length = False
        for name, value in headers:
            lower = name.lower()
            if lower in _HOP_BY_HOP:
                continue
            if lower == "content-length":
                if method == "HEAD" or status in (204, 304):
                    has_length = True  # keep the object's size for HEAD
                else:
                    continue  # set from the (de-chunked) payload below
            self.send_header(name, value)
        if not has_length and not (method == "HEAD" or status in (204, 304) or status < 200):
            self.send_header("Content-Length", str(len(payload)))
        elif not has_length and method == "HEAD":
            self.send_header("Content-Length", "0")
        self.end_headers()
        if method != "HEAD" and payload:
            self.wfile.write(payload)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = _handle
