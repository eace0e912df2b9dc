"""Fixtures of the interop tests: Java Paimon (one JVM per session) next to pypaimon.

In CI (``CI`` set, or ``PAIMON_FEED_REQUIRE_JAVA=1``) missing jars or a missing JDK fail the
tests; elsewhere they skip, naming ``python tests/interop/fetch_java.py``.
"""

from __future__ import annotations

import os

import pytest

import fetch_java
from java_paimon import JavaPaimon, missing_java


def _java_required() -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or os.environ.get("PAIMON_FEED_REQUIRE_JAVA") == "1"


def _start(version: str) -> JavaPaimon:
    reason = missing_java(version)
    if reason is not None:
        if _java_required():
            pytest.fail(f"Java Paimon is required here (CI): {reason}", pytrace=False)
        pytest.skip(reason)
    return JavaPaimon(version)


@pytest.fixture(scope="session")
def java():
    """Java Paimon, the newest 1.x (``fetch_java.NEWEST``)."""
    jvm = _start(fetch_java.NEWEST)
    yield jvm
    jvm.close()


@pytest.fixture(scope="session")
def java_old():
    """Java Paimon 0.9 (``fetch_java.OLDEST``), for tables written by old jobs."""
    jvm = _start(fetch_java.OLDEST)
    yield jvm
    jvm.close()
