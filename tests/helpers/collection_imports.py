"""What a test process had imported when its collection ended (tests/conftest.py's pytest_collection_finish notes it).

Every xdist worker collects every test module before it runs one test, so whatever the collection imports, each
worker pays: tests/core/test_collection_imports.py reads it here when this process collected the whole suite,
else from a collection of the suite in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import REPO

TESTS = REPO / "tests"
_WRITE_TO = "SCARBOOK_TESTS_COLLECTION_IMPORTS"  # (the subprocess's collection writes the names there)
_at_collection: frozenset[str] = frozenset()


def note_collection_imports() -> None:
    global _at_collection
    _at_collection = frozenset(sys.modules)
    if os.environ.get(_WRITE_TO):
        Path(os.environ[_WRITE_TO]).write_text("\n".join(sorted(_at_collection)), encoding="utf-8")


def _suite_modules() -> set[str]:
    return {".".join(p.relative_to(REPO).with_suffix("").parts) for p in TESTS.glob("*/test_*.py")}


def collection_imports(scratch: Path) -> frozenset[str]:
    """The modules imported by collecting every test module: this process's, if it did (the whole suite's run,
    at no cost), else a `pytest --collect-only` of tests/ in a subprocess (~3 s of CPU)."""
    if _suite_modules() <= _at_collection:
        return _at_collection
    out = scratch / "collection-imports.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                           str(TESTS)], cwd=REPO, env={**env, _WRITE_TO: str(out)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return frozenset(out.read_text(encoding="utf-8").split())
