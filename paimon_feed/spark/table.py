"""The table the source's options name: its schema, the pypaimon table, the notifier check.

Spark runs a source's callbacks in several Python processes, each importing what it uses:
``load()`` asks for the schema in one, another pickles the reader for the executors, the
query's offsets and planning live in a third, and the executors read in their own workers.
Only the ones that plan or read need pypaimon's table (:func:`load_table`), whose modules
import pandas, polars and requests when they load; the schema comes from the table's schema
file (:func:`load_schema`) and costs none of that.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from paimon_feed.errors import ConfigurationError, TableNotFoundError, install_hint
from paimon_feed.spark.options import InvalidOptionError, SourceOptions
from paimon_feed.tables import check_reachable, open_table, read_table_schema

__all__ = ["load_schema", "load_table", "worker_table", "check_notifier"]

#: The tables this process opened to read splits, by (warehouse, table, catalog options).
_WORKER_TABLES: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[tuple[int, int] | None, Any]] = {}


def _catalog_options(options: SourceOptions) -> dict[str, str]:
    return {k: v for k, v in options.catalog if k != "warehouse"}


def load_schema(options: SourceOptions) -> tuple[Any, str]:
    """The latest schema (pypaimon ``TableSchema``) of the table the options name, and the
    table's root URL; errors name the option to fix. Spark asks for it at ``load()``, on the
    driver: an unreachable S3 endpoint fails there within seconds (pyarrow would retry it for
    over a minute)."""
    catalog_options = _catalog_options(options)
    check_reachable(
        options.warehouse, catalog_options, fix="option catalog.fs.s3.endpoint (or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL in the environment of Spark workers)"
    )
    with _naming_the_option():
        return read_table_schema(options.warehouse, options.table, catalog_options)


def load_table(options: SourceOptions) -> Any:
    """Open the table the options name; errors name the option to fix."""
    with _naming_the_option():
        return open_table(options.warehouse, options.table, _catalog_options(options))


def worker_table(options: SourceOptions, schema_id: int, token: tuple[int, int] | None = None) -> Any:
    """The table to read splits of schema ``schema_id`` with, opened once per process.

    A reused Python worker reads many batches: opening the catalog and the table for each
    (the schema file, on S3 a request or two) was set-up paid per batch and per task. The
    table is kept for the groups of the same driver ``token``
    (:func:`~paimon_feed.spark.partitions.table_token`: the latest schema's id and creation
    time), so a schema change or a table dropped and re-created under the same name (its
    schema 0 is another) opens it again. Without a token, it is opened again when a batch
    needs a schema newer than the one it was opened at."""
    key = (options.warehouse, options.table, options.catalog)
    cached = _WORKER_TABLES.get(key)
    if cached is not None:
        cached_token, table = cached
        if token is not None and cached_token == token:
            return table
        if token is None and table.table_schema.id >= schema_id:
            return table
    table = load_table(options)
    _WORKER_TABLES[key] = (token, table)
    return table


@contextlib.contextmanager
def _naming_the_option() -> Iterator[None]:
    """A missing table or a bad warehouse/catalog option, re-raised naming the Spark option."""
    try:
        yield
    except TableNotFoundError as exc:
        raise TableNotFoundError(f"option table: {exc}") from exc
    except ConfigurationError as exc:
        raise InvalidOptionError(f"option warehouse / catalog.*: {exc}") from exc


def check_notifier(options: SourceOptions, table_url: str) -> None:
    """Fail now if ``notifier``/``queueUrl`` cannot serve this table."""
    if not options.push:
        return
    from paimon_feed.notifiers import create_notifier

    try:
        create_notifier(
            options.notifier,
            table_url,
            poll_interval=options.poll_interval,
            sqs_queue_url=options.queue_url,
        )
    except ConfigurationError as exc:
        name = "queueUrl" if options.notifier == "sqs" and not options.queue_url else "notifier"
        raise InvalidOptionError(f"option {name}: {exc}") from exc
    except ImportError as exc:
        raise InvalidOptionError(
            f"option notifier={options.notifier!r} needs the [s3] extra: "
            f"{install_hint('s3')} ({exc})"
        ) from exc
