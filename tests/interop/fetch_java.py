"""Fetch Java Paimon for the interop tests, and Hadoop's MiniDFSCluster for the HDFS tests:
``python tests/interop/fetch_java.py``.

Maven copies the artifacts of ``java/pom.xml`` (``paimon-bundle``, a Hadoop client, a logger,
and ``paimon-s3`` for the newest) for every version in :data:`PAIMON_VERSIONS`, and those of
``tests/hdfs/java/pom.xml`` (Hadoop 3.4.1's hdfs and common jars with their tests jars, the HDFS
client, and the mockito and junit MiniDFSCluster refers to; 126 jars, 78 MB) into a cache outside
the repository, ``$PAIMON_FEED_JAVA_CACHE`` or ``~/.cache/paimon-feed/java``:

    <cache>/m2/                 Maven's local repository
    <cache>/paimon-1.4.2/*.jar  one classpath per Paimon version (paimon-s3 for the newest only), complete once ``.complete``
                                holds the pom's hash
    <cache>/hadoop-3.4.1/*.jar  the MiniDFSCluster and the HDFS client, stamped the same way

A cached classpath is not fetched again until its pom changes. Exits non-zero, naming what
failed, if Maven fails, so CI fails loudly rather than skipping the interop or HDFS tests.
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

__all__ = [
    "PAIMON_VERSIONS", "NEWEST", "MIDDLE_1X", "OLDEST_1X", "OLDEST", "HADOOP_VERSION", "HADOOP_JAVA_DIR",
    "cache_dir", "classpath_dir", "is_fetched", "fetch", "hadoop_dir", "is_hadoop_fetched", "fetch_hadoop",
]

JAVA_DIR = Path(__file__).resolve().parent / "java"
POM = JAVA_DIR / "pom.xml"
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


def hadoop_dir() -> Path:
    """The folder of jars that runs the MiniDFSCluster and the HDFS client."""
    return cache_dir() / f"hadoop-{HADOOP_VERSION}"


def _pom_hash(pom: Path = POM) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:16]


def _is_stamped(target: Path, pom: Path) -> bool:
    stamp = target / ".complete"
    return stamp.is_file() and stamp.read_text().strip() == _pom_hash(pom)


def is_fetched(version: str) -> bool:
    return _is_stamped(classpath_dir(version), POM)


def is_hadoop_fetched() -> bool:
    return _is_stamped(hadoop_dir(), HADOOP_POM)


def _maven_copy(pom: Path, target: Path, what: str, *arguments: str) -> Path:
    """Copy ``pom``'s artifacts and their runtime dependencies into ``target``; idempotent."""
    if _is_stamped(target, pom):
        return target
    if shutil.which("mvn") is None:
        raise RuntimeError(f"mvn is not on PATH: install Maven (and JDK 17) to fetch {what}")
    cache_dir().mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=cache_dir()))
    command = [
        "mvn", "--batch-mode", "--quiet", "--file", str(pom),
        "dependency:copy-dependencies",
        *arguments,
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
        f"-Dmaven.repo.local={cache_dir() / 'm2'}",
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(
            f"Maven could not fetch {what} (exit {result.returncode}):\n"
            f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    (staging / ".complete").write_text(_pom_hash(pom))
    # Swap in whole, so a concurrent test session never sees half a classpath.
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target


def fetch(version: str) -> Path:
    """Copy Paimon ``version`` and its runtime dependencies into the cache; idempotent."""
    # Only the newest runs the S3 scenario.
    skip_s3 = () if version == NEWEST else ("-DskipS3",)
    return _maven_copy(POM, classpath_dir(version), f"Paimon {version}", f"-Dpaimon.version={version}", *skip_s3)


def fetch_hadoop() -> Path:
    """Copy Hadoop's MiniDFSCluster and HDFS client into the cache; idempotent."""
    return _maven_copy(HADOOP_POM, hadoop_dir(), f"Hadoop {HADOOP_VERSION}")


def main() -> int:
    wanted = [(f"Paimon {version}", version) for version in PAIMON_VERSIONS] + [(f"Hadoop {HADOOP_VERSION}", None)]
    for what, version in wanted:
        started = time.monotonic()
        cached = is_fetched(version) if version else is_hadoop_fetched()
        try:
            path = fetch(version) if version else fetch_hadoop()
        except RuntimeError as exc:
            print(f"fetch_java: {exc}", file=sys.stderr)
            return 1
        how = "cached" if cached else f"fetched in {time.monotonic() - started:.1f} s"
        print(f"fetch_java: {what}: {path} ({how})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
