"""The core never imports Textual: every scarbook module outside scarbook.tui imports without it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import scarbook

CORE = sorted(m.name for m in pkgutil.walk_packages(scarbook.__path__, "scarbook.")
              if not m.name.startswith("scarbook.tui"))


def test_there_are_core_modules_to_check():
    assert {"scarbook.run.runner", "scarbook.history.store", "scarbook.cli", "scarbook.stats.rates"} <= set(CORE)


def test_core_modules_import_without_textual():
    code = ("import importlib, sys\n"
            f"for name in {CORE!r}:\n"
            "    importlib.import_module(name)\n"
            "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
            "print('TEXTUAL:' + ','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("TEXTUAL:"), out.stdout


def test_the_tui_does_import_textual():
    """The check above would notice: importing the app pulls Textual in."""
    code = "import sys, scarbook.tui.app; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
