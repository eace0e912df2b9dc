"""The inotify stream of one HDFS namespace, read by a small JVM helper (``java/HdfsInotify.java``).

HDFS tells its superusers about every namespace change through ``HdfsAdmin.getInotifyEventStream``;
Python has no client for that call (hdfs-native carries the messages, not the call), so a JVM on
the cluster's own Hadoop client reads it and prints one JSON line per rename to
``.../snapshot/snapshot-N``. One helper per process, event loop and namespace serves every table
(:func:`acquire` shares it); it is itself a poll of the NameNode, one ``getEditsFromTxid`` call
per ``poll_ms`` while nothing happens, whatever the number of tables.

If the helper dies after it started, it is started again from the last transaction it reported
(nothing in between is lost); an HA failover it rides out itself (its Hadoop client fails over to
the new active NameNode, which serves the same edits). If the NameNode purged the edits the
stream had yet to read (a checkpoint past its retention while the helper was down or behind),
the helper starts again at the NameNode's current transaction and says so; listeners are told
(``missed``) to check every table.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paimon_feed._aio import cancel_and_wait

__all__ = ["CLASSPATH_ENV", "InotifyStream", "StreamUnavailable", "acquire", "hadoop_classpath", "release"]

logger = logging.getLogger(__name__)

HELPER = Path(__file__).resolve().parent / "java" / "HdfsInotify.java"
CLASSPATH_ENV = "PAIMON_FEED_HADOOP_CLASSPATH"
JVM_OPTIONS = ("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
START_TIMEOUT = 120.0  # seconds for a cold JVM to open the stream
RESTART_BACKOFF = (0.5, 30.0)  # seconds: first and longest wait before starting a dead helper again
THREAD_PREFIX = "paimon-feed-hdfs-inotify"  # the threads that read a helper's pipes

#: A listener gets ``(kind, path, txid)``: ``snapshot`` (a rename to snapshot-N at ``path``),
#: ``missed`` (edits were purged: look at every table), ``down`` and ``up`` (the helper died,
#: and came back).
Listener = Callable[[str, str, int], None]


class StreamUnavailable(Exception):
    """The stream cannot be read here; ``superuser`` if the NameNode refused for want of rights."""

    def __init__(self, reason: str, *, superuser: bool = False) -> None:
        super().__init__(reason)
        self.superuser = superuser


def hadoop_classpath(configured: str | None = None) -> str:
    """The Hadoop client's classpath: ``configured``, else ``$PAIMON_FEED_HADOOP_CLASSPATH``,
    else ``hadoop classpath --glob``; ``$HADOOP_CONF_DIR`` first, for the cluster's settings
    (HA nameservices, Kerberos)."""
    classpath = configured or os.environ.get(CLASSPATH_ENV)
    if not classpath:
        hadoop = shutil.which("hadoop")
        if hadoop is None:
            raise StreamUnavailable(
                f"no Hadoop client: set {CLASSPATH_ENV} to its jars (the output of "
                f"`hadoop classpath --glob`), or put the `hadoop` command on PATH"
            )
        result = subprocess.run([hadoop, "classpath", "--glob"], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise StreamUnavailable(f"`hadoop classpath --glob` failed: {result.stderr.strip()[-500:]}")
        classpath = result.stdout.strip()
    conf = os.environ.get("HADOOP_CONF_DIR")
    return os.pathsep.join([conf, classpath]) if conf else classpath


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "paimon-feed"


def helper_classes(classpath: str) -> Path:
    """The helper compiled against ``classpath``, once per source and classpath, in the cache."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            raise StreamUnavailable(f"{tool} is not on PATH: the HDFS push notifier needs a JDK (11 or newer)")
    digest = hashlib.sha256(HELPER.read_bytes() + classpath.encode()).hexdigest()[:16]
    classes = _cache_dir() / f"hdfs-inotify-{digest}"
    if (classes / "HdfsInotify.class").is_file():
        return classes
    classes.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".hdfs-inotify-", dir=classes.parent))
    result = subprocess.run(
        ["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(staging), "-cp", classpath, str(HELPER)],
        capture_output=True, text=True, timeout=300,
    )
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise StreamUnavailable(
            f"the HDFS inotify helper does not compile against the Hadoop client "
            f"({CLASSPATH_ENV} or `hadoop classpath`): {(result.stdout + result.stderr).strip()[-1500:]}"
        )
    try:
        staging.rename(classes)
    except OSError:  # another process compiled it first
        shutil.rmtree(staging, ignore_errors=True)
    return classes


class InotifyStream:
    """One helper JVM for ``namespace`` (``hdfs://host:port`` or ``hdfs://nameservice``)."""

    def __init__(self, namespace: str, classpath: str, poll_ms: int) -> None:
        self.namespace = namespace
        self.classpath = classpath
        self.poll_ms = poll_ms
        self.last_txid = -1
        #: The transaction each helper start resumed after (-1: the NameNode's current one).
        self.started_from: list[int] = []
        #: Renames to snapshot files seen, ``(txid, path)``, newest last (bounded).
        self.renames: deque[tuple[int, str]] = deque(maxlen=1000)
        self.missed = 0
        self.process: subprocess.Popen[str] | None = None
        self.listeners: set[Listener] = set()
        self.users = 0
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[int] = loop.create_future()
        self._task = loop.create_task(self._run(), name=f"paimon-feed-hdfs-inotify-{namespace}")

    def __repr__(self) -> str:
        return f"InotifyStream({self.namespace!r}, last_txid={self.last_txid})"

    def _tell(self, kind: str, path: str = "", txid: int = -1) -> None:
        for listener in list(self.listeners):
            listener(kind, path, txid)

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                reason = await self._run_helper()
            except StreamUnavailable as exc:
                if not self.ready.done():
                    self.ready.set_exception(exc)
                    return
                reason = str(exc)  # it ran before: a failure like any other, tried again
            if not self.ready.done():
                self.ready.set_exception(StreamUnavailable(f"the inotify helper for {self.namespace} exited: {reason}"))
                return
            failures += 1
            delay = min(RESTART_BACKOFF[1], RESTART_BACKOFF[0] * 2 ** min(failures - 1, 16))
            logger.warning("%r: the inotify helper stopped (%s); starting it again in %.1f s", self, reason, delay)
            self._tell("down")
            await asyncio.sleep(delay)

    async def _run_helper(self) -> str:
        classes = await asyncio.to_thread(helper_classes, self.classpath)
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        stderr_tail: deque[str] = deque(maxlen=50)
        self.started_from.append(self.last_txid)
        self.process = process = subprocess.Popen(
            ["java", *JVM_OPTIONS, "-cp", os.pathsep.join([str(classes), self.classpath]), "HdfsInotify",
             self.namespace, str(self.last_txid), str(self.poll_ms)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        threading.Thread(target=_pump, args=(process.stdout, loop, lines), daemon=True,
                         name=f"{THREAD_PREFIX}-out").start()
        threading.Thread(target=_drain, args=(process.stderr, stderr_tail), daemon=True,
                         name=f"{THREAD_PREFIX}-err").start()
        try:
            while True:
                line = await lines.get()
                if line is None:
                    code = await asyncio.to_thread(process.wait)
                    return f"exit {code}: {''.join(stderr_tail)[-1500:]}"
                self._handle(json.loads(line))
        finally:
            _stop(process)

    def _handle(self, message: dict[str, Any]) -> None:
        if "error" in message:
            raise StreamUnavailable(
                f"the NameNode of {self.namespace} refused its inotify stream: {message['message']}",
                superuser=message["error"] == "superuser",
            )
        txid = int(message.get("txid", -1))
        self.last_txid = max(self.last_txid, txid)
        if message.get("ready"):
            if not self.ready.done():
                self.ready.set_result(self.last_txid)
            else:
                logger.info("%r: the inotify helper is back", self)
                self._tell("up")
        elif message.get("missed"):
            self.missed += 1
            logger.warning(
                "%s: the NameNode no longer has the edits from transaction %s on (its oldest is %s; "
                "purged after a checkpoint): the inotify stream starts at the current transaction %d, "
                "and every table followed on it gets a history check, so a commit made in between is "
                "delivered and a table dropped and re-created in between is found (HistoryRewrittenError, or "
                "the feed's on_history_rewritten policy)",
                self.namespace, message.get("from"), message.get("first"), txid,
            )
            self._tell("missed")
        elif "path" in message:
            self.renames.append((txid, message["path"]))
            self._tell("snapshot", message["path"], txid)

    async def close(self) -> None:
        await cancel_and_wait([self._task])
        if not self.ready.done():
            self.ready.cancel()


def _pump(stream: Any, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str | None]) -> None:
    """Hand the helper's stdout lines to the loop (a thread: the loop never blocks on a pipe)."""
    try:
        for line in stream:
            loop.call_soon_threadsafe(lines.put_nowait, line)
    finally:
        try:
            loop.call_soon_threadsafe(lines.put_nowait, None)
        except RuntimeError:  # the loop closed first: nobody waits for the end any more
            pass


def _drain(stream: Any, tail: deque[str]) -> None:
    for line in stream:
        tail.append(line)


def _stop(process: subprocess.Popen[str]) -> None:
    """Close the helper's stdin (it exits on EOF); kill it if it does not go within 5 s."""
    if process.poll() is None:
        try:
            process.stdin.close()  # type: ignore[union-attr]
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()


_shared: dict[tuple[int, str, str], InotifyStream] = {}


def acquire(namespace: str, classpath: str, poll_ms: int) -> InotifyStream:
    """The running loop's stream of ``namespace``, started on first use and shared after."""
    key = (id(asyncio.get_running_loop()), namespace, classpath)
    stream = _shared.get(key)
    if stream is None:
        stream = _shared[key] = InotifyStream(namespace, classpath, poll_ms)
    stream.users += 1
    return stream


async def release(stream: InotifyStream) -> None:
    """Give a stream back; the last user's release stops its helper."""
    stream.users -= 1
    if stream.users > 0:
        return
    for key, shared in list(_shared.items()):
        if shared is stream:
            del _shared[key]
    await stream.close()
