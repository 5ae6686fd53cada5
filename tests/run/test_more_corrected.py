"""`undecided: more` with a calibrated judge: the runner stops a case at a look only where the gate the
report prints — on the judge-corrected rate — decides it, never where the judge's raw verdicts alone do.

Before, the runner's looks read the raw verdicts: a judge that passed all 6 runs at a 50% threshold
decided the case above at the first look (P(X >= 6 | 6, .5) = .016 < .05 / 2), so it got no more runs;
the report then decided it on its corrected rate, which 6 runs of a judge that passes many failing runs
cannot call, and printed it undecided after 6 of the 12 runs it was allowed."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from scarbook.config import load_config
from scarbook.history.store import History
from scarbook.judge.calibrate import CalibrationItem, judged_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.judge.settings import DEFAULT_MODEL
from scarbook.models import SessionInfo
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401
from tests.judge.test_label_files import ITEM, judged_run, scarbook

AGENT = 'from pathlib import Path\nPath("out.txt").write_text("renamed parse_args to read_args\\n")\n'
CASE = f"""\
id: c
task: Rename parse_args and say so in out.txt
threshold: 0.5
checks:
  - type: llm_judge
    artifact: out.txt
    rubric:
      - {ITEM}
"""


def write_project(root: Path, judge_url: str, agent: str, cases: dict[str, str], extra: str = "") -> Path:
    """scarbook.yaml (the command agent `agent`'s source, unconfined, two at a time; the loopback judge; `extra`
    settings), and cases/<id>/case.yaml."""
    (root / "agent.py").write_text(agent)
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(root / "agent.py"))}]
        concurrency: 2
        isolation: none
        judge:
          model: {DEFAULT_MODEL}
          base_url: {judge_url}
          max_retries: 1
          timeout_s: {JUDGE_TIMEOUT_S}
        """) + extra)
    for cid, text in cases.items():
        (root / "cases" / cid).mkdir(parents=True)
        (root / "cases" / cid / "case.yaml").write_text(text)
    return root


@pytest.fixture
def project(tmp_path: Path, judge_server, monkeypatch) -> Path:  # noqa: F811
    write_project(tmp_path, judge_server.url, AGENT, {"c": CASE})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    calibrate(tmp_path, passes_failing_runs)
    return tmp_path


def judge_url_of(root: Path) -> str:
    """Where the project's judge is reached, as its runs record it (the labels of its verdicts count for it alone)."""
    return load_config(root / "scarbook.yaml").judge.recorded_base_url()


def calibrate(root: Path, truth: Callable[[CalibrationItem], str], labeled_at: str = "2026-12-02") -> None:
    """An earlier session of case c, 40 judged runs (judge: 30 PASS, 10 FAIL) by the project's judge, every item
    labelled by a person on `labeled_at`: `truth(item)`, the label."""
    history = History(root / "workspaces")
    info = SessionInfo(id="20261201-000001-000a", started_at="2026-12-01T09:00:00+00:00", case_ids=["c"],
                       runs_per_case=40, judge_model=DEFAULT_MODEL)
    history.start_session(info)
    for k in range(1, 41):
        history.record_run(judged_run(info.id, "c", k, "PASS" if k <= 30 else "FAIL", base_url=judge_url_of(root)))
    info.state = "finished"
    history.finish_session(info)
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        for item in judged_items(history.iter_all_runs()):
            store.save_label(item, truth(item), labeled_at=labeled_at)
    finally:
        store.close()


def passes_failing_runs(item: CalibrationItem) -> str:
    """The judge's FAILs are right, and 12 of its 30 PASSes were fails (it passes failing runs)."""
    wrong = item.judge_verdict == "PASS" and item.k % 5 in (1, 2)
    return "FAIL" if wrong or item.judge_verdict == "FAIL" else "PASS"


def test_a_case_the_raw_verdicts_decide_runs_on_while_the_corrected_gate_cannot(project: Path, judge_server) -> None:  # noqa: F811
    judge_server.default = tool_reply([("PASS", "names it")])
    out = project / "r.json"
    result = scarbook(project, "eval", "--runs", "6", "--max-runs", "12", "-q", "--gate", "evidence",
                      "--undecided", "more", "--json", str(out))
    assert "≈rate" in result.output, result.output  # the calibration is in use: the gate reads the corrected rate
    report = json.loads(out.read_text())
    assert report["session"]["gate"]["looks"] == [6, 12]
    (case,) = report["cases"]
    # the raw verdicts decided at 6 runs; the corrected gate did not, so the case ran on to its cap
    assert (case["passes"], case["fails"], case["errors"]) == (12, 0, 0), case
    assert len(judge_server.requests) == 12
    assert case["decision"] == "undecided", case
    lo, hi = case["corrected"]["ci"]
    assert lo < 0.5 < hi, case["corrected"]
    assert "c: undecided at 12/12" in result.output, result.output
