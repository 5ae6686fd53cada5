"""The core never imports Textual, nor Ray (an optional extra): every scarbook module outside scarbook.tui
imports without them. One fresh interpreter imports them all (~2 s of CPU), then the TUI's app."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import scarbook

CORE = sorted(m.name for m in pkgutil.walk_packages(scarbook.__path__, "scarbook.")
              if not m.name.startswith("scarbook.tui"))

# (one xdist worker runs this module's tests: the interpreter below starts once)
pytestmark = pytest.mark.xdist_group("core-imports")

PROBE = ("import importlib, json, sys\n"
         f"for name in {CORE!r}:\n"
         "    importlib.import_module(name)\n"
         "seen = {'textual': sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')),\n"
         "        'ray': sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))}\n"
         "import scarbook.tui.app\n"
         "seen['textual_with_the_tui'] = 'textual' in sys.modules\n"
         "print(json.dumps(seen))\n")


@pytest.fixture(scope="module")
def imported() -> dict:
    """What a fresh interpreter holds once it imported every core module, and once it imported the TUI."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_there_are_core_modules_to_check():
    assert {"scarbook.run.runner", "scarbook.history.store", "scarbook.cli", "scarbook.stats.rates"} <= set(CORE)


def test_core_modules_import_without_textual(imported):
    assert imported["textual"] == []


def test_the_core_imports_without_ray(imported):
    """Ray is an optional extra: nothing outside the Ray executor's own use of it imports it."""
    assert imported["ray"] == []


def test_the_tui_does_import_textual(imported):
    """The check above would notice: importing the app pulls Textual in."""
    assert imported["textual_with_the_tui"] is True
