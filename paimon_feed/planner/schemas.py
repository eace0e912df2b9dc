"""The planners of a table's schemas, made on first use, with the feed's projection and predicate
mapped onto each by field id (a renamed column is followed; one a schema lacks is null there)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from paimon_feed.errors import ConfigurationError, UnsupportedTableError
from paimon_feed.planner import _exact, _scan, _schemas
from paimon_feed.planner._snapshots import table_name

__all__ = ["SchemaPlanners", "check_readable", "schema_fields"]

logger = logging.getLogger("paimon_feed.planner.planner")


def check_readable(planner: _scan.SchemaPlanner, kind: str) -> None:
    """Raise :class:`UnsupportedTableError` if batches of ``kind`` cannot be read exactly in the
    schema of ``planner``."""
    reason = planner.refused.get(kind)
    if reason is not None:
        raise UnsupportedTableError(reason)


def schema_fields(table: Any, schema_id: int) -> list[Any]:
    """The columns (pypaimon ``DataField``) of schema ``schema_id`` of ``table``."""
    at_schema = _schemas.table_at_schema(table, schema_id)
    if at_schema is None:
        raise UnsupportedTableError(
            f"table {table_name(table)}: schema {schema_id} is missing from its schema directory; "
            f"the table's metadata is damaged"
        )
    return list(at_schema.table_schema.fields)


class SchemaPlanners:
    """One :class:`~paimon_feed.planner._scan.SchemaPlanner` per schema id. Thread-safe."""

    def __init__(
        self,
        table: Any,
        *,
        projection: Sequence[str] | None,
        predicate: Any,
        buckets: frozenset[int] | None,
        include_row_kind: bool,
        manifests: Any,
        reads_in_flight: int,
        prefetch: bool,
    ) -> None:
        self.table = table
        self.table_name = table_name(table)
        self.projection = list(projection) if projection is not None else None
        self.predicate = predicate
        self.buckets = buckets
        self.include_row_kind = include_row_kind
        self.manifests = manifests
        self.reads_in_flight = reads_in_flight
        self.prefetch = prefetch
        # Columns the caller named, by field id, so they can be followed through renames.
        self._projection_ids = (
            _schemas.field_ids(table, self.projection) if self.projection is not None else None
        )
        self._predicate_ids = _schemas.field_ids(table, _schemas.predicate_columns(predicate))
        self._schemas: dict[int, _scan.SchemaPlanner] = {}
        self._lock = threading.Lock()

    def get(self, schema_id: int) -> _scan.SchemaPlanner:
        """The planner of schema ``schema_id``, made on first use."""
        with self._lock:
            planner = self._schemas.get(schema_id)
            if planner is not None:
                return planner
            table = _schemas.table_at_schema(self.table, schema_id)
            if table is None:
                raise UnsupportedTableError(
                    f"table {self.table_name}: schema {schema_id} (schema/schema-{schema_id}) "
                    f"does not exist, but a snapshot was committed with it"
                )
            names = {field.id: field.name for field in table.table_schema.fields}
            projection = None
            if self._projection_ids is not None:
                projection = [names[i] for i in self._projection_ids.values() if i in names]
                dropped = [n for n, i in self._projection_ids.items() if i not in names]
                if dropped:
                    logger.warning(
                        "table %s: projected columns %s do not exist in schema %d; its batches "
                        "come without them", self.table_name, dropped, schema_id,
                    )
                if not projection:
                    raise ConfigurationError(
                        f"table {self.table_name}: none of the projected columns "
                        f"{self.projection} exists in schema {schema_id} (dropped?); restart "
                        f"the feed with a projection of that schema's columns"
                    )
            # A column the schema lacks (added later, or dropped) is null in all its rows.
            predicate = _schemas.rename_predicate(
                self.predicate,
                {n: names[i] for n, i in self._predicate_ids.items() if i in names},
                table,
            )
            planner = _scan.SchemaPlanner(
                table,
                projection=projection,
                predicate=predicate,
                buckets=self.buckets,
                include_row_kind=self.include_row_kind,
                manifests=self.manifests,
                reads_in_flight=self.reads_in_flight,
                prefetch=self.prefetch,
            )
            # Every feed reads changes: a schema whose changes cannot be read exactly is
            # refused as soon as it is met (for the table's schema: at construction).
            check_readable(planner, _exact.CHANGES)
            self._schemas[schema_id] = planner
            return planner

