"""The model-API endpoints the recorder forwards — and nothing else.

The proxy holds the real key, so the path an agent asks for is matched as it was sent (never
decoded, never normalised) against this list: letters, digits, `_` and `-` between single slashes.
`..`, `%2e%2e`, `..%2f`, a doubled slash or an endpoint the list does not name is a 404 from the
proxy that never reaches the upstream. The upstream URL is then built from the matched path as is.
"""

from __future__ import annotations

import re

_ID = r"[A-Za-z0-9_-]{1,200}"
# vendor -> the paths after its base URL (ANTHROPIC_BASE_URL has no /v1; OPENAI_BASE_URL has it)
ENDPOINTS: dict[str, tuple[str, ...]] = {
    "anthropic": ("v1/messages", "v1/messages/count_tokens", "v1/messages/batches", f"v1/messages/batches/{_ID}",
                  f"v1/messages/batches/{_ID}/results", f"v1/messages/batches/{_ID}/cancel"),
    "openai": ("chat/completions", "responses", f"responses/{_ID}", f"responses/{_ID}/cancel",
               f"responses/{_ID}/input_items"),
}
_MATCH = {vendor: re.compile("|".join(f"(?:{p})" for p in paths)) for vendor, paths in ENDPOINTS.items()}
SHOWN = "; ".join(f"{vendor}: {', '.join(p.replace(_ID, 'ID') for p in paths)}" for vendor, paths in ENDPOINTS.items())


def split_target(raw: str, token: str) -> tuple[str, str, str] | None:
    """(vendor, path, query) of a request target `/<token>/<vendor>/<path>?<query>` as sent, or None
    when it does not start with this run's token."""
    path, _, query = raw.partition("?")
    prefix = f"/{token}/"
    if not path.startswith(prefix):
        return None
    vendor, _, tail = path[len(prefix):].partition("/")
    return vendor, tail, query


def known(vendor: str, tail: str) -> bool:
    """Whether `tail` (raw, as sent) is one of `vendor`'s endpoints exactly."""
    pattern = _MATCH.get(vendor)
    return pattern is not None and pattern.fullmatch(tail) is not None
