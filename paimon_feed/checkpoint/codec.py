"""The consumer file's text, byte for byte as Java Paimon writes it, and safe consumer ids.

A checkpoint is ``{table}/consumer/consumer-{id}`` holding ``{"nextSnapshot": N}``: the first
snapshot the consumer has *not* processed. Java reads and writes the same file with Jackson's
default pretty printer, so :func:`encode_checkpoint` writes exactly those bytes and the two are
interchangeable. Pure: no I/O.
"""

from __future__ import annotations

import json
import re

from paimon_feed.errors import CheckpointError, InvalidConsumerIdError, brief_repr
from paimon_feed.start import MAX_SNAPSHOT_ID

__all__ = [
    "check_next_snapshot_id",
    "decode_checkpoint",
    "encode_checkpoint",
    "validate_consumer_id",
]

_CONSUMER_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")


def validate_consumer_id(consumer_id: str) -> str:
    """Return ``consumer_id`` if it makes a safe file name, else raise.

    >>> validate_consumer_id("orders-etl")
    'orders-etl'
    """
    if not isinstance(consumer_id, str) or not _CONSUMER_ID.fullmatch(consumer_id):
        raise InvalidConsumerIdError(
            f"invalid consumer id {consumer_id!r}: use 1-200 letters, digits, '.', '_' or '-', "
            f"not starting with '.' or '-' (it names the file consumer/consumer-<id>)"
        )
    return consumer_id


def encode_checkpoint(next_snapshot_id: int) -> str:
    """The exact text Java Paimon writes for a consumer at ``next_snapshot_id``.

    >>> print(encode_checkpoint(42))
    {
      "nextSnapshot" : 42
    }
    """
    return '{\n  "nextSnapshot" : %d\n}' % next_snapshot_id


def decode_checkpoint(text: str, where: str) -> int:
    """Parse a consumer file's text; ``where`` names the file in errors."""
    try:
        value = json.loads(text)["nextSnapshot"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CheckpointError(
            f"corrupt consumer file {where}: expected {{\"nextSnapshot\": N}}, got "
            f"{text[:80]!r}. Fix or delete the file (the consumer then starts from its start "
            f"position)"
        ) from exc
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SNAPSHOT_ID:
        raise CheckpointError(
            f"corrupt consumer file {where}: nextSnapshot must be an integer from 1 to "
            f"{MAX_SNAPSHOT_ID} (a Java long), got {value!r}"
        )
    return value


def check_next_snapshot_id(consumer_id: str, next_snapshot_id: int) -> int:
    """``next_snapshot_id`` if Java can read it back as a consumer's position, else raise.

    >>> check_next_snapshot_id("etl", 7)
    7
    """
    if (
        isinstance(next_snapshot_id, bool)
        or not isinstance(next_snapshot_id, int)
        or not 1 <= next_snapshot_id <= MAX_SNAPSHOT_ID
    ):
        raise CheckpointError(
            f"consumer {consumer_id}: next snapshot id must be an integer from 1 to "
            f"{MAX_SNAPSHOT_ID} (Java Paimon reads it as a long), got "
            f"{brief_repr(next_snapshot_id)}"
        )
    return next_snapshot_id
