"""Row writers for ``paimon-feed tail``: ``jsonl`` (default), ``json``, ``csv`` and ``table``."""

from __future__ import annotations

import base64
import csv
import datetime
import decimal
import json
from typing import Any, Callable, TextIO

__all__ = ["FORMATS", "RowWriter"]

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
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


class RowWriter:
    """Writes rows of successive batches to a stream in one format."""

    def __init__(self, fmt: str, stream: TextIO) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        self.stream = stream
        self._write: Callable[[list[dict]], None] = getattr(self, f"_write_{fmt}")
        self._csv_header: list[str] | None = None

    def write(self, rows: list[dict]) -> None:
        if rows:
            self._write(rows)
            self.stream.flush()

    def _write_jsonl(self, rows: list[dict]) -> None:
        for row in rows:
            self.stream.write(json.dumps(_plain(row), ensure_ascii=False) + "\n")

    def _write_json(self, rows: list[dict]) -> None:
        for row in rows:
            self.stream.write(json.dumps(_plain(row), ensure_ascii=False, indent=2) + "\n")

    def _write_csv(self, rows: list[dict]) -> None:
        writer = csv.writer(self.stream, lineterminator="\n")
        if self._csv_header is None:
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
