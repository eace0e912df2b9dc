"""Public names imported on first use (PEP 562), for packages whose light users must not pay for
their heavy modules: ``paimon_feed`` (Spark's worker processes import ``paimon_feed.spark``
only) and ``paimon_feed.planner`` (Spark's ``load()`` reads a schema without the planner).

::

    __getattr__, __dir__ = lazy_names(__name__, {"Planner": "paimon_feed.planner.planner"}, __all__)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, modules: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: a name of ``modules``
    (name -> the module that defines it) is imported when first used, then kept in the
    package's namespace."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public))

    return __getattr__, __dir__
