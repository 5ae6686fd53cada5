"""Numbers an agent reports about itself ($SCARBOOK_USAGE, its transcript's usage records): never trusted.

The agent writes them (in the sandbox too), so a value counts only if a count can be it: a number,
finite, not negative and at most the cap (per record: more is no real count). Anything else is left
out and said, so a run's figures can neither cancel each other (a negative record) nor break a
reader (1e999 is infinity in JSON)."""

from __future__ import annotations

import math
from typing import Any

from scarbook.models.run import Usage

MAX_TOKENS = 1_000_000_000
MAX_COST_USD = 10_000.0
# Every way a usage record names its counts -> the Usage field (Anthropic's names, scarbook's own).
TOKEN_FIELDS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                "cache_read_input_tokens": "cache_read_tokens", "cache_creation_input_tokens": "cache_write_tokens",
                "cache_read_tokens": "cache_read_tokens", "cache_write_tokens": "cache_write_tokens"}


def reported_number(value: Any, cap: float, key: str, problems: list[str] | None, where: str) -> float | None:
    """`value` if it is a number a count can be (finite, 0..cap), else None (and why, in `problems`:
    `WHERE: KEY VALUE is negative; ignored`). A value that is not a number at all is None, unsaid."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    why = ("is not finite" if isinstance(value, float) and not math.isfinite(value)
           else "is negative" if value < 0 else f"is over {cap:g}" if value > cap else "")
    if not why:
        return value
    if problems is not None:
        problems.append(f"{where}: {key} {value!r} {why}; ignored")
    return None


def reported_usage(d: dict[str, Any], problems: list[str] | None = None, where: str = "$SCARBOOK_USAGE") -> Usage:
    """The tokens and dollars of one usage record; a value that is not finite, is negative or is over
    the cap is left out (and said in `problems`)."""
    u = Usage()
    for key, attr in TOKEN_FIELDS.items():
        value = reported_number(d.get(key), MAX_TOKENS, key, problems, where)
        if value is not None:
            setattr(u, attr, getattr(u, attr) + int(value))
    cost = reported_number(d.get("cost_usd"), MAX_COST_USD, "cost_usd", problems, where)
    if cost is not None:
        u.cost_usd = float(cost)
    return u
