"""Fixtures of the interop tests: Java Paimon (one JVM per version and session) next to pypaimon.

In CI (``CI`` set, or ``PAIMON_FEED_REQUIRE_JAVA=1``) missing jars or a missing JDK fail the
tests; elsewhere they skip, naming ``python tests/interop/fetch_java.py``.
"""

from __future__ import annotations

import os

import fetch_java
import pytest
from java_paimon import JavaPaimon, missing_java


def _java_required() -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or os.environ.get("PAIMON_FEED_REQUIRE_JAVA") == "1"


@pytest.fixture(scope="session")
def java_at():
    """``java_at("1.0.1")``: the session's JVM for that Paimon version, started on first use."""
    started: dict[str, JavaPaimon] = {}

    def get(version: str) -> JavaPaimon:
        if version not in started:
            reason = missing_java(version)
            if reason is not None:
                if _java_required():
                    pytest.fail(f"Java Paimon is required here (CI): {reason}", pytrace=False)
                pytest.skip(reason)
            started[version] = JavaPaimon(version)
        return started[version]

    yield get
    for jvm in started.values():
        jvm.close()


@pytest.fixture(scope="session")
def java(java_at):
    """Java Paimon, the newest 1.x (``fetch_java.NEWEST``)."""
    return java_at(fetch_java.NEWEST)


@pytest.fixture(scope="session")
def java_old(java_at):
    """Java Paimon 0.9 (``fetch_java.OLDEST``), for tables written by old jobs."""
    return java_at(fetch_java.OLDEST)
