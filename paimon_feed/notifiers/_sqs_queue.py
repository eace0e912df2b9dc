"""The SQS side of :class:`~paimon_feed.notifiers.sqs.SqsNotifier`: one queue, one aiobotocore
client, long-poll receives and batched deletes. What a message means is the notifier's business.

Needs the ``[s3]`` extra (``aiobotocore``). Endpoint, region and credentials follow the boto
conventions: explicit arguments, else the environment and the default credential chain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from types import TracebackType
from typing import Any

from paimon_feed.errors import MissingDependencyError, install_hint

__all__ = ["MAX_BATCH", "SqsQueue", "is_transport_error", "region_from_queue_url", "start_problem"]

logger = logging.getLogger("paimon_feed.notifiers.sqs")

MAX_BATCH = 10  # SQS caps receive and delete batches at 10 messages
_CONNECT_TIMEOUT = 5.0  # seconds
_READ_TIMEOUT_MARGIN = 10.0  # seconds on top of the long-poll wait
_QUEUE_URL_REGION = re.compile(r"^(?:sqs\.)?([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:queue\.)?amazonaws\.")


def region_from_queue_url(queue_url: str) -> str | None:
    """The AWS region an SQS queue URL names, if it names one.

    >>> region_from_queue_url("https://sqs.eu-west-1.amazonaws.com/1/q")
    'eu-west-1'
    >>> region_from_queue_url("http://127.0.0.1:5000/1/q") is None
    True
    """
    host = queue_url.split("://", 1)[-1].split("/", 1)[0]
    match = _QUEUE_URL_REGION.match(host)
    return match.group(1) if match else None


def import_aiobotocore() -> tuple[Any, Any]:
    """aiobotocore's ``get_session`` and ``AioConfig``, or an error naming the extra."""
    try:
        from aiobotocore.config import AioConfig
        from aiobotocore.session import get_session
    except ImportError as exc:
        raise MissingDependencyError(
            f"SqsNotifier needs aiobotocore; {install_hint('s3')}"
        ) from exc
    return get_session, AioConfig


