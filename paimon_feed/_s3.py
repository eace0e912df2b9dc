"""One S3 configuration for every client the feed uses: pyarrow (through pypaimon), boto3 and
aiobotocore.

pypaimon reads and writes ``s3://`` tables through pyarrow's S3 file system, configured by
catalog options only (``fs.s3.endpoint``, ``fs.s3.region``, credentials, path-style access, in
several spellings): pyarrow ignores ``AWS_ENDPOINT_URL`` and ``AWS_ENDPOINT_URL_S3``, which boto
honours. So the environment is resolved once, into the catalog options, when a catalog is
opened (:func:`resolve_s3_options`, used by :func:`paimon_feed.tables.open_catalog`), by these
rules:

- endpoint: ``fs.s3.endpoint`` (or pypaimon's other spellings), else ``AWS_ENDPOINT_URL_S3``,
  else ``AWS_ENDPOINT_URL`` (boto's order; ``AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`` turns
  the variables off, as in boto);
- region: ``fs.s3.region``, else ``AWS_REGION``, else ``AWS_DEFAULT_REGION``;
- path-style access: as set, else on when the endpoint's host is an IP address or a name
  without a dot (``localhost``, a container name), where virtual-host addressing cannot
  resolve ``<bucket>.<host>``;
- credentials: the ``fs.s3.*`` options, else the default chain (environment, profile, role),
  which pyarrow and boto read alike.

Where paimon-feed talks to S3 itself (conditional checkpoint writes, whole metadata files in
one GET) it builds boto3 clients from the same resolved options, and tells boto not to read the
endpoint variables again, so both reach the same endpoint with the same credentials. The SQS
notifier (aiobotocore) talks to SQS, configured by boto's conventions
(``AWS_ENDPOINT_URL_SQS``, else ``AWS_ENDPOINT_URL``; region and credentials from the
environment).
"""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from paimon_feed.errors import MissingDependencyError, install_hint

__all__ = [
    "ENDPOINT_VARIABLES",
    "S3_MISSING_CODES",
    "file_io_options",
    "is_s3_url",
    "resolve_s3_options",
    "s3_client_for_options",
    "s3_endpoint_option",
    "s3_endpoint_source",
    "s3_error_code",
]

#: The environment variables that set the S3 endpoint, in boto's order of precedence.
ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
_REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")
_S3_SCHEMES = ("s3", "s3a", "s3n")

#: S3 error codes that mean "no such object": GetObject answers ``NoSuchKey``, HeadObject and
#: some S3-compatible stores a bare ``404``.
S3_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})

_S3_PREFIXES = ("fs.s3.", "fs.s3a.", "s3.", "s3a.")
_clients_lock = threading.Lock()
_clients: Any = None  # a cachetools.TTLCache, made on first use


def _s3_option(options: Mapping[str, Any], canonical: str | None, *names: str) -> str | None:
    """The first set option among ``canonical`` and the prefixed ``names``, as pypaimon reads
    them (``pyarrow_file_io.PyArrowFileIO._initialize_s3_fs``)."""
    keys = ([canonical] if canonical else []) + [p + n for p in _S3_PREFIXES for n in names]
    for key in keys:
        value = options.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def s3_endpoint_option(options: Mapping[str, Any]) -> str | None:
    """The S3 endpoint URL set in pypaimon catalog options (``fs.s3.endpoint`` and pypaimon's
    other spellings), with pyarrow's default scheme ``https://`` added; ``None`` if unset."""
    endpoint = _s3_option(options, "fs.s3.endpoint", "endpoint")
    if endpoint is not None and "://" not in endpoint:
        endpoint = "https://" + endpoint  # pyarrow's default scheme for endpoint_override
    return endpoint


def is_s3_url(url: str) -> bool:
    """Whether ``url`` is an S3 location (``s3://``, ``s3a://``, ``s3n://``).

    >>> is_s3_url("s3a://bucket/wh"), is_s3_url("/data/wh")
    (True, False)
    """
    return isinstance(url, str) and urlparse(url).scheme.lower() in _S3_SCHEMES


def _environment_endpoint(environ: Mapping[str, str]) -> tuple[str, str] | None:
    if str(environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "")).strip().lower() == "true":
        return None
    for name in ENDPOINT_VARIABLES:
        value = str(environ.get(name) or "").strip()
        if value:
            return value, name
    return None


