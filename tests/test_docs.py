"""The docs site's generated tables say what the code parses: the Spark options and the Lambda
variables are the tables in those modules' docstrings, rendered by docs/_hooks/rst_markdown.py,
and they list exactly the names the parsers accept."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import paimon_feed.aws.lambda_handler as lambda_handler
import paimon_feed.spark.options as spark_options

ROOT = Path(__file__).resolve().parent.parent


def _load_hook(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "_hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rst = _load_hook("rst_markdown")


def _first_column(markdown: str) -> set[str]:
    """The names in the first column of the first Markdown table, without their backticks."""
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    return {name.strip(" `") for row in rows[1:] for name in row.split("|")[1].split(",")}


def test_the_spark_options_table_lists_exactly_the_options_the_source_parses():
    documented = _first_column(rst.rst_to_markdown(spark_options.__doc__))
    assert documented - {"catalog.<key>"} == set(spark_options._KNOWN)


def test_the_lambda_variables_table_lists_exactly_the_variables_the_handler_reads():
    documented = _first_column(rst.rst_to_markdown(lambda_handler.__doc__))
    read = {value for name, value in vars(lambda_handler).items() if name.startswith("ENV_")}
    assert documented == read


def test_a_simple_table_with_a_header_and_wrapped_cells_becomes_one_markdown_row_per_entry():
    text = "\n".join([
        "======  ===============",
        "name    meaning",
        "======  ===============",
        "``a``   first line",
        "        and its rest",
        "``b``   see :class:`~x.y.Z`",
        "======  ===============",
    ])
    assert rst.rst_to_markdown(text).strip().splitlines() == [
        "| name | meaning |",
        "|---|---|",
        "| ``a`` | first line and its rest |",
        "| ``b`` | see `Z` |",
    ]


def test_literal_blocks_become_fenced_code_and_titles_bold():
    text = "Usage\n-----\n\nTree::\n\n    A\n    └── B\n\nend"
    out = rst.rst_to_markdown(text)
    assert "**Usage**" in out and "```text\nA\n└── B\n```" in out and "Tree:" in out
    assert not re.search(r"^-----$", out, re.MULTILINE)


def test_no_page_says_to_install_from_a_package_index():
    """paimon-feed is installed from a checkout; ``pip install paimon-feed`` finds nothing."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        assert not re.search(r"pip install [\"']?paimon-feed", page.read_text()), page.name
