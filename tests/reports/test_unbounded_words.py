"""A judge-corrected ≈ interval of 0–100% says why in every report (run/gate.unbounded_words): the CLI table, JSON,
HTML and step summary did (34a5a78); JUnit and a session of several agents (`eval --agents`) did not — they showed
the bare interval, or the ≈ rate alone."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from scarbook.history.judge_truth import calibration_for
from scarbook.history.store import History
from scarbook.models import SessionInfo
from scarbook.models.session_parts import AgentEntry
from scarbook.project import Project
from scarbook.reports.github import step_summary
from scarbook.reports.table import build_report
from tests.judge.test_label_files import judged_run, scarbook
from tests.reports.test_judge_truth import calibrate, project  # noqa: F401 (the fixture: one calibrated session)

# tests/reports/test_judge_truth.py's session: 30 of 40 runs judged PASS, 40 labels
ONE_AGENT = (
    "90% CI 0–100%: the judge's error as its 40 labels bound it could account for every verdict on its own — each "
    "pass a false pass (it may pass up to 94% of failing runs), each fail a miss (it may fail up to 58% of passing "
    "runs); were its error known exactly, these 40 runs would give 17–71%: labels alone would not bound it "
    "within 100,000 more — the judge's PASS share among its 40 judged items in history is too uncertain: more "
    "judged runs would narrow it")
BOX = ("90% CI 0–100%: the judge's error as its 40 labels bound it could account for every verdict on its own — each "
       "pass a false pass (it may pass up to 85% of failing runs), each fail a miss (it may fail up to 67% of passing "
       "runs); were its error known exactly, these 20 runs would give ")
A_WORDS = (BOX + "22–84%: labels alone would not bound it within 100,000 more — the judge's PASS share among its 40 "
           "judged items in history is too uncertain: more judged runs would narrow it")
B_WORDS = BOX + "0–52%: more runs first, labels alone cannot bound it"


def test_junit_says_why_a_judge_corrected_interval_is_0_to_100(project):  # noqa: F811
    """Before: corrected_interval "[0.0000, 1.0000]" and nothing else."""
    res = scarbook(project, "report", "--json", str(project / "r.json"), "--junit", str(project / "j.xml"))
    assert res.exit_code == 0, res.output
    fixed = json.loads((project / "r.json").read_text())["cases"][0]["corrected"]
    assert fixed["ci_note"] == ONE_AGENT
    case = next(tc for tc in ET.parse(project / "j.xml").iter("testcase") if tc.get("name") == "alpha")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["corrected_interval"] == "[0.0000, 1.0000]"
    assert props["corrected_ci_note"] == ONE_AGENT
    rate = round(100 * fixed["rate"])
    assert f"judge-corrected: ≈{rate}%, {ONE_AGENT}" in case.find("system-out").text.splitlines()


@pytest.fixture
def two_agents(tmp_path) -> Path:
    """One `eval --agents a,b` session in history (alpha: a 15 of 20 judged PASS, b 10 of 20), every item labelled:
    both agents' ≈ intervals are 0–100%."""
    root = tmp_path
    (root / "scarbook.yaml").write_text("")
    history = History(root / "workspaces")
    marks = {"a": "p" * 15 + "f" * 5, "b": "p" * 10 + "f" * 10}
    info = SessionInfo(id="20261201-000001-000a", started_at="2026-12-01T09:00:00+00:00", case_ids=["alpha"],
                       runs_per_case=40, judge_model="claude-sonnet-4-6", agents=[AgentEntry("a"), AgentEntry("b")])
    history.start_session(info)
    for i in range(20):
        for j, name in enumerate("ab"):
            run = judged_run(info.id, "alpha", 2 * i + j + 1, "PASS" if marks[name][i] == "p" else "FAIL")
            run.agent = name
            history.record_run(run)
    info.state = "finished"
    history.finish_session(info)
    calibrate(root)
    return root


def test_a_session_of_several_agents_says_why_each_agents_interval_is_0_to_100(two_agents):
    """Before: the table showed '≈58%' and '≈17%' with no words, the JSON's agents section ci [0, 1] without ci_note,
    JUnit a_corrected_rate alone; the step summary said it for the baseline only, unnamed, and the HTML not at all."""
    root = two_agents
    out = {"json": root / "r.json", "junit": root / "j.xml", "html": root / "r.html"}
    res = scarbook(root, "report", *(arg for kind, path in out.items() for arg in (f"--{kind}", str(path))))
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert f"alpha (a): ≈58%, {A_WORDS}" in lines and f"alpha (b): ≈17%, {B_WORDS}" in lines, res.output
    agents = json.loads(out["json"].read_text())["agents"]["cases"][0]["agents"]
    assert (agents["a"]["corrected"]["ci"], agents["a"]["corrected"]["ci_note"]) == ([0.0, 1.0], A_WORDS)
    assert agents["b"]["corrected"]["ci_note"] == B_WORDS
    case = next(ET.parse(out["junit"]).iter("testcase"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert (props["a_corrected_ci_note"], props["b_corrected_ci_note"]) == (A_WORDS, B_WORDS)
    assert case.find("system-out").text.splitlines()[1:] == [f"a: ≈58%, {A_WORDS}", f"b: ≈17%, {B_WORDS}"]
    page = out["html"].read_text()
    assert f'<p class="muted">{escape(f"alpha (b): ≈17%, {B_WORDS}")}</p>' in page
    p = Project.discover(root)
    info = p.history.resolve("latest")
    summary = step_summary(build_report(info, p.history.runs(info.id), {}, p.config,
                                        calibration_for(p.history, p.workspaces_dir, p.config.judge)))
    assert f"alpha (a): ≈58%, {A_WORDS}  " in summary.splitlines() and f"alpha (b): ≈17%, {B_WORDS}" in summary
    assert f"alpha: {A_WORDS}" not in summary  # (the baseline's, unnamed, once said by the judge line)


def test_a_session_of_several_agents_says_its_comparison_is_called_on_the_judged_counts(two_agents):
    """In a session of several agents the gate is the comparison, called on the judged counts (stats/head_to_head.py),
    not on the ≈ rates: the CLI's table said so; the step summary's and the HTML's judge line said of the ≈ rates
    "the gate decides on them", as for one agent (before)."""
    root = two_agents
    res = scarbook(root, "report", "--html", str(root / "r.html"))
    assert res.exit_code == 0, res.output
    said = ("≈ rates corrected for the judge's measured error (its calibration); the decisions are made on the judged "
            "counts: the same judge grades every agent, so its error moves their rates alike")
    assert said in res.output.splitlines()
    p = Project.discover(root)
    info = p.history.resolve("latest")
    cal = calibration_for(p.history, p.workspaces_dir, p.config.judge)
    summary = step_summary(build_report(info, p.history.runs(info.id), {}, p.config, cal))
    line = (f"judge: ≈ rates corrected for the judge's measured error (40 labels, last {cal.calibrated_at}; "
            "docs/statistics.md); the decisions are made on the judged counts: the same judge grades every agent, "
            "so its error moves their rates alike")
    assert line in summary.replace("\\", "").splitlines()  # (Markdown's escapes taken out)
    assert "the gate decides on them" not in summary and "the gate decides on them" not in (root / "r.html").read_text()
