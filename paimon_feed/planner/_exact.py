"""Values exactly as Java Paimon reads them, or a refusal before any row is delivered.

pypaimon reads most files through Arrow, which keeps every value. Three of its paths do not
give Java's values, and this module knows which:

- Primary-key splits that pypaimon reads row by row (the merge of a state split, and every
  change split of a format the feed does not read itself) turn values into Python objects:
  ``TIMESTAMP(7..9)`` loses its nanoseconds. The feed reads such columns only where its own
  Arrow path applies (:class:`~paimon_feed.planner._direct_read._DirectParquet`), and refuses the
  batch kinds that would take the row path (:func:`lossy_reads`).
- ORC stores ``CHAR(n)`` padded with spaces and Java's ORC reader trims trailing spaces
  (``CharTreeReader``); pyarrow does not. :func:`strip_char_padding` does what Java does, for
  splits whose files are all ORC.
- Merge options pypaimon cannot merge (``fields.*.sequence-group``, ``ignore-delete``, ...)
  make its ``TableRead`` refuse every read, though a changelog needs no merge.
  :func:`unmergeable_options` names them; :func:`without_merge_options` is the table a
  changelog is read with; a merged read (``full``) is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from paimon_feed.errors import UnsupportedTableError

__all__ = [
    "CHANGES",
    "FULL",
    "nanosecond_columns",
    "char_columns",
    "unmergeable_options",
    "without_merge_options",
    "readable_table",
    "lossy_reads",
    "strip_char_padding",
    "orc_runs",
    "pushable_predicate",
]

logger = logging.getLogger(__name__)

#: What a read is refused for: change batches (``changelog``, ``delta``, ``catch-up``) or
#: merged state (``full``, the rows an overwrite removed).
CHANGES = "changes"
FULL = "full"

_NANOSECOND_PRECISION = 6  # above it, a Python datetime cannot hold the value


def _timestamp_precision(type_text: str) -> int | None:
    text = type_text.upper().replace(" NOT NULL", "").strip()
    if not text.startswith("TIMESTAMP"):
        return None
    if "(" not in text:
        return 6
    return int(text[text.index("(") + 1:text.index(")")])


def _nested_types(data_type: Any) -> Iterable[Any]:
    yield data_type
    for child in (getattr(data_type, "element", None), getattr(data_type, "key", None),
                  getattr(data_type, "value", None)):
        if child is not None:
            yield from _nested_types(child)
    for field in getattr(data_type, "fields", None) or ():
        yield from _nested_types(field.type)


def nanosecond_columns(table: Any, columns: Sequence[str] | None = None) -> dict[str, str]:
    """The columns of ``columns`` (default: all) holding a timestamp finer than microseconds,
    anywhere in their type, with their types: ``{"ts": "TIMESTAMP(9)"}``."""
    found = {}
    for field in table.fields:
        if columns is not None and field.name not in columns:
            continue
        for data_type in _nested_types(field.type):
            precision = _timestamp_precision(str(getattr(data_type, "type", "")))
            if precision is not None and precision > _NANOSECOND_PRECISION:
                found[field.name] = str(field.type)
                break
    return found


def char_columns(table: Any, columns: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """Top-level ``CHAR(n)`` columns of ``columns`` (default: all), and columns holding a
    ``CHAR`` inside a nested type."""
    top, nested = [], []
    for field in table.fields:
        if columns is not None and field.name not in columns:
            continue
        types = list(_nested_types(field.type))
        if _is_char(types[0]):
            top.append(field.name)
        elif any(_is_char(t) for t in types[1:]):
            nested.append(field.name)
    return top, nested


def _is_char(data_type: Any) -> bool:
    return str(getattr(data_type, "type", "")).upper().startswith("CHAR")


def unmergeable_options(table: Any) -> list[str] | None:
    """The table options pypaimon cannot merge with (sorted), ``[]`` if it can, ``None`` if the
    table has no primary key (nothing is merged)."""
    if not table.is_primary_key_table:
        return None
    from pypaimon.common.options.core_options import MergeEngine
    from pypaimon.read import merge_engine_support as support

    try:
        support.check_supported(table)
        return []
    except NotImplementedError as exc:
        engine = table.options.merge_engine()
        if engine == MergeEngine.PARTIAL_UPDATE:
            options = support.partial_update_unsupported_options(table)
        elif engine == MergeEngine.AGGREGATE:
            options = support.aggregation_unsupported_options(table)
        else:
            options = set()
        return sorted(options) or [f"merge-engine={engine.value} ({exc})"]
    except ValueError as exc:
        raise UnsupportedTableError(
            f"table {table.identifier.get_full_name()}: its merge options are invalid "
            f"(Java Paimon rejects them too): {exc}"
        ) from exc


def without_merge_options(table: Any, options: Sequence[str]) -> Any:
    """``table`` without ``options``: what its change splits are read with. A change split is
    read without merging, so the options that only steer the merge change nothing in it."""
    from pypaimon.table.file_store_table import FileStoreTable

    keys = {option for option in options if "=" not in option}
    kept = {k: v for k, v in table.table_schema.options.items() if k not in keys}
    copy = FileStoreTable(
        table.file_io, table.identifier, table.table_path,
        table.table_schema.copy(new_options=kept), table.catalog_environment,
    )
    copy._applied_dynamic_options = getattr(table, "_applied_dynamic_options", {}) or {}
    return copy


def readable_table(table: Any) -> Any:
    """``table`` as its splits are read: without the merge options pypaimon cannot merge with
    (the planner refused every split that would need them)."""
    unmergeable = unmergeable_options(table)
    return without_merge_options(table, unmergeable) if unmergeable else table


def lossy_reads(
    table: Any, columns: Sequence[str] | None, unmergeable: list[str] | None, *,
    native_state: bool = False,
) -> dict[str, str]:
    """Why each kind of read (:data:`CHANGES`, :data:`FULL`) of ``columns`` cannot give Java's
    values; a kind missing from the answer is read exactly. ``native_state``: merged state is
    read by ``pypaimon-rust`` (``_native_read``), which keeps nanoseconds; the caller then
    checks that every split of a state read goes there."""
    from paimon_feed.planner._direct_read import _deduplicated_keys

    name = table.identifier.get_full_name()
    refused: dict[str, str] = {}
    if unmergeable:
        names = ", ".join(unmergeable)
        if _producer(table) == "none":
            reason = (
                f"table {name}: pypaimon cannot merge primary-key rows with option(s) {names}, "
                f"and the table has no changelog to read instead (changelog-producer=none): no "
                f"start can be read exactly. Set changelog-producer to 'input', 'lookup' or "
                f"'full-compaction' in the writing job to follow it"
            )
            refused[CHANGES] = reason
            refused[FULL] = reason
        else:
            refused[FULL] = (
                f"table {name}: a full state needs a merge, and pypaimon cannot merge "
                f"primary-key rows with option(s) {names}; start from the changelog instead "
                f"(start='latest', 'earliest', a snapshot id or a time), which needs no merge"
            )
    file_format = str(table.options.file_format("parquet")).lower()
    if _producer(table) != "none":  # change batches read the changelog's files
        change_format = str(table.options.changelog_file_format() or file_format).lower()
    else:
        change_format = file_format
    nested_chars = char_columns(table, columns)[1]
    if nested_chars and "orc" in (file_format, change_format):
        refused.setdefault(CHANGES, (
            f"table {name}: column(s) {', '.join(nested_chars)} hold a CHAR inside a nested "
            f"type, which ORC stores padded and the feed cannot trim as Java's reader does; "
            f"leave them out with a projection"
        ))
        refused.setdefault(FULL, refused[CHANGES])
    nanos = nanosecond_columns(table, columns) if table.is_primary_key_table else {}
    if nanos:
        described = ", ".join(f"{column} {kind}" for column, kind in nanos.items())
        why = (
            f"pypaimon reads primary-key rows of {change_format} files as Python values, which "
            f"hold microseconds and would drop the nanoseconds of column(s) {described}"
        )
        if change_format != "parquet":
            refused.setdefault(CHANGES, (
                f"table {name}: {why}; only Parquet files are read without that loss. Leave "
                f"the column(s) out with a projection, or write the table in Parquet"
            ))
        if native_state:
            pass  # Rust merges Arrow values, never Python ones
        elif file_format != "parquet":
            refused.setdefault(FULL, (
                f"table {name}: {why}; only Parquet files are read without that loss. Leave "
                f"the column(s) out with a projection, or write the table in Parquet"
            ))
        elif _deduplicated_keys(table) is None:
            refused.setdefault(FULL, (
                f"table {name}: its full state is merged by pypaimon ({why}, and only the "
                f"deduplicate merge is done without it); start from the changelog (start="
                f"'latest', 'earliest', a snapshot id or a time), or leave the column(s) out "
                f"with a projection"
            ))
    return refused


def _producer(table: Any) -> str:
    producer = table.options.changelog_producer()
    return str(getattr(producer, "value", producer) or "none").lower()


def orc_runs(splits: Sequence[Any], table_name: str) -> list[tuple[bool, list]]:
    """``splits`` in runs of consecutive splits whose files are all ORC (``True``) or none
    ORC (``False``). A split mixing ORC with other formats (a ``file.format`` change between
    its files) is refused: its merged rows cannot be told apart."""
    runs: list[tuple[bool, list]] = []
    for split in splits:
        names = [f.file_name for f in getattr(split, "files", ())]
        orc = [n.endswith(".orc") for n in names]
        if any(orc) and not all(orc):
            raise UnsupportedTableError(
                f"table {table_name}: a split of bucket {split.bucket} merges ORC files with "
                f"files of another format, and its CHAR columns cannot be read exactly (ORC "
                f"pads them, the other format keeps the written value); compact the table"
            )
        is_orc = bool(orc) and all(orc)
        if runs and runs[-1][0] == is_orc:
            runs[-1][1].append(split)
        else:
            runs.append((is_orc, [split]))
    return runs


def strip_char_padding(data: Any, columns: Sequence[str]) -> Any:
    """``data`` (Arrow table or batch) with trailing spaces cut from ``columns``, as Java's
    ORC reader returns a ``CHAR(n)`` (only U+0020, only at the end)."""
    import pyarrow.compute as pc

    for name in columns:
        index = data.schema.get_field_index(name)
        if index < 0:
            continue
        column = pc.utf8_rtrim(data.column(index), characters=" ")
        data = data.set_column(index, data.schema.field(index), column)
    return data


def pushable_predicate(predicate: Any, table: Any, chars: Sequence[str]) -> Any:
    """The part of ``predicate`` pypaimon may push into ORC files: conjuncts on padded
    ``CHAR`` columns would compare padded values and drop rows; the feed applies the whole
    predicate after the padding is cut."""
    if predicate is None or not chars:
        return predicate
    from pypaimon.read.push_down_utils import trim_predicate_by_fields

    others = [name for name in table.field_names if name not in chars]
    return trim_predicate_by_fields(predicate, others)


def refuse_partial_column_changes(table_name: str, splits: Iterable[Any], snapshot_id: int) -> None:
    """Raise :class:`UnsupportedTableError` if a change batch holds a partial-column file.

    A ``data-evolution.enabled`` table takes commits that write only some columns (an update of
    existing rows by row id, or rows of a column family). pypaimon's change reads return such
    a file as rows with every other column null: not what the commit did, so the batch is
    refused before any of its rows is delivered. The table's state (a ``full`` batch, pypaimon's
    batch read) merges the columns and is read as usual.
    """
    for split in splits:
        for file in getattr(split, "files", ()):
            columns = getattr(file, "write_cols", None)
            if columns:
                raise UnsupportedTableError(
                    f"table {table_name}: snapshot {snapshot_id} writes only the columns "
                    f"{', '.join(columns)} (data-evolution.enabled: a partial-column commit, "
                    f"file {file.file_name}); a change feed cannot deliver it as rows without "
                    f"changing values. Read the table's state instead (start='latest-full', "
                    f"or a batch read) after such commits"
                )
