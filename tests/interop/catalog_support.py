"""A REST or JDBC catalog under test (see the ``any_catalog`` fixture in ``conftest.py``): its
pypaimon catalog options, a database of the test's own, and how the CLI and a writer process
are pointed at it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pypaimon import CatalogFactory

__all__ = ["CatalogUnderTest"]


@dataclass
class CatalogUnderTest:
    kind: str  # "rest" or "jdbc"
    options: dict[str, str]  # pypaimon's catalog options, warehouse included
    database: str
    catalog: Any = None

    @classmethod
    def create(cls, kind: str, options: dict[str, str], test_name: str) -> CatalogUnderTest:
        # One REST server serves the session: each test has a database of its own.
        database = "t_" + hashlib.sha1(test_name.encode()).hexdigest()[:12]
        under_test = cls(kind, dict(options), database)
        under_test.catalog = CatalogFactory.create(dict(options))
        under_test.catalog.create_database(database, False)
        return under_test

    @property
    def warehouse(self) -> str:
        return self.options["warehouse"]

    def name(self, table: str) -> str:
        return f"{self.database}.{table}"

    def cli(self, *args: str) -> list[str]:
        """``tail WAREHOUSE [ARGS...]`` with this catalog's options as ``--catalog-option``."""
        extra = [f"--catalog-option={key}={value}" for key, value in self.options.items()
                 if key != "warehouse"]
        return ["tail", self.warehouse, *args, *extra]

    def writer_target(self) -> str:
        """The first argument of ``python -m support.writer`` for this catalog."""
        return json.dumps(self.options)
