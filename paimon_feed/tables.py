"""Opening tables by warehouse and name, for the entry points (CLI, Lambda, Spark), and
writing one commit (the demo, the benchmarks).

Library users usually hold a pypaimon table already; the entry points start from strings, and
this is where those strings are checked and pypaimon's catalog errors become ``FeedError``\\ s.
Only pypaimon's public ``CatalogFactory`` is used here; what reaches into pypaimon's modules
(its catalog exceptions, file IO and schema parsing) is in :mod:`paimon_feed.planner.catalog`.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from paimon_feed._layout import DATABASE_SUFFIX, is_local, local_url
from paimon_feed.errors import (
    ConfigurationError,
    MissingDependencyError,
    StorageError,
    TableNotFoundError,
    install_hint,
    is_access_denied,
)

__all__ = [
    "catalog_directory",
    "check_data_table",
    "check_hdfs_client",
    "check_reachable",
    "check_table_endpoint",
    "commit_arrow",
    "open_catalog",
    "open_table",
    "parse_table_name",
    "read_table_schema",
    "redact",
    "s3_endpoint",
]

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_$-]*")
_SECRET_WORDS = ("secret", "password", "token", "credential", "key")


def parse_table_name(name: str) -> tuple[str, str]:
    """Split ``db.table`` and reject names that could escape the warehouse.

    >>> parse_table_name("sales.orders")
    ('sales', 'orders')
    """
    parts = name.split(".") if isinstance(name, str) else []
    if len(parts) != 2 or not all(_NAME.fullmatch(part) for part in parts):
        raise ConfigurationError(
            f"invalid table name {name!r}: give 'database.table' using letters, digits, "
            f"'_', '-' or '$'"
        )
    return parts[0], parts[1]


def _system_table_suffix(name: str) -> str | None:
    """The system table part of a table name (``snapshots`` of ``t$snapshots``, also after a
    branch: ``t$branch_dev$files``), or ``None`` for a data table or branch (``t$branch_dev``).

    >>> _system_table_suffix("orders$snapshots"), _system_table_suffix("orders$branch_dev")
    ('snapshots', None)
    """
    for part in name.split("$")[1:]:
        if not part.startswith("branch_"):
            return part
    return None


def _system_table_error(name: str, suffix: str) -> ConfigurationError:
    base = name.split("$", 1)[0]
    return ConfigurationError(
        f"table {name} is the system table {suffix!r} of {base}: a feed follows the changes "
        f"of a data table, and a system table has no snapshots of its own; follow {base} "
        f"(with include_row_kind for what $audit_log shows)"
    )


def check_data_table(table: Any) -> None:
    """Raise :class:`ConfigurationError` unless ``table`` is a pypaimon data table (a system
    table such as ``db.t$snapshots`` is a read-only view without snapshots to follow)."""
    identifier: Any = getattr(table, "identifier", None)  # a pypaimon Identifier, untyped
    name = identifier.get_full_name() if hasattr(identifier, "get_full_name") else str(table)
    suffix = _system_table_suffix(name.rsplit(".", 1)[-1])
    if suffix is not None or not hasattr(table, "table_schema"):
        raise _system_table_error(name, suffix or type(table).__name__)


def redact(options: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of catalog options safe to log: values of secret-looking keys are masked.

    >>> redact({"fs.s3.accessKeySecret": "abc", "warehouse": "s3://b/wh"})
    {'fs.s3.accessKeySecret': '***', 'warehouse': 's3://b/wh'}
    """
    return {
        key: "***" if any(word in key.lower() for word in _SECRET_WORDS) and "id" not in key.lower() else value
        for key, value in options.items()
    }


def s3_endpoint(warehouse: str, options: Mapping[str, str] | None = None) -> str | None:
    """The S3 endpoint every client uses for ``warehouse``, or ``None`` if it is not on S3:
    ``fs.s3.endpoint``, else ``$AWS_ENDPOINT_URL_S3`` / ``$AWS_ENDPOINT_URL``, else AWS's
    endpoint for the region (``fs.s3.region``, ``$AWS_REGION``, ``$AWS_DEFAULT_REGION``);
    the rules of :mod:`paimon_feed._s3`.

    >>> s3_endpoint("s3://bucket/wh", {"fs.s3.endpoint": "http://127.0.0.1:9000"})
    'http://127.0.0.1:9000'
    >>> s3_endpoint("/data/wh") is None
    True
    """
    return _endpoint_and_source(warehouse, options)[0]


