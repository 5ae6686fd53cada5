"""The tests mirror the package (issue 32.6): tests/<wing>/ for scarbook/<wing>/, what the tests share in the
one package tests/helpers imported one way (`from tests.helpers.judge_server import ...`), no file named
after an issue. A reader who changes scarbook/judge/cache.py finds its tests in tests/judge/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers.paths import REPO

TESTS = REPO / "tests"
# folders of tests/ that are not a wing of scarbook/: the package root's tests, the shared helpers, data
NOT_WINGS = {"core", "helpers", "fixtures", "__snapshots__", "__pycache__"}
DATA = ("fixtures", "corpus", "__snapshots__")  # folders of files the tests read, not Python the tests run


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if not set(DATA) & set(p.relative_to(TESTS).parts))


def test_no_test_module_lies_loose_in_tests() -> None:
    loose = sorted(p.name for p in TESTS.glob("*.py") if p.name not in ("__init__.py", "conftest.py"))
    assert loose == [], f"put these in their wing's folder, tests/<wing>/: {loose}"


def test_each_folder_of_tests_is_a_wing_of_the_package_and_a_package_itself() -> None:
    for folder in sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_WINGS):
        assert (REPO / "scarbook" / folder.name / "__init__.py").is_file(), \
            f"tests/{folder.name}/ mirrors no wing: scarbook/{folder.name}/ does not exist"
        assert (folder / "__init__.py").is_file(), f"tests/{folder.name}/ needs an __init__.py (tests is a package)"


def test_no_file_or_folder_is_named_after_an_issue() -> None:
    named = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("*")
                   if re.search(r"issue[_-]?\d", p.name, re.I) and "__pycache__" not in p.parts)
    assert named == [], f"name these for what they test: {named}"


def helper_modules() -> set[str]:
    return {p.stem for p in (TESTS / "helpers").glob("*.py") if p.stem != "__init__"}


def test_test_helpers_are_imported_one_way() -> None:
    """Only `tests.<...>` absolute imports of the tests' own modules, and never inside try/except ImportError
    (34 modules had such a fallback for running from inside tests/)."""
    ours = helper_modules() | {p.stem for p in python_files()} | {"conftest"}
    problems = []
    for path in python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(REPO)
        for node in ast.walk(tree):
            if isinstance(node, ast.Try) and any(
                    isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                    for h in node.handlers):
                problems.append(f"{rel}:{node.lineno}: an import with an ImportError fallback")
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top = node.module.split(".")[0]
                if top in ours:
                    problems.append(f"{rel}:{node.lineno}: `from {node.module}` — import it as tests.<...>")
                if node.module.startswith("tests.") and node.module.split(".")[-1] in helper_modules() \
                        and not node.module.startswith("tests.helpers."):
                    problems.append(f"{rel}:{node.lineno}: `from {node.module}` — helpers are tests.helpers.*")
    assert problems == []


def test_the_helpers_are_where_the_tests_import_them_from() -> None:
    assert {"judge_server", "tui_fixtures", "proc_helpers", "ray_helpers", "inprocess_demo", "textual_speed",
            "paths"} <= helper_modules()
