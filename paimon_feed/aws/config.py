"""The Lambda handler's settings, read from the environment (:class:`HandlerConfig`).

The variables and what they mean are documented where the function is configured, in
:mod:`paimon_feed.aws.lambda_handler` (the docs site renders that table). A missing or invalid
variable raises :class:`~paimon_feed.errors.ConfigurationError` naming it; nothing here opens a
catalog or a table.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from paimon_feed._units import parse_duration_ms
from paimon_feed.batch import FeedBatch
from paimon_feed.checkpoint import validate_consumer_id
from paimon_feed.errors import ConfigurationError
from paimon_feed.notifiers.base import normalize_table_url
from paimon_feed.progress import ExpiredPolicy, HistoryPolicy, check_policies
from paimon_feed.start import parse_start
from paimon_feed.tables import parse_table_name, redact

__all__ = [
    "DEFAULT_START",
    "ENV_CATALOG_OPTIONS",
    "ENV_CONSUMER_ID",
    "ENV_DEADLINE_MARGIN",
    "ENV_DEADLINE_MARGIN_MS",
    "ENV_ON_EXPIRED",
    "ENV_ON_HISTORY_REWRITTEN",
    "ENV_PROCESSOR",
    "ENV_START",
    "ENV_TABLES",
    "ENV_WAREHOUSE",
    "HandlerConfig",
]

ENV_WAREHOUSE = "PAIMON_FEED_WAREHOUSE"
ENV_CATALOG_OPTIONS = "PAIMON_FEED_CATALOG_OPTIONS"
ENV_CONSUMER_ID = "PAIMON_FEED_CONSUMER_ID"
ENV_PROCESSOR = "PAIMON_FEED_PROCESSOR"
ENV_TABLES = "PAIMON_FEED_TABLES"
ENV_START = "PAIMON_FEED_START"
ENV_DEADLINE_MARGIN = "PAIMON_FEED_DEADLINE_MARGIN"
ENV_DEADLINE_MARGIN_MS = "PAIMON_FEED_DEADLINE_MARGIN_MS"
ENV_ON_EXPIRED = "PAIMON_FEED_ON_EXPIRED"
ENV_ON_HISTORY_REWRITTEN = "PAIMON_FEED_ON_HISTORY_REWRITTEN"

DEFAULT_START = "latest-full"
#: Where a missing variable's error sends the reader: the module that documents them all.
_DOCUMENTED_IN = "paimon_feed.aws.lambda_handler"


@dataclass(frozen=True)
class HandlerConfig:
    """The handler's settings, read from the environment by :meth:`from_env`."""

    warehouse: str
    catalog_options: Mapping[str, str] = field(repr=False)
    consumer_id: str
    processor: Callable[[FeedBatch], Any] = field(repr=False, compare=False)
    processor_spec: str
    tables: frozenset[str] | None = None
    start: str = DEFAULT_START
    deadline_margin_ms: int | None = None
    on_expired: ExpiredPolicy = "error"
    on_history_rewritten: HistoryPolicy = "error"

    @property
    def warehouse_url(self) -> str:
        """The warehouse in the spelling hints use (``s3a://`` → ``s3://``, no trailing ``/``)."""
        return normalize_table_url(self.warehouse)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HandlerConfig:
        """Read and check every variable; a bad one raises ConfigurationError naming it."""
        env = os.environ if environ is None else environ
        warehouse = _required(env, ENV_WAREHOUSE)
        if "://" not in warehouse:
            raise ConfigurationError(
                f"{ENV_WAREHOUSE} must be a warehouse URL such as s3://bucket/prefix, got "
                f"{warehouse!r}"
            )
        options = _catalog_options(env.get(ENV_CATALOG_OPTIONS))
        consumer_id = _required(env, ENV_CONSUMER_ID)
        try:
            validate_consumer_id(consumer_id)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{ENV_CONSUMER_ID}: {exc}") from exc
        processor_spec = _required(env, ENV_PROCESSOR)
        processor = _load_processor(processor_spec)
        start = (env.get(ENV_START) or "").strip() or DEFAULT_START
        try:
            parse_start(start)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{ENV_START}: {exc}") from exc
        on_expired = (env.get(ENV_ON_EXPIRED) or "").strip() or "error"
        on_rewritten = (env.get(ENV_ON_HISTORY_REWRITTEN) or "").strip() or "error"
        try:
            check_policies(on_expired, on_rewritten)
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"{ENV_ON_EXPIRED} / {ENV_ON_HISTORY_REWRITTEN}: {exc}"
            ) from exc
        return cls(
            warehouse=warehouse.rstrip("/"),
            catalog_options=options,
            consumer_id=consumer_id,
            processor=processor,
            processor_spec=processor_spec,
            tables=_allow_list(env.get(ENV_TABLES)),
            start=start,
            deadline_margin_ms=_margin(env),
            on_expired=on_expired,  # type: ignore[arg-type]
            on_history_rewritten=on_rewritten,  # type: ignore[arg-type]
        )

    def describe(self) -> dict[str, Any]:
        """The settings as a dict safe to log (secret options masked)."""
        return {
            "warehouse": self.warehouse,
            "catalog_options": redact(self.catalog_options),
            "consumer_id": self.consumer_id,
            "processor": self.processor_spec,
            "tables": sorted(self.tables) if self.tables is not None else None,
            "start": self.start,
            "deadline_margin_ms": self.deadline_margin_ms,
            "on_expired": self.on_expired,
            "on_history_rewritten": self.on_history_rewritten,
        }