def is_transport_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an expected failure of talking to SQS (no traceback needed)."""
    if isinstance(exc, (OSError, asyncio.TimeoutError)):
        return True
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:  # pragma: no cover - botocore comes with aiobotocore
        return False
    return isinstance(exc, (BotoCoreError, ClientError))


class SqsQueue:
    """One SQS queue through one aiobotocore client, made at the first :meth:`receive` and
    closed when the ``async with`` block ends. Errors of a receive propagate (the caller owns
    retries and health); a failed delete is logged and counted, since the message comes back.
    """

    def __init__(
        self,
        queue_url: str,
        *,
        endpoint_url: str | None,
        region_name: str | None,
        credentials: dict[str, str | None],
        wait_time_seconds: int,
        max_messages: int,
    ) -> None:
        self._get_session, self._config_class = import_aiobotocore()
        self.queue_url = queue_url
        self._endpoint_url = endpoint_url
        self._region_name = region_name
        self._credentials = credentials
        self._wait_time_seconds = wait_time_seconds
        self._max_messages = max_messages
        self._stack: contextlib.AsyncExitStack | None = None
        self._client: Any = None  # an aiobotocore SQS client (untyped)

    def __repr__(self) -> str:
        return f"SqsQueue({self.queue_url!r})"

    async def __aenter__(self) -> SqsQueue:
        self._stack = await contextlib.AsyncExitStack().__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, traceback)

    def _new_client(self) -> Any:
        config = self._config_class(
            connect_timeout=_CONNECT_TIMEOUT,
            read_timeout=self._wait_time_seconds + _READ_TIMEOUT_MARGIN,
            # The caller retries with its own backoff and health accounting.
            retries={"mode": "standard", "total_max_attempts": 1},
        )
        return self._get_session().create_client(
            "sqs",
            region_name=self._region_name,
            endpoint_url=self._endpoint_url,
            config=config,
            **self._credentials,
        )

    def client_for(self, service: str, endpoint_url: str | None) -> Any:
        """An aiobotocore client (an async context manager) of another service with this
        queue's region and credentials: the pipe check's S3 client."""
        config = self._config_class(connect_timeout=_CONNECT_TIMEOUT, read_timeout=30.0,
                                    retries={"mode": "standard", "total_max_attempts": 2})
        return self._get_session().create_client(
            service, region_name=self._region_name, endpoint_url=endpoint_url, config=config,
            **self._credentials,
        )

    async def receive(self, *, wait: bool = True) -> list[dict[str, Any]]:
        """One long-poll receive: up to ``max_messages`` messages (none after the wait);
        ``wait=False`` returns at once (the first receive, which tells whether the queue works)."""
        if self._client is None:
            assert self._stack is not None, "receive() inside 'async with queue:'"
            self._client = await self._stack.enter_async_context(self._new_client())
        response = await self._client.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self._max_messages,
            WaitTimeSeconds=self._wait_time_seconds if wait else 0,
        )
        messages: list[dict[str, Any]] = response.get("Messages") or []
        return messages

    async def delete(self, messages: list[dict[str, Any]]) -> tuple[int, int]:
        """Delete ``messages`` (received by :meth:`receive`) in batches; ``(deleted, failed)``."""
        deleted = failed = 0
        for start in range(0, len(messages), MAX_BATCH):
            chunk = messages[start : start + MAX_BATCH]
            entries = [
                {"Id": str(index), "ReceiptHandle": message["ReceiptHandle"]}
                for index, message in enumerate(chunk)
            ]
            try:
                response = await self._client.delete_message_batch(
                    QueueUrl=self.queue_url, Entries=entries
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the messages come back; hints are idempotent
                failed += len(entries)
                logger.warning(
                    "%r: deleting %d messages failed; they will be received again: %s: %s",
                    self,
                    len(entries),
                    type(exc).__name__,
                    exc,
                    exc_info=not is_transport_error(exc),
                )
                continue
            deleted += len(response.get("Successful") or [])
            for failure in response.get("Failed") or []:
                failed += 1
                message = chunk[int(failure.get("Id", 0))]
                logger.warning(
                    "%r: deleting message %s failed (%s: %s); it will be received again",
                    self,
                    message.get("MessageId"),
                    failure.get("Code"),
                    failure.get("Message"),
                )
        return deleted, failed


#: Error codes that mean the queue is not there (the query and the JSON protocol spell it apart).
_MISSING_QUEUE = frozenset({"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"})
#: Error codes that mean these credentials may not read the queue (or are not credentials).
_DENIED = frozenset({
    "AccessDenied", "AccessDeniedException", "InvalidClientTokenId", "UnrecognizedClientException",
    "SignatureDoesNotMatch", "InvalidAccessKeyId", "ExpiredToken", "InvalidSecurity",
    "MissingAuthenticationToken", "KMS.AccessDeniedException", "KmsAccessDenied",
})


def start_problem(queue_url: str, exc: BaseException) -> str | None:
    """What a failed first receive says about the configuration, with what to do: the queue
    does not exist, or these credentials may not read it (or there are none). ``None`` for
    anything else (a connection refused, a timeout): that may pass, and the notifier's health
    and the feed's fallback to polling handle it."""
    try:
        from botocore.exceptions import ClientError, NoCredentialsError
    except ImportError:  # pragma: no cover - botocore comes with aiobotocore
        return None
    if isinstance(exc, NoCredentialsError):
        return (
            f"no AWS credentials to read SQS queue {queue_url}: configure them (AWS_ACCESS_KEY_ID "
            f"and AWS_SECRET_ACCESS_KEY, a profile, or the instance's role)"
        )
    if not isinstance(exc, ClientError):
        return None
    error = exc.response.get("Error", {})
    codes = {str(error.get("Code", "")), str(error.get("QueryErrorCode", ""))}
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if codes & _MISSING_QUEUE:
        return (
            f"SQS queue {queue_url} does not exist ({exc}); check the queue URL (account, region "
            f"and name), or drop it to poll the table instead"
        )
    if codes & _DENIED or status == 403:
        return (
            f"these credentials may not read SQS queue {queue_url} ({exc}); allow "
            f"sqs:ReceiveMessage and sqs:DeleteMessage on it (and kms:Decrypt for an encrypted "
            f"queue), or check the credentials"
        )
    return None
