"""Tokens and dollars: the agent's (from $SCARBOOK_USAGE) and the judge's (from its check results)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scarbook.fs import safefs
from scarbook.models import CheckResult, Usage

MAX_USAGE = 20_000_000  # bytes of $SCARBOOK_USAGE read at most
_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
           "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens",
           "cache_read_tokens": "cache_read_tokens", "cache_write_tokens": "cache_write_tokens"}


def usage_from_dict(d: dict[str, Any]) -> Usage:
    u = Usage()
    for key, attr in _FIELDS.items():
        value = d.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            setattr(u, attr, getattr(u, attr) + int(value))
    cost = d.get("cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        u.cost_usd = float(cost)
    return u


def read_agent_usage(path: Path | str, judge=None) -> Usage:
    """Sum the JSON lines an agent appended to $SCARBOOK_USAGE; lines that do not parse are ignored
    (the agent's bookkeeping must never turn a verdict into an error)."""
    total = Usage()
    folder, name = os.path.split(os.fspath(path))
    try:  # the agent wrote it: no link followed, a regular file only (a pipe would block the read)
        data, _ = safefs.read_file(folder, name, MAX_USAGE)
    except (safefs.Refused, OSError):
        return total
    prices = getattr(getattr(judge, "settings", None), "price_usage", None)
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(d, dict):
            continue
        u = usage_from_dict(d)
        if not u.cost_usd and prices and isinstance(d.get("model"), str):
            u.cost_usd = prices(d["model"], u)
        total.add(u)
    return total


def usage_of_checks(results: list[CheckResult]) -> tuple[Usage, int]:
    total, calls = Usage(), 0
    for r in results:
        if r.judge:
            total.add(usage_from_dict(r.judge.get("usage") or {}))
            calls += int(r.judge.get("calls", 0) or 0)
    return total, calls
