"""Fixtures for local tables: a warehouse per test, tables in it, a writer process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import tables

TESTS = Path(__file__).resolve().parents[1]
WRITER = "support.writer"


def python_env(**extra: str) -> dict[str, str]:
    """The environment of a test's Python subprocess: this checkout's ``paimon_feed`` (the
    repository root) and the test helpers (``tests/``) importable through ``PYTHONPATH``, as
    pytest's ``pythonpath`` and rootdir conftest make them for the tests themselves."""
    paths = [str(TESTS.parent), str(TESTS), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path), **extra}


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def cat(warehouse):
    return tables.catalog(warehouse)


@pytest.fixture
def append_table(cat):
    return tables.create_append_table(cat)


@pytest.fixture
def pk_table(cat):
    return tables.create_pk_table(cat)


@pytest.fixture(params=["append", "pk"])
def any_table(request, cat):
    if request.param == "append":
        return tables.create_append_table(cat)
    return tables.create_pk_table(cat)


class WriterProcess:
    """A writer module (``python -m``) committing in another process while the test consumes;
    it prints ``done`` when it has committed everything."""

    def __init__(self, module: str, *args: object):
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *(str(arg) for arg in args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=python_env(),
        )

    def wait(self, timeout: float = 120) -> None:
        out, err = self.process.communicate(timeout=timeout)
        assert self.process.returncode == 0, f"writer failed: {err[-2000:]}"
        assert "done" in out

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def start_writer(warehouse):
    started: list[WriterProcess] = []

    def start(table, first: int, last: int, interval: float = 0.01) -> WriterProcess:
        writer = WriterProcess(WRITER, warehouse, table.identifier.get_full_name(), first, last, interval)
        started.append(writer)
        return writer

    yield start
    for writer in started:
        writer.kill()
