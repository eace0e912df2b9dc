"""How the docs write figures: milliseconds, counts, tables and wrapped prose (used by the figure
blocks of ``benchmarks/figures/``)."""

from __future__ import annotations

import textwrap
from typing import Any


def ms(value: float) -> str:
    """Milliseconds as the docs write them: one decimal under 100, whole and grouped above."""
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def count(value: float) -> str:
    return f"{round(value):,}"


def table(header: list[str], align: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def wrap(text: str) -> str:
    """Prose at the docs' line width, each paragraph line of ``text`` wrapped on its own."""
    return "\n".join(textwrap.fill(line, width=100, break_on_hyphens=False) for line in text.split("\n"))


def met(ok: bool) -> str:
    return "met" if ok else "not met"
