"""The options of a :class:`~paimon_feed.feed.ChangeFeed`, checked once into a frozen
:class:`FeedOptions`: a wrong-typed argument is a :class:`ConfigurationError` naming it, not an
AttributeError or TypeError from deep inside planning."""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec

from paimon_feed._layout import DATABASE_SUFFIX
from paimon_feed._units import parse_duration
from paimon_feed.errors import ConfigurationError, UnknownArgumentError
from paimon_feed.notifiers import Notifier, create_notifier
from paimon_feed.planner.planner import OverwritePolicy
from paimon_feed.progress import ExpiredPolicy, HistoryPolicy, check_policies
from paimon_feed.start import StartPosition, StartSpec, parse_end, parse_start
from paimon_feed.tables import check_data_table, check_table_endpoint

__all__ = [
    "FeedOptions",
    "check_type",
    "check_duration",
    "check_names",
    "check_table",
    "check_predicate",
    "check_buckets",
    "check_notifier",
    "suggest_keywords",
    "unknown_keyword",
]

P = ParamSpec("P")


@dataclass(frozen=True)
class FeedOptions:
    """A feed's options, checked; ``projection`` and ``buckets`` as lists, ``start`` and ``end``
    also parsed (see :class:`~paimon_feed.feed.ChangeFeed` for their meanings).

    The checks run in ``__post_init__``, in the order of the arguments, so the first wrong one
    is named.
    """

    consumer_id: str | None
    start: StartSpec
    end: int | str | None
    notifier: str | Notifier
    reconcile_interval: float  # seconds once checked; given as any Duration (see _units)
    poll_interval: float
    include_row_kind: bool
    projection: Sequence[str] | None
    predicate: Any
    buckets: Iterable[int] | None
    max_pending: int
    catch_up_threshold: int
    auto_commit: bool
    on_expired: ExpiredPolicy
    sqs_queue_url: str | None
    overwrite: OverwritePolicy
    on_history_rewritten: HistoryPolicy
    #: ``start`` parsed
    start_position: StartPosition = field(init=False)
    #: ``end`` parsed: the last snapshot id delivered (inclusive), or ``None``
    end_snapshot: int | None = field(init=False)

    def __post_init__(self) -> None:
        check_type("consumer_id", self.consumer_id, str, "a string such as 'orders-etl'", optional=True)
        object.__setattr__(self, "reconcile_interval", check_duration("reconcile_interval", self.reconcile_interval))
        object.__setattr__(self, "poll_interval", check_duration("poll_interval", self.poll_interval))
        check_type("include_row_kind", self.include_row_kind, bool, "True or False")
        check_type("auto_commit", self.auto_commit, bool, "True or False")
        # Normalised in place: a frozen value is set once, here.
        object.__setattr__(self, "projection", check_names("projection", self.projection))
        check_predicate(self.predicate)
        object.__setattr__(self, "buckets", check_buckets(self.buckets))
        check_type("max_pending", self.max_pending, int, "a whole number of batches")
        check_type("catch_up_threshold", self.catch_up_threshold, int, "a whole number of snapshots")
        check_type("sqs_queue_url", self.sqs_queue_url, str, "the queue's URL", optional=True)
        if self.max_pending < 1:
            raise ConfigurationError(f"max_pending must be >= 1, got {self.max_pending}")
        check_policies(self.on_expired, self.on_history_rewritten)
        object.__setattr__(self, "start_position", parse_start(self.start))
        object.__setattr__(self, "end_snapshot", parse_end(self.end))

    @property
    def notifier_options(self) -> dict[str, Any]:
        """The options a notifier made by name gets."""
        return {"poll_interval": self.poll_interval, "sqs_queue_url": self.sqs_queue_url}


def suggest_keywords(init: Callable[P, None]) -> Callable[P, None]:
    """``init`` (an ``__init__``) refusing a keyword argument it does not take with an
    :class:`UnknownArgumentError` that names the argument meant (``consumer`` ->
    ``consumer_id``), where Python's own ``TypeError`` names none."""
    parameters = list(inspect.signature(init).parameters.values())[1:]  # after self
    names = [p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    owner = init.__qualname__.rsplit(".", 1)[0]

    @functools.wraps(init)
    def checked(*args: P.args, **kwargs: P.kwargs) -> None:
        for key in kwargs:
            if key not in names:
                raise unknown_keyword(owner, key, names)
        init(*args, **kwargs)

    return checked


def unknown_keyword(owner: str, key: str, names: Sequence[str]) -> UnknownArgumentError:
    """The error for ``owner(key=...)``, which takes only ``names``, with the name meant."""
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    meant = [name for name in names if name.startswith(key) or key.startswith(name)]
    guesses = meant or close
    hint = f" (did you mean {guesses[0]!r}?)" if guesses else ""
    return UnknownArgumentError(
        f"{owner}() got an unknown keyword argument {key!r}{hint}; it takes {', '.join(names)}"
    )


def check_type(
    name: str, value: Any, kind: type | tuple[type, ...], wanted: str, *, optional: bool = False
) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) and kind is not bool:
        ok = False  # True is an int to Python, not a count or an id
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ConfigurationError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}")


