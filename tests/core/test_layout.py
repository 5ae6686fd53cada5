"""The house: wings with a written layer order, no import cycles, a small root, docs that name what exists.

The layer order itself is checked by import-linter (`lint-imports`, contracts in pyproject.toml), which
.ci/run runs before the tests. These tests check what it does not: cycles inside a wing (a layers contract
allows any arrow within one wing), the size of the package root, and that the architecture doc and the wing
docstrings keep up with the tree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

ROOT = REPO
PKG = ROOT / "scarbook"
WINGS = ("fs", "proc", "transcripts", "checks", "agents", "judge", "record", "stats", "history", "cases", "run", "views",
         "reports", "tools", "cli", "tui")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PKG.rglob("*.py")}


def import_graph() -> dict[str, set[str]]:
    """Every scarbook -> scarbook import, function-level ones included, to the most specific module named."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods:  # `import scarbook.x.y` names the module, or its package
                    target = target.rpartition(".")[0]
                if target.startswith("scarbook") and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_cycle():
    """So the next test can fail: a -> b -> c -> a is one cycle, d hangs off it."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_root_keeps_only_the_nouns():
    root_modules = sorted(p.stem for p in PKG.glob("*.py"))
    assert len(root_modules) <= 8, root_modules
    assert set(root_modules) <= {"__init__", "models", "errors", "text", "config", "project", "entry"}


@pytest.mark.parametrize("wing", WINGS)
def test_each_wing_says_what_it_owns(wing):
    doc = ast.get_docstring(ast.parse((PKG / wing / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert len(doc) > 80 and "May use" in doc, f"scarbook/{wing}/__init__.py: say what the wing owns and what it may use"


def test_the_architecture_doc_names_every_wing_and_only_files_that_exist():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for wing in WINGS:
        assert f"scarbook/{wing}/" in text, f"docs/ARCHITECTURE.md does not show the {wing} wing"
    named = set(re.findall(r"scarbook/[\w/]+\.(?:py|tcss)", text))
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/ARCHITECTURE.md names files that do not exist: {missing}"


def test_no_name_in_a_package_shadows_one_of_its_modules():
    """`scarbook.transcripts.candidates` was the function, not the module candidates.py (issue 32.5): a
    package's name that is also one of its modules hides that module from `import a.b as m` readers."""
    import importlib
    import pkgutil
    import types

    import scarbook

    shadowed = []
    for info in pkgutil.walk_packages(scarbook.__path__, "scarbook."):
        if not info.ispkg:
            continue
        package = importlib.import_module(info.name)
        for sub in pkgutil.iter_modules(package.__path__):
            value = getattr(package, sub.name, None)
            if value is not None and not isinstance(value, types.ModuleType):
                shadowed.append(f"{info.name}.{sub.name}")
    assert shadowed == []