def _required(env: Mapping[str, str], name: str) -> str:
    value = (env.get(name) or "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set; see {_DOCUMENTED_IN}")
    return value


def _catalog_options(text: str | None) -> dict[str, str]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        # The text may hold secrets: name the position, never echo it.
        raise ConfigurationError(
            f"{ENV_CATALOG_OPTIONS} is not valid JSON ({getattr(exc, 'msg', exc)} at char "
            f"{getattr(exc, 'pos', '?')}); give an object such as "
            f'{{"fs.s3.region": "eu-west-1"}}'
        ) from None
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{ENV_CATALOG_OPTIONS} must be a JSON object of option names to values, got a "
            f"JSON {type(value).__name__}"
        )
    options: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool):
            options[key] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            options[key] = str(item)
        else:
            raise ConfigurationError(
                f"{ENV_CATALOG_OPTIONS}: option {key!r} must be a string, number or boolean, "
                f"got a JSON {type(item).__name__}"
            )
    options.pop("warehouse", None)  # PAIMON_FEED_WAREHOUSE names it
    return options


def _load_processor(spec: str) -> Callable[[FeedBatch], Any]:
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise ConfigurationError(
            f"{ENV_PROCESSOR} must be 'module:function' (e.g. 'my_pkg.sink:process'), got {spec!r}"
        )
    try:
        target: Any = importlib.import_module(module_name.strip())
    except ImportError as exc:
        raise ConfigurationError(
            f"{ENV_PROCESSOR}={spec!r}: cannot import module {module_name!r}: {exc}. Package it "
            f"with the function or in a layer"
        ) from exc
    for part in attribute.strip().split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigurationError(
                f"{ENV_PROCESSOR}={spec!r}: module {module_name!r} has no attribute "
                f"{attribute!r}"
            ) from None
    if not callable(target):
        raise ConfigurationError(
            f"{ENV_PROCESSOR}={spec!r} names a {type(target).__name__}, not a function"
        )
    return target


def _allow_list(text: str | None) -> frozenset[str] | None:
    if text is None or not text.strip():
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        try:
            parse_table_name(name)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{ENV_TABLES}: {exc}") from exc
    return frozenset(names)


def _margin(env: Mapping[str, str]) -> int | None:
    """The deadline margin in milliseconds: ``PAIMON_FEED_DEADLINE_MARGIN`` in the project's one
    duration grammar (``10s``, ``500ms``; a bare number is seconds), or
    ``PAIMON_FEED_DEADLINE_MARGIN_MS``, whose name gives a bare number's unit (milliseconds;
    ``10s`` is accepted there too). Not both."""
    given = {
        name: (env.get(name) or "").strip()
        for name in (ENV_DEADLINE_MARGIN, ENV_DEADLINE_MARGIN_MS)
        if (env.get(name) or "").strip()
    }
    if len(given) > 1:
        raise ConfigurationError(
            f"set one of {ENV_DEADLINE_MARGIN} and {ENV_DEADLINE_MARGIN_MS}, not both "
            f"(got {given[ENV_DEADLINE_MARGIN]!r} and {given[ENV_DEADLINE_MARGIN_MS]!r})"
        )
    if not given:
        return None
    ((name, text),) = given.items()
    bare_unit = "ms" if name == ENV_DEADLINE_MARGIN_MS else "s"
    return parse_duration_ms(text, bare_unit=bare_unit, what=name)
