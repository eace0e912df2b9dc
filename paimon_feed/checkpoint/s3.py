"""Consumer files on S3: one-GET reads, and compare-and-swap with conditional writes.

The consumer file is read with its ETag and written with ``If-Match: <etag>`` (``If-None-Match:
*`` when it does not exist yet); a writer that lost the race (HTTP 412, or 409 while another
conditional write is in flight) reads again and retries, and gives up with
:class:`~paimon_feed.errors.CheckpointConflictError` after ``max_attempts``. The store must
honour conditional writes: AWS S3 does (since 2024), as do moto and MinIO; a store that ignores
``If-Match`` degrades to last-writer-wins. The boto3 client comes from
:mod:`paimon_feed._s3`, and so do the error codes.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from paimon_feed._s3 import S3_MISSING_CODES, s3_error_code
from paimon_feed.checkpoint.codec import decode_checkpoint
from paimon_feed.errors import CheckpointConflictError, CheckpointStorageError

__all__ = ["advance_object", "read_object", "s3_location"]

logger = logging.getLogger(__name__)

_S3_SCHEMES = ("s3", "s3a", "s3n")
#: A conditional write that lost a race: 412 when the ETag moved, 409 while another conditional
#: write of the key is in flight.
_CONFLICT_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})


def s3_location(path: str) -> tuple[str, str] | None:
    """``(bucket, key)`` of an ``s3://``/``s3a://``/``s3n://`` path; ``None`` for others.

    >>> s3_location("s3a://lake/wh/db.db/t/consumer/consumer-a"), s3_location("/wh/t")
    (('lake', 'wh/db.db/t/consumer/consumer-a'), None)
    """
    parsed = urlparse(path)
    if parsed.scheme.lower() not in _S3_SCHEMES:
        return None
    return parsed.netloc, parsed.path.lstrip("/")


def read_object(client: Any, bucket: str, key: str, where: str) -> tuple[int | None, str | None]:
    """The stored position and the ETag it was read at; ``(None, None)`` if absent. One GET:
    pyarrow reads a file as a HEAD for its size and then a ranged GET, so a read racing an
    overwrite could return the new text cut to the old length."""
    try:
        response = client.get_object(Bucket=bucket, Key=key)
        text = response["Body"].read().decode("utf-8", errors="replace")
    except Exception as exc:
        if s3_error_code(exc) in S3_MISSING_CODES:
            return None, None
        raise CheckpointStorageError(f"cannot read consumer file {where}: {exc}") from exc
    return decode_checkpoint(text, where), response["ETag"]


def advance_object(
    client: Any, bucket: str, key: str, *, read: Callable[[], tuple[int | None, str | None]],
    where: str, consumer_id: str, next_snapshot_id: int, text: str, max_attempts: int,
) -> int | None:
    """Write ``text`` unless the stored position is already at or past ``next_snapshot_id``,
    with compare-and-swap: ``None`` when written, else the stored position that was kept.
    ``read()`` is :func:`read_object` of the same key (tests interleave writers there)."""
    body = text.encode("utf-8")
    for attempt in range(1, max_attempts + 1):
        stored, etag = read()
        if stored is not None and stored >= next_snapshot_id:
            return stored
        condition = {"IfMatch": etag} if etag is not None else {"IfNoneMatch": "*"}
        try:
            client.put_object(Bucket=bucket, Key=key, Body=body, **condition)
        except Exception as exc:
            code = s3_error_code(exc)
            # 404 on If-Match: the file was deleted since we read it; read again.
            deleted = etag is not None and code in S3_MISSING_CODES
            if code not in _CONFLICT_CODES and not deleted:
                raise CheckpointStorageError(
                    f"cannot write consumer file {where} (next snapshot "
                    f"{next_snapshot_id}): {exc}"
                ) from exc
            logger.debug(
                "consumer %s: checkpoint write of snapshot %d lost a race (%s, attempt %d/%d)",
                consumer_id, next_snapshot_id, code, attempt, max_attempts,
            )
            if attempt < max_attempts:
                time.sleep(random.uniform(0.0, 0.05 * 2 ** (attempt - 1)))
            continue
        return None
    raise CheckpointConflictError(
        f"consumer {consumer_id}: checkpoint write of snapshot {next_snapshot_id} to "
        f"{where} lost {max_attempts} races in a row to other writers; the stored "
        f"position is unchanged by this call. Retry later, or run fewer concurrent writers "
        f"for this consumer"
    )
