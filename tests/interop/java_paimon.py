"""Java Paimon from Python: one long-lived JVM running ``java/PaimonDriver.java``.

The driver is compiled with ``javac`` against the jars that ``fetch_java.py`` cached, once per
source and classpath (the classes are cached beside the jars, keyed by a hash). Commands are
JSON lines on its stdin, answers JSON lines on its stdout; see the driver for the commands.

Java is both the writer (as Flink and Spark write) and the oracle: ``JavaTable.read`` is its
batch read at a snapshot, ``JavaTable.changes`` what its streaming read delivers.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any

import fetch_java

__all__ = ["JavaError", "JavaPaimon", "JavaTable", "classpath", "compile_driver", "compile_java", "missing_java", "stop_jvm"]

SOURCES = ("PaimonDriver.java", "PaimonModern.java", "PaimonEvolution.java")
MODERN_SINCE = (1, 2)  # AppendCompactCoordinator, ChangelogManager, truncatePartitions
EVOLUTION_SINCE = (1, 3)  # data evolution: TableWrite.withWriteType, DataFileMeta.assignFirstRowId
CALL_TIMEOUT = 120.0  # seconds; compaction of the tests' small tables takes well under one
JVM_OPTIONS = (
    "-Xmx768m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",  # the JIT's first tier: faster start, enough for small tables
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
)


class JavaError(RuntimeError):
    """A command failed in Java; ``error`` is Java's exception, ``trace`` its stack trace."""

    def __init__(self, command: dict, error: str, trace: str) -> None:
        self.error = error
        self.trace = trace
        super().__init__(f"Java Paimon failed on {command.get('cmd')}: {error}\n{trace[:3000]}")


def missing_java(version: str) -> str | None:
    """Why Java Paimon ``version`` cannot run here, or ``None`` if it can."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (JDK 17 needed)"
    if not fetch_java.is_fetched(version):
        return (
            f"Paimon {version} is not in {fetch_java.cache_dir()}: "
            f"run `python tests/interop/fetch_java.py`"
        )
    return None


def compile_driver(version: str) -> Path:
    """The driver's class folder for Paimon ``version``, compiled if the sources changed."""
    # Before 1.2 the APIs of PaimonModern.java are missing; the driver then answers those
    # commands (append compaction, dynamic buckets, drop partitions) with an error.
    # Before 1.3 there is no data evolution (PaimonEvolution.java); its command then fails.
    line = tuple(int(part) for part in version.split(".")[:2])
    sources = [fetch_java.JAVA_DIR / name for name in SOURCES]
    sources = sources[:1] if line < MODERN_SINCE else sources[:2] if line < EVOLUTION_SINCE else sources
    return compile_java(f"classes-{version}", sources, [fetch_java.classpath_dir(version)])


