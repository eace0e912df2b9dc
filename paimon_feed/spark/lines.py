"""What each Spark line offers paimon-feed, from PySpark's version (read once per process).

Spark grew its Python data source API over three releases; the source uses what the running
line has and says so when an option needs more:

======  ===========================================================================
line    Python data source API
======  ===========================================================================
3.5     none: ``format("paimon_feed")`` cannot exist; ``foreach_batch`` serves it
4.0     batch and streaming readers; a stream reader's ``latestOffset()`` gets no start
        offset and no read limit, and ``Trigger.AvailableNow`` falls back to one
        micro-batch (Spark's single-batch execution for sources without support)
4.1     as 4.0, plus filter pushdown for batch reads and Unix domain sockets between
        the JVM and its Python workers
4.2+    read limits (``latestOffset(start, limit)``, ``getDefaultReadLimit``) and
        ``SupportsTriggerAvailableNow``
======  ===========================================================================

No PySpark type is touched here: :func:`installed_line` reads ``pyspark.__version__`` and
:func:`parse_line` turns any version string into a :class:`SparkLine`.

>>> line = parse_line("4.0.5")
>>> line.data_source, line.read_limits, line.unix_sockets
(True, False, False)
>>> parse_line("4.2.0").read_limits, parse_line("3.5.6").data_source
(True, False)
>>> parse_line("4.1.0.dev1").filter_pushdown
True
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import overload

from paimon_feed.errors import ConfigurationError, SparkVersionError

__all__ = [
    "SparkLine",
    "installed_line",
    "parse_line",
    "DATA_SOURCE_SINCE",
    "PUSHDOWN_SINCE",
    "READ_LIMITS_SINCE",
    "UNIX_SOCKETS_SINCE",
]

#: Lines (major, minor) where each API arrived.
DATA_SOURCE_SINCE = (4, 0)
PUSHDOWN_SINCE = (4, 1)
UNIX_SOCKETS_SINCE = (4, 1)
READ_LIMITS_SINCE = (4, 2)

_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")


class _Since:
    """A :class:`SparkLine` flag: ``True`` on the line (major, minor) ``since`` and every later one."""

    def __init__(self, since: tuple[int, int], doc: str) -> None:
        self.since = since
        self.__doc__ = doc

    @overload
    def __get__(self, line: None, owner: type | None = None) -> _Since: ...

    @overload
    def __get__(self, line: SparkLine, owner: type | None = None) -> bool: ...

    def __get__(self, line: SparkLine | None, owner: type | None = None) -> bool | _Since:
        return self if line is None else (line.major, line.minor) >= self.since


@dataclass(frozen=True)
class SparkLine:
    """One PySpark release line (``version`` as PySpark reports it)."""

    version: str
    major: int
    minor: int

    @property
    def name(self) -> str:
        """``"4.0"``: the line, as the docs' table names it."""
        return f"{self.major}.{self.minor}"

    # What the line offers, one flag per API: True from the line it arrived in (above) on.
    data_source = _Since(DATA_SOURCE_SINCE, "``spark.dataSource.register`` and Python batch/stream readers exist.")
    filter_pushdown = _Since(PUSHDOWN_SINCE, "``DataSourceReader.pushFilters`` exists (batch reads).")
    unix_sockets = _Since(UNIX_SOCKETS_SINCE, "``spark.python.unix.domain.socket.enabled`` exists.")
    read_limits = _Since(READ_LIMITS_SINCE,
                         "Admission control for Python stream readers, and ``SupportsTriggerAvailableNow``.")

    def require_data_source(self, running: str = "this is PySpark") -> None:
        """Raise :class:`SparkVersionError` on a line without the Python data source API;
        ``running`` says whose version :attr:`version` is (a Spark Connect server's, say)."""
        if not self.data_source:
            since = ".".join(map(str, DATA_SOURCE_SINCE))
            raise SparkVersionError(
                f"format('paimon_feed') needs Spark {since} or newer (the Python data source "
                f"API), and {running} {self.version}. On Spark {self.name} use "
                f"paimon_feed.spark.foreach_batch(spark, fn, warehouse=..., table=..., "
                f"consumer_id=...): the same options and progress, with foreachBatch semantics "
                f"(see docs/spark.md)"
            )


def parse_line(version: str) -> SparkLine:
    """The line of a PySpark version string (``"4.0.5"``, ``"4.1.0.dev1"``, ``"3.5.6-amzn-0"``)."""
    match = _VERSION.match(str(version))
    if match is None:
        raise ConfigurationError(f"cannot read a Spark line from PySpark version {version!r}")
    return SparkLine(str(version).strip(), int(match.group(1)), int(match.group(2)))


@functools.cache
def installed_line() -> SparkLine | None:
    """The line of the PySpark this process imports, or ``None`` without PySpark."""
    try:
        from pyspark.version import __version__
    except ImportError:
        return None
    return parse_line(__version__)
