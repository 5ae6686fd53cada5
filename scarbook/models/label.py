"""A session's label: the name it is picked by (`report prompt-v2`, `diff prompt-v1 prompt-v2`).

At most MAX_LABEL_CHARS: session/plan.check_label refuses a longer --label, and a label scarbook makes from
another session's (a rejudge's "rejudge of <label>") is cut to fit by derived_label.
"""

from __future__ import annotations

MAX_LABEL_CHARS = 120


def derived_label(prefix: str, of: str) -> str:
    """The label of a session made from another ("rejudge of " + its label) within MAX_LABEL_CHARS, as eval's
    --label must be: a longer one keeps the start and the end of `of` with "…" between them, so two labels that
    differ only at their ends (prompt-v1, prompt-v2) still give two labels."""
    room = MAX_LABEL_CHARS - len(prefix)
    if len(of) <= room:
        return prefix + of
    tail = (room - 1) // 3
    return f"{prefix}{of[:room - 1 - tail]}…{of[len(of) - tail:]}"
