"""Tokens and dollars: the agent's (from $SCARBOOK_USAGE) and the judge's (from its check results)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scarbook.fs import safefs
from scarbook.models import CheckResult, Usage
from scarbook.models.reported import reported_usage

MAX_USAGE = 20_000_000  # bytes of $SCARBOOK_USAGE read at most
# The agent writes $SCARBOOK_USAGE (in the sandbox too): nothing there is trusted as a number
# (models/reported.py). A negative cost would otherwise let a run's spend cancel the judge's (--max-cost).
MAX_NOTES = 3  # problems said per run; the rest are counted


def usage_from_dict(d: dict[str, Any], problems: list[str] | None = None, where: str = "") -> Usage:
    """The tokens and dollars of one $SCARBOOK_USAGE line (models/reported.py: bad values left out, said)."""
    return reported_usage(d, problems, f"$SCARBOOK_USAGE{where}")


def read_agent_usage(path: Path | str, prices: Callable[[str, Usage], float] | None = None,
                     notes: list[str] | None = None) -> Usage:
    """Sum the JSON lines an agent appended to $SCARBOOK_USAGE; lines that do not parse are ignored
    (the agent's bookkeeping must never turn a verdict into an error), and so are values no count can
    be (negative, not finite, over the cap): each is said in `notes`, at most MAX_NOTES of them.
    `prices` (the judge settings' price_usage) costs a line that names its model but not its cost."""
    total = Usage()
    problems: list[str] = []
    folder, name = os.path.split(os.fspath(path))
    try:  # the agent wrote it: no link followed, a regular file only (a pipe would block the read)
        data, _ = safefs.read_file(folder, name, MAX_USAGE)
    except (safefs.Refused, OSError):
        return total
    for no, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        try:
            d = json.loads(line)
        except (ValueError, RecursionError):  # (ValueError: not JSON, or an integer longer than int() converts)
            continue
        if not isinstance(d, dict):
            continue
        u = usage_from_dict(d, problems, f" line {no}")
        if not u.cost_usd and prices and isinstance(d.get("model"), str):
            u.cost_usd = prices(d["model"], u)
        total.add(u)
    if notes is not None and problems:
        notes.extend(problems[:MAX_NOTES])
        if len(problems) > MAX_NOTES:
            notes.append(f"$SCARBOOK_USAGE: {len(problems) - MAX_NOTES} more values ignored")
    return total


def usage_of_checks(results: list[CheckResult]) -> tuple[Usage, int]:
    total, calls = Usage(), 0
    for r in results:
        if r.judge is not None:
            total.add(r.judge.usage)
            calls += r.judge.calls
    return total, calls
