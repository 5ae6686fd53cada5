"""Where the tests' shared files are: the repository and tests/fixtures/ (transcripts, agents)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/NAME.py as a module named NAME (registered in sys.modules: its dataclasses look their
    module up there), for a test that runs a small cell of a simulator."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
