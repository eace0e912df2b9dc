"""Write the measured figures of the docs from ``benchmarks/results/*.json``, so each is written once.

Every figure a benchmark measured stands in the docs between marker comments::

    <!-- bench:core -->
    ...a table rendered from core.json...
    <!-- /bench:core -->

and inline, for a figure in a sentence: ``<!-- bench:idle-pypaimon-s3 -->67,440<!-- /bench:idle-pypaimon-s3 -->``.
This script renders what belongs between each pair from the JSON the benchmarks wrote and puts it
there; ``tests/test_readme_figures.py`` fails when a doc differs from what it would write. After
re-running a benchmark, run ``python -m benchmarks.render_readme`` (``--check`` only reports).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# The README keeps one headline figure; the measured tables live on the docs site's pages.
DOCS = ("README.md", "docs/benchmarks.md", "docs/concepts.md", "docs/spark.md", "docs/s3.md",
        "docs/warehouse.md", "docs/hdfs.md",
        "infra/terraform/examples/complete/README.md")
from benchmarks.figures.core import (
    catchup,
    catchup_phases,
    core_summary,
    core_table,
    headline,
    integrity_table,
    native_table,
    reliability,
)
from benchmarks.figures.hdfs import hdfs_python_rpc, hdfs_table, hdfs_warehouse_table
from benchmarks.figures.s3 import (
    idle_pypaimon_s3,
    s3_idle,
    s3_idle_cost,
    s3_latency,
    s3_readme,
    s3_stages,
    s3_targets,
    s3_wake,
)
from benchmarks.figures.spark import (
    spark_consumer_commit,
    spark_idle,
    spark_java_status,
    spark_latency,
    spark_long_running,
    spark_merged,
    spark_sockets,
    spark_startup_parts,
    spark_targets,
    spark_vs_java,
)
from benchmarks.figures.spark_backlog import spark_backlog, spark_backlog_profile
from benchmarks.figures.spark_handoff import spark_handoff, spark_handoff_phases
from benchmarks.figures.spark_runner import spark_runner
from benchmarks.figures.warehouse import warehouse_memory, warehouse_table

MARKER = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->(?P<body>.*?)<!-- /bench:(?P=name) -->", re.DOTALL)


def load_results(results: Path = RESULTS) -> dict[str, Any]:
    """``{"core": ..., "s3": ..., "spark": ..., "spark_long_running": ..., "reliability": ...,
    "catchup": ..., "consumer_commit": ..., "native": ..., "integrity": ..., "warehouse": ...,
    "spark_merged": ..., "spark_runner": ..., "spark_handoff": ..., "hdfs": ..., "spark_backlog": ...,
    "spark_backlog_profile": ...}`` from the result files."""
    names = (
        "core", "s3", "spark", "spark_long_running", "reliability", "catchup", "consumer_commit",
        "native", "integrity", "warehouse", "spark_merged", "spark_runner", "spark_handoff",
        "hdfs", "spark_backlog", "spark_backlog_profile",
    )
    return {name: json.loads((results / f"{name}.json").read_text()) for name in names}



BLOCKS: dict[str, Callable[[dict], str]] = {
    "core": core_table,
    "core-summary": core_summary,
    "headline": headline,
    "s3": s3_readme,
    "s3-latency": s3_latency,
    "s3-idle": s3_idle,
    "s3-idle-cost": s3_idle_cost,
    "s3-wake": s3_wake,
    "s3-stages": s3_stages,
    "catchup-phases": catchup_phases,
    "s3-targets": s3_targets,
    "idle-pypaimon-s3": idle_pypaimon_s3,
    "spark-vs-java": spark_vs_java,
    "spark-java-status": spark_java_status,
    "spark-targets": spark_targets,
    "spark-startup-parts": spark_startup_parts,
    "spark-long-running": spark_long_running,
    "spark-latency": spark_latency,
    "spark-sockets": spark_sockets,
    "spark-consumer-commit": spark_consumer_commit,
    "spark-idle": spark_idle,
    "reliability": reliability,
    "catchup": catchup,
    "native": native_table,
    "spark-merged": spark_merged,
    "spark-runner": spark_runner,
    "spark-handoff": spark_handoff,
    "spark-handoff-phases": spark_handoff_phases,
    "spark-backlog": spark_backlog,
    "spark-backlog-profile": spark_backlog_profile,
    "integrity": integrity_table,
    "warehouse": warehouse_table,
    "hdfs": hdfs_table,
    "hdfs-warehouse": hdfs_warehouse_table,
    "hdfs-python-rpc": hdfs_python_rpc,
    "warehouse-memory": warehouse_memory,
}


# rendering ----------------------------------------------------------------------------------------

def render(text: str, results: dict, *, source: str = "<text>") -> str:
    """``text`` with every marked block rendered from ``results``; an unknown name is an error."""

    def replace(match: re.Match) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise KeyError(f"{source}: unknown figure block {name!r}; known: {', '.join(BLOCKS)}")
        body = BLOCKS[name](results)
        if match["body"].startswith("\n"):  # a block on lines of its own
            body = f"\n{body}\n"
        return f"<!-- bench:{name} -->{body}<!-- /bench:{name} -->"

    return MARKER.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only report docs that differ; exit 1 if any")
    args = parser.parse_args(argv)
    results = load_results()
    stale = []
    for doc in DOCS:
        path = ROOT / doc
        text = path.read_text()
        rendered = render(text, results, source=doc)
        if rendered != text:
            stale.append(doc)
            if not args.check:
                path.write_text(rendered)
    verb = "differ from benchmarks/results" if args.check else "rewritten"
    print(f"{verb}: {', '.join(stale)}" if stale else "every figure matches benchmarks/results")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
