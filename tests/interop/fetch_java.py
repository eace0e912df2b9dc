"""Fetch Java Paimon for the interop tests, and Hadoop's MiniDFSCluster for the HDFS tests:
``python tests/interop/fetch_java.py``.

Maven copies the artifacts of ``java/pom.xml`` (``paimon-bundle``, a Hadoop client, a logger,
and ``paimon-s3`` for the newest) for every version in :data:`PAIMON_VERSIONS` into a cache outside the
repository, ``$PAIMON_FEED_JAVA_CACHE`` or ``~/.cache/paimon-feed/java``, and those of
``java/rest/pom.xml`` (Paimon's reference REST catalog server from paimon-core's tests jar, and the
mock web server it runs on; used with the newest version's classpath), and those of
``tests/hdfs/java/pom.xml`` (Hadoop 3.4.1's hdfs and common jars with their tests jars, the HDFS
client, and the mockito and junit MiniDFSCluster refers to; 126 jars, 78 MB):

    <cache>/m2/                 Maven's local repository
    <cache>/paimon-1.4.2/*.jar  one classpath per Paimon version (paimon-s3 for the newest only), complete once ``.complete``
                                holds the pom's hash
    <cache>/rest-server-1.4.2/*.jar  the REST catalog server's extra jars, stamped the same way
    <cache>/hadoop-3.4.1/*.jar  the MiniDFSCluster and the HDFS client, stamped the same way

A cached folder is not fetched again until its pom changes. Exits non-zero, naming the
version, if Maven fails, so CI fails loudly rather than skipping the interop tests.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["PAIMON_VERSIONS", "NEWEST", "MIDDLE_1X", "OLDEST_1X", "OLDEST", "cache_dir", "classpath_dir", "is_fetched", "fetch",
           "rest_server_dir", "is_rest_server_fetched", "fetch_rest_server",
           "HADOOP_VERSION", "HADOOP_JAVA_DIR", "hadoop_dir", "is_hadoop_fetched", "fetch_hadoop"]

JAVA_DIR = Path(__file__).resolve().parent / "java"
POM = JAVA_DIR / "pom.xml"
REST_POM = JAVA_DIR / "rest" / "pom.xml"
HADOOP_JAVA_DIR = Path(__file__).resolve().parents[1] / "hdfs" / "java"
HADOOP_POM = HADOOP_JAVA_DIR / "pom.xml"
HADOOP_VERSION = "3.4.1"  # tests/hdfs/java/pom.xml's hadoop.version

NEWEST = "1.4.2"  # the newest 1.x release on Maven Central when this was written
MIDDLE_1X = "1.2.0"  # the first with every API the driver uses (PaimonModern.java)
OLDEST_1X = "1.0.1"  # the oldest 1.x line's last release
OLDEST = "0.9.0"  # the version of the jar bundled in pypaimon 0.2.0: old tables in the wild
PAIMON_VERSIONS = (NEWEST, MIDDLE_1X, OLDEST_1X, OLDEST)


def cache_dir() -> Path:
    configured = os.environ.get("PAIMON_FEED_JAVA_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "paimon-feed" / "java"


def classpath_dir(version: str) -> Path:
    """The folder of jars that runs Paimon ``version``."""
    return cache_dir() / f"paimon-{version}"


def rest_server_dir() -> Path:
    """The folder of the REST catalog server's extra jars (run with ``classpath_dir(NEWEST)``)."""
    return cache_dir() / f"rest-server-{NEWEST}"


def hadoop_dir() -> Path:
    """The folder of jars that runs the MiniDFSCluster and the HDFS client."""
    return cache_dir() / f"hadoop-{HADOOP_VERSION}"


def _pom_hash(pom: Path = POM) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:16]


def _is_complete(target: Path, pom: Path) -> bool:
    stamp = target / ".complete"
    return stamp.is_file() and stamp.read_text().strip() == _pom_hash(pom)


def is_fetched(version: str) -> bool:
    return _is_complete(classpath_dir(version), POM)


def is_rest_server_fetched() -> bool:
    return _is_complete(rest_server_dir(), REST_POM)


def is_hadoop_fetched() -> bool:
    return _is_complete(hadoop_dir(), HADOOP_POM)


def fetch(version: str) -> Path:
    """Copy Paimon ``version`` and its runtime dependencies into the cache; idempotent."""
    # only the newest runs the S3 scenario
    return _copy_dependencies(POM, classpath_dir(version), version, [] if version == NEWEST else ["-DskipS3"])


def fetch_rest_server() -> Path:
    """Copy the REST catalog server's jars (``java/rest/pom.xml``) into the cache; idempotent."""
    return _copy_dependencies(REST_POM, rest_server_dir(), NEWEST, [])


def fetch_hadoop() -> Path:
    """Copy Hadoop's MiniDFSCluster and HDFS client (``tests/hdfs/java/pom.xml``) into the cache;
    idempotent. (``paimon.version`` means nothing to that pom.)"""
    return _copy_dependencies(HADOOP_POM, hadoop_dir(), NEWEST, [])


def _copy_dependencies(pom: Path, target: Path, version: str, extra: list[str]) -> Path:
    if _is_complete(target, pom):
        return target
    if shutil.which("mvn") is None:
        raise RuntimeError("mvn is not on PATH: install Maven (and JDK 17) to fetch Java Paimon")
    cache_dir().mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=cache_dir()))
    command = [
        "mvn", "--batch-mode", "--quiet", "--file", str(pom),
        "dependency:copy-dependencies",
        f"-Dpaimon.version={version}",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
        f"-Dmaven.repo.local={cache_dir() / 'm2'}",
        *extra,
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(
            f"Maven could not fetch {pom.relative_to(JAVA_DIR.parent.parent)} for Paimon {version} "
            f"(exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    (staging / ".complete").write_text(_pom_hash(pom))
    # Swap in whole, so a concurrent test session never sees half a classpath.
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target


def main() -> int:
    wanted = [(f"Paimon {version}", is_fetched(version), lambda v=version: fetch(v)) for version in PAIMON_VERSIONS]
    wanted.append(("the REST catalog server", is_rest_server_fetched(), fetch_rest_server))
    wanted.append((f"Hadoop {HADOOP_VERSION}", is_hadoop_fetched(), fetch_hadoop))
    for what, cached, get in wanted:
        started = time.monotonic()
        try:
            path = get()
        except RuntimeError as exc:
            print(f"fetch_java: {exc}", file=sys.stderr)
            return 1
        how = "cached" if cached else f"fetched in {time.monotonic() - started:.1f} s"
        print(f"fetch_java: {what}: {path} ({how})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
