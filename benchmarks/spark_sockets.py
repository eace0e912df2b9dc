"""Spark benchmark, part 3b: commit to the end of the micro-batch with the session's Python workers
on TCP and on Unix domain sockets, each in probe processes with sessions of their own (run by
:mod:`benchmarks.spark_bench`, which also runs the probes: ``--socket-probe``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import paimon_feed.spark
from benchmarks._common.scratch import scratch_dir  # (removed at exit)
from benchmarks._common.spark_readers import SOCKETS, Readers, new_session
from benchmarks._common.spark_setup import SMALL, commit_small, create_table, load
from benchmarks.spark_latency import PYTHON_CEILING, TRIGGERS, latency_summary, measure_latency

SOCKET_PROBE_MODES = ("auto", PYTHON_CEILING)


def socket_probe(sockets: str, commits: int, out: str, order: int) -> None:
    """``--socket-probe``: a session of its own whose Python workers reach the JVM over
    ``sockets`` (a key of :data:`SOCKETS`; Spark reads the setting once, when the session
    starts); this source (``notifier=auto``) and the do-nothing source each follow a fresh table at a
    0 s trigger, in :data:`SOCKET_PROBE_MODES` order or (``order`` 1) the reverse. Writes their
    latencies to ``out``."""
    from pypaimon import CatalogFactory

    workdir = scratch_dir("paimon-feed-socket-probe-")
    warehouse = os.path.join(workdir, "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    small = create_table(catalog, "db.small", SMALL)
    commit_small(small, 0)
    spark = new_session("paimon-feed-socket-probe", sockets)
    readers = Readers(spark, warehouse, java=None)
    # A fresh session's first streaming queries run slower (JIT, Python workers): one
    # unmeasured follow first, then the readers in an order that alternates between probes.
    measure_latency(readers, small, PYTHON_CEILING, TRIGGERS["0 seconds"], [], workdir, tag="probe-warm-up", seed=99)
    modes = SOCKET_PROBE_MODES if order == 0 else tuple(reversed(SOCKET_PROBE_MODES))
    result = {}
    for index, mode in enumerate(modes):
        numbers = list(range(1 + index * commits, 1 + (index + 1) * commits))
        result[mode] = measure_latency(readers, small, mode, TRIGGERS["0 seconds"], numbers, workdir,
                                       tag=f"probe-{mode}", seed=100 + index)
    spark.stop()
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def measure_python_sockets(commits: int, rounds: int, workdir: str) -> dict:
    """:func:`socket_probe` for each of :data:`SOCKETS` in its own process, ``rounds`` times,
    alternating which goes first; ``commits`` per socket kind and reader in all."""
    per_round = max(1, commits // rounds)
    measured: dict[str, dict[str, list[dict]]] = {sockets: {mode: [] for mode in SOCKET_PROBE_MODES} for sockets in SOCKETS}
    before = load()
    for round_index in range(rounds):
        order = list(SOCKETS) if round_index % 2 == 0 else list(reversed(SOCKETS))
        for sockets in order:
            print(f"Python worker sockets: {sockets}, round {round_index + 1}/{rounds} ...", flush=True)
            out = os.path.join(workdir, f"socket-probe-{sockets}-{round_index}.json")
            log_path = os.path.join(workdir, f"socket-probe-{sockets}-{round_index}.log")
            with open(log_path, "w", encoding="utf-8") as log:
                done = subprocess.run([sys.executable, "-m", "benchmarks.spark_bench", "--socket-probe", sockets,
                                       "--probe-order", str(round_index % 2),
                                       "--latency-commits", str(per_round), "--out", out],
                                      stdout=log, stderr=subprocess.STDOUT, check=False)
            if done.returncode:
                with open(log_path, encoding="utf-8") as log:
                    raise RuntimeError(f"the {sockets} socket probe failed:\n{log.read()[-3000:]}")
            with open(out, encoding="utf-8") as handle:
                for mode, one in json.load(handle).items():
                    measured[sockets][mode].append(one)
    result: dict = {"conf": paimon_feed.spark.UNIX_SOCKETS_CONF, "rounds": rounds, "trigger": "0 seconds",
                    "load_before": before, "load_after": load()}
    for sockets, modes in measured.items():
        result[sockets] = {mode: latency_summary(mode, runs) for mode, runs in modes.items()}
    return result
