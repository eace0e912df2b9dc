"""Fixtures of the HDFS tests: one MiniDFSCluster per topology and session
(``hdfs_cluster.HdfsCluster``: a single NameNode, an HA nameservice, two federated nameservices
behind ``viewfs://``), each started on first use, and a fresh warehouse folder per test.

In CI (``CI`` set, or ``PAIMON_FEED_REQUIRE_JAVA=1``) missing jars or a missing JDK fail the
tests; elsewhere they skip, naming ``python tests/interop/fetch_java.py``.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

# The Java build helpers of the interop tests (fetch_java, java_paimon) serve these tests too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
from hdfs_cluster import HdfsCluster, missing_hadoop  # noqa: E402

_warehouses = itertools.count()


def _java_required() -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or os.environ.get("PAIMON_FEED_REQUIRE_JAVA") == "1"


def _cluster(topology: str):
    reason = missing_hadoop()
    if reason is not None:
        if _java_required():
            pytest.fail(f"the MiniDFSCluster is required here (CI): {reason}", pytrace=False)
        pytest.skip(reason)
    cluster = HdfsCluster(topology)
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def hdfs():
    """The session's MiniDFSCluster (a NameNode and a DataNode), started on first use."""
    yield from _cluster("single")


@pytest.fixture(scope="session")
def hdfs_ha():
    """A MiniDFSCluster with an HA nameservice (two NameNodes, the first active), reached as
    ``hdfs://<nameservice>`` through the client conf in ``hdfs_ha.conf_dir``. A failover test
    leaves one of them down (``kill-active``): the nameservice still serves."""
    yield from _cluster("ha")


@pytest.fixture(scope="session")
def hdfs_federated():
    """A MiniDFSCluster with two nameservices and a ``viewfs://`` mount table over them
    (``hdfs_federated.mounts``, in the client conf in ``hdfs_federated.conf_dir``)."""
    yield from _cluster("federated")


@pytest.fixture
def hdfs_warehouse(hdfs) -> str:
    """A warehouse URL of its own on the session's HDFS, under the world-writable /shared."""
    return f"{hdfs.url}/shared/wh-{os.getpid()}-{next(_warehouses)}"
