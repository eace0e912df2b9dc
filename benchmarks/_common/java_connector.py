"""Paimon's Java Spark connector for the Spark benchmarks: fetched with Maven into the shared Java
cache, run in a process of its own on PySpark ``CONNECTOR_PYSPARK`` (``java_connector_worker.py``)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common.spark_setup import HERE, wait_for
from tests.interop.fetch_java import cache_dir  # (the Java cache root shared with interop tests)

JAVA_POM = os.path.join(HERE, "java", "pom.xml")
# The newest Paimon Spark connector Maven serves here runs on Spark 3.5 only (see the pom).
JAVA_PAIMON_VERSION = "0.9.0"
JAVA_SPARK_LINE = "3.5"
CONNECTOR_PYSPARK = "3.5.9"  # the newest PySpark of the connector's Spark line
WORKER = os.path.join(HERE, "java_connector_worker.py")
# The connector's stream of a primary-key table from its first snapshot: each snapshot's
# changelog, as this source's startingPosition=earliest (from-snapshot, unlike
# from-snapshot-full, starts with no full read).
JAVA_CHANGELOG_OPTIONS = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}


def _pom_hash() -> str:
    return hashlib.sha256(Path(JAVA_POM).read_bytes()).hexdigest()[:16]


def fetch_java_connector() -> dict:
    """Copy ``paimon-spark-<line>`` (and hadoop-aws for ``s3a://``) with Maven into the shared
    Java cache; returns what happened (``jars`` when they are there, Maven's answer when not).
    Fetched again only when ``benchmarks/java/pom.xml`` changes."""
    target = cache_dir() / f"paimon-spark-{JAVA_SPARK_LINE}-{JAVA_PAIMON_VERSION}"
    artifact = f"org.apache.paimon:paimon-spark-{JAVA_SPARK_LINE}:{JAVA_PAIMON_VERSION}"
    stamp = target / ".complete"
    if stamp.is_file() and stamp.read_text().strip() == _pom_hash():
        return {"artifact": artifact, "jars": sorted(str(p) for p in target.glob("*.jar"))}
    if shutil.which("mvn") is None:
        return {"artifact": artifact, "error": "mvn is not on PATH"}
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    result = subprocess.run(
        ["mvn", "--batch-mode", "--quiet", "--file", JAVA_POM, "dependency:copy-dependencies",
         f"-Dpaimon.version={JAVA_PAIMON_VERSION}", f"-Dspark.line={JAVA_SPARK_LINE}",
         "-DincludeScope=runtime", f"-DoutputDirectory={staging}",
         f"-Dmaven.repo.local={cache_dir() / 'm2'}"],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        # Without colour codes and the repository's address: the artifact name says what is missing.
        output = re.sub(r"\x1b\[[0-9;]*m| \(https?://[^)]*\)", "", result.stdout + result.stderr)
        answer = [line for line in output.splitlines() if "Could not" in line or "not found" in line]
        return {"artifact": artifact, "error": (answer or [f"mvn exit {result.returncode}"])[0][:400]}
    (staging / ".complete").write_text(_pom_hash())
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return {"artifact": artifact, "jars": sorted(str(p) for p in target.glob("*.jar"))}


def connector_python() -> str:
    """The Python of a venv holding PySpark ``CONNECTOR_PYSPARK`` (the newest Spark the
    connector runs on), made once in the shared Java cache with pip and reused after."""
    venv = cache_dir() / f"pyspark-{CONNECTOR_PYSPARK}"
    python = venv / "bin" / "python"
    stamp = venv / ".complete"
    if stamp.is_file():
        return str(python)
    shutil.rmtree(venv, ignore_errors=True)  # a venv cannot be moved into place: made where it stays
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"pyspark=={CONNECTOR_PYSPARK}"], check=True)
    stamp.write_text(CONNECTOR_PYSPARK)
    return str(python)


class JavaConnector:
    """Client of ``java_connector_worker.py``: Paimon's Java connector in its own process, on
    PySpark ``CONNECTOR_PYSPARK``, one long-lived ``local[2]`` session, so its cases interleave
    with the other readers' and pay what theirs pay (no session start-up per case)."""

    def __init__(self, jars: list[str], conf: dict[str, str], log_path: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYTHONPATH")}
        python = connector_python()
        env.update(PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)
        self.log_path = log_path
        self._log = open(log_path, "wb")
        config = {"jars": jars, "conf": {
            "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
            **conf}}
        self.process = subprocess.Popen([python, WORKER, json.dumps(config)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self._log, text=True, env=env)
        self.ready = self._answer(600)
        self.ready["ipc_round_trip_ms"] = statistics.median(self._ping() for _ in range(20))

    def _ping(self) -> float:
        started = time.perf_counter()
        self.call("ping")
        return (time.perf_counter() - started) * 1000

    def _answer(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"the Java connector's worker did not answer in {timeout:.0f} s "
                               f"(exit {self.process.poll()}); its log, {self.log_path}:\n{self.log_tail()}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the Java connector's worker failed:\n{answer['error']}")
        return answer

    def log_tail(self, lines: int = 30) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])

    def call(self, op: str, timeout: float = 3600, **arguments) -> dict:
        self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self.process.stdin.flush()
        return self._answer(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


# --- readers and sinks ----------------------------------------------------------------------------


#: What a streaming query's status says once it has answered a first trigger.
STARTED_MESSAGES = ("Waiting for data to arrive", "Waiting for next trigger")


class JavaFollow:
    """Paimon's Java connector following ``path`` from its latest snapshot (``scan.mode=latest``),
    an :class:`ArrivalSink` in its worker. Started means its query answered a first trigger."""

    def __init__(self, java: JavaConnector, path: str, trigger: str, checkpoint: str, tag: str) -> None:
        self.java, self.name = java, tag
        java.call("follow", name=tag, path=path, trigger=trigger, checkpoint=checkpoint,
                  options={"scan.mode": "latest"})
        wait_for(lambda: self.started(), 120, "the Java connector's query to start")

    def started(self) -> bool:
        state = self.arrivals()
        return state["progress"] > 0 or state["message"] in STARTED_MESSAGES

    def arrivals(self) -> dict:
        state = self.java.call("arrivals", name=self.name)
        if state["exception"] or not state["active"]:
            raise RuntimeError(f"the Java connector's query {self.name} stopped: {state['exception']}")
        for key in ("entered", "ended"):  # JSON keys are strings
            state[key] = {int(n): at for n, at in state[key].items()}
        return state

    def stop(self) -> None:
        self.java.call("stop", name=self.name)
