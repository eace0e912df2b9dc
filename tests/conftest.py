"""Shared pytest fixtures: each group lives in its own support module, exposed here."""

from s3_support import moto_server, s3_queue  # noqa: F401  (fixtures: real moto_server, bucket + queue)
from support.fixtures import (  # noqa: F401  (local warehouse, tables, writer process)
    any_table,
    append_table,
    cat,
    pk_table,
    start_writer,
    warehouse,
)
