"""Paimon types as Spark types, and Arrow batches shaped to what Spark expects.

==========================================  =========================================
Paimon                                      Spark
==========================================  =========================================
TINYINT / SMALLINT / INT / BIGINT           ByteType / ShortType / IntegerType / LongType
FLOAT / DOUBLE                              FloatType / DoubleType
DECIMAL(p, s)                               DecimalType(p, s)
BOOLEAN                                     BooleanType
CHAR(n) / VARCHAR(n) / STRING               StringType
BINARY(n) / VARBINARY(n) / BYTES            BinaryType
DATE                                        DateType
TIME(p)                                     TimeType(min(p, 6)) (Spark 4.1+; refused on 4.0)
TIMESTAMP(p)                                TimestampNTZType (microseconds)
TIMESTAMP(p) WITH LOCAL TIME ZONE /         TimestampType (microseconds)
TIMESTAMP_LTZ(p)
ARRAY<T>                                    ArrayType(T, containsNull)
MAP<K, V>                                   MapType(K, V, valueContainsNull)
ROW<...>                                    StructType
==========================================  =========================================

Nullability is kept at every level. ``_row_kind`` (a non-null string) comes first when row
kinds are requested, then ``_snapshot_id`` (a non-null long: the snapshot that committed the
change) when snapshot ids are. Other Paimon types (MULTISET, VARIANT, BLOB, VECTOR) fail at
``load()`` with the column named.

Spark checks that every Arrow batch a Python source yields has exactly the Arrow schema of the
declared Spark schema (``timestamp[us]``, ``list<element>``, nullability flags, ...), so
:func:`conform` casts pypaimon's batches to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T

from paimon_feed.errors import (
    ConfigurationError,
    SchemaChangedError,
    UnsupportedTypeError,
)
from paimon_feed.spark.lines import installed_line

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ROW_KIND_COLUMN",
    "SNAPSHOT_ID_COLUMN",
    "UnsupportedTypeError",
    "SchemaChangedError",
    "spark_schema",
    "spark_type",
    "arrow_schema",
    "conform",
]

ROW_KIND_COLUMN = "_row_kind"
SNAPSHOT_ID_COLUMN = "_snapshot_id"

_INTEGRAL = {
    "TINYINT": T.ByteType,
    "SMALLINT": T.ShortType,
    "INT": T.IntegerType,
    "INTEGER": T.IntegerType,
    "BIGINT": T.LongType,
    "FLOAT": T.FloatType,
    "DOUBLE": T.DoubleType,
    "BOOLEAN": T.BooleanType,
    "DATE": T.DateType,
    "STRING": T.StringType,
    "BYTES": T.BinaryType,
}
_DECIMAL = re.compile(r"^(?:DECIMAL|NUMERIC|DEC)(?:\((\d+)(?:,\s*(\d+))?\))?$")
_TIME = re.compile(r"^TIME(?:\((\d+)\))?$")


def _atomic(type_name: str, where: str) -> T.DataType:
    name = type_name.upper().strip()
    base = name.split("(")[0].strip()
    if base in _INTEGRAL and "(" not in name:
        return _INTEGRAL[base]()
    if base in ("CHAR", "VARCHAR"):
        return T.StringType()
    if base in ("BINARY", "VARBINARY"):
        return T.BinaryType()
    decimal = _DECIMAL.match(name)
    if decimal:
        precision = int(decimal.group(1) or 10)
        scale = int(decimal.group(2) or 0)
        return T.DecimalType(precision, scale)
    if base.startswith("TIMESTAMP"):
        local_zone = base == "TIMESTAMP_LTZ" or "WITH LOCAL TIME ZONE" in name
        return T.TimestampType() if local_zone else T.TimestampNTZType()
    time = _TIME.match(name)
    if time and hasattr(T, "TimeType"):
        return T.TimeType(min(int(time.group(1) or 0), 6))
    if time:
        line = installed_line()
        raise UnsupportedTypeError(
            f"{where} has Paimon type {type_name}: Spark has a TIME type from Spark 4.1 on, "
            f"and this is PySpark {line.version if line else '?'}; read the table on Spark 4.1 "
            f"or newer, or leave the column out of the table"
        )
    raise UnsupportedTypeError(
        f"{where} has Paimon type {type_name}, which the paimon_feed Spark source cannot map "
        f"to a Spark type; read it with pypaimon directly or leave the column out of the table"
    )


def spark_type(data_type: Any, where: str) -> T.DataType:
    """The Spark type for a pypaimon ``DataType``; ``where`` names the column in errors."""
    # Duck-typed on pypaimon's schema classes (AtomicType.type, ArrayType.element,
    # MapType.key/value, RowType.fields) so no pypaimon internals are imported here.
    kind = type(data_type).__name__
    if kind == "AtomicType":
        return _atomic(data_type.type, where)
    if kind == "ArrayType":
        element = data_type.element
        return T.ArrayType(spark_type(element, f"{where} element"), element.nullable)
    if kind == "MapType":
        key = spark_type(data_type.key, f"{where} key")
        value = spark_type(data_type.value, f"{where} value")
        return T.MapType(key, value, data_type.value.nullable)
    if kind == "RowType":
        return T.StructType(
            [
                T.StructField(
                    field.name,
                    spark_type(field.type, f"{where}.{field.name}"),
                    field.type.nullable,
                )
                for field in data_type.fields
            ]
        )
    raise UnsupportedTypeError(
        f"{where} has Paimon type {data_type}, which the paimon_feed Spark source cannot map "
        f"to a Spark type"
    )


def spark_schema(
    table_name: str,
    fields: Sequence[Any],
    *,
    include_row_kind: bool,
    include_snapshot_id: bool = False,
) -> T.StructType:
    """The Spark schema of a Paimon table's rows (``_row_kind``, then ``_snapshot_id``, first
    if requested)."""
    struct = []
    for wanted, column, spark_column_type, option in (
        (include_row_kind, ROW_KIND_COLUMN, T.StringType(), "includeRowKind"),
        (include_snapshot_id, SNAPSHOT_ID_COLUMN, T.LongType(), "includeSnapshotId"),
    ):
        if not wanted:
            continue
        if any(field.name == column for field in fields):
            raise ConfigurationError(
                f"table {table_name} already has a column {column}; option {option} cannot "
                f"add another"
            )
        struct.append(T.StructField(column, spark_column_type, False))
    for field in fields:
        where = f"column {field.name!r} of table {table_name}"
        struct.append(
            T.StructField(field.name, spark_type(field.type, where), field.type.nullable)
        )
    return T.StructType(struct)


def arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema Spark requires of batches for ``schema`` (what its check compares)."""
    import inspect

    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)  # Spark 3.5 to 4.1: timestamps are UTC already


def conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the columns, types and nullability flags of ``target``.

    Timestamps are truncated to microseconds (Spark's precision); every other cast is exact.
    """
    import pyarrow as pa

    if batch.schema.equals(target):
        return batch
    missing = [name for name in target.names if batch.schema.get_field_index(name) < 0]
    if missing:
        raise SchemaChangedError(
            f"columns {missing} of the query's schema are not in the table's data any more "
            f"(the table's schema changed since the DataFrame was defined); define the "
            f"DataFrame again (streaming: restart the query) to pick up the new schema"
        )
    columns = [batch.column(name) for name in target.names]
    arranged = pa.RecordBatch.from_arrays(columns, names=target.names)
    return arranged.cast(target, safe=False)
