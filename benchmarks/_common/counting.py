"""Counting storage calls made through pypaimon's FileIO: what the benchmarks report as
requests per idle hour, and what some tests assert stays at zero.

Two shapes: :class:`CountingFileIO` wraps a FileIO (a consumer process swaps its table's
``file_io`` for it); :class:`StorageCounter` wraps the methods of a FileIO instance in place,
so pypaimon's ``isinstance`` checks still hold and every thread's calls are counted (the Spark
driver, see :mod:`benchmarks._common.spark_stats`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

__all__ = ["STORAGE_METHODS", "CountingFileIO", "StorageCounter"]

#: pypaimon FileIO methods that reach storage; each call counts as one request.
STORAGE_METHODS = (
    "exists",
    "exists_batch",
    "read_file_utf8",
    "read_overwritten_file_utf8",
    "new_input_stream",
    "new_output_stream",
    "get_file_status",
    "get_file_size",
    "list_status",
    "list_directories",
    "is_dir",
    "write_file",
    "overwrite_file_utf8",
    "try_to_write_atomic",
    "rename",
    "delete",
    "mkdirs",
)


class CountingFileIO:
    """Counts every storage call a consumer makes through pypaimon's FileIO."""

    COUNTED = {
        "exists", "read_file_utf8", "list_status", "get_file_status", "new_input_stream",
        "is_dir", "read_overwritten_file_utf8", "list_directories",
    }

    def __init__(self, inner) -> None:
        self._inner = inner
        self.calls = 0

    def counted(self, read):
        """``read`` counting each call as one storage call too."""
        def call(*args, **kwargs):
            self.calls += 1
            return read(*args, **kwargs)
        return call

    def exists_batch(self, paths):
        self.calls += len(paths)
        return {path: self._inner.exists(path) for path in paths}

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if name in self.COUNTED and callable(attribute):
            return self.counted(attribute)
        return attribute


class StorageCounter:
    """Thread-safe counts of storage calls, by FileIO method."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: Counter[str] = Counter()

    def instrument(self, file_io: Any, methods: tuple[str, ...] = STORAGE_METHODS) -> Any:
        """Count the storage calls made through ``file_io``'s ``methods`` from now on;
        returns it.

        The methods are wrapped on the instance, so pypaimon's ``isinstance`` checks on its
        FileIO classes still hold. Code that took a bound method before this call is not
        counted.
        """
        if getattr(file_io, "_benchmark_counter", None) is self:
            return file_io
        for name in methods:
            method = getattr(file_io, name, None)
            if callable(method):
                setattr(file_io, name, self._counting(name, method))
        file_io._benchmark_counter = self
        return file_io

    def _counting(self, name: str, method: Callable) -> Callable:
        def call(*args, **kwargs):
            with self._lock:
                self._calls[name] += 1
            return method(*args, **kwargs)

        call.__name__ = name
        call.__wrapped__ = method
        return call

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._calls.values())

    def by_method(self) -> dict[str, int]:
        with self._lock:
            return dict(self._calls)
