"""Tokens and dollars: the agent's (from $SCARBOOK_USAGE) and the judge's (from its check results)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scarbook.fs import safefs
from scarbook.models import CheckResult, Usage

MAX_USAGE = 20_000_000  # bytes of $SCARBOOK_USAGE read at most
# The agent writes $SCARBOOK_USAGE (in the sandbox too): nothing there is trusted as a number. A value
# must be finite, not negative and at most these (per line: more is no real count), else it is ignored
# and the run says so. A negative cost would otherwise let a run's spend cancel the judge's (--max-cost).
MAX_TOKENS = 1_000_000_000
MAX_COST_USD = 10_000.0
MAX_NOTES = 3  # problems said per run; the rest are counted
_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
           "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens",
           "cache_read_tokens": "cache_read_tokens", "cache_write_tokens": "cache_write_tokens"}


def _valid(value: Any, cap: float, key: str, problems: list[str] | None, where: str) -> float | None:
    """`value` if it is a number a count can be (finite, 0..cap), else None (and why, in `problems`)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None  # not a number at all: not the agent's figure for this field (as before)
    why = ("is not finite" if isinstance(value, float) and not math.isfinite(value)
           else "is negative" if value < 0 else f"is over {cap:g}" if value > cap else "")
    if not why:
        return value
    if problems is not None:
        problems.append(f"$SCARBOOK_USAGE{where}: {key} {value!r} {why}; ignored")
    return None


def usage_from_dict(d: dict[str, Any], problems: list[str] | None = None, where: str = "") -> Usage:
    """The tokens and dollars of one usage line; a value that is not finite, is negative or is over the
    cap is left out (and said in `problems`)."""
    u = Usage()
    for key, attr in _FIELDS.items():
        value = _valid(d.get(key), MAX_TOKENS, key, problems, where)
        if value is not None:
            setattr(u, attr, getattr(u, attr) + int(value))
    cost = _valid(d.get("cost_usd"), MAX_COST_USD, "cost_usd", problems, where)
    if cost is not None:
        u.cost_usd = float(cost)
    return u


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
        except (json.JSONDecodeError, RecursionError):
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
        if r.judge:
            total.add(usage_from_dict(r.judge.get("usage") or {}))
            calls += int(r.judge.get("calls", 0) or 0)
    return total, calls
