"""Types that say what they mean: a run's status is a RunStatus whose values are the plain words
history and JSON hold; one percent formatter and one glyph map serve the CLI, the reports and the TUI."""

from __future__ import annotations

import json

import pytest

from scarbook.models import RUN_STATUSES, STATUS_GLYPH, RunRecord, RunStatus
from scarbook.reports.table import strip_of
from scarbook.stats.rates import count_statuses
from scarbook.text import pct


def test_run_status_values_are_the_words_history_holds() -> None:
    assert [str(s) for s in RUN_STATUSES] == ["pass", "fail", "error", "unjudged"]
    record = RunRecord(session_id="s", case_id="c", k=1, status=RunStatus.UNJUDGED, reason="r")
    assert json.loads(json.dumps(record.to_dict()))["status"] == "unjudged"
    assert f"{RunStatus.FAIL} / {RunStatus.FAIL!r}" == "fail / 'fail'"
    # a status read back from history is the plain string, and compares equal to the member
    assert RunStatus.PASS == "pass" and {"pass": 1}[RunStatus.PASS] == 1


def test_counts_and_glyphs_take_plain_strings_and_members_alike() -> None:
    runs = [RunRecord(session_id="s", case_id="c", k=k, status=s, reason="")
            for k, s in enumerate(["pass", RunStatus.FAIL, "error", RunStatus.PASS, "weird"], 1)]
    assert count_statuses(runs) == {"pass": 2, "fail": 1, "error": 2, "unjudged": 0}
    assert strip_of(runs[:4]) == "✓✗!✓"
    assert [STATUS_GLYPH[s] for s in ("pass", "fail", "error", "unjudged", "skipped")] == ["✓", "✗", "!", "?", "-"]


@pytest.mark.parametrize("x, kwargs, text", [
    (0.8, {}, "80%"),
    (None, {}, "–"),
    (0.05, {"signed": True}, "+5%"),
    (-0.125, {"signed": True, "unit": ""}, "-12"),
    (None, {"none": "—"}, "—"),
    (0.5, {"width": 4}, "  50%"),
    (1.0, {"width": 4}, " 100%"),
    (0.796, {}, "80%"),
])
def test_pct(x, kwargs, text) -> None:
    assert pct(x, **kwargs) == text


def test_agent_types_and_keys_come_from_the_one_registry() -> None:
    from scarbook.agents import AGENT_KINDS, AgentSpec, make_agent
    from scarbook.fs.settings import keys_of

    assert tuple(AGENT_KINDS) == ("demo", "command", "python", "claude-code", "codex")
    assert {t: keys_of(k) for t, k in AGENT_KINDS.items()} == {
        "demo": ("type", "seed", "profile", "draws"),  # delay is the TUI's, never the file's
        "command": ("type", "argv", "stdin", "env", "max_output_bytes", "transcript"),
        "python": ("type", "function"),
        "claude-code": ("type", "args", "env", "max_output_bytes"),
        "codex": ("type", "args", "env", "max_output_bytes")}
    # capabilities are declared: only the in-process python agent cannot be sandboxed
    assert [t for t, k in AGENT_KINDS.items() if not k.SANDBOX] == ["python"]
    assert {t for t, k in AGENT_KINDS.items() if k.KEEPS_TRANSCRIPT} == {"demo", "claude-code", "codex"}
    # every agent answers what the run asks of it (no getattr probing): env pass-through and its sandbox
    for raw in ({"type": "demo"}, {"type": "command", "argv": ["true"]}, {"type": "python", "function": "m:f"}):
        agent = make_agent(AgentSpec.from_config(raw))
        assert isinstance(tuple(agent.env_allow), tuple) and agent.sandbox_for(None) is None
