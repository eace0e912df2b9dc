"""Fetch Java Paimon for the interop tests: ``python tests/interop/fetch_java.py``.

Maven copies the artifacts of ``java/pom.xml`` (``paimon-bundle``, a Hadoop client, a logger,
and ``paimon-s3`` for the newest) for every version in :data:`PAIMON_VERSIONS` into a cache outside the
repository, ``$PAIMON_FEED_JAVA_CACHE`` or ``~/.cache/paimon-feed/java``:

    <cache>/m2/                 Maven's local repository
    <cache>/paimon-1.4.2/*.jar  one classpath per Paimon version (paimon-s3 for the newest only), complete once ``.complete``
                                holds the pom's hash

A cached version is not fetched again until the pom changes. Exits non-zero, naming the
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

__all__ = ["PAIMON_VERSIONS", "NEWEST", "MIDDLE_1X", "OLDEST_1X", "OLDEST", "cache_dir", "classpath_dir", "is_fetched", "fetch"]

JAVA_DIR = Path(__file__).resolve().parent / "java"
POM = JAVA_DIR / "pom.xml"

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


def _pom_hash() -> str:
    return hashlib.sha256(POM.read_bytes()).hexdigest()[:16]


def is_fetched(version: str) -> bool:
    stamp = classpath_dir(version) / ".complete"
    return stamp.is_file() and stamp.read_text().strip() == _pom_hash()


def fetch(version: str) -> Path:
    """Copy Paimon ``version`` and its runtime dependencies into the cache; idempotent."""
    target = classpath_dir(version)
    if is_fetched(version):
        return target
    if shutil.which("mvn") is None:
        raise RuntimeError("mvn is not on PATH: install Maven (and JDK 17) to fetch Java Paimon")
    cache_dir().mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".paimon-{version}-", dir=cache_dir()))
    command = [
        "mvn", "--batch-mode", "--quiet", "--file", str(POM),
        "dependency:copy-dependencies",
        f"-Dpaimon.version={version}",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
        f"-Dmaven.repo.local={cache_dir() / 'm2'}",
    ]
    if version != NEWEST:
        command.append("-DskipS3")  # only the newest runs the S3 scenario
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(
            f"Maven could not fetch Paimon {version} (exit {result.returncode}):\n"
            f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    (staging / ".complete").write_text(_pom_hash())
    # Swap in whole, so a concurrent test session never sees half a classpath.
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target


def main() -> int:
    for version in PAIMON_VERSIONS:
        started = time.monotonic()
        cached = is_fetched(version)
        try:
            path = fetch(version)
        except RuntimeError as exc:
            print(f"fetch_java: {exc}", file=sys.stderr)
            return 1
        how = "cached" if cached else f"fetched in {time.monotonic() - started:.1f} s"
        print(f"fetch_java: Paimon {version}: {path} ({how})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