def check_duration(name: str, value: Any) -> float:
    """Seconds in ``value``, a duration of the project's one grammar (``2``, ``"2s"``,
    ``"500ms"``, ``timedelta(seconds=2)``: see :mod:`paimon_feed._units`), greater than zero."""
    seconds = parse_duration(value, what=name)
    if not seconds > 0:
        raise ConfigurationError(f"{name} must be greater than zero, got {value!r}")
    return seconds


def check_names(name: str, value: Any) -> list[str] | None:
    if value is None:
        return None
    names = list(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    if names is None or not all(isinstance(item, str) for item in names):
        raise ConfigurationError(
            f"{name} must be a list of column names such as ['id', 'amount'], got {value!r}"
        )
    return names


def check_table(table: Any) -> None:
    if not all(hasattr(table, attribute) for attribute in ("new_read_builder", "table_path", "file_io")):
        hint = "; " + _open_table_hint(table) if isinstance(table, str) else ""
        raise ConfigurationError(
            f"table must be a pypaimon table (catalog.get_table('db.table')), got "
            f"{type(table).__name__} {table!r}{hint}"
        )
    check_data_table(table)
    check_table_endpoint(table)


def _open_table_hint(text: str) -> str:
    """How to open the table a string names: a table directory (``wh/db.db/t``) is a warehouse
    and a ``db.t`` name; ``db.t`` alone needs its warehouse.

    >>> _open_table_hint("wh/own.db/users")
    "open it first: paimon_feed.open_table('wh', 'own.users')"
    >>> _open_table_hint("s3://bucket/wh/sales.db/orders/")
    "open it first: paimon_feed.open_table('s3://bucket/wh', 'sales.orders')"
    >>> _open_table_hint("sales.orders")
    "open it first: paimon_feed.open_table('/path/to/warehouse', 'sales.orders')"
    """
    parts = text.rstrip("/").rsplit("/", 2)
    if len(parts) == 3 and parts[1].endswith(DATABASE_SUFFIX) and len(parts[1]) > len(DATABASE_SUFFIX):
        warehouse, database, name = parts[0] or "/", parts[1][: -len(DATABASE_SUFFIX)], parts[2]
        return f"open it first: paimon_feed.open_table({warehouse!r}, {database + '.' + name!r})"
    if "/" not in text and text.count(".") == 1:
        return f"open it first: paimon_feed.open_table('/path/to/warehouse', {text!r})"
    return (
        "open it first: paimon_feed.open_table(warehouse, 'database.table'), the warehouse "
        "being the directory or URL that holds <database>.db/<table>/"
    )


def check_predicate(predicate: Any) -> None:
    if predicate is not None and not all(
        hasattr(predicate, attribute) for attribute in ("method", "field", "literals")
    ):
        raise ConfigurationError(
            f"predicate must be a pypaimon Predicate "
            f"(table.new_read_builder().new_predicate_builder().greater_than('x', 3)), got "
            f"{type(predicate).__name__} {predicate!r}"
        )


def check_buckets(buckets: Any) -> list[int] | None:
    """``buckets`` as a list of bucket ids (``None`` for all)."""
    if buckets is None:
        return None
    check_type("buckets", buckets, Iterable, "bucket ids such as [0, 1]")
    ids: list[int] = list(buckets)
    for bucket in ids:
        check_type("buckets", bucket, int, "bucket ids such as [0, 1]")
    return ids


def check_notifier(notifier: Any, table_url: str, options: dict[str, Any]) -> None:
    """Fail on a bad notifier now, not in the background task: a name is tried on the table's
    URL, anything else must be a :class:`Notifier`."""
    if isinstance(notifier, str):
        create_notifier(notifier, table_url, **options)
    elif not isinstance(notifier, Notifier):
        raise ConfigurationError(
            f"notifier must be 'auto', 'local', 'poll', 'sqs', 'hdfs' or a Notifier, got {notifier!r}"
        )
