"""Whole reads of a table's immutable metadata files: snapshots, manifest lists, manifests.

pyarrow's S3 file system, which pypaimon reads ``s3://`` tables with, asks for an object's size
(a HEAD) before it reads it (a GET). A metadata file is always read whole, so on S3 one GET
does: with the ``[s3]`` extra installed, these reads go through a boto3 client configured from
the table's catalog options (:mod:`paimon_feed._s3`), halving the requests a planning
round makes. Everywhere else (local files, HDFS, OSS, GCS, no boto3) pypaimon's FileIO reads.
``PAIMON_FEED_S3_GET=0`` turns the boto3 path off.

Data files are not read here: their readers need ranged reads.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

from paimon_feed._s3 import (
    S3_MISSING_CODES,
    file_io_options,
    s3_client_for_options,
    s3_error_code,
)

__all__ = ["FilesystemPaths", "MetadataFiles"]

logger = logging.getLogger(__name__)

class MetadataFiles:
    """Reads whole metadata files of the table ``file_io`` belongs to (one request each on S3).

    :meth:`read` returns the file's bytes and raises ``FileNotFoundError`` for a missing file,
    as pypaimon's FileIO does; other storage errors propagate (boto's or pyarrow's).
    """

    def __init__(self, file_io: Any) -> None:
        self.file_io = file_io
        self._client = _s3_client(file_io)
        # pypaimon's local FileIO turns every path into a file system path (URL parsing, pathlib)
        # and stats it before opening: more than the read itself costs.
        self._local = (
            FilesystemPaths(file_io) if type(file_io).__name__ == "LocalFileIO" else None
        )

    @property
    def one_request(self) -> bool:
        """Whether a read is one GET (boto3 on S3) rather than pypaimon's FileIO."""
        return self._client is not None

    def read(self, path: str) -> bytes:
        if self._local is not None:
            with open(self._local(path), "rb") as stream:
                return stream.read()
        if self._client is None:
            with self.file_io.new_input_stream(path) as stream:
                return stream.read()
        response = self._request("get_object", path)
        with contextlib.closing(response["Body"]) as body:
            return body.read()

    def exists(self, path: str) -> bool:
        """Whether the file ``path`` exists: one HEAD on S3 (pyarrow's file system follows the
        HEAD of a missing key with a LIST, to see whether it is a directory), pypaimon's FileIO
        elsewhere."""
        if self._client is None:
            return bool(self.file_io.exists(path))
        try:
            self._request("head_object", path)
        except FileNotFoundError:
            return False
        return True

    def _request(self, operation: str, path: str) -> Any:
        """The boto3 client's ``operation`` on ``path``'s object; ``FileNotFoundError`` if the
        object does not exist."""
        from botocore.exceptions import ClientError

        bucket, _, key = self.file_io.to_filesystem_path(path).partition("/")
        try:
            return getattr(self._client, operation)(Bucket=bucket, Key=key)
        except ClientError as exc:
            if s3_error_code(exc) in S3_MISSING_CODES:
                raise FileNotFoundError(f"{path} does not exist") from exc
            raise


class FilesystemPaths:
    """``file_io.to_filesystem_path`` for the files of a table, each directory converted once.

    pypaimon parses every path as a URL (and locally builds a ``pathlib`` path) to convert it;
    a plan names thousands of files in a few directories. A plain file name (no URL syntax, no
    escapes) joined to its converted directory is what converting the whole path gives; any
    other name is converted whole.
    """

    def __init__(self, file_io: Any) -> None:
        self.file_io = file_io
        self._directories: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        directory, _, name = path.rpartition("/")
        if not directory or not name or name in (".", "..") or any(c in name for c in "%?#:;\\"):
            return self.file_io.to_filesystem_path(path)
        converted = self._directories.get(directory)
        if converted is None:
            if len(self._directories) >= 4096:  # bounded: a table's directories, not its files
                self._directories.clear()
            converted = self._directories[directory] = self.file_io.to_filesystem_path(directory)
        if converted in ("", "."):  # a relative or bucket-level directory: convert it whole
            return self.file_io.to_filesystem_path(path)
        return f"{converted.rstrip('/')}/{name}"


def _s3_client(file_io: Any) -> Any:
    """A boto3 client reaching the same S3 endpoint as ``file_io``, or ``None`` where pypaimon's
    FileIO should read (not pyarrow's S3 file system, OSS, boto3 missing, or turned off)."""
    if os.environ.get("PAIMON_FEED_S3_GET", "1").strip() == "0":
        return None
    filesystem = getattr(file_io, "filesystem", None)
    if type(filesystem).__name__ != "S3FileSystem" or getattr(file_io, "_is_oss", False):
        return None
    if getattr(file_io, "_use_jindo", False):
        return None
    try:
        return s3_client_for_options(file_io_options(file_io), "reading metadata files with one GET")
    except ImportError:
        logger.debug("boto3 is not installed: S3 metadata files are read with pypaimon's FileIO")
        return None