def _endpoint_and_source(
    warehouse: str, options: Mapping[str, str] | None
) -> tuple[str | None, str | None]:
    from paimon_feed._s3 import is_s3_url, resolve_s3_options, s3_endpoint_source

    if not is_s3_url(warehouse):
        return None, None
    resolved = resolve_s3_options(warehouse, options)
    found = s3_endpoint_source(dict(options or {}))  # the options, else the environment
    if found is not None:
        return found[0] if "://" in found[0] else "https://" + found[0], found[1]
    region = resolved.get("fs.s3.region") or "us-east-1"
    return f"https://s3.{region}.amazonaws.com", None


_REACHED_TTL_S = 60.0
_reached: dict[tuple[str, int], float] = {}  # (host, port) -> monotonic time of the last success
_reached_lock = threading.Lock()


def check_reachable(
    warehouse: str,
    options: Mapping[str, str] | None = None,
    *,
    timeout: float = 5.0,
    fix: str = "fs.s3.endpoint, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL",
) -> None:
    """Fail within ``timeout`` seconds if the warehouse's object store does not accept a
    connection, naming the endpoint and where it was set; a no-op for local warehouses.

    pyarrow's S3 client retries a refused connection for over a minute before pypaimon reports
    it as a failure to load the schema; :func:`open_catalog` and every entry point check first,
    so a wrong endpoint is one clear message at once. A connection is all it tries: no request,
    no credentials; a success is remembered for a minute (Spark opens the table per task).
    ``fix`` names, in the entry point's terms, where the endpoint is set.
    """
    endpoint, source = _endpoint_and_source(warehouse, options)
    if endpoint is None:
        return
    parsed = urlparse(endpoint)
    host = parsed.hostname
    try:
        port = parsed.port or (80 if parsed.scheme == "http" else 443)
    except ValueError:
        raise ConfigurationError(
            f"invalid S3 endpoint {endpoint!r}{_set_in(source)} for warehouse {warehouse}"
        ) from None
    if not host:
        raise ConfigurationError(
            f"invalid S3 endpoint {endpoint!r}{_set_in(source)} for warehouse {warehouse}"
        )
    now = time.monotonic()
    with _reached_lock:
        if now - _reached.get((host, port), -_REACHED_TTL_S) < _REACHED_TTL_S:
            return
    deadline = now + timeout
    try:
        # create_connection's timeout is per address; the deadline bounds name lookup too.
        socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic())).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise StorageError(
            f"cannot reach the S3 endpoint {endpoint}{_set_in(source)} of warehouse "
            f"{warehouse}: {reason}; check {fix}, and the network"
        ) from exc
    with _reached_lock:
        _reached[(host, port)] = time.monotonic()


def _set_in(source: str | None) -> str:
    return f" (set by {source})" if source else " (AWS's endpoint for the region)"


def check_table_endpoint(table: Any) -> None:
    """Raise :class:`ConfigurationError` if ``table`` is on S3 and was opened without an
    endpoint while ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL`` names one: pyarrow ignores the
    variables, so its reads would go to AWS while boto's would not. :func:`open_table`
    resolves them; a catalog made with ``CatalogFactory.create`` directly does not."""
    from paimon_feed._s3 import (
        file_io_options,
        is_s3_url,
        s3_endpoint_option,
        s3_endpoint_source,
    )

    path = str(getattr(table, "table_path", ""))
    options = file_io_options(getattr(table, "file_io", None))
    if not is_s3_url(path) or not options or s3_endpoint_option(options) is not None:
        return
    found = s3_endpoint_source({})
    if found is not None:
        raise ConfigurationError(
            f"table {path} was opened without fs.s3.endpoint while {found[1]}={found[0]}: "
            f"pyarrow ignores that variable and would read from AWS; open the table with "
            f"paimon_feed.open_table(warehouse, 'db.table') (which applies the environment), or "
            f"set fs.s3.endpoint in the catalog options"
        )


