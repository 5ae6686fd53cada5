"""session/prepare.py reads the judge's calibration once per session (issue 32.4): the ready session's
decider and its report correct with the same reading, and `scarbook eval` opens calibration.json once —
not once to prepare and again to report."""

from __future__ import annotations

import json

import pytest

from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401

pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = """\
id: greeted
task: greet the user
checks:
  - type: llm_judge
    rubric:
      - the answer says hello
"""


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """Each calibration.json opened for its labels (judge/label_store.read_labels, history's calibration reader's)."""
    from scarbook.judge import label_store

    seen: list[str] = []

    class Counted(label_store.CalibrationStore):
        def __init__(self, path) -> None:
            seen.append(str(path))
            super().__init__(path)

    monkeypatch.setattr(label_store, "CalibrationStore", Counted)
    return seen


@pytest.mark.parametrize("skip", [False, True], ids=["judged", "skip-judge"])
def test_eval_reads_the_calibration_once(project, judge_server, monkeypatch, opened, skip: bool) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.config(f"agent: {{type: demo, seed: 7}}\nruns: 2\nconcurrency: 1\ntimeout_s: 30\n"
                   f"judge: {{base_url: {json.dumps(judge_server.url)}, max_retries: 0, write_item_ids: false}}\n")
    project.case("greeted", CASE)
    judge_server.default = tool_reply([("PASS", "hello")])
    out = project.root / "report.json"
    result = project.cli("eval", "greeted", "-q", "--json", str(out), *(["--skip-judge"] if skip else []))
    assert result.exit_code == (3 if skip else 0), result.output
    assert opened == [str(project.workspaces / "history" / "calibration.json")]
    # what the report says of the calibration is that one reading
    assert json.loads(out.read_text())["judge_calibration"]["reason"].startswith("not calibrated: no human labels yet")
