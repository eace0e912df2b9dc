"""boto3 clients for ``wire`` and ``check``, and the one place their errors are translated.

Endpoint, region and credentials follow boto's conventions (``AWS_ENDPOINT_URL``,
``AWS_ENDPOINT_URL_S3``, ``AWS_DEFAULT_REGION``, the default credential chain) unless given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from paimon_feed.errors import ConfigurationError, MissingDependencyError, StorageError

__all__ = ["Clients", "aws_call", "error_code"]


def error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None


def aws_call(what: str, function: Callable[..., Any], **kwargs: Any) -> Any:
    """``function(**kwargs)``, with an AWS error turned into a :class:`StorageError` that says
    what was being done (an access error points at the documented permissions)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return function(**kwargs)
    except (ClientError, BotoCoreError) as exc:
        code = error_code(exc) or type(exc).__name__
        hint = ("; see the permissions listed in docs/s3.md (Wiring with paimon-feed wire)"
                if "Denied" in code or "Unauthorized" in code else "")
        raise StorageError(f"{what} failed: {code}: {exc}{hint}") from exc


class Clients:
    """Lazily made S3, SQS, EventBridge and STS clients of one session."""

    def __init__(self, *, endpoint_url: str | None = None, region_name: str | None = None) -> None:
        try:
            import boto3
        except ImportError as exc:
            raise MissingDependencyError(
                "wiring S3 push needs boto3: pip install 'paimon-feed[s3]'"
            ) from exc
        self._session = boto3.session.Session(region_name=region_name)
        self._endpoint_url = endpoint_url
        region = self._session.region_name
        if not region:
            raise ConfigurationError(
                "no AWS region: set AWS_DEFAULT_REGION (or pass region_name / --region)"
            )
        self.region: str = region

    def _client(self, service: str) -> Any:
        return self._session.client(service, endpoint_url=self._endpoint_url)

    @functools.cached_property
    def s3(self) -> Any:
        return self._client("s3")

    @functools.cached_property
    def sqs(self) -> Any:
        return self._client("sqs")

    @functools.cached_property
    def events(self) -> Any:
        return self._client("events")

    @functools.cache  # noqa: B019 - one Clients per run
    def account(self) -> str:
        identity = aws_call("find the AWS account (sts:GetCallerIdentity)",
                            self._client("sts").get_caller_identity)
        return str(identity["Account"])
