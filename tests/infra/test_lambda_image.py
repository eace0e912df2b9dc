"""The feed function's container image (``infra/terraform/examples/complete/Dockerfile``),
checked without Docker: the Dockerfile installs ``paimon-feed[s3]`` from the source tree on
AWS's Lambda Python base image; that install resolves for the image's platform (pip's resolver
in a fresh virtualenv, ``--dry-run``, against PyPI: skipped when PyPI is unreachable); and the
image's task root, laid out as the Dockerfile lays it out, imports the handler named by its
``CMD`` and the processor the example's README configures.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "infra" / "terraform" / "examples" / "complete"
DOCKERFILE = EXAMPLE / "Dockerfile"
README = EXAMPLE / "README.md"
PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(34, 16, -1)] + ["manylinux2014_x86_64"]


def instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def only(keyword: str) -> list[str]:
    return [rest for kw, rest in instructions() if kw == keyword]


def test_the_image_is_built_on_aws_python_base_image_with_the_s3_extra_from_the_source_tree():
    assert only("FROM") == ["public.ecr.aws/lambda/python:3.12"]
    (install,) = [run for run in only("RUN") if "pip install" in run]
    assert '"/tmp/paimon-feed[s3]"' in install and '--target "${LAMBDA_TASK_ROOT}"' in install
    copied = " ".join(only("COPY"))
    for source in ("pyproject.toml", "README.md", "constraints.txt", "paimon_feed"):
        assert (REPO_ROOT / source).exists() and source in copied
    (processor_arg,) = [arg for arg in only("ARG") if arg.startswith("PROCESSOR_DIR=")]
    assert (REPO_ROOT / processor_arg.split("=", 1)[1]).is_dir()
    assert only("CMD") == ['["paimon_feed.aws.lambda_handler.handler"]']


def test_the_images_python_is_the_examples_default_runtime():
    from test_terraform import EXAMPLE as TF_EXAMPLE
    from test_terraform import attr, tf_dir

    runtime = attr(tf_dir(TF_EXAMPLE).variables["runtime"], "default")
    assert runtime == "python" + only("FROM")[0].rsplit(":", 1)[1]


def test_the_readme_builds_the_image_from_the_repository_root_and_pushes_it_to_ecr():
    text = re.sub(r"\\\n\s*", " ", README.read_text())
    assert "-f infra/terraform/examples/complete/Dockerfile" in text
    assert re.search(r"docker build .*\.\s*$", text, re.M), "build context: the repository root"
    assert "aws ecr get-login-password" in text and "docker push" in text
    assert "package_image_uri" in text


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pypaimon/", timeout=5):
            return True
    except OSError:
        return False


@pytest.mark.timeout(600)
def test_the_images_install_resolves_for_lambdas_python_and_platform(tmp_path):
    if not _pypi_reachable():
        pytest.skip("PyPI is not reachable: the install cannot be resolved here")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    report = tmp_path / "report.json"
    result = subprocess.run(
        [
            str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--quiet",
            "--disable-pip-version-check", "--ignore-installed", "--report", str(report),
            # The base image: CPython 3.12 on Amazon Linux 2023 (glibc 2.34), x86_64; pip takes
            # the platform tags literally, so every manylinux level up to 2.34 is listed.
            "--python-version", "3.12", "--implementation", "cp", "--abi", "cp312",
            *[arg for tag in PLATFORMS for arg in ("--platform", tag)], "--only-binary", ":all:",
            "--target", str(tmp_path / "task-root"),
            "-c", str(REPO_ROOT / "constraints.txt"), f"{REPO_ROOT}[s3]",
        ],
        capture_output=True, text=True, timeout=540,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    installs = {
        item["metadata"]["name"].lower(): item for item in json.loads(report.read_text())["install"]
    }
    assert {"paimon-feed", "pypaimon", "pyarrow", "boto3", "aiobotocore"} <= set(installs)
    wheels = [item["download_info"]["url"] for name, item in installs.items() if name != "paimon-feed"]
    assert all(url.endswith(".whl") for url in wheels), "no source builds inside the image"


def test_the_images_task_root_imports_its_handler_and_the_configured_processor(tmp_path):
    """The task root as the Dockerfile fills it (the package, then PROCESSOR_DIR's contents),
    imported by a fresh interpreter whose dependencies stand in for the image's."""
    root = tmp_path / "task-root"
    shutil.copytree(REPO_ROOT / "paimon_feed", root / "paimon_feed")
    (processor_arg,) = [arg for arg in only("ARG") if arg.startswith("PROCESSOR_DIR=")]
    shutil.copytree(REPO_ROOT / processor_arg.split("=", 1)[1], root, dirs_exist_ok=True)
    (handler,) = json.loads(only("CMD")[0])
    processor = re.search(r'processor\s*=\s*"([^"]+)"', README.read_text()).group(1)
    code = f"""
import importlib
module, _, name = {handler!r}.rpartition(".")
handler = getattr(importlib.import_module(module), name)
assert callable(handler)
import paimon_feed
assert paimon_feed.__file__.startswith({str(root)!r}), paimon_feed.__file__
from paimon_feed.aws.lambda_handler import _load_processor
assert callable(_load_processor({processor!r}))
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
        # The task root on PYTHONPATH, as Lambda's runtime puts LAMBDA_TASK_ROOT on the path.
        env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "eu-west-1", "PYTHONPATH": str(root)},
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
