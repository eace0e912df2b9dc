"""A planned split as bytes and back, divided by size: what the Spark source ships to executors.

Part of the one place paimon-feed touches pypaimon internals (``paimon_feed.planner``).
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


def serialize_split(split: Any) -> bytes:
    """A split as pypaimon's cross-language ``SplitSerializer`` v1 bytes (stable across
    versions, unlike a pickle), for shipping splits to other processes (Spark executors)."""
    from pypaimon.read.split_serializer import serialize_split_v1

    return serialize_split_v1(split)


def deserialize_split(data: bytes, table: Any) -> Any:
    """The split :func:`serialize_split` wrote, rebuilt against ``table``'s schema."""
    from pypaimon.read.split_serializer import deserialize_split_v1

    schema = table.table_schema
    by_name = {field.name: field for field in schema.fields}
    partition_fields = [by_name[name] for name in schema.partition_keys]
    return deserialize_split_v1(data, partition_fields, table.trimmed_primary_keys_fields)


def divide_split(table: Any, split: Any, max_bytes: int, open_cost_bytes: int) -> list:
    """``split`` cut into splits of at most ``max_bytes`` (each file weighing at least
    ``open_cost_bytes``), for reading in parallel; ``[split]`` when it cannot be cut.

    Only append-table splits whose files are read as they are (``raw_convertible``, no data
    evolution) are cut: their files are independent. Primary-key splits must be merged whole.
    """
    from pypaimon.read.split import DataSplit

    if (
        type(split) is not DataSplit
        or not split.raw_convertible
        or table.is_primary_key_table
        or table.options.data_evolution_enabled()
        or len(split.files) < 2
    ):
        return [split]
    groups: list[set[int]] = [set()]
    size = 0
    for data_file in split.files:
        weight = max(data_file.file_size, open_cost_bytes)
        if groups[-1] and size + weight > max_bytes:
            groups.append(set())
            size = 0
        groups[-1].add(id(data_file))
        size += weight
    if len(groups) == 1:
        return [split]
    return [split.filter_file(lambda f, g=group: id(f) in g) for group in groups]


def with_read_batch_rows(table: Any, rows: int) -> Any:
    """``table`` reading Arrow batches of ``rows`` rows, unless the table sets its own
    ``read.batch-size``."""
    if "read.batch-size" in table.options.options.to_map():
        return table
    return table.copy({"read.batch-size": str(rows)})
