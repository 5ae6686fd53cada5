"""The checks: their specs (spec.py), the rules (rules.py, trajectory.py), what a check sees (context.py),
and running a case's checks in cost order, short-circuiting on the first failure (sequence.py).

May use: transcripts, proc, fs, models, errors, text (a `command` check runs through proc, not agents)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from scarbook.checks.spec import CHECK_SPECS, TRAJECTORY_CHECKS, parse_check

if TYPE_CHECKING:
    from scarbook.checks.context import CheckContext
    from scarbook.checks.sequence import run_check, run_checks, short_circuit

__all__ = ["CHECK_SPECS", "TRAJECTORY_CHECKS", "CheckContext", "parse_check", "run_check", "run_checks",
           "short_circuit"]

# Loaded on first use: reading a case (cases/io.py parses its checks with spec.py) needs no rule.
_HOME = {"CheckContext": "context", "run_check": "sequence", "run_checks": "sequence", "short_circuit": "sequence"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
