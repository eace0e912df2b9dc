"""Scratch directories for benchmarks and the tests that run them: made under the system temp
dir and removed again, so a run leaves no ``paimon-feed-*`` directory behind."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Callable
from typing import TypeVar

__all__ = ["removes_scratch", "scratch_dir"]

_made: list[str] = []
F = TypeVar("F", bound=Callable)


def scratch_dir(prefix: str) -> str:
    """A new temp directory, removed when the enclosing :func:`removes_scratch` call returns,
    or at the latest when the process exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    _made.append(path)
    return path


def _remove_from(mark: int) -> None:
    while len(_made) > mark:
        shutil.rmtree(_made.pop(), ignore_errors=True)


def removes_scratch(function: F) -> F:
    """Remove the scratch directories ``function`` made when it returns or raises."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        mark = len(_made)
        try:
            return function(*args, **kwargs)
        finally:
            _remove_from(mark)

    return wrapper  # type: ignore[return-value]


atexit.register(_remove_from, 0)
