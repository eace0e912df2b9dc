"""The local recipes of docs/s3.md (moto, wire, check, a commit, tail) and docs/lambda.md (the
handler invoked with a real S3 event against moto) run as written, against the moto_server the
``[dev]`` extra installs, each in an empty directory.

Markers, each on the line before a fenced block:

- ``<!-- recipe: NAME.py -->``: the block is saved as ``NAME.py``;
- ``<!-- recipe: run -->``: the block is run with bash (``-euo pipefail``) in that directory;
- ``<!-- recipe: output -->``: lines the run block before it prints, in this order (a recipe's
  other output, such as timings, may come between them).

The recipes start moto on ``${MOTO_PORT:-5000}``; the test sets ``MOTO_PORT`` to a free port and
kills whatever the recipe left running.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from s3_support import free_port
from test_readme_quickstart import _shim

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"^<!-- recipe: (?P<what>[\w.-]+) -->\n```[\w-]*\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)

pytestmark = pytest.mark.s3


def recipe_blocks(page: str) -> list[tuple[str, str]]:
    return [(m["what"], m["body"]) for m in _BLOCK.finditer((ROOT / "docs" / page).read_text())]


def _in_order(expected: list[str], lines: list[str]) -> bool:
    remaining = iter(lines)
    return all(any(line == wanted for line in remaining) for wanted in expected)


def _run(body: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", body], cwd=work, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=240)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # a moto or tail the recipe left behind
        except ProcessLookupError:
            pass
        process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize("page", ["s3.md", "lambda.md"])
def test_the_local_recipe_runs_as_written(tmp_path: Path, page: str):
    work, bin_dir = tmp_path / "recipe", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    _shim(bin_dir)
    if page == "lambda.md":
        (work / "infra").symlink_to(ROOT / "infra")  # "from the root of a clone"
        for what, body in recipe_blocks("s3.md"):
            if what == "commit.py":
                (work / what).write_text(body)
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PAIMON_FEED_"))}
    env.update(PATH=path, MOTO_PORT=str(free_port()),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    blocks = recipe_blocks(page)
    assert [w for w, _ in blocks if not w.endswith(".py")] == ["run", "output"]
    last: subprocess.CompletedProcess[str] | None = None
    for what, body in blocks:
        if what.endswith(".py"):
            (work / what).write_text(body)
        elif what == "run":
            last = _run(body, work, env)
            assert last.returncode == 0, f"{body}\nstdout:\n{last.stdout}\nstderr:\n{last.stderr}"
        else:
            assert last is not None and what == "output"
            expected = body.strip().splitlines()
            assert _in_order(expected, last.stdout.splitlines()), f"{last.stdout}\n{last.stderr}"
    if page == "s3.md":
        assert last is not None and "push works: the probe's event arrived" in last.stdout
