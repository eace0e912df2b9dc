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


@pytest.fixture(scope="session")
def rest_server(tmp_path_factory):
    """Paimon's reference REST catalog server for the session (one JVM, ``rest_server.py``);
    the session ends with its JVM ended, and says so if it did not."""
    from rest_server import RestServer, missing_rest_server

    reason = missing_rest_server()
    if reason is not None:
        if _java_required():
            pytest.fail(f"the REST catalog server is required here (CI): {reason}", pytrace=False)
        pytest.skip(reason)
    server = RestServer(tmp_path_factory.mktemp("rest-warehouse"))
    yield server
    assert server.close() == 0, "the REST catalog server's JVM did not end cleanly"
    assert server.process.poll() is not None


@pytest.fixture(params=["rest", "jdbc"])
def any_catalog(request, tmp_path):
    """A catalog other than the filesystem's, with a database of its own for this test:
    Paimon's reference REST server (the session's), or pypaimon's JDBC catalog on SQLite."""
    from catalog_support import CatalogUnderTest

    if request.param == "rest":
        server = request.getfixturevalue("rest_server")
        return CatalogUnderTest.create("rest", server.options, request.node.name)
    options = {
        "metastore": "jdbc",
        "uri": f"jdbc:sqlite:{tmp_path / 'catalog.sqlite'}",
        "warehouse": str(tmp_path / "jdbc-warehouse"),
        "catalog-key": "feed",
    }
    return CatalogUnderTest.create("jdbc", options, request.node.name)
