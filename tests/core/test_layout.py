"""The house: wings with a written layer order, no import cycles, a small root, docs that name what exists.

The layer order itself is checked by import-linter (`lint-imports`, contracts in pyproject.toml), which
.ci/run runs after the tests. These tests check what it does not: cycles inside a wing (a layers contract
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
# every folder of the package is a wing (the root's nouns are the models/ package and a few modules)
WINGS = tuple(sorted(p.parent.name for p in PKG.glob("*/__init__.py") if p.parent.name != "models"))


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


def architecture_doc() -> str:
    return (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def doc_sections(text: str) -> dict[str, str]:
    """The "Modules by wing" sections of docs/ARCHITECTURE.md: wing -> its text (a `### `wing`` heading each)."""
    part = text.split("## Modules by wing", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^### `(\w+)`\n(.*?)(?=^### |\Z)", part, re.M | re.S)}


def documented_modules(section: str) -> list[str]:
    """The modules a section's table names: the full paths in the first cell of each row."""
    named = []
    for row in re.findall(r"^\| (.+?) \| ", section, re.M):
        named += re.findall(r"`([^`]+)`", row)
    return named


def code_modules() -> list[str]:
    """Every module of the package, by path; an __init__.py only when it holds more than a docstring and imports."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path.name == "__init__.py":
            body = ast.parse(path.read_text(encoding="utf-8")).body
            if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in body):
                continue
        found.append(path.relative_to(ROOT).as_posix())
    return found


def wing_of(module: str) -> str:
    parts = module.split("/")
    return parts[1] if len(parts) > 2 else parts[1].removesuffix(".py")


def test_the_architecture_doc_names_every_module_in_its_wing_by_its_path():
    """Module by module (issue 32.7: the doc put `stats/calibrate.py` and `lint.py` in stats — they are
    judge/calibrate.py and cases/lint.py — and proc's files under agents, and this test read whole paths only):
    each module of the package is a row of its own wing's table, named by its full path; a row's first cell
    names full paths only (a bare `lint.py` cannot be checked); every path the doc names exists."""
    text = architecture_doc()
    sections = doc_sections(text)
    problems = []
    for wing, section in sections.items():
        for name in documented_modules(section):
            if not name.startswith("scarbook/"):
                problems.append(f"### `{wing}`: a row names `{name}`: give its full path (scarbook/...)")
            elif not name.endswith("/") and wing_of(name) != wing:
                problems.append(f"### `{wing}`: `{name}` is not in this wing (it is in {wing_of(name)})")
    every_row = [name for section in sections.values() for name in documented_modules(section)]
    problems += [f"{name} has {every_row.count(name)} rows: give it one" for name in sorted(set(every_row))
                 if every_row.count(name) > 1]
    documented = set(every_row)
    for module in code_modules():
        if module not in documented:
            problems.append(f"{module} has no row in ### `{wing_of(module)}`")
    for path in sorted(set(re.findall(r"scarbook/[\w/]+(?:\.py|\.tcss|/)", text))):
        if not (ROOT / path).exists():
            problems.append(f"the doc names {path}, which does not exist")
    assert problems == []


def test_the_architecture_doc_draws_the_layers_import_linter_checks():
    """The list at the top of docs/ARCHITECTURE.md is pyproject.toml's layers contract, top to bottom."""
    assert drawn_layers(architecture_doc()) == checked_layers()
    for wing in WINGS:
        assert wing in doc_sections(architecture_doc()), f"docs/ARCHITECTURE.md has no ### `{wing}` section"

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


def test_the_readme_layout_draws_every_wing_in_the_layers_order():
    """Issue 37.16: README's Layout section left out `scarbook/record` (and `session`): its list is the
    layers contract, top to bottom, as docs/ARCHITECTURE.md's is."""
    layout = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Layout\n", 1)[1]
    assert drawn_layers(layout) == checked_layers()


def checked_layers() -> list[str]:
    """pyproject.toml's layers contract over the wings, top to bottom, as the docs draw it (`cli|tui`)."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers" and "containers" not in c)
    return [layer.replace("scarbook.", "").replace(" ", "") for layer in layers]


def drawn_layers(text: str) -> list[str]:
    """The first cell of each line of the first code block in `text`."""
    block = text.split("```", 2)[1]
    return [re.split(r"\s{2,}", line.strip())[0].replace(" ", "") for line in block.strip().splitlines()]


def private_imports_across_wings() -> list[str]:
    """`from scarbook.<other wing>.x import _name`: a wing reaching into another's private names."""
    found = []
    for name, path in modules().items():
        own = name.split(".")[1] if "." in name else ""
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("scarbook."):
                continue
            if node.module.split(".")[1] == own:
                continue
            found += [f"{name} imports {node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_wing_imports_another_wings_private_names():
    """What one wing uses of another is public there (tools/rejudge.py used run/session.py's _preflight_judge and
    _unwritable: now judge/factory.preflighted_judge and run/session's preflight_judge, unwritable_places)."""
    assert private_imports_across_wings() == []
