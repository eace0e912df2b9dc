"""The house rules of DESIGN.md's layout, read from the source: no two modules import each other
(an import inside a function or under ``TYPE_CHECKING`` included), and nothing outside
``planner/`` imports a ``planner/_*`` module. The imports are read with :mod:`ast`, not by
importing the package, so a lazy import inside a function counts like any other."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "paimon_feed"


def module_files(package: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, whether it is a package's ``__init__``)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def imported_modules(name: str, path: Path, is_package: bool, modules: dict) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file: ``from a import b``
    names ``a.b`` when that is a module, else ``a``."""
    package = name if is_package else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    found.add(f"{target}.{alias.name}")
                elif target in modules:
                    found.add(target)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imported_modules(name, path, is_package, modules) for name, (path, is_package) in modules.items()}


GRAPH = import_graph()


def mutual_pairs(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, ())}


def test_the_walk_sees_imports_inside_functions_and_relative_ones():
    # tables.py imports the planner's catalog module only inside functions (a light import path)
    assert "paimon_feed.planner.catalog" in GRAPH["paimon_feed.tables"]
    assert "paimon_feed.feed.sync" in GRAPH["paimon_feed.feed.feed"]
    assert len(GRAPH) > 80 and sum(map(len, GRAPH.values())) > 300
    # a pair made up here is found
    assert mutual_pairs({"x.a": {"x.b"}, "x.b": {"x.a", "x.c"}, "x.c": set()}) == {("x.a", "x.b")}


def test_no_two_modules_import_each_other():
    assert mutual_pairs(GRAPH) == set()


def test_nothing_outside_the_planner_imports_its_private_modules():
    reaching_in = sorted(
        (name, target)
        for name, targets in GRAPH.items()
        if not name.startswith("paimon_feed.planner")
        for target in targets
        if target.startswith("paimon_feed.planner._")
    )
    assert reaching_in == []
