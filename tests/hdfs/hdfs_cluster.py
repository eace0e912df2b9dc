"""A real HDFS from Python: Hadoop's MiniDFSCluster (``java/HdfsCluster.java``) in one JVM.

The program is compiled with ``javac`` against the jars ``tests/interop/fetch_java.py`` cached, once per
source and classpath. It starts one of three topologies (``single``: one NameNode; ``ha``: a
logical nameservice with two NameNodes; ``federated``: two nameservices behind a ``viewfs://``
mount table), writes the clients' ``core-site.xml`` and ``hdfs-site.xml`` into ``conf_dir`` (a
``HADOOP_CONF_DIR``), prints the cluster's URLs and its NameNode's HTTP port, then takes commands
(:meth:`HdfsCluster.command`: ``failover``, ``kill-active``, ``purge``, ``txid``); it stops
the cluster when its stdin closes. NameNode calls are counted from the NameNode's own
per-method RPC metrics (``RpcDetailedActivityForPort<port>`` on ``/jmx``): an oracle outside
the project for what the feed and the notifier cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from pathlib import Path

import fetch_java
from java_paimon import compile_java, stop_jvm

__all__ = ["HdfsCluster", "calls_between", "classpath", "compile_cluster", "missing_hadoop", "until"]

START_TIMEOUT = 180.0  # seconds; a cold JVM on a busy CI machine
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
METRICS_PERIOD_S = 1


def missing_hadoop() -> str | None:
    """Why the MiniDFSCluster cannot run here, or ``None`` if it can."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (JDK 17 needed)"
    if not fetch_java.is_hadoop_fetched():
        return f"Hadoop is not in {fetch_java.cache_dir()}: run `python tests/interop/fetch_java.py`"
    return None


def classpath() -> str:
    """The Hadoop jars, as a classpath (also the HDFS notifier's ``hadoop_classpath``)."""
    return f"{fetch_java.hadoop_dir()}{os.sep}*"


def compile_cluster() -> Path:
    """The class folder of ``java/HdfsCluster.java``, compiled if its source changed."""
    return compile_java("classes-hdfs", [fetch_java.HADOOP_JAVA_DIR / "HdfsCluster.java"], [fetch_java.hadoop_dir()])


class HdfsCluster:
    """One MiniDFSCluster: ``url`` (``hdfs://127.0.0.1:PORT``, ``hdfs://<nameservice>`` for
    ``ha``), ``urls`` (one per nameservice), ``viewfs`` and ``mounts`` (``federated``),
    ``conf_dir``, ``superuser``, ``rpc_calls()``, ``command()``."""

    def __init__(self, topology: str = "single") -> None:
        self.topology = topology
        self.base_dir = tempfile.mkdtemp(prefix=f"paimon-feed-hdfs-{topology}-")
        self._stderr_tail: deque[str] = deque(maxlen=200)
        # /jmx serves metrics cached for the metrics period (10 s by default): 1 s here, and
        # rpc_calls() waits that long, so a reading holds every call made before it.
        conf = Path(self.base_dir) / "conf"
        conf.mkdir()
        (conf / "hadoop-metrics2.properties").write_text(f"*.period={METRICS_PERIOD_S}\n")
        self.conf_dir = str(Path(self.base_dir) / "client-conf")
        os.mkdir(self.conf_dir)
        self.process = subprocess.Popen(
            ["java", *JVM_OPTIONS, f"-Djava.io.tmpdir={self.base_dir}",
             "-cp", os.pathsep.join([str(conf), str(compile_cluster()), classpath()]),
             "HdfsCluster", os.path.join(self.base_dir, "dfs"), topology, self.conf_dir],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(START_TIMEOUT):
                self.close()
                raise TimeoutError(f"the MiniDFSCluster did not start in {START_TIMEOUT} s")
        line = self.process.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError("the MiniDFSCluster exited:\n" + "".join(self._stderr_tail))
        started = json.loads(line)
        self.url: str = started["url"]
        self.urls: list[str] = started["urls"]
        self.viewfs: str | None = started.get("viewfs")
        self.mounts: list[str] = started.get("mounts", [])
        self.http_port: int = started["http"]
        self.superuser: str = started["superuser"]
        self.rpc_port: int = started["rpc"]
        self._commands = threading.Lock()

    def command(self, line: str) -> dict:
        """Run one of the launcher's commands (``failover``, ``kill-active``, ``purge``, ``txid``)
        and return its JSON answer; raise if it failed."""
        with self._commands:
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
            answer = json.loads(self.process.stdout.readline() or "{\"error\": \"the cluster exited\"}")
        if "error" in answer:
            raise RuntimeError(f"HdfsCluster {line!r} failed: {answer['error']}\n" + "".join(self._stderr_tail))
        return answer

    def _drain_stderr(self) -> None:
        for line in self.process.stderr:
            self._stderr_tail.append(line)

    def rpc_calls(self) -> dict[str, int]:
        """Calls the NameNode served on its client port so far, by method (``GetFileInfo``...),
        failed calls by exception (``FileNotFoundException``)."""
        time.sleep(METRICS_PERIOD_S + 0.1)  # past the JMX cache's lifetime: a fresh reading
        query = f"Hadoop:service=NameNode,name=RpcDetailedActivityForPort{self.rpc_port}"
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/jmx?qry={query}", timeout=30) as answer:
            beans = json.load(answer)["beans"]
        bean = beans[0] if beans else {}
        # A call that failed is counted under its exception's name (FileNotFoundException: a
        # read of a file that does not exist yet), not its method's; Overall<Name> counts the
        # same calls again (time from arrival to answer) and is left out.
        return {key[: -len("NumOps")]: int(value) for key, value in bean.items()
                if key.endswith("NumOps") and not key.startswith("Overall") and int(value) > 0}

    def close(self) -> None:
        stop_jvm(self.process)
        shutil.rmtree(self.base_dir, ignore_errors=True)


async def until(condition: Callable[[], bool], timeout: float = 90) -> None:
    """Wait (polling the condition every 20 ms) until ``condition()`` holds; fail after ``timeout``."""

    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


def calls_between(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The NameNode calls made between two :meth:`HdfsCluster.rpc_calls` readings."""
    return {name: count - before.get(name, 0) for name, count in after.items() if count > before.get(name, 0)}
