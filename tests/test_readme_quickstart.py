"""The README's quickstart runs as written: its marked code blocks, extracted into an empty
directory, make a real local warehouse, commit to it, tail it and follow it, and print what the
README says they print.

Markers, each on the line before a fenced block:

- ``<!-- quickstart: NAME.py -->``: the block is saved as ``NAME.py``;
- ``<!-- quickstart: run -->``: the block is run with bash, in order, in that directory;
- ``<!-- quickstart: output -->``: what the run block before it prints, line for line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
_BLOCK = re.compile(r"^<!-- quickstart: (?P<what>[\w.-]+) -->\n```[\w-]*\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def quickstart_blocks(text: str) -> list[tuple[str, str]]:
    """``(marker, body)`` for every marked block, in the README's order."""
    return [(m["what"], m["body"]) for m in _BLOCK.finditer(text)]


def _shim(bin_dir: Path) -> None:
    """``paimon-feed`` on PATH as this checkout's entry point, installed or not."""
    script = bin_dir / "paimon-feed"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom paimon_feed.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    python = bin_dir / "python"  # the test's interpreter (a symlink would lose its virtualenv)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)


def test_the_readme_marks_a_complete_quickstart():
    blocks = quickstart_blocks(README.read_text())
    files = [what for what, _ in blocks if what.endswith(".py")]
    assert files == ["create_table.py", "commit.py", "feed.py"]
    kinds = [what for what, _ in blocks if not what.endswith(".py")]
    assert kinds == ["run", "output", "run", "output"]
    runs = "\n".join(body for what, body in blocks if what == "run")
    assert "paimon-feed tail" in runs and "python feed.py" in runs


def test_the_readme_quickstart_runs_as_written(tmp_path):
    work, bin_dir = tmp_path / "quickstart", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    _shim(bin_dir)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    last_run: subprocess.CompletedProcess | None = None
    for what, body in quickstart_blocks(README.read_text()):
        if what.endswith(".py"):
            (work / what).write_text(body)
        elif what == "run":
            last_run = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", body], cwd=work, env=env,
                capture_output=True, text=True, timeout=180,
            )
            assert last_run.returncode == 0, f"{body}\nstdout:\n{last_run.stdout}\nstderr:\n{last_run.stderr}"
        elif what == "output":
            assert last_run is not None, "an output block follows a run block"
            assert last_run.stdout.strip().splitlines() == body.strip().splitlines(), last_run.stderr
            last_run = None
        else:
            pytest.fail(f"unknown quickstart marker {what!r}")
    # The consumer's position is in Paimon's own consumer file, as the README says.
    consumer = work / "warehouse" / "shop.db" / "orders" / "consumer" / "consumer-quickstart"
    assert '"nextSnapshot" : 4' in consumer.read_text()


def test_the_readme_is_a_front_door():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    # Not on a package index: install from source.
    assert not re.search(r"pip install [\"']?paimon-feed", text)
    assert "pip install ." in text and "pip wheel ." in text
    for stale in ("issue 13", "upstream proposal", "the upstream"):
        assert stale not in text
    # The first example defines the table it feeds.
    first = re.search(r"```python\n(.*?)```", text, re.DOTALL)[1]
    assert first.index("table = ") < first.index("ChangeFeed(table")
