"""mkdocs hook: text the docs take from the code at build time, so the code holds the only copy.

``<!-- cli-help: tail -->`` on a line of its own becomes ``paimon-feed tail --help`` as the
installed entry point prints it (``<!-- cli-help -->`` alone: the top-level help).
``<!-- metrics-table -->`` becomes the table of ``paimon_feed.metrics.METRICS``, the names, types
and help texts the Prometheus collector exports. Option and variable tables come from docstrings
through mkdocstrings (see ``rst_markdown.py``). The benchmark plot is added to the site from
``benchmarks/results/``, where the benchmark writes it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

_CLI_HELP = re.compile(r"^<!-- cli-help(?::\s*(?P<command>[\w-]+))? -->$", re.MULTILINE)
_METRICS_TABLE = re.compile(r"^<!-- metrics-table -->$", re.MULTILINE)
_ROOT = Path(__file__).resolve().parents[2]
_IMAGES = ("latency.png",)


def cli_help(command: str | None) -> str:
    """The ``--help`` text of ``paimon-feed [command]``, at a fixed width."""
    argv = [command, "--help"] if command else ["--help"]
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from paimon_feed.cli import main; sys.exit(main())", *argv],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"paimon-feed {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.rstrip()


def metrics_table() -> str:
    """One row per exported metric, as the collector describes it to Prometheus."""
    if str(_ROOT) not in sys.path:  # the checkout's package, installed or not
        sys.path.insert(0, str(_ROOT))
    from paimon_feed.metrics import METRICS

    rows = [f"| `{name}` | {kind} | {text} |" for name, (kind, text) in METRICS.items()]
    return "\n".join(["| metric | type | meaning |", "|---|---|---|", *rows])


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for name in _IMAGES:
        files.append(File.generated(config, f"img/{name}", abs_src_path=str(_ROOT / "benchmarks" / "results" / name)))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    markdown = _CLI_HELP.sub(lambda m: f"```text\n{cli_help(m['command'])}\n```", markdown)
    return _METRICS_TABLE.sub(lambda m: metrics_table(), markdown)
