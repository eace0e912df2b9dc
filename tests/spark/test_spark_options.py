"""Options of the paimon_feed Spark source: parsed typed, and every mistake named."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from paimon_feed.errors import ConfigurationError, InvalidConsumerIdError, InvalidStartError
from paimon_feed.spark.options import (
    InvalidOptionError,
    SourceOptions,
    UnknownOptionError,
    parse_options,
)

BASE = {"warehouse": "/tmp/wh", "table": "db.t"}


def lowered(options: dict) -> dict:
    """Spark hands a Python source its options with lower-cased keys."""
    return {key.lower(): value for key, value in options.items()}


def test_defaults_read_the_full_state_then_changes_with_push():
    options = parse_options(BASE)
    assert options == SourceOptions(table="db.t", catalog=(("warehouse", "/tmp/wh"),))
    assert options.starting_position == "latest-full"
    assert options.notifier == "auto" and options.push
    assert options.reconcile_interval == 60.0


def test_every_option_is_parsed_from_spark_lower_cased_keys():
    options = parse_options(
        lowered(
            {
                **BASE,
                "startingPosition": "snapshot:3",
                "endSnapshot": "9",
                "maxSnapshotsPerTrigger": "3",
                "includeRowKind": "TRUE",
                "consumerId": "orders-etl",
                "notifier": "poll",
                "queueUrl": "http://127.0.0.1:5000/123/q",
                "reconcileInterval": "500ms",
                "pollInterval": "2s",
                "minPartitions": "16",
                "maxPartitionBytes": "64m",
            }
        )
    )
    assert options.starting_position == "snapshot:3"
    assert options.end_snapshot == 9
    assert options.max_snapshots_per_trigger == 3
    assert options.include_row_kind is True
    assert options.consumer_id == "orders-etl"
    assert options.notifier == "poll"
    assert options.queue_url == "http://127.0.0.1:5000/123/q"
    assert options.reconcile_interval == 0.5
    assert options.poll_interval == 2.0
    assert options.min_partitions == 16
    assert options.max_partition_bytes == 64 * 1024 * 1024


def test_catalog_options_lose_their_prefix_and_get_pypaimon_spelling_back():
    options = parse_options(
        lowered(
            {
                **BASE,
                "catalog.fs.s3.endpoint": "http://127.0.0.1:9000",
                "catalog.fs.s3.accessKeyId": "key",
                "catalog.some.custom-option": "x",
            }
        )
    )
    assert options.catalog_options() == {
        "warehouse": "/tmp/wh",
        "fs.s3.endpoint": "http://127.0.0.1:9000",
        "fs.s3.accessKeyId": "key",
        "some.custom-option": "x",
    }


@pytest.mark.parametrize(
    ("value", "size"),
    [("134217728", 128 << 20), ("64k", 64 << 10), ("64KB", 64 << 10), ("12MiB", 12 << 20), ("1g", 1 << 30)],
)
def test_partition_sizes_take_spark_style_units(value, size):
    assert parse_options({**BASE, "maxpartitionbytes": value}).max_partition_bytes == size


def test_load_path_names_the_table():
    assert parse_options({"warehouse": "/tmp/wh", "path": "db.t"}).table == "db.t"


def test_unknown_option_is_named_with_a_suggestion():
    with pytest.raises(UnknownOptionError, match=r"'startingpositon'.*did you mean 'startingPosition'"):
        parse_options({**BASE, "startingpositon": "latest"})


@pytest.mark.parametrize(
    ("key", "value", "error", "named"),
    [
        ("startingPosition", "yesterday", InvalidStartError, "startingPosition"),
        ("startingPosition", "snapshot:0", InvalidStartError, "startingPosition"),
        ("endSnapshot", "last", InvalidStartError, "endSnapshot"),
        ("maxSnapshotsPerTrigger", "0", InvalidOptionError, "maxSnapshotsPerTrigger"),
        ("maxSnapshotsPerTrigger", "many", InvalidOptionError, "maxSnapshotsPerTrigger"),
        ("includeRowKind", "maybe", InvalidOptionError, "includeRowKind"),
        ("consumerId", "../escape", InvalidConsumerIdError, "consumerId"),
        ("notifier", "kafka", InvalidOptionError, "notifier"),
        ("reconcileInterval", "0", InvalidOptionError, "reconcileInterval"),
        ("reconcileInterval", "soon", InvalidOptionError, "reconcileInterval"),
        ("pollInterval", "-1", InvalidOptionError, "pollInterval"),
        ("table", "orders", InvalidOptionError, "table"),
        ("table", "a.b.c", InvalidOptionError, "table"),
        ("queueUrl", " ", InvalidOptionError, "queueUrl"),
        ("minPartitions", "0", InvalidOptionError, "minPartitions"),
        ("maxPartitionBytes", "0", InvalidOptionError, "maxPartitionBytes"),
        ("maxPartitionBytes", "-1m", InvalidOptionError, "maxPartitionBytes"),
        ("maxPartitionBytes", "64 parsecs", InvalidOptionError, "maxPartitionBytes"),
    ],
)
def test_invalid_value_is_rejected_naming_the_option(key, value, error, named):
    with pytest.raises(error, match=named) as caught:
        parse_options(lowered({**BASE, key: value}))
    assert isinstance(caught.value, ConfigurationError)


def test_missing_warehouse_is_named():
    with pytest.raises(InvalidOptionError, match="option warehouse is required"):
        parse_options({"table": "db.t"})


def test_warehouse_given_twice_is_rejected():
    with pytest.raises(InvalidOptionError, match="catalog.warehouse"):
        parse_options({**BASE, "catalog.warehouse": "/elsewhere"})


def test_missing_pyspark_raises_an_import_error_with_the_install_hint():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["pyspark"] = None  # as if PySpark were not installed
        import paimon_feed.spark
        try:
            paimon_feed.spark.register(object())
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.startswith("SparkNotInstalledError")
    assert 'pip install ".[spark]" in a paimon-feed checkout' in result.stdout


def test_an_unreachable_s3_endpoint_fails_at_load_naming_the_option():
    import socket

    from paimon_feed.errors import StorageError
    from paimon_feed.spark.table import load_schema

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    options = parse_options({
        "warehouse": "s3://bucket/wh", "table": "db.events", "catalog.fs.s3.endpoint": endpoint,
    })
    with pytest.raises(StorageError, match=f"cannot reach the S3 endpoint {endpoint}.*catalog.fs.s3.endpoint"):
        load_schema(options)


@pytest.mark.parametrize("value", [None, "false", "False", ""])
def test_the_socket_hint_names_the_setting_while_python_workers_use_tcp(value):
    from paimon_feed.spark import UNIX_SOCKETS_CONF, socket_hint

    assert UNIX_SOCKETS_CONF in socket_hint(value)


@pytest.mark.parametrize("value", ["true", "TRUE", " true "])
def test_there_is_no_socket_hint_once_unix_sockets_are_on(value):
    from paimon_feed.spark import socket_hint

    assert socket_hint(value) is None


def test_stats_path_is_no_option_the_benchmarks_measure_through_a_driver_hook():
    with pytest.raises(ConfigurationError) as caught:
        parse_options({"warehouse": "/wh", "table": "db.t", "statsPath": "/tmp/x"})
    message = str(caught.value)
    assert "statsPath" in message and "maxPartitionBytes" in message


def test_register_warns_about_tcp_python_workers(spark, caplog):
    import logging

    import paimon_feed.spark

    with caplog.at_level(logging.WARNING, logger="paimon_feed.spark"):
        paimon_feed.spark.register(spark)  # the test session keeps Unix sockets off
    (record,) = [r for r in caplog.records if paimon_feed.spark.UNIX_SOCKETS_CONF in r.getMessage()]
    assert record.levelno == logging.WARNING
