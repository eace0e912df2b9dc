"""Spark benchmark, part 4: storage requests per idle minute, counted at a ``moto_server``: this
source on ``s3://`` (push and a storage check per trigger) and the Java connector on ``s3a://``
(run by :mod:`benchmarks.spark_bench`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator

from benchmarks._common.java_connector import CONNECTOR_PYSPARK, JavaConnector, JavaFollow
from benchmarks._common.s3_costs import SQS_REQUEST, idle_log_window, requests_of_table
from benchmarks._common.spark_setup import SMALL, commit_small, create_table, driver_stats, load, wait_for
from benchmarks.java_connector_worker import ArrivalSink

BUCKET = "spark-bench"


def start_moto():
    """A ``moto_server`` process, and its endpoint and fake credentials in this process's
    environment, so the Python workers of a Spark session started after it reach it."""
    from tests.s3_support import start_moto_server

    server = start_moto_server()
    os.environ.update({**server.credentials_env, "AWS_ENDPOINT_URL_SQS": server.endpoint_url})
    return server


def s3a_conf(server) -> dict[str, str]:
    """Hadoop S3A settings (as Spark conf) that point the Java connector's session at moto."""
    return {
        "spark.hadoop.fs.s3a.endpoint": server.endpoint_url,
        "spark.hadoop.fs.s3a.endpoint.region": server.region,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": server.access_key,
        "spark.hadoop.fs.s3a.secret.key": server.secret_key,
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }


@contextlib.contextmanager
def moto_and_connector(jars: list[str] | None, workdir: str) -> Iterator[tuple]:
    """A ``moto_server`` (started first: the Python workers of a Spark session started after it
    inherit its environment) and, given the connector's ``jars``, the Java connector's process
    pointed at it (:func:`s3a_conf`); both closed at exit."""
    server = start_moto()
    connector = None
    try:
        if jars:
            print(f"starting the Java connector's process (PySpark {CONNECTOR_PYSPARK}) ...", flush=True)
            connector = JavaConnector(jars, {"spark.sql.session.timeZone": "UTC", **s3a_conf(server)},
                                      os.path.join(workdir, "java-connector.log"))
        yield server, connector
    finally:
        if connector:
            connector.close()
        server.close()


def idle_window(server, idle_seconds: float, java: JavaConnector | None, workdir: str,
                stop: Callable[[], None], tables: dict[str, str], per: str) -> dict:
    """Requests per ``per`` (``minute`` or ``hour``) for each mode's table of ``tables``, while
    ours follow them and, with ``java``, the connector follows ``tables["java_connector"]``: 5 s
    for start-up reads (catalog, schema, LATEST) to fall out of the window, then moto's log over
    ``idle_seconds``; ``stop`` ends ours, then the connector's query is checked and stopped."""
    follow = None
    if java:
        java_table = tables["java_connector"]
        follow = JavaFollow(java, f"s3a://{BUCKET}/wh/db.db/{java_table}", "0 seconds",
                            os.path.join(workdir, f"checkpoint-{java_table}"), tag=java_table)
    time.sleep(5.0)
    before = load()
    window, decoded = idle_log_window(server, idle_seconds)
    stop()
    if follow:
        follow.arrivals()  # raises if its query failed during the window
        follow.stop()
    result: dict = {"window_s": window, "load_before": before, "load_after": load(), "modes": {}}
    per_s = {"minute": 60, "hour": 3600}[per]
    for mode, name in tables.items():
        counts = requests_of_table(decoded, name, window, per_s)
        counts[f"s3_requests_per_{per}"] = counts.pop("s3_requests_per_window")
        result["modes"][mode] = counts
    sqs = sum(1 for line in decoded if SQS_REQUEST.search(line))
    result[f"sqs_requests_per_{per}"] = sqs * per_s / window
    return result


def measure_idle_s3(spark, server, workdir: str, idle_seconds: float, java: JavaConnector | None) -> dict:
    """Queries following idle tables on moto, all at once, with ``processingTime="0 seconds"``:
    this source on ``s3://`` (push and a storage check per trigger) and the Java connector on
    ``s3a://`` (Hadoop's S3A, hadoop-aws). Requests naming each table are counted in moto's log,
    URL-decoded (S3A names its table in LIST requests' ``prefix=`` query)."""
    from pypaimon import CatalogFactory

    from paimon_feed.spark.options import FORMAT_NAME
    from tests.s3_support import s3_catalog_options

    try:
        server.create_bucket(BUCKET)
        queue = server.create_queue("spark-bench")
        options = s3_catalog_options(server, BUCKET)
        catalog = CatalogFactory.create(options)
        catalog.create_database("db", True)
        tables = {"push": "idle_push", "storage-per-trigger": "idle_poll"}
        if java:
            tables["java_connector"] = "idle_java"
        for name in tables.values():
            commit_small(create_table(catalog, f"db.{name}", SMALL), 0)
        server.notify_queue(BUCKET, queue.queue_arn, prefix="wh/db.db/idle_push/snapshot/")
        queue.purge()
        mode_options = {"push": {"notifier": "sqs", "queueUrl": queue.queue_url},
                        "storage-per-trigger": {"notifier": "storage-per-trigger"}}
        catalog_options = {f"catalog.{k}": v for k, v in options.items() if k != "warehouse"}
        queries = {}
        for mode, name in tables.items():
            if mode == "java_connector":
                continue
            stats = driver_stats(f"{options['warehouse']}/db.db/{name}")
            query = (
                spark.readStream.format(FORMAT_NAME).option("warehouse", options["warehouse"])
                .option("table", f"db.{name}").option("startingPosition", "latest")
                .options(**catalog_options, **mode_options[mode]).load()
                .writeStream.foreachBatch(ArrivalSink())
                .option("checkpointLocation", os.path.join(workdir, f"idle-checkpoint-{mode}"))
                .trigger(processingTime="0 seconds").start()
            )
            queries[mode] = (query, stats)
        for mode, (_, stats) in queries.items():
            wait_for(lambda stats=stats: bool(stats()), 120, f"the idle {mode} query to start")

        def stop() -> None:
            for query, _ in queries.values():
                query.stop()

        return idle_window(server, idle_seconds, java, workdir, stop, tables, "minute")
    finally:
        server.close()
