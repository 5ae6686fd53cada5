"""A session of several agents in every report file (issue 36): JUnit (a property per agent, the decision,
a failure where a candidate is shown worse by more than the margin), the GitHub step summary and its
annotations, and the HTML report's side-by-side section."""

from __future__ import annotations

import html
import json
from xml.etree import ElementTree as ET

import pytest

from tests.cli.test_eval_agents import AGENT, CASE, CONFIG


@pytest.fixture
def compared(project, tmp_path, monkeypatch):
    """One finished `eval --agents base,cand` session (90% against 60% on alpha and beta) with its files."""
    script = project.root / "agent.sh"
    script.write_text(AGENT)
    script.chmod(0o755)
    project.config(CONFIG, gate=None)
    for cid in ("alpha", "beta"):
        project.case(cid, CASE.format(cid=cid))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    junit, out = tmp_path / "report.xml", tmp_path / "report.json"
    result = project.cli("eval", "--agents", "base,cand", "--runs", "40", "-q", "--junit", str(junit), "--json", str(out))
    assert result.exit_code == 1, result.stdout + result.stderr
    return project, result, junit, summary, json.loads(out.read_text())


def test_junit_has_a_testcase_per_case_and_candidate_with_each_agents_numbers(compared) -> None:
    _, _, junit, _, report = compared
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "2", "0")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["agents"] == "base,cand" and props["baseline_agent"] == "base" and props["exit_code"] == "1"
    assert props["headline_cand"].startswith("cand: -30 points on the mean of 2 cases")
    alpha = next(tc for tc in suite.iter("testcase") if tc.get("name") == "alpha [cand vs base]")
    tprops = {p.get("name"): p.get("value") for p in alpha.find("properties")}
    assert (tprops["base_rate"], tprops["cand_rate"]) == ("0.9000", "0.6000")
    assert (tprops["cand_decision"], tprops["cand_gate"]) == ("worse", "inferior")
    assert alpha.find("failure").get("type") == "inferior"
    assert alpha.find("failure").get("message").startswith("cand against base on alpha: -30 [-47, -11] pts — WORSE")
    assert next(tc for tc in suite.iter("testcase") if tc.get("name") == "suite [cand vs base]").find("failure") is None


def test_the_step_summary_and_annotations_show_the_comparison(compared) -> None:
    _, result, _, summary, _ = compared
    md = summary.read_text()
    assert "— exit 1 (a candidate shown worse than the baseline by more than the margin)" in md
    assert "### Agents: `base`, `cand` (baseline `base`, margin ±5 pts)" in md
    assert "| `alpha` | `cand` | 90% (77–96%) 36/40 | 60% (45–74%) 24/40 | -30 [-47, -11] | **WORSE** | **INFERIOR** |" in md
    assert "| suite (2 cases) | `cand` | | | -30 [-100, +52] | undecided | undecided |" in md
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 2
    assert annotations[0].startswith("::error file=cases/alpha/case.yaml,title=scarbook%3A alpha candidate worse "
                                     "than the baseline::cand against base on alpha: -30 [-47, -11] pts")


def test_the_html_report_puts_the_agents_side_by_side(compared, tmp_path) -> None:
    project, _, _, _, report = compared
    out = tmp_path / "report.html"
    assert project.cli("report", report["session"]["id"], "--html", str(out)).exit_code == 0  # eval is the gate
    page = out.read_text()
    assert '<h2 id="agents">Agents: base, cand (baseline base)</h2>' in page
    assert "<th>base</th><th>cand</th><th>cand − base</th>" in page
    assert page.count('aria-label="difference against the baseline"') == 3  # two cases and the suite
    assert "-30 [-47, -11] pts · <b>WORSE</b>, gate INFERIOR" in page


def test_judge_corrected_rates_stand_beside_each_agents_raw_rate() -> None:
    """With a calibration, each agent's rate of a case is printed with its judge-corrected one (≈); the
    decision stays on the judged counts, and the table says so."""
    from scarbook.config import Config
    from scarbook.models import RunRecord, RunStatus, SessionInfo
    from scarbook.models.session_parts import AgentEntry
    from scarbook.reports.versus_table import format_versus
    from scarbook.run.versus import compare_session
    from scarbook.stats.corrected import Corrected

    info = SessionInfo(id="s", case_ids=["alpha"], agents=[AgentEntry("a"), AgentEntry("b")])
    runs = [RunRecord("s", "alpha", k, RunStatus.PASS if k % 2 or k < 10 else RunStatus.FAIL, "", agent="ab"[k % 2])
            for k in range(1, 21)]
    versus = compare_session(info, runs, Config(), {"alpha": 0.8})
    assert versus is not None
    for name, rate in (("a", 0.71), ("b", 0.93)):
        versus.stat(name, "alpha").corrected = Corrected(rate, rate - 0.1, rate + 0.05, 0.9, 0.9, 40, "2026-12-01",
                                                         0.01, 0.01, centre=rate)
    text = format_versus(versus)
    assert " ≈71%" in text and " ≈93%" in text
    assert "≈ rates corrected for the judge's measured error (its calibration); the decisions are made on the " \
           "judged counts" in text


