"""A fresh bucket on the session's moto_server, with the environment ``wire``/``check`` and
pypaimon read (fake credentials, the server as every service's endpoint)."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any

import pytest
from s3_support import MotoServer

_numbers = itertools.count(1)


@dataclass
class Lake:
    server: MotoServer
    bucket: str

    @property
    def warehouse(self) -> str:
        return f"s3://{self.bucket}/wh"

    def client(self, service: str) -> Any:
        return self.server.client(service)

    def notification(self) -> dict[str, Any]:
        document = self.client("s3").get_bucket_notification_configuration(Bucket=self.bucket)
        document.pop("ResponseMetadata", None)
        return document

    def queue_url(self, name: str) -> str:
        return str(self.client("sqs").get_queue_url(QueueName=name)["QueueUrl"])

    def bodies(self, queue: str, wait: int = 1) -> list[str]:
        """Receive and delete every message of a queue now."""
        sqs, url, bodies = self.client("sqs"), self.queue_url(queue), []
        while True:
            messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait).get("Messages", [])
            if not messages:
                return bodies
            for message in messages:
                bodies.append(message["Body"])
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def lake(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> Lake:
    for name, value in moto_server.credentials_env.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_SQS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.endpoint_url)
    bucket = moto_server.create_bucket(f"wire-{os.getpid()}-{next(_numbers)}")
    return Lake(server=moto_server, bucket=bucket)
