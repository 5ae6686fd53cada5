"""The run detail's head line counts judge calls in words a person reads: "1 call", "3 calls"."""

from __future__ import annotations

import pytest
from rich.text import Text

from scarbook.models import RunRecord
from scarbook.tui.widgets.run_detail import _head


@pytest.mark.parametrize(("calls", "words"), [(0, "(0 calls)"), (1, "(1 call)"), (3, "(3 calls)")])
def test_judge_calls_are_counted_in_words(calls, words):
    """Issue 26.15: "(1 calls)"."""
    t = Text()
    _head(t, RunRecord(session_id="s", case_id="c", k=1, status="fail", reason="r", judge_calls=calls))
    assert f"judge tokens 0 {words}" in t.plain