def s3_endpoint_source(
    options: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """The S3 endpoint for these catalog options and where it was set (the option or variable
    name), or ``None`` for AWS's own endpoint.

    >>> s3_endpoint_source({}, {"AWS_ENDPOINT_URL": "http://127.0.0.1:5555"})
    ('http://127.0.0.1:5555', 'AWS_ENDPOINT_URL')
    >>> s3_endpoint_source({"fs.s3.endpoint": "minio:9000"}, {"AWS_ENDPOINT_URL": "http://x"})
    ('https://minio:9000', 'fs.s3.endpoint')
    """
    endpoint = s3_endpoint_option(options)
    if endpoint is not None:
        keys = ["fs.s3.endpoint"] + [p + "endpoint" for p in _S3_PREFIXES]
        return endpoint, next(k for k in keys if options.get(k) not in (None, ""))
    return _environment_endpoint(os.environ if environ is None else environ)


def _needs_path_style(endpoint: str) -> bool:
    """Virtual-host addressing (``<bucket>.<host>``) cannot work on an IP address or a
    single-label host name."""
    host = urlparse(endpoint if "://" in endpoint else "https://" + endpoint).hostname or ""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return "." not in host


def resolve_s3_options(
    warehouse: str, options: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Catalog options for ``warehouse`` with the environment's S3 settings filled in where
    the options leave them unset (the rules are in the module docstring); a copy of
    ``options`` for other warehouses. What is set explicitly always wins.

    >>> resolve_s3_options("s3://b/wh", {}, {"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000",
    ...     "AWS_ENDPOINT_URL": "http://other:1", "AWS_DEFAULT_REGION": "eu-west-1"})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'fs.s3.endpoint': 'http://127.0.0.1:9000', 'fs.s3.region': 'eu-west-1',
     'fs.s3.path-style-access': 'true'}
    >>> resolve_s3_options("/data/wh", {"a": "1"}, {"AWS_ENDPOINT_URL": "http://x:1"})
    {'a': '1'}
    """
    resolved = dict(options or {})
    if not is_s3_url(warehouse):
        return resolved
    environ = os.environ if environ is None else environ
    found = s3_endpoint_source(resolved, environ)
    if found is not None and s3_endpoint_option(resolved) is None:
        resolved["fs.s3.endpoint"] = found[0]
    if _s3_option(resolved, "fs.s3.region", "region") is None:
        region = next((environ[n] for n in _REGION_VARIABLES if environ.get(n)), None)
        if region:
            resolved["fs.s3.region"] = region
    path_style_set = any(
        _s3_option(resolved, None, name) is not None
        for name in ("path-style-access", "path.style.access")
    )
    if found is not None and not path_style_set and _needs_path_style(found[0]):
        resolved["fs.s3.path-style-access"] = "true"
    return resolved


def _s3_client_settings(options: Mapping[str, Any]) -> tuple[Any, ...]:
    access_key = _s3_option(options, "fs.s3.accessKeyId", "access-key", "access.key")
    secret_key = _s3_option(options, "fs.s3.accessKeySecret", "secret-key", "secret.key")
    token = _s3_option(
        options, "fs.s3.securityToken",
        "session-token", "session.token", "security-token", "security.token",
    )
    endpoint = s3_endpoint_option(options)
    region = _s3_option(options, "fs.s3.region", "region")
    path_style = any(
        str(_s3_option(options, None, name) or "").strip().lower() == "true"
        for name in ("path-style-access", "path.style.access")
    )
    return access_key, secret_key, token, endpoint, region, path_style


def _retries() -> tuple[str, int]:
    mode = os.environ.get("AWS_RETRY_MODE") or "standard"
    try:
        attempts = max(1, int(os.environ.get("AWS_MAX_ATTEMPTS") or 5))
    except ValueError:
        attempts = 5
    return mode, attempts


def s3_client_for_options(
    options: Mapping[str, Any], purpose: str = "reading S3 with boto3"
) -> Any:
    """A boto3 S3 client for pypaimon catalog options (``fs.s3.endpoint``, ``fs.s3.region``,
    ``fs.s3.accessKeyId``/``accessKeySecret``/``securityToken``, ``fs.s3.path-style-access``
    and pypaimon's other spellings of them). Unset credentials fall back to boto's default
    chain (environment, Lambda role). Retries: boto's ``standard`` mode, 5 attempts, unless
    ``AWS_RETRY_MODE`` / ``AWS_MAX_ATTEMPTS`` say otherwise. Clients are cached per settings for
    an hour; boto3 clients are thread-safe.
    """
    global _clients
    try:
        import boto3
        from botocore.config import Config
        from cachetools import TTLCache
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs boto3; {install_hint('s3')}"
        ) from exc
    settings = (*_s3_client_settings(options), _retries())
    with _clients_lock:
        if _clients is None:
            _clients = TTLCache(maxsize=32, ttl=3600)
        client = _clients.get(settings)
        if client is not None:
            return client
    access_key, secret_key, token, endpoint, region, path_style, (mode, attempts) = settings
    config = Config(
        retries={"mode": mode, "max_attempts": attempts},
        # Only the options, as pyarrow: the environment was resolved into them when the
        # catalog was opened, and a variable set since must not send boto elsewhere.
        ignore_configured_endpoint_urls=True,
        max_pool_connections=32,  # a planner reads up to 16 metadata files at a time
        s3={"addressing_style": "path" if path_style else "auto"},
    )
    client = boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        aws_session_token=token,
        config=config,
    )
    with _clients_lock:
        _clients[settings] = client
    return client


def file_io_options(file_io: Any) -> dict[str, Any]:
    """The catalog options a pypaimon ``PyArrowFileIO`` was built with, if it exposes them."""
    properties = getattr(file_io, "properties", None)
    to_map = getattr(properties, "to_map", None)
    if callable(to_map):
        return dict(to_map())
    return dict(properties) if isinstance(properties, Mapping) else {}


def s3_error_code(exc: BaseException) -> str | None:
    """The S3 error code of a botocore ``ClientError``: its ``Error.Code``, else its HTTP
    status; ``None`` for an exception that carries no S3 response.

    >>> def failure(response):
    ...     return type("ClientError", (Exception,), {"response": response})()
    >>> s3_error_code(failure({"Error": {"Code": "NoSuchKey"}}))
    'NoSuchKey'
    >>> s3_error_code(failure({"Error": {}, "ResponseMetadata": {"HTTPStatusCode": 412}}))
    '412'
    >>> s3_error_code(OSError("disk full")) is None
    True
    """
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return None
    code = (response.get("Error") or {}).get("Code")
    if code:
        return str(code)
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return str(status) if status else None
