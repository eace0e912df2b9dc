"""Shared pytest fixtures (each group lives in its own support module, exposed here), and the
markers that name each test's kind."""

from pathlib import Path

import pytest
from s3_support import moto_server, s3_queue  # noqa: F401  (fixtures: real moto_server, bucket + queue)
from support.fixtures import (  # noqa: F401  (local warehouse, tables, writer process)
    any_table,
    append_table,
    cat,
    pk_table,
    start_writer,
    warehouse,
)

# Kinds of test as markers, from where a test lives and what it uses, so a run can pick them:
# ``pytest -m "not interop and not spark"`` is the quick inner loop; CI runs everything.
_TESTS = Path(__file__).resolve().parent
_FOLDER_KINDS = {"interop": "interop", "fuzz": "fuzz", "spark": "spark", "feed_s3": "s3", "hdfs": "hdfs"}
_S3_FIXTURES = frozenset({"moto_server", "s3_queue"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = Path(str(item.path)).resolve().relative_to(_TESTS).parts[0]
        except ValueError:  # a doctest of the package
            continue
        kind = _FOLDER_KINDS.get(folder)
        if kind:
            item.add_marker(kind)
        if kind != "s3" and _S3_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker("s3")
