"""AWS integration: the Lambda handler (:mod:`paimon_feed.aws.lambda_handler`).

``lambda_handler`` is the thin entry point (and documents the function's settings and
promises); ``config`` reads the environment into a ``HandlerConfig``; ``invocation`` routes an
event's hints to tables and catches each table up on :mod:`paimon_feed.progress`.

``wire(...)`` (:mod:`~paimon_feed.aws.wiring`) sets up S3 push for a whole warehouse (``paimon-feed
wire``) and ``check(...)`` (:mod:`~paimon_feed.aws.checking`) proves it end to end (``paimon-feed
check``); both are imported on first use.

Point the function's handler setting at ``paimon_feed.aws.lambda_handler.handler``. Importing
this package imports nothing from boto3; the handler needs the ``[s3]`` extra at run time.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paimon_feed.aws.checking import check
    from paimon_feed.aws.wiring import wire

__all__ = ["check", "wire"]

_LAZY = {"wire": "paimon_feed.aws.wiring", "check": "paimon_feed.aws.checking"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