HDFS_SCHEMES = ("hdfs", "viewfs")


def check_hdfs_client(warehouse: str, options: Mapping[str, str] | None = None) -> None:
    """Raise :class:`MissingDependencyError` naming the ``[hdfs]`` extra if ``warehouse`` is on
    ``hdfs://``/``viewfs://`` and hdfs-native is not installed: pypaimon would fall back to
    pyarrow's libhdfs and fail later with "HADOOP_HOME environment variable is not set".
    A catalog that asks for pyarrow's client (``hdfs.client.impl=pyarrow``) is left alone."""
    if urlparse(warehouse).scheme.lower() not in HDFS_SCHEMES:
        return
    if (options or {}).get("hdfs.client.impl", "native") != "native":
        return
    try:
        import hdfs_native  # noqa: F401  (pypaimon's HDFS client)
    except ImportError as exc:
        raise MissingDependencyError(
            f"warehouse {warehouse} is on HDFS, which pypaimon reaches through hdfs-native; "
            f"{install_hint('hdfs')}"
        ) from exc


def open_catalog(warehouse: str, options: Mapping[str, str] | None = None) -> Any:
    """A pypaimon catalog on ``warehouse`` (a path or URL) with extra options.

    On S3 the environment's endpoint, region and path-style settings are resolved into the
    options (:func:`paimon_feed._s3.resolve_s3_options`), so pyarrow reaches the same
    endpoint as boto, and an endpoint that accepts no connection fails within 5 s, named
    (:func:`check_reachable`)."""
    from pypaimon import CatalogFactory

    from paimon_feed._s3 import resolve_s3_options

    if not warehouse or not isinstance(warehouse, str):
        raise ConfigurationError(f"invalid warehouse {warehouse!r}: give a path or URL")
    check_reachable(warehouse, options)
    check_hdfs_client(warehouse, options)
    resolved = resolve_s3_options(warehouse, options)
    try:
        return CatalogFactory.create({**resolved, "warehouse": warehouse})
    except Exception as exc:
        raise ConfigurationError(
            f"cannot open warehouse {warehouse} with options {redact(options or {})}: {exc}"
        ) from exc


def catalog_directory(catalog: Any) -> str | None:
    """The directory whose listing *is* ``catalog``'s list of tables -- a filesystem catalog's
    warehouse -- or ``None`` for a catalog that keeps that list elsewhere: a REST catalog (its
    warehouse is a name; the server says where each table lives) or a JDBC catalog (a table is
    listed once its row is written, after its directory). Watching that directory finds new
    tables at once; for the others, a listing through the catalog does."""
    from pypaimon import CatalogFactory

    filesystem = CatalogFactory.CATALOG_REGISTRY.get("filesystem")
    if filesystem is not None and isinstance(catalog, filesystem):
        warehouse = getattr(catalog, "warehouse", None)
        return str(warehouse) if warehouse else None
    return None


def open_table(
    warehouse: str, name: str, options: Mapping[str, str] | None = None, *, catalog: Any = None
) -> Any:
    """The pypaimon table ``name`` (``db.table``) of ``warehouse``."""
    from paimon_feed.planner.catalog import not_found_errors

    suffix = _system_table_suffix(parse_table_name(name)[1])
    if suffix is not None:
        raise _system_table_error(name, suffix)
    catalog = catalog or open_catalog(warehouse, options)
    try:
        return catalog.get_table(name)
    except not_found_errors() as exc:
        raise TableNotFoundError(_what_is_missing(catalog, warehouse, name)) from exc
    except Exception as exc:
        if is_access_denied(exc):
            raise _access_denied(name, warehouse, exc) from exc
        raise