def test_a_one_case_suite_row_says_one_case() -> None:
    from scarbook.config import Config
    from scarbook.models import RunRecord, RunStatus, SessionInfo
    from scarbook.models.session_parts import AgentEntry
    from scarbook.reports.versus_files import markdown_section
    from scarbook.run.versus import compare_session

    info = SessionInfo(id="s", case_ids=["alpha"], agents=[AgentEntry("a"), AgentEntry("b")])
    runs = [RunRecord("s", "alpha", k, RunStatus.PASS, "", agent="ab"[k % 2]) for k in range(1, 7)]
    versus = compare_session(info, runs, Config(), {"alpha": 0.8})
    assert versus is not None
    assert "| suite (1 case) | `b` | | | +0 [-56, +56] | undecided | undecided |" in markdown_section(versus)


def test_a_calibration_that_cannot_correct_is_said_under_the_agents_table_as_under_one_agents() -> None:
    """Labels exist but cannot correct the rates (too few): a session of several agents says why its rates
    stand raw, in the single-agent table's words; without labels, or with rule checks alone, nothing is said."""
    from scarbook.config import Config
    from scarbook.history.judge_truth import Calibration
    from scarbook.models import SessionInfo
    from scarbook.models.session_parts import AgentEntry
    from scarbook.reports.table import build_report, format_table
    from tests.helpers.item_history import judged_run

    info = SessionInfo(id="s", case_ids=["alpha"], agents=[AgentEntry("a"), AgentEntry("b")])
    runs = [judged_run("s", "alpha", k, [("r1", "out.txt says hi")], [["PASS" if k % 3 else "FAIL"]]) for k in range(1, 9)]
    for r in runs:
        r.agent = "ab"[r.k % 2]
    why = "too few labels: 2 (1 PASS, 1 FAIL); correcting needs 30 with 10 of each class"
    text = format_table(build_report(info, runs, {}, Config(), Calibration(None, why, labels=2)))
    assert f"judge: rates not corrected for the judge's error — {why}" in text.splitlines()
    assert "judge:" not in format_table(build_report(info, runs, {}, Config(), None))


def test_runs_the_machine_failed_are_errors_in_every_report_file(project, tmp_path, monkeypatch) -> None:
    """The candidate's 8 runs that died of a 529 (infra retries ran out) are errors beside its rate in the step
    summary, the annotations and the HTML, and its testcase has an <error type="infra"> naming them, as one
    agent's testcase has (before: no <error> at all, errors="0", under exit code 3)."""
    from tests.cli.test_eval_agents import _infra_project

    _infra_project(project, "6")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    junit, out, page = tmp_path / "report.xml", tmp_path / "report.json", tmp_path / "report.html"
    result = project.cli("eval", "--agents", "base,cand", "--runs", "20", "-q", "--junit", str(junit), "--json", str(out))
    assert result.exit_code == 3, result.stdout + result.stderr

    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "1")
    alpha = next(tc for tc in suite.iter("testcase") if tc.get("name") == "alpha [cand vs base]")
    tprops = {p.get("name"): p.get("value") for p in alpha.find("properties")}
    assert (tprops["cand_passes"], tprops["cand_fails"], tprops["cand_errors"], tprops["cand_rate"]) == ("12", "0", "8", "1.0000")
    error = alpha.find("error")
    assert (error.get("type"), error.get("message")) == (
        "infra", "infra retries ran out: 8 runs still failed by the machine on the last attempt — no verdict (exit 3)")
    lines = error.text.splitlines()
    assert len(lines) == 9 and lines[1].startswith("run ") and " (cand): error — agent exited with code 1: " in lines[1]
    assert lines[1].endswith("[cause infra: api-overloaded] (2 attempts)")

    md = summary.read_text()
    assert "| `alpha` | `cand` | 90% (70–97%) 18/20 | 100% (76–100%) 12/12 +8 err | +10 [-15, +30] |" in md
    warning = next(line for line in result.stdout.splitlines() if line.startswith("::warning"))
    assert "cand: 8 runs errored (harness could not reach a verdict; not in the rate); cand: 8 runs still failed " \
           "by the machine (infra) on the last attempt: no verdict" in warning
    report = json.loads(out.read_text())
    assert project.cli("report", report["session"]["id"], "--html", str(page)).exit_code == 0  # eval is the gate
    assert "<td>100% (76–100%) 12/12 +8 err<br>" in page.read_text()


def test_a_case_a_side_cannot_be_compared_on_is_said_under_the_summary_and_html_tables(project, tmp_path, monkeypatch) -> None:
    from tests.cli.test_eval_agents import _infra_project

    _infra_project(project, "2")
    summary, page = tmp_path / "summary.md", tmp_path / "report.html"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = tmp_path / "report.json"
    assert project.cli("eval", "--agents", "base,cand", "--runs", "20", "-q", "--json", str(out)).exit_code == 3
    said = ("alpha (cand): no verdict — only 4 of the candidate's 20 runs reached a verdict (16 errors); a comparison "
            "needs at least 10 on each side (errors cannot count as evidence)")
    assert said in summary.read_text()
    project.cli("report", json.loads(out.read_text())["session"]["id"], "--html", str(page))
    assert f'<p class="muted">{html.escape(said)}</p>' in page.read_text()
