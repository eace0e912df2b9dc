"""Paimon's reference REST catalog server (``RESTCatalogServer`` from paimon-core's tests jar),
run by ``java/rest/RestCatalogServerMain.java`` in its own JVM on 127.0.0.1 and a free port over a
``file:`` warehouse; the catalog options of a pypaimon client are :attr:`RestServer.options`.

The JVM serves until its stdin closes; :meth:`RestServer.close` closes it and waits for the
process to end (killing it after 10 s), so a session leaves no JVM behind.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import threading
from collections import deque
from pathlib import Path

import fetch_java
from java_paimon import JVM_OPTIONS, classpath, compile_java, missing_java, stop_jvm

__all__ = ["RestServer", "missing_rest_server"]

SOURCE = fetch_java.JAVA_DIR / "rest" / "RestCatalogServerMain.java"
START_TIMEOUT = 60.0  # seconds for the JVM to start and print its URL


def missing_rest_server() -> str | None:
    """Why the REST catalog server cannot run here, or ``None`` if it can."""
    reason = missing_java(fetch_java.NEWEST)
    if reason is None and not fetch_java.is_rest_server_fetched():
        reason = (
            f"the REST catalog server is not in {fetch_java.cache_dir()}: "
            f"run `python tests/interop/fetch_java.py`"
        )
    return reason


class RestServer:
    """One running REST catalog server over the warehouse directory ``data_dir``."""

    def __init__(self, data_dir: Path, warehouse: str = "feed_rest") -> None:
        jars = [fetch_java.classpath_dir(fetch_java.NEWEST), fetch_java.rest_server_dir()]
        classes = compile_java("classes-rest-server", [SOURCE], jars)
        self.data_dir = data_dir
        self._stderr_tail: deque[str] = deque(maxlen=100)
        self.process = subprocess.Popen(
            ["java", *JVM_OPTIONS, "-cp", classpath([classes, *jars]), "RestCatalogServerMain",
             data_dir.as_uri(), warehouse],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8",
        )
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            line = self.process.stdout.readline() if selector.select(START_TIMEOUT) else ""
        if not line:
            self.close()
            raise RuntimeError(
                f"the REST catalog server did not start (exit {self.process.poll()}):\n"
                + "".join(self._stderr_tail)
            )
        started = json.loads(line)
        self.uri: str = started["uri"]
        self.warehouse: str = started["warehouse"]
        self.options: dict[str, str] = {
            "metastore": "rest",
            "uri": self.uri,
            "warehouse": self.warehouse,
            "token.provider": "bear",
            "token": started["token"],
        }

    def _drain_stderr(self) -> None:
        for line in self.process.stderr:
            self._stderr_tail.append(line)

    def close(self) -> int:
        """Stop the server; returns the JVM's exit code."""
        return stop_jvm(self.process)