def compile_java(prefix: str, sources: list[Path], jar_dirs: list[Path]) -> Path:
    """The class folder of ``sources`` compiled against the jars of ``jar_dirs``, cached in
    ``<cache>/<prefix>-<hash>`` (of the sources and the jars' names) and compiled only once."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.read_bytes())
    for jars in jar_dirs:
        digest.update("\n".join(sorted(p.name for p in jars.glob("*.jar"))).encode())
    classes = fetch_java.cache_dir() / f"{prefix}-{digest.hexdigest()[:16]}"
    if (classes / f"{sources[0].stem}.class").is_file():
        return classes
    staging = Path(tempfile.mkdtemp(prefix=".classes-", dir=fetch_java.cache_dir()))
    result = subprocess.run(
        ["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(staging),
         "-cp", classpath(jar_dirs), *map(str, sources)],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"javac failed for {prefix}:\n{result.stdout}{result.stderr}")
    try:
        staging.rename(classes)
    except OSError:  # another session compiled the same classes first
        shutil.rmtree(staging, ignore_errors=True)
    return classes


def classpath(folders: list[Path]) -> str:
    """A JVM classpath of class folders and folders of jars (``dir/*``)."""
    return os.pathsep.join(
        f"{folder}{os.sep}*" if any(folder.glob("*.jar")) else str(folder) for folder in folders
    )


class JavaPaimon:
    """One JVM running the driver against Paimon ``version``; ``call`` sends one command."""

    def __init__(self, version: str) -> None:
        self.version = version
        classes = compile_driver(version)
        jvm_classpath = classpath([classes, fetch_java.classpath_dir(version)])
        self._stderr_tail: deque[str] = deque(maxlen=200)
        # The JVM's temp dir (the IOManager's spill dir, native libraries) is ours: close()
        # removes it even when the JVM had to be killed.
        self.temp_dir = tempfile.mkdtemp(prefix="paimon-interop-io-")
        self.process = subprocess.Popen(
            ["java", *JVM_OPTIONS, f"-Djava.io.tmpdir={self.temp_dir}", "-cp", jvm_classpath, "PaimonDriver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self._lock = threading.Lock()
        ready = self._read_answer(CALL_TIMEOUT, {"cmd": "start"})
        self.paimon_version = ready["paimon_version"]

    def _drain_stderr(self) -> None:
        for line in self.process.stderr:
            self._stderr_tail.append(line)

    def _read_answer(self, timeout: float, command: dict) -> dict:
        if not self._selector.select(timeout):
            raise TimeoutError(f"Java Paimon did not answer {command.get('cmd')} in {timeout} s")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(
                f"Java Paimon exited ({self.process.poll()}) on {command.get('cmd')}:\n"
                + "".join(self._stderr_tail)
            )
        answer = json.loads(line)
        if not answer.pop("ok"):
            raise JavaError(command, answer["error"], answer.get("trace", ""))
        return answer

    def call(self, cmd: str, timeout: float = CALL_TIMEOUT, **arguments: Any) -> dict:
        """Run one command; thread-safe (a writer thread and the test may share the JVM)."""
        command = {"cmd": cmd, **arguments}
        with self._lock:
            self.process.stdin.write(json.dumps(command) + "\n")
            self.process.stdin.flush()
            return self._read_answer(timeout, command)

    def table(self, warehouse: str, name: str, **catalog_options: str) -> JavaTable:
        return JavaTable(self, str(warehouse), name, catalog_options)

    def close(self) -> None:
        stop_jvm(self.process)
        self._selector.close()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def stop_jvm(process: subprocess.Popen) -> int:
    """Close the JVM's stdin (our programs end when it closes), wait 10 s for it to end, else
    kill it; returns its exit code."""
    if process.poll() is None:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


class JavaTable:
    """One table as Java sees it; each method is one driver command."""

    def __init__(self, java: JavaPaimon, warehouse: str, name: str, catalog_options: dict) -> None:
        self.java = java
        self.warehouse = warehouse
        self.name = name
        self.catalog_options = catalog_options

    def _call(self, cmd: str, **arguments: Any) -> dict:
        return self.java.call(
            cmd, warehouse=self.warehouse, table=self.name,
            catalog_options=self.catalog_options, **arguments,
        )

    def create(
        self,
        columns: list[tuple[str, str]],
        *,
        primary_keys: list[str] = (),
        partition_keys: list[str] = (),
        options: dict[str, str] | None = None,
    ) -> JavaTable:
        self._call(
            "create_table", columns=[list(c) for c in columns], primary_keys=list(primary_keys),
            partition_keys=list(partition_keys), table_options=options or {},
        )
        return self

    def write(self, rows: list[dict], *, options: dict | None = None, wait_compaction: bool = True) -> int:
        """Commit ``rows`` (``_kind`` an optional row kind); returns the latest snapshot id."""
        return self._call("write", rows=rows, options=options or {}, wait_compaction=wait_compaction)["snapshot"]

    def compact(self, *, options: dict | None = None) -> int:
        """Full compaction of every bucket; returns the latest snapshot id."""
        return self._call("compact", options=options or {})["snapshot"]

    def overwrite(self, rows: list[dict], partition: dict | None = None, *, options: dict | None = None) -> int:
        """INSERT OVERWRITE of ``partition`` (none: the partitions ``rows`` touch, or the whole
        table with ``options={"dynamic-partition-overwrite": "false"}``); the new snapshot id."""
        return self._call("overwrite", rows=rows, partition=partition or {}, options=options or {})["snapshot"]

    def alter(self, *changes: dict) -> dict:
        """ALTER TABLE with Paimon's SchemaChanges, in order: ``{"add": name, "type": T}``,
        ``{"rename": old, "to": new}``, ``{"update_type": name, "type": T}``; answers the new
        ``schema_id`` and ``fields`` (``[name, type]`` pairs, Java's type strings)."""
        return self._call("alter_table", changes=list(changes))

    def drop_partitions(self, *partitions: dict) -> int:
        return self._call("drop_partitions", partitions=list(partitions))["snapshot"]

    def expire_snapshots(self, retain: int, *, options: dict | None = None) -> dict:
        """Java's expire-snapshots keeping the last ``retain`` (fewer if time allows none) and
        whatever a consumer has not read; answers ``earliest``, ``snapshot`` and ``expired``."""
        return self._call("expire_snapshots", retain_max=retain, retain_min=retain, options=options or {})

    def create_tag(self, tag: str, snapshot: int) -> None:
        self._call("create_tag", tag=tag, snapshot=snapshot)

    def rollback(self, *, snapshot: int | None = None, tag: str | None = None) -> dict:
        """Java's ``rollbackTo`` a snapshot or a tag."""
        target = {"tag": tag} if tag is not None else {"snapshot": snapshot}
        return self._call("rollback", **target)

    def drop(self) -> None:
        self._call("drop_table")

    def create_branch(self, branch: str, tag: str) -> None:
        self._call("create_branch", branch=branch, tag=tag)

    def fast_forward(self, branch: str) -> dict:
        return self._call("fast_forward", branch=branch)

    def update_columns(self, columns: list[str], rows: list[dict], *, first_row_id: int) -> int:
        """A data-evolution update as Spark's MERGE INTO writes it: a file of only ``columns``
        for the ``len(rows)`` rows from ``first_row_id`` (a whole file's range); the new
        snapshot id."""
        return self._call("update_columns", columns=columns, rows=rows, first_row_id=first_row_id)["snapshot"]

    def read(self, snapshot: int | None = None, *, options: dict | None = None) -> list[dict]:
        """Java's batch read: the table's rows at ``snapshot`` (default the latest, or what
        ``options`` such as ``scan.tag-name`` select), in that snapshot's schema."""
        return self.read_with_schema(snapshot, options=options)["rows"]

    def read_with_schema(
        self, snapshot: int | None = None, *, options: dict | None = None, with_kind: bool = False
    ) -> dict:
        """``read``, answering ``rows``, ``schema_id`` and ``fields`` of the schema read with;
        ``with_kind`` gives each row its kind (``_kind``) as the merge left it."""
        arguments = {} if snapshot is None else {"snapshot": snapshot}
        if with_kind:
            arguments["with_kind"] = True
        return self._call("read", options=options or {}, **arguments)

    def changes(self, after: int, to: int, *, options: dict | None = None, schema_id: int | None = None) -> dict:
        """What Java's streaming read delivers for snapshots ``after + 1`` to ``to``:
        ``rows`` (each with ``_kind``), ``snapshots`` (the ids that had changes) and their
        ``snapshot_schema_ids``. ``options`` are dynamic table options (e.g.
        ``streaming-read-overwrite``); ``schema_id`` reads with that schema, not the latest."""
        arguments = {} if schema_id is None else {"schema_id": schema_id}
        return self._call("changes", after=after, to=to, options=options or {}, **arguments)

    def consumer(self, consumer_id: str, **arguments: Any) -> dict:
        """Java's ConsumerManager: ``set=N`` writes, ``expire_before_ms=T`` expires;
        answers ``next_snapshot`` and ``min_next_snapshot``."""
        return self._call("consumer", id=consumer_id, **arguments)

    def snapshot_info(self) -> dict:
        return self._call("snapshot_info")
