"""Consumer checkpoints in Paimon's own consumer files.

A checkpoint is ``{table}/consumer/consumer-{id}`` holding ``{"nextSnapshot": N}``: the first
snapshot the consumer has *not* processed. Java Paimon reads the same file, so its snapshot
expiration keeps every snapshot from ``N`` on while the consumer exists. We write the bytes Java
writes (Jackson's default pretty printer), so the two are interchangeable.

Local files are written to a temp file and renamed, so a crash never leaves a torn checkpoint.

Two ways to write:

- :meth:`CheckpointStore.save` stores a position unconditionally (last writer wins; it may move
  the checkpoint backwards on purpose, to rewind a consumer). On S3 with the ``[s3]`` extra it
  is one ``PUT`` through boto3; through pyarrow's file system the same write takes five
  requests (a ``HEAD`` and a ``LIST`` of the directory, then a three-request multipart upload).
- :meth:`CheckpointStore.advance` only ever moves it forward, and is safe with concurrent writers
  of the same consumer (two Lambda invocations for one table, say): no writer loses another's
  progress and none moves the checkpoint backwards.

  - ``s3://`` / ``s3a://`` tables: compare-and-swap with S3 conditional writes. The consumer
    file is read with its ETag and written with ``If-Match: <etag>`` (``If-None-Match: *`` when
    it does not exist yet); a writer that lost the race (HTTP 412, or 409 while another
    conditional write is in flight) reads again and retries, and gives up with
    :class:`CheckpointConflictError` after ``max_attempts``. Needs the ``[s3]`` extra (boto3);
    the client is built from the catalog's ``fs.s3.*`` options (endpoint, region, credentials,
    ``path-style-access``), falling back to boto's default credential chain. The store must
    honour conditional writes: AWS S3 does (since 2024), as do moto and MinIO; a store that
    ignores ``If-Match`` degrades to last-writer-wins.
  - Local files: read, compare and rename under an exclusive ``flock`` of the consumer directory,
    so writers on one host (threads or processes) serialize. On a network file system without
    working ``flock``, or on Windows, it degrades to last-writer-wins.
  - Other stores (``oss://``, ``hdfs://``...): read, compare, overwrite; never backwards against
    a writer that finished before the read, last-writer-wins against one that raced it.

Modules: :mod:`~paimon_feed.checkpoint.codec` (Java's exact bytes, consumer ids),
:mod:`~paimon_feed.checkpoint.local` (``flock`` and rename), :mod:`~paimon_feed.checkpoint.s3`
(conditional writes), :mod:`~paimon_feed.checkpoint.marks` (our side file for the history
checks, never the consumer file's bytes) and :mod:`~paimon_feed.checkpoint.store`
(:class:`CheckpointStore`, which picks among them).
"""

from paimon_feed.checkpoint.codec import (
    decode_checkpoint,
    encode_checkpoint,
    validate_consumer_id,
)
from paimon_feed.checkpoint.store import DEFAULT_MAX_ATTEMPTS, CheckpointStore

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "CheckpointStore",
    "decode_checkpoint",
    "encode_checkpoint",
    "validate_consumer_id",
]
