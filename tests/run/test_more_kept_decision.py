"""`undecided: more`: a calibrated (judge-corrected) case a look decides keeps that look's decision in the
report — the one the runner took when it stopped the case, with the Holm family that look had — never
one taken again at the last look, where the family can be another.

Before, stats/decisions.decide_in_looks kept a calibrated case's decision from the last look only: the
runner (which reads each look as its last) stopped the case where a look decided it, and the report
(run/gate.decide_gate, which every face calls) decided it again at the last look. There the Holm family
can be bigger (a case whose errors left it without a verdict at the first look has one by the last):
the family's share of the nuisance level and Holm's factor both grow, and a case the runner called
below and stopped came out undecided."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scarbook.cases.io import load_case
from scarbook.checks import sequence
from scarbook.checks.rules import contains
from scarbook.history.judge_truth import calibration_for
from scarbook.project import Project
from scarbook.run.events import RunFinished, SessionFinished
from scarbook.run.gate import corrected_evidence
from scarbook.stats.corrected_gate import p_below
from scarbook.views.live_state import LiveSession
from tests.helpers.hostile_project import good_or_bad
from tests.helpers.judge_server import judge_server  # noqa: F401
from tests.judge.test_label_files import ITEM, scarbook
from tests.run.test_more_corrected import calibrate, write_project

# c's run 1 passes; its runs 2-10 say "bad" (the judge fails them). e's runs 1-6 write what e's check
# crashes on (an error: no verdict; a stand-in for a harness fault, as nothing an agent writes is known to make a
# rule check an error — the gate reads such a run as a fail too), the others pass.
AGENT = """\
from pathlib import Path
case, k = Path.cwd().parts[-2], int(Path.cwd().parts[-1])
if case == "c":
    Path("out.txt").write_text("renamed parse_args to read_args\\n" if k == 1 else "a bad summary\\n")
else:
    Path("e.txt").write_text("x" * 500 if k <= 6 else "ok\\n")
"""
CASE_C = f"""\
id: c
task: Rename parse_args and say so in out.txt
threshold: 0.75
checks:
  - type: llm_judge
    artifact: out.txt
    rubric:
      - {ITEM}
"""
CASE_E = """\
id: e
task: Write ok to e.txt
threshold: 0.5
checks:
  - {type: contains, path: e.txt, text: ok}
"""


def crashes_on_xs(ctx, params):
    if "x" * 100 in (ctx.workspace / params["path"]).read_text():
        raise RuntimeError("a harness fault")
    return contains(ctx, params)


@pytest.fixture
def project(tmp_path: Path, judge_server, monkeypatch) -> Path:  # noqa: F811
    write_project(tmp_path, judge_server.url, AGENT, {"c": CASE_C, "e": CASE_E})
    monkeypatch.setitem(sequence.ALL_RULES, "contains", crashes_on_xs)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    calibrate(tmp_path, lambda item: item.judge_verdict)  # a person agrees with the judge on every item
    return tmp_path


def test_a_calibrated_case_a_look_decided_keeps_that_looks_decision(project: Path, judge_server) -> None:  # noqa: F811
    """Looks at 10 and 20 runs, each at .05 / 2. At the first, c (1 judge PASS of 10 against 75%, the
    corrected test) is the family's only case with a verdict (e has 6 errors of 10: it needs 5 verdicts),
    corrected P(below) = .016 < .025: below, and the runner stops it at 10 runs. At the last look e has
    14 verdicts of 20 and joins the family: c's corrected P(below) in a family of 2 is .019, Holm's 2 x .019
    = .037 is over .025 — decided there, c would be undecided. The report says below, as the runner did."""
    judge_server.responder = good_or_bad
    out = project / "r.json"
    result = scarbook(project, "eval", "--runs", "10", "--max-runs", "20", "--gate", "evidence",
                      "--undecided", "more", "--json", str(out))
    assert "c: decided below after 10 runs" in result.output, result.output  # the runner's look 1
    report = json.loads(out.read_text())
    assert report["session"]["gate"]["looks"] == [10, 20]
    cases = {c["case_id"]: c for c in report["cases"]}
    assert "corrected" in cases["c"], cases["c"]  # the calibration is in use: c is decided on its corrected rate
    assert (cases["c"]["passes"], cases["c"]["fails"]) == (1, 9), cases["c"]  # stopped at the first look
    assert (cases["e"]["passes"], cases["e"]["errors"]) == (14, 6), cases["e"]  # ran on to the last
    # (e's 6 crashed checks read as fails too, as a crash on what the agent wrote: 14/20 is not above then)
    assert (cases["e"]["decision"], cases["e"]["gate_note"][:60]) == (
        "no verdict", "it reads above only because 6 runs' rule checks crashed on w"), cases["e"]
    assert cases["c"]["decision"] == "below", cases["c"]
    assert "below threshold: c" in result.output and result.exit_code == 1, result.output
    p = Project.discover(project)
    info = p.history.read_session(report["session"]["id"])
    ran = {cid: load_case(project / "cases" / cid) for cid in ("c", "e")}
    calibration = calibration_for(p.history, p.workspaces_dir, p.config.judge, ran)
    assert calibration.usable_error is not None
    found = corrected_evidence("c", p.history.runs(info.id, "c"), calibration.usable_error)
    assert found is not None
    level = 0.05 / 2
    # c's corrected P(below) in the first look's family of 1 (.016) and Holm's in the last look's of 2 (2 x .019)
    assert p_below(found, 0.75, level, family=1) < level < 2 * p_below(found, 0.75, level, family=2)
    # the live screen, folded from the session's runs as they finished, says what the report says
    live = LiveSession(list(ran.values()), 20, p.config, calibration=calibration)
    for r in sorted(p.history.runs(info.id), key=lambda r: r.k):
        live.apply(RunFinished(r))
    live.apply(SessionFinished(info))
    assert live.gate == {"c": "below", "e": "no verdict"}  # the live screen reads it as the report does
