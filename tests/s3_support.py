"""A real ``moto_server`` process for tests of the S3 → SQS path, and helpers around it.

The server runs in its own process on 127.0.0.1 and a free port, so pypaimon (through pyarrow's
S3 client) and the notifier (through aiobotocore) talk to it over real HTTP; nothing is mocked
in-process. Credentials are fake and only ever point at the local server.

Fixtures (exposed by ``tests/conftest.py``):

- ``moto_server``: one server for the whole session.
- ``s3_queue``: per test, a fresh bucket and SQS queue on that server, with the bucket's
  notification configuration sending ``ObjectCreated`` events for snapshot files to the queue,
  and fake AWS credentials in the environment for the duration of the test.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paimon_feed.tables import commit_arrow

__all__ = [
    "MotoServer",
    "S3Queue",
    "commit_rows",
    "create_table",
    "free_port",
    "moto_server",
    "paimon_catalog",
    "s3_catalog_options",
    "s3_queue",
    "start_moto_server",
]

REGION = "us-east-1"
ACCOUNT_ID = "123456789012"  # moto's default account
ACCESS_KEY = "testing"
SECRET_KEY = "testing"
STARTUP_TIMEOUT = 30.0  # seconds

_REAL_AWS_VARIABLES = (
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL_SQS",
)
_names = itertools.count(1)
# moto's server, with the bucket's EventBridge flag reported as AWS reports it (see the module).
_MOTO_MAIN = Path(__file__).resolve().parent / "support" / "moto_main.py"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class MotoServer:
    """One ``moto_server`` process; ``stop()`` and ``start()`` may be repeated on the same port."""

    port: int
    host: str = "127.0.0.1"
    region: str = REGION
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    account_id: str = ACCOUNT_ID
    process: subprocess.Popen | None = field(default=None, repr=False)
    log_path: Path | None = field(default=None, repr=False)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def credentials_env(self) -> dict[str, str]:
        """Fake credentials and region, as environment variables the boto chain reads."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
        }

    # process -----------------------------------------------------------------------------
    def start(self, timeout: float = STARTUP_TIMEOUT) -> MotoServer:
        """Start the process and wait until it answers HTTP. State starts empty."""
        if self.process is not None and self.process.poll() is None:
            return self
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix=f"moto-{self.port}-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        env = {k: v for k, v in os.environ.items() if k not in _REAL_AWS_VARIABLES}
        env.update(self.credentials_env)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(_MOTO_MAIN), "-H", self.host, "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"moto_server on port {self.port} exited with {self.process.returncode}:\n"
                    f"{self.log_tail()}"
                )
            if self.answers():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server on port {self.port} did not answer in {timeout}s")

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=1) as response:
                return response.status < 500
        except urllib.error.HTTPError:
            return True  # it answered, even if with an error
        except OSError:
            return False

    def stop(self) -> None:
        """Kill the process and wait for it. Idempotent."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def close(self) -> None:
        """Stop the process and remove its log."""
        self.stop()
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    # AWS resources -----------------------------------------------------------------------
    def client(self, service: str) -> Any:
        """A synchronous boto3 client for this server."""
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
        )

    def create_bucket(self, name: str) -> str:
        self.client("s3").create_bucket(Bucket=name)
        return name

    def create_queue(self, name: str, attributes: dict[str, str] | None = None) -> S3Queue:
        """A standard SQS queue; returns its URL and ARN (bucket left empty)."""
        sqs = self.client("sqs")
        url = sqs.create_queue(QueueName=name, Attributes=attributes or {})["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        return S3Queue(server=self, bucket="", queue_url=url, queue_arn=arn)

    def notify_queue(
        self,
        bucket: str,
        queue_arn: str,
        *,
        prefix: str | None = None,
        suffix: str | None = None,
        events: tuple[str, ...] = ("s3:ObjectCreated:*",),
    ) -> None:
        """Send the bucket's events for keys matching prefix/suffix to the queue.

        Like AWS, moto sends an ``s3:TestEvent`` message to the queue when this is set.
        """
        rules = [{"Name": n, "Value": v} for n, v in (("prefix", prefix), ("suffix", suffix)) if v]
        config: dict[str, Any] = {"QueueArn": queue_arn, "Events": list(events)}
        if rules:
            config["Filter"] = {"Key": {"FilterRules": rules}}
        self.client("s3").put_bucket_notification_configuration(
            Bucket=bucket,
            NotificationConfiguration={"QueueConfigurations": [config]},
        )


@dataclass
class S3Queue:
    """A bucket whose events go to an SQS queue, on one moto server."""

    server: MotoServer
    bucket: str
    queue_url: str
    queue_arn: str

    def receive_bodies(self, wait_seconds: int = 1, max_messages: int = 10) -> list[dict]:
        """Receive (and delete) what is in the queue now, as parsed bodies."""
        sqs = self.server.client("sqs")
        bodies: list[dict] = []
        while True:
            response = sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=max_messages,
                WaitTimeSeconds=wait_seconds,
            )
            messages = response.get("Messages", [])
            if not messages:
                return bodies
            for message in messages:
                bodies.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def purge(self) -> None:
        """Drop every message (including moto's ``s3:TestEvent``)."""
        self.receive_bodies(wait_seconds=0)

    def approximate_messages(self) -> int:
        """Visible plus in-flight messages."""
        attributes = self.server.client("sqs").get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )

    def send(self, body: str) -> str:
        """Put a raw message body into the queue; returns its message id."""
        return self.server.client("sqs").send_message(QueueUrl=self.queue_url, MessageBody=body)[
            "MessageId"
        ]


