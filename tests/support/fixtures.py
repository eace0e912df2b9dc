"""Fixtures for local tables: a warehouse per test, tables in it, a writer process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support import tables

WRITER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "writer.py")


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
    """A writer script committing in another process while the test consumes; it prints
    ``done`` when it has committed everything."""

    def __init__(self, script: str, *args: object):
        self.process = subprocess.Popen(
            [sys.executable, script, *(str(arg) for arg in args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
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
