"""Row writers for ``paimon-feed tail``: ``jsonl`` (default), ``json`` (one JSON array for the
whole run), ``csv`` and ``table``. Map columns come out as JSON objects."""

from __future__ import annotations

import base64
import csv
import datetime
import decimal
import json
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["FORMATS", "RowWriter", "rows_from_arrow"]

FORMATS = ("jsonl", "json", "csv", "table")


def _plain(value: Any) -> Any:
    """A JSON-friendly form of an Arrow value."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {_key(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _key(key: Any) -> Any:
    plain = _plain(key)
    return plain if isinstance(plain, (str, int, float, bool)) or plain is None else json.dumps(plain)


def rows_from_arrow(data: Any) -> list[dict]:
    """The rows of an Arrow table as dicts, with map values as dicts (pyarrow gives lists of
    key-value tuples, which JSON would print as arrays)."""
    rows = data.to_pylist()
    converters = {
        field.name: convert
        for field in data.schema
        if (convert := _map_converter(field.type)) is not None
    }
    if converters:
        for row in rows:
            for name, convert in converters.items():
                row[name] = convert(row[name])
    return rows


def _map_converter(arrow_type: Any) -> Callable[[Any], Any] | None:
    """A function turning pyarrow's Python value of ``arrow_type`` into one with maps as dicts,
    or ``None`` if the type holds no map."""
    import pyarrow as pa

    if pa.types.is_map(arrow_type):
        keys = _map_converter(arrow_type.key_type) or (lambda value: value)
        items = _map_converter(arrow_type.item_type) or (lambda value: value)
        return lambda value: None if value is None else {keys(k): items(v) for k, v in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        inner = _map_converter(arrow_type.value_type)
        return None if inner is None else (lambda value: None if value is None else [inner(v) for v in value])
    if pa.types.is_struct(arrow_type):
        fields = {
            field.name: convert
            for field in arrow_type
            if (convert := _map_converter(field.type)) is not None
        }
        if not fields:
            return None
        return lambda value: None if value is None else {
            name: fields[name](item) if name in fields else item for name, item in value.items()
        }
    return None


class RowWriter:
    """Writes rows of successive batches to a stream in one format; :meth:`close` ends the
    output (the closing bracket of ``json``)."""

    def __init__(self, fmt: str, stream: TextIO) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        self.stream = stream
        self._write: Callable[[list[dict]], None] = getattr(self, f"_write_{fmt}")
        self._csv_header: list[str] | None = None
        self._format = fmt
        self._rows_written = 0
        self._closed = False

    def write(self, rows: list[dict]) -> None:
        if rows:
            self._write(rows)
            self._rows_written += len(rows)
            self.stream.flush()

    def close(self) -> None:
        """End the output: a ``json`` run prints its closing bracket (``[]`` if no row came).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._format == "json":
            self.stream.write("[]\n" if self._rows_written == 0 else "\n]\n")
            self.stream.flush()

    def _write_jsonl(self, rows: list[dict]) -> None:
        for row in rows:
            self.stream.write(json.dumps(_plain(row), ensure_ascii=False) + "\n")

    def _write_json(self, rows: list[dict]) -> None:
        # One array over all batches, a row a line, so it streams and json.load reads it whole.
        for index, row in enumerate(rows):
            opening = "[\n" if self._rows_written == 0 and index == 0 else ",\n"
            self.stream.write(opening + json.dumps(_plain(row), ensure_ascii=False))

    def _write_csv(self, rows: list[dict]) -> None:
        writer = csv.writer(self.stream, lineterminator="\n")
        if self._csv_header != list(rows[0]):
            # First rows, or the table's schema changed (a column added, renamed or dropped):
            # a header line names the columns of the rows that follow it.
            self._csv_header = list(rows[0])
            writer.writerow(self._csv_header)
        for row in rows:
            writer.writerow(
                ["" if row.get(name) is None else _csv_cell(row.get(name)) for name in self._csv_header]
            )

    def _write_table(self, rows: list[dict]) -> None:
        columns = list(rows[0])
        cells = [[_table_cell(row.get(name)) for name in columns] for row in rows]
        widths = [
            max(len(name), *(len(line[index]) for line in cells)) for index, name in enumerate(columns)
        ]
        rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"
        self.stream.write(rule + "\n")
        self.stream.write(
            "| " + " | ".join(name.ljust(width) for name, width in zip(columns, widths)) + " |\n"
        )
        self.stream.write(rule + "\n")
        for line in cells:
            self.stream.write(
                "| " + " | ".join(cell.ljust(width) for cell, width in zip(line, widths)) + " |\n"
            )
        self.stream.write(rule + "\n")


def _csv_cell(value: Any) -> Any:
    plain = _plain(value)
    return json.dumps(plain, ensure_ascii=False) if isinstance(plain, (dict, list)) else plain


def _table_cell(value: Any) -> str:
    if value is None:
        return "NULL"
    plain = _plain(value)
    return json.dumps(plain, ensure_ascii=False) if isinstance(plain, (dict, list)) else str(plain)