def _access_denied(name: str, warehouse: str, exc: BaseException) -> ConfigurationError:
    """Storage refused to show table ``name``: say which credentials to configure."""
    cause = exc
    while cause.__cause__ is not None:  # the storage client's own words, not pypaimon's wrapper
        cause = cause.__cause__
    if urlparse(warehouse).scheme in ("s3", "s3a"):
        remedy = (
            "configure S3 credentials that may read it: AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or the machine's role), or the catalog "
            "options fs.s3.accessKeyId and fs.s3.accessKeySecret (CLI: --catalog-option); they "
            "need s3:GetObject and s3:ListBucket on the warehouse (s3:PutObject to checkpoint)"
        )
    else:
        remedy = "configure credentials that may read the warehouse, as pypaimon's catalog options"
    return ConfigurationError(
        f"table {name} of warehouse {warehouse}: access denied ({cause}); {remedy}"
    )


def _what_is_missing(catalog: Any, warehouse: str, name: str) -> str:
    """Why ``name`` is not found: no warehouse, no database (naming those that exist) or no
    such table in the database (naming its tables)."""
    database = parse_table_name(name)[0]
    root = getattr(catalog, "warehouse", None)
    file_io = getattr(catalog, "file_io", None)
    try:
        if root is not None and file_io is not None and not file_io.exists(root):
            return f"warehouse {warehouse} does not exist (no directory or prefix there); check the path"
        databases = sorted(catalog.list_databases())
        if database not in databases:
            listed = ", ".join(databases) or "none"
            return f"database {database} does not exist in warehouse {warehouse}; its databases: {listed}"
        tables = sorted(catalog.list_tables(database))
    except Exception:  # noqa: BLE001 - a listing is a hint; the error stands without it
        return f"table {name} does not exist in warehouse {warehouse}"
    listed = ", ".join(f"{database}.{table}" for table in tables) or "none"
    return f"table {name} does not exist in warehouse {warehouse}; the tables of database {database}: {listed}"


def read_table_schema(
    warehouse: str, name: str, options: Mapping[str, str] | None = None
) -> tuple[Any, str]:
    """The latest schema of table ``name`` (a pypaimon ``TableSchema``) and the table's root
    URL (``file:///...`` for local tables), as :func:`open_table` would give them.

    For tables of a filesystem catalog, the schema is read from the table's newest
    ``schema/schema-N`` file, without opening the catalog or the table: pypaimon's catalog
    and table modules import pandas, polars and requests when they load (about half a
    second), its file IO and schema parsing do not. Other catalogs (``metastore``), branches
    and system tables (``$`` in the name) are opened through the catalog.
    """
    database, table_name = parse_table_name(name)
    suffix = _system_table_suffix(table_name)
    if suffix is not None:
        raise _system_table_error(name, suffix)
    options = dict(options or {})
    if (
        options.get("metastore", "filesystem") != "filesystem"
        or "$" in name
        or "scan.fallback-branch" in options
    ):
        table = open_table(warehouse, name, options)
        return table.table_schema, _url(str(table.table_path))
    from paimon_feed._s3 import resolve_s3_options
    from paimon_feed.planner.catalog import read_latest_schema, warehouse_file_io

    if not warehouse or not isinstance(warehouse, str):
        raise ConfigurationError(f"invalid warehouse {warehouse!r}: give a path or URL")
    check_reachable(warehouse, options)
    options = resolve_s3_options(warehouse, options)
    try:
        file_io = warehouse_file_io(warehouse, options)
    except Exception as exc:
        raise ConfigurationError(
            f"cannot open warehouse {warehouse} with options {redact(options)}: {exc}"
        ) from exc
    # The filesystem catalog's layout, as pypaimon's FileSystemCatalog builds it:
    # {warehouse}/{database}.db/{table}.
    path = f"{warehouse.rstrip('/')}/{database}{DATABASE_SUFFIX}/{table_name}"
    try:
        schema = read_latest_schema(file_io, path, name)
    except StorageError as exc:
        if is_access_denied(exc):
            raise _access_denied(name, warehouse, exc) from exc
        raise
    if schema is None:
        raise TableNotFoundError(_what_is_missing(open_catalog(warehouse, options), warehouse, name))
    return schema, _url(path)


def _url(path: str) -> str:
    return local_url(path) if is_local(path) else path


def commit_arrow(table: Any, data: Any) -> None:
    """Write ``data`` (a ``pyarrow.Table``) to ``table`` as one batch commit: one new snapshot."""
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(data)
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()
