"""boto3 S3 clients for a table's pypaimon catalog options.

pypaimon reads and writes ``s3://`` tables through pyarrow's S3 file system, configured by
catalog options (``fs.s3.endpoint``, ``fs.s3.region``, credentials, path-style access, in
several spellings). Where paimon-feed talks to S3 itself (conditional checkpoint writes, whole
metadata files in one GET) it uses boto3 clients configured from the same options, so both reach
the same endpoint with the same credentials.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Mapping

from paimon_feed.errors import MissingDependencyError

__all__ = ["file_io_options", "s3_client_for_options", "s3_endpoint_option"]

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
            f"{purpose} needs boto3; install it with: pip install 'paimon-feed[s3]'"
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
