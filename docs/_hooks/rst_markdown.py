"""The docstrings' reStructuredText, as the docs site's Markdown: one copy of each text.

The package's docstrings are written for ``help()`` and doctest, in the reStructuredText subset
Python's own docs use: ``literal``, :role:`target`, ``::`` blocks, ``>>>`` examples, underlined
section titles and simple tables (the Spark options and the Lambda variables). mkdocstrings
renders docstrings as Markdown, so this griffe extension rewrites each docstring into the
Markdown that says the same before mkdocstrings parses it. Only that subset is handled; anything
else passes through as written.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

try:  # griffe is there when mkdocstrings loads this file; the converter itself needs nothing
    import griffe
except ImportError:  # pragma: no cover
    griffe = None  # type: ignore[assignment]

__all__ = ["RstToMarkdown", "rst_to_markdown"]

_ROLE = re.compile(r":(?:py:)?(?:class|mod|func|meth|attr|data|exc|obj|const):`(~?)([^`]+)`")
_TITLE_UNDERLINE = re.compile(r"^([-=~^\"'])\1{2,}\s*$")
_TABLE_BORDER = re.compile(r"^=+(?: +=+)+\s*$")


def _role(match: re.Match) -> str:
    short, target = match.groups()
    target = target.strip()
    if "<" in target and target.endswith(">"):  # :class:`text <target>`
        target = target.split("<", 1)[0].strip()
    elif short:
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def _inline(line: str) -> str:
    line = _ROLE.sub(_role, line)
    return line.replace("\\ ", "")  # ``Foo``\ s: reST's escaped space


def _fence(lines: list[str]) -> list[str]:
    code = textwrap.dedent("\n".join(lines)).strip("\n")
    if code.lstrip().startswith(">>>"):
        lang = "pycon"
    else:
        try:
            ast.parse(code)
            lang = "python"
        except SyntaxError:
            lang = "text"
    return [f"```{lang}", *code.split("\n"), "```"]


def _cells(line: str, starts: list[int]) -> list[str]:
    """``line`` cut at the columns' starts; text that runs over into the next column (reST allows
    it in the last row of a cell only, docstrings do it anyway) stays in its own cell."""
    cuts = []
    for start in starts[1:]:
        cut = start
        while 0 < cut < len(line) and line[cut - 1] != " ":
            cut += 1
        cuts.append(cut)
    bounds = [0, *cuts, len(line)]
    return [line[a:b].strip() for a, b in zip(bounds, bounds[1:])]


def _table(lines: list[str]) -> list[str]:
    """A reST simple table (its border lines included) as a Markdown table."""
    border = lines[0]
    starts = [m.start() for m in re.finditer(r"=+", border)]
    borders = [i for i, line in enumerate(lines) if _TABLE_BORDER.match(line)]
    header: list[str] | None = None
    body_from = 1
    if len(borders) >= 3:  # border, header, border, body, border
        header = _cells(" ".join(lines[1:borders[1]]), starts)
        body_from = borders[1] + 1
    rows: list[list[str]] = []
    for line in lines[body_from:borders[-1]]:
        if not line.strip():
            continue
        cells = _cells(line, starts)
        if cells[0] or not rows:
            rows.append(cells)
        else:  # a continuation line: more text for the cells of the row above
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
    header = header or ["" for _ in starts]

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_inline(cell).replace("|", "\\|") for cell in cells) + " |"

    return [row(header), "|" + "|".join("---" for _ in starts) + "|", *(row(r) for r in rows)]


def rst_to_markdown(text: str) -> str:
    """``text`` (a docstring) with its reStructuredText constructs written as Markdown.

    >>> print(rst_to_markdown("See :class:`~paimon_feed.batch.FeedBatch`::\\n\\n    x = 1\\n"))
    See `FeedBatch`:
    <BLANKLINE>
    ```python
    x = 1
    ```
    <BLANKLINE>
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        # a simple table
        if _TABLE_BORDER.match(line):
            end, borders = i + 1, 1
            while end < len(lines):
                if _TABLE_BORDER.match(lines[end]):
                    borders += 1
                    following = lines[end + 1] if end + 1 < len(lines) else ""
                    if not following.strip() and borders >= 2:
                        break
                end += 1
            out += ["", *_table(lines[i:end + 1]), ""]
            i = end + 1
            continue
        # a section title: text underlined with one repeated punctuation character
        if (stripped and i + 1 < len(lines) and _TITLE_UNDERLINE.match(lines[i + 1])
                and len(lines[i + 1].strip()) >= len(stripped) and not line.startswith(" ")):
            out += [f"**{_inline(stripped)}**", ""]
            i += 2
            continue
        # a doctest block
        if stripped.startswith(">>>") and (not out or not out[-1].strip() or out[-1].startswith("```")):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += _fence(block)
            continue
        # a paragraph that introduces a literal block
        if stripped.endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            indent = len(line) - len(line.lstrip())
            j = i + 1
            block: list[str] = []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                intro = stripped[:-2].rstrip()
                if intro:
                    out.append(" " * indent + _inline(intro if intro.endswith(":") else intro + ":"))
                    out.append("")
                out += [" " * indent + fenced if fenced else "" for fenced in _fence(block)]
                out.append("")
                i = j
                continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out)


if griffe is not None:

    class RstToMarkdown(griffe.Extension):
        """Rewrite every docstring griffe loads from reStructuredText to Markdown."""

        def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
            if obj.docstring is not None:
                obj.docstring.value = rst_to_markdown(obj.docstring.value)
