"""Issue 35.3: a session that judges a case writes its rubric items' ids into case.yaml (first judged), the
file's comments kept; each run's judge record keeps the same id beside each item's verdict; a judge setting
turns the write off."""

from __future__ import annotations

import json

import pytest

from scarbook.cases.io import load_case
from scarbook.history.store import History
from scarbook.models.rubric import implicit_item_id
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401

pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = """\
id: judged
task: say hello
checks:
  - type: llm_judge
    rubric:
      - the answer says hello   # the point
      - the answer is one line
"""


def _project(project, judge_server, monkeypatch, extra: str = "") -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.config(f"agent: {{type: demo, seed: 7}}\nruns: 2\nconcurrency: 1\ntimeout_s: 30\n"
                   f"judge: {{base_url: {json.dumps(judge_server.url)}, max_retries: 0{extra}}}\n")
    project.case("judged", CASE)
    judge_server.default = tool_reply([("PASS", "hello"), ("FAIL", "two lines")])


def test_the_first_session_that_judges_a_case_writes_its_item_ids(project, judge_server, monkeypatch) -> None:
    _project(project, judge_server, monkeypatch)
    result = project.cli("eval", "judged", "-q")
    assert result.exit_code == 1, result.output
    ids = [implicit_item_id("the answer says hello"), implicit_item_id("the answer is one line")]
    text = (project.cases_dir / "judged" / "case.yaml").read_text()
    assert text.endswith(f"    rubric:\n      - {{id: {ids[0]}, text: the answer says hello}} # the point\n"
                         f"      - {{id: {ids[1]}, text: the answer is one line}}\n")
    assert load_case(project.cases_dir / "judged").judge_checks[0].written_ids == frozenset(ids)
    history = History(project.workspaces)
    [info] = history.sessions()
    for run in history.runs(info.id, "judged"):
        assert [(i.id, i.verdict) for i in run.checks[0].judge.items] == [(ids[0], "PASS"), (ids[1], "FAIL")]


def test_write_item_ids_false_leaves_case_yaml_as_it_is(project, judge_server, monkeypatch) -> None:
    _project(project, judge_server, monkeypatch, ", write_item_ids: false")
    assert project.cli("eval", "judged", "-q").exit_code == 1
    assert (project.cases_dir / "judged" / "case.yaml").read_text() == CASE


def test_a_session_refused_after_it_was_prepared_writes_no_item_ids(project, judge_server, monkeypatch) -> None:
    """The ids are written as the session starts (run/runner.py), not while it is prepared: `--agents` with
    `--executor ray` is refused after preparing (exit 2, nothing runs), and case.yaml stays as written."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.config(f"agent: {{type: demo, seed: 7}}\nagents:\n  a: {{type: demo, seed: 7}}\n  b: {{type: demo, seed: 8}}\n"
                   f"runs: 2\nconcurrency: 1\ntimeout_s: 30\n"
                   f"judge: {{base_url: {json.dumps(judge_server.url)}, max_retries: 0}}\n")
    before = project.case("judged", CASE).read_text()
    result = project.cli("eval", "judged", "-q", "--agents", "a,b", "--executor", "ray")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1].startswith("scarbook: --agents runs on this machine for now")
    assert (project.cases_dir / "judged" / "case.yaml").read_text() == before
    assert judge_server.requests == []