def start_moto_server(port: int | None = None, attempts: int = 3) -> MotoServer:
    """Start a server on ``port``, or on a free port (retrying if another process took it)."""
    last_error: Exception | None = None
    for _ in range(attempts if port is None else 1):
        server = MotoServer(port=port or free_port())
        try:
            return server.start()
        except RuntimeError as exc:
            server.close()
            last_error = exc
    raise RuntimeError(f"could not start moto_server: {last_error}")


def s3_catalog_options(server: MotoServer, bucket: str, warehouse: str = "wh") -> dict[str, str]:
    """Options for pypaimon's filesystem catalog writing ``s3://<bucket>/<warehouse>`` to moto.

    pyarrow's S3FileSystem defaults to virtual-host addressing, which cannot work against
    ``127.0.0.1``; ``path-style-access`` turns it off.
    """
    return {
        "warehouse": f"s3://{bucket}/{warehouse}",
        "fs.s3.endpoint": server.endpoint_url,
        "fs.s3.accessKeyId": server.access_key,
        "fs.s3.accessKeySecret": server.secret_key,
        "fs.s3.region": server.region,
        "fs.s3.path-style-access": "true",
    }


def paimon_catalog(server: MotoServer, bucket: str, warehouse: str = "wh") -> Any:
    """pypaimon's filesystem catalog on ``s3://<bucket>/<warehouse>`` of the moto server."""
    from pypaimon import CatalogFactory

    return CatalogFactory.create(s3_catalog_options(server, bucket, warehouse))


def create_table(
    catalog: Any,
    identifier: str,
    *,
    primary_keys: list[str] | None = None,
    options: dict[str, str] | None = None,
) -> Any:
    """A table ``(id BIGINT, v STRING)``, creating its database if needed."""
    import pyarrow as pa
    from pypaimon import Schema

    catalog.create_database(identifier.split(".")[0], True)
    arrow_schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    schema = Schema.from_pyarrow_schema(arrow_schema, primary_keys=primary_keys, options=options)
    catalog.create_table(identifier, schema, False)
    return catalog.get_table(identifier)


def commit_rows(table: Any, ids: list[int]) -> None:
    """One batch commit of rows ``(id, "v<id>")``: one new snapshot."""
    import pyarrow as pa

    data = pa.table(
        {"id": pa.array(ids, pa.int64()), "v": pa.array([f"v{i}" for i in ids], pa.string())}
    )
    commit_arrow(table, data)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """One real ``moto_server`` process for the session, killed at teardown."""
    server = start_moto_server()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def s3_queue(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> S3Queue:
    """A fresh bucket and queue; snapshot-file events of the bucket go to the queue.

    The notification filter is the one the design recommends for a warehouse: suffix-less
    (S3 has no "contains /snapshot/" rule), so the queue also sees data and manifest files and
    the notifier has to skip them. moto's ``s3:TestEvent`` is purged before the test starts.
    """
    for name, value in moto_server.credentials_env.items():
        monkeypatch.setenv(name, value)
    for name in _REAL_AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    number = next(_names)
    suffix = f"{os.getpid()}-{number}"
    bucket = moto_server.create_bucket(f"feed-test-{suffix}")
    queue = moto_server.create_queue(f"feed-test-{suffix}")
    moto_server.notify_queue(bucket, queue.queue_arn)
    queue.bucket = bucket
    queue.purge()
    return queue
