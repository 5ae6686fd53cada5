"""What CI reads: JUnit with the statistics, GitHub step summary and annotations, the HTML report —
on real sessions of the demo agent and of a hostile command agent."""

from __future__ import annotations

import json
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from scarbook.models import SessionInfo
from scarbook.reports.table import SessionReport
from scarbook.stats.rates import summarize_counts
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.paths import REPO
from tests.helpers.pattern_agent import PATTERN_AGENT

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

# Everything an agent can put in a run reason or an output: terminal escapes (colour, OSC title),
# C0 controls and NUL, DEL, an XML CDATA end, markup, a Markdown table pipe, a workflow command
# after a newline, and bytes that are not UTF-8 (read back as surrogates or U+FFFD).
HOSTILE = ("\x1b[31mRED\x1b[0m \x1b]0;pwned\x07 ]]> <script>alert(1)</script> <img src=https://evil.example/x.png> "
           "& \x00\x01\x08\x0b\x0c\x1f\x7f | `code` %0A::error::forged\n::error file=x::forged-line")
HOSTILE_AGENT = f"""\
import sys
from pathlib import Path
hostile = {HOSTILE!r}
Path("out.txt").write_text("bad: " + hostile)
Path("\\x1b[31m]]>evil<b>\\x01|\\n::error file=x::forged.txt").write_text("x")
sys.stdout.buffer.write(b"\\xff\\xfe\\xed\\xa0\\x80 " + hostile.encode())
sys.stderr.write(hostile)
"""
HOSTILE_CASE = """\
id: hostile
task: be hostile
checks:
  - {type: only_changed, paths: [out.txt]}
"""


@pytest.fixture
def hostile(project):
    (project.root / "agent.py").write_text(HOSTILE_AGENT)
    project.config(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(project.root / "agent.py"))}]
        runs: 2
        threshold: 0.8
        gate: {{mode: point}}  # 2 runs cannot show a case below (evidence mode); these tests are about text
        """)
    project.case("hostile", HOSTILE_CASE)
    project.case("calm", "id: calm\ntask: nothing\nchecks:\n  - {type: not_contains, path: out.txt, text: zzz}\n")
    return project


def _bless_and_regress(project) -> None:
    """A baseline of the default demo agent, then the regressed profile (write-one-line drops)."""
    project.bundled()
    project.cli("eval", "-q", "-n", "20", "write-one-line", "fix-json-config")
    project.cli("baseline", "set")
    cfg = project.root / "scarbook.yaml"
    cfg.write_text(cfg.read_text().replace("type: demo", "type: demo\n  profile: regressed"))


# --- JUnit ---


def test_junit_carries_each_cases_statistics_and_each_failing_runs_reason(project, tmp_path):
    _bless_and_regress(project)
    xpath = tmp_path / "junit.xml"
    res = project.cli("eval", "-q", "-n", "20", "write-one-line", "fix-json-config", "--against", "baseline",
                      "--junit", str(xpath))
    assert res.exit_code == 1
    suite = ET.parse(xpath).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    suite_props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert suite_props["exit_code"] == "1" and suite_props["baseline_session"]
    tc = {t.get("name"): t for t in suite.findall("testcase")}
    props = {p.get("name"): p.get("value") for p in tc["write-one-line"].find("properties")}
    assert (props["passes"], props["fails"], props["errors"]) == ("8", "12", "0")
    assert props["rate"] == "0.4000" and props["gate"] == "below" and props["threshold"] == "0.8000"
    assert props["interval"] == f"[{props['interval_lo']}, {props['interval_hi']}]"
    assert float(props["interval_lo"]) == pytest.approx(0.2188, abs=1e-4)
    assert props["pass_hat_k"] == "0.0036" and props["k"] == "5"
    assert props["baseline_rate"] == "0.9000" and props["baseline_verdict"] == "regressed"
    assert "unjudged" not in props  # only when some run went unjudged
    failure = tc["write-one-line"].find("failure")
    assert failure.get("type") == "below-threshold"
    assert failure.get("message").startswith("below threshold: pass rate 40% (8/20), 95% CI 22-61%, pass^5 0%")
    assert "; regressed against the baseline: 90% -> 40% (-50 pts, 95% CI [" in failure.get("message")
    lines = failure.text.splitlines()
    assert len(lines) == 1 + 12  # the summary, then one line per failing run
    assert all(" fail — check " in line for line in lines[1:])
    assert tc["fix-json-config"].find("failure") is None


def test_junit_is_well_formed_whatever_the_agent_printed(hostile, tmp_path):
    xpath = tmp_path / "junit.xml"
    res = hostile.cli("eval", "-q", "--junit", str(xpath))
    assert res.exit_code == 1
    raw = xpath.read_text(encoding="utf-8")
    suite = ET.fromstring(raw.encode())  # raises on a control character, a lone surrogate, a bad ]]>
    assert "\x1b" not in raw and "\x01" not in raw and "\x00" not in raw
    tc = {t.get("name"): t for t in suite.findall("testcase")}
    failure = tc["hostile"].find("failure")
    lines = failure.text.splitlines()
    assert len(lines) == 3  # summary + one line per run: a newline in a file name cannot add lines
    assert lines[1].startswith("run 1: fail — check 1 (only_changed): changed outside the allowed list: created ")
    assert "]]>evil<b>\\x01|" in lines[1]  # what was there stays readable, escaped


# --- GitHub Actions ---


def test_step_summary_and_one_annotation_per_case_that_needs_attention(project, tmp_path, monkeypatch):
    _bless_and_regress(project)
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    res = project.cli("eval", "-q", "-n", "20", "write-one-line", "fix-json-config", "--against", "baseline")
    assert res.exit_code == 1
    commands = [line for line in res.stdout.splitlines() if line.startswith("::")]
    assert commands == [
        "::error file=cases/write-one-line/case.yaml,title=scarbook%3A write-one-line below threshold::"
        "below threshold: pass rate 40%25 (8/20, 95%25 CI 22–61%25) < 80%25; regressed against the baseline: "
        "90%25 -> 40%25 (-50 pts, 95%25 CI [-70, -21], Holm p 0.004)"]
    md = summary.read_text()
    assert md.startswith("# earlier step\n## scarbook: ")  # appended, not overwritten
    assert "— exit 1 (below threshold or regressed)" in md
    assert "| `write-one-line` | 40% | 22–61% | 0% | red | **below** · **regressed** | 8 / 12 / 0 |" in md
    assert "| `fix-json-config` | 80% | 58–92% | 28% | yellow | ok | 16 / 4 / 0 |" in md
    assert "### Against the baseline (session `" in md
    assert "| `write-one-line` | 90%  18/20 | 40%   8/20 | -50 [-70, -21] | 0.002 | 0.004 | **regressed** |" in md
    assert "<details><summary><code>write-one-line</code>: 12 runs</summary>" in md
    assert "(fail): check 3 \\(line\\_count\\): tmp\\.txt has 7 lines, expected exactly 1" in md


def test_no_github_environment_no_summary_no_annotations(project, monkeypatch):
    project.bundled()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    res = project.cli("eval", "-q", "-n", "10", "write-one-line")
    assert not [line for line in res.stdout.splitlines() if line.startswith("::")]


def test_warnings_for_errors_no_verdict_and_undecided():
    from scarbook.config import GatePolicy
    from scarbook.reports.github import case_annotations
    from scarbook.stats.decisions import gate_stats

    session = SessionInfo("s1", case_ids=["errs", "none", "undecided", "fine"], decisions={"undecided": "undecided"},
                          state="finished")
    stats = [summarize_counts("errs", 9, 0, 2, 0.8), summarize_counts("none", 0, 0, 3, 0.8),
             summarize_counts("undecided", 32, 8, 0, 0.8), summarize_counts("fine", 10, 0, 0, 0.8)]
    statuses = {s.case_id: ["pass"] * s.passes + ["fail"] * s.fails + ["error"] * s.errors for s in stats}
    stats = gate_stats(stats, GatePolicy(), statuses, sequential={"errs": "above", "none": "undecided",
                                                                  "undecided": "undecided", "fine": "above"})
    rep = SessionReport(session, stats, [])
    files = {s.case_id: f"cases/{s.case_id}/case.yaml" for s in stats}
    assert case_annotations(rep, None, files) == [
        "::warning file=cases/errs/case.yaml,title=scarbook%3A errs needs attention::2 runs errored "
        "(harness could not reach a verdict; not in the rate)",
        "::warning file=cases/none/case.yaml,title=scarbook%3A none needs attention::no verdict: only 0 of its 3 "
        "runs reached a verdict; the gate needs at least 3 (errors cannot count as evidence); 3 runs errored "
        "(harness could not reach a verdict; not in the rate)",
        "::warning file=cases/undecided/case.yaml,title=scarbook%3A undecided needs attention::undecided: --runs auto "
        "reached its cap without deciding",
    ]


def test_annotation_paths_are_relative_to_the_repository(project, monkeypatch):
    project.bundled()
    path = project.cases_dir / "write-one-line" / "case.yaml"
    path.write_text(path.read_text().replace("threshold: 0.8", "threshold: 0.95"))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project.root.parent))  # the project is a subfolder "proj"
    res = project.cli("eval", "-q", "-n", "10", "write-one-line")
    (line,) = [ln for ln in res.stdout.splitlines() if ln.startswith("::")]
    assert line.startswith("::error file=proj/cases/write-one-line/case.yaml,")


def test_agent_text_cannot_forge_annotations_or_markup(hostile, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    res = hostile.cli("eval", "-q")
    commands = [line for line in res.stdout.splitlines() if line.startswith("::")]
    assert len(commands) == 1 and commands[0].startswith("::error file=cases/hostile/case.yaml,")
    md = summary.read_text()
    assert "\x1b" not in md and "\x01" not in md and "<b>" not in md
    assert not [line for line in md.splitlines() if line.startswith("::")]
    (reason,) = {line for line in md.splitlines() if line.startswith("- run 1 (fail)")}
    assert "&lt;b&gt;" in reason and "\\|" in reason and "\n" not in reason
    assert md.count("| `hostile` |") == 1


# --- HTML report ---


class Page(HTMLParser):
    """Every start tag with its attributes, and the text, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.ids: dict[str, int] = {}
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if attrs.get("id"):
            self.ids[attrs["id"]] = len(self.text)

    def handle_data(self, data):
        self.text.append(data)

    def all_text(self) -> str:
        return "".join(self.text)

    def text_after(self, element_id: str, chars: int = 4000) -> str:
        return "".join(self.text[self.ids[element_id]:])[:chars]


def _page(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _assert_self_contained(page: Page, raw: str) -> None:
    for tag, attrs in page.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed", "img"), tag
        for name in ("src", "href", "action", "data"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("http://", "https://", "//")), (tag, attrs)
    assert "@import" not in raw and "url(" not in raw


def test_html_report_of_a_real_session_is_one_self_contained_file_with_everything(project, tmp_path):
    _bless_and_regress(project)
    project.cli("eval", "-q", "-n", "20", "write-one-line", "fix-json-config", "-l", "regressed")
    out = tmp_path / "report.html"
    res = project.cli("report", "--html", str(out))
    assert res.exit_code == 0, res.output
    assert res.stdout.rstrip().endswith(f"html report: {out}")
    raw = out.read_text(encoding="utf-8")
    page = _page(out)
    _assert_self_contained(page, raw)
    # the case table: one row per case with its numbers
    rows = [attrs["id"] for tag, attrs in page.tags if tag == "tr" and (attrs.get("id") or "").startswith("case-")]
    assert rows == ["case-write-one-line", "case-fix-json-config"]
    row = page.text_after("case-write-one-line", 200)
    # pass@k and pass^k carry their 95% intervals since issue 22
    assert row.startswith("write-one-line8120040%22–61%95% [71–99%]0% [0–9%]red80%BELOW · regressed")
    assert sum(1 for tag, _ in page.tags if tag == "svg") == 2  # each case's distribution
    # the baseline comparison (there is a baseline and this session is not it)
    assert "Against the baseline" in page.all_text()
    assert "regressed" in page.text_after("baseline", 2000)
    # every failed run, with its checks and workspace diff
    runs = [attrs["id"] for tag, attrs in page.tags if tag == "details"]
    assert len(runs) == 12 + 4 and all(r.startswith("run-") for r in runs)
    detail = page.text_after(runs[0], 1500)
    assert "check" in detail and "status" in detail
    assert "workspace diff:" in page.all_text() and "created: " in page.all_text()


def test_html_report_escapes_everything_the_agent_wrote(hostile, tmp_path):
    hostile.cli("eval", "-q")
    out = tmp_path / "r.html"
    assert hostile.cli("report", "--html", str(out)).exit_code == 0
    raw = out.read_text(encoding="utf-8")
    page = _page(out)
    _assert_self_contained(page, raw)
    assert not [t for t, _ in page.tags if t in ("script", "b", "img")]
    assert "\x1b" not in raw and "\x00" not in raw
    text = page.all_text()
    assert "<script>alert(1)</script>" in text  # shown as text, not run
    assert "]]>evil<b>\\x01|" in text


def test_html_report_shows_the_judges_reasons(project, judge_server, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.bundled()
    cfg = project.root / "scarbook.yaml"
    cfg.write_text(cfg.read_text().replace("judge:\n", f"judge:\n  base_url: {judge_server.url}\n  max_retries: 0\n"))
    case_yaml = project.cases_dir / "write-one-line" / "case.yaml"
    case_yaml.write_text(case_yaml.read_text().replace(
        "checks:\n", "checks:\n  - {type: llm_judge, artifact: tmp.txt, rubric: [tmp.txt holds one line]}\n"))
    judge_server.default = tool_reply([("FAIL", "two lines <img src=https://evil.example/p.png>")])
    project.cli("eval", "-q", "-n", "2", "write-one-line")
    out = tmp_path / "j.html"
    assert project.cli("report", "--html", str(out)).exit_code == 0
    page = _page(out)
    _assert_self_contained(page, out.read_text())
    text = page.all_text()
    assert "tmp.txt holds one line" in text
    assert "two lines <img src=https://evil.example/p.png>" in text  # the judge's reason, as text


def test_report_without_sessions_and_to_an_unwritable_path(project, tmp_path):
    res = project.cli("report", "--html", str(tmp_path / "r.html"))
    assert res.exit_code == 2
    assert "no sessions recorded yet" in res.stderr and "run `scarbook eval` first" in res.stderr
    project.bundled()
    project.cli("eval", "-q", "-n", "2", "write-one-line")
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = project.cli("report", "--html", str(blocker / "r.html"))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"scarbook: cannot write {blocker}")
    assert res.stderr.rstrip().endswith("— choose a writable path")


# --- the workflow file users copy ---

WORKFLOW = REPO / "examples" / "github" / "scarbook.yml"


def _scarbook_commands(workflow: dict) -> list[list[str]]:
    import shlex

    commands = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            script = step.get("run", "")
            for line in script.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words and words[0] == "scarbook":
                    commands.append(words)
    return commands


def test_the_workflow_installs_scarbook_from_where_it_is():
    """Issue 26.15: the example installed `pip install scarbook`, a name no index serves."""
    import yaml

    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["eval"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install scarbook")
    assert install["run"] == 'pip install "$SCARBOOK_SPEC"'
    assert install["env"]["SCARBOOK_SPEC"].startswith("scarbook @ git+")


def test_the_documented_workflow_runs_as_written(project, tmp_path):
    """Its steps' scripts, as written (tests/helpers/workflow_steps.py), against the bundled cases with a
    committed baseline: a pull request's run (the first run on the default branch is
    tests/reports/test_example_workflow.py's)."""
    import os

    import yaml

    from tests.helpers.workflow_steps import run_job

    workflow = yaml.safe_load(WORKFLOW.read_text())
    commands = _scarbook_commands(workflow)
    assert [c[:2] for c in commands] == [["scarbook", "eval"], ["scarbook", "baseline"], ["scarbook", "report"]]
    project.bundled()
    cfg = project.root / "scarbook.yaml"
    cfg.write_text(cfg.read_text().replace("daily: 15", "daily: 20"))  # the demo agent's blocks of ten
    exe = Path(sys.executable).with_name("scarbook")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_WORKSPACE": str(project.root), "SCARBOOK_DEMO_DELAY": "0", "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_REF_NAME": "7/merge", "PATH": f"{exe.parent}{os.pathsep}{os.environ['PATH']}"}
    # what the user commits once: a baseline (made in this process; the job's steps below run `scarbook` as written)
    for setup in (["eval", "-q", "-n", "10"], ["baseline", "set"]):
        done = project.cli(*setup)
        assert done.exit_code == 0, done.output
    job = run_job(workflow["jobs"]["eval"], project.root, env, {"github.event.repository.default_branch": "main"},
                  skip=("Install scarbook",))
    for name, code in job.codes.items():
        assert code in (0, None), (name, job.logs.get(name, "")[-2000:])
    assert job.uploads
    for name in job.uploads:
        assert (project.root / name).is_file(), name
    assert ET.parse(project.root / "scarbook-junit.xml").getroot().get("tests") == "4"
    assert "### Against the baseline" in (tmp_path / "summary.md").read_text()
    _assert_self_contained(_page(project.root / "scarbook-report.html"),
                           (project.root / "scarbook-report.html").read_text())



# --- a --runs auto decision within its margin, in every file CI reads ---

ALWAYS_WRITES = """
async def run(task, cwd):
    (cwd / "out.txt").write_text("ok")
    return "done"
"""
MARGIN = "above 80% (within its 10-point margin: its runs rule out 70% or less) — its 95% interval 74–100% still reaches under 80%"


@pytest.fixture
def within_margin(project, tmp_path, monkeypatch):
    _margin_session(project, tmp_path, monkeypatch)
    return project


def _margin_session(project, tmp_path, monkeypatch, agent: str = ALWAYS_WRITES, case: str = "always",
                    module: str = "margin_agent", task: str = "write out.txt"):
    """A real --runs auto session of one case that always passes: 12 passes of 12 at 80%, which the rule
    (70% against 90%) decides above, with a 95% interval after the stop of 74–100% that reaches under 80%.
    The CLI and the text report said so (run/gate.margin_line); the step summary, the JUnit file and the HTML
    report showed a bare "ok" beside 74–100%. Its step summary is tmp_path/summary.md, its JUnit junit.xml, its
    JSON report.json. With `agent`, `case`, `module` (a python agent is imported once per process: a module
    name of its own) and `task`, another one-case session of the same files."""
    (project.root / f"{module}.py").write_text(agent)
    project.config(f"agent: {{type: python, function: {module}:run}}\nconcurrency: 1\n", gate=None)
    project.case(case, f"id: {case}\ntask: {task}\nthreshold: 0.8\n"
                       "checks:\n  - {type: file_exists, path: out.txt}\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    res = project.cli("eval", "-q", "--runs", "auto", "--junit", str(tmp_path / "junit.xml"),
                      "--json", str(tmp_path / "report.json"))
    if agent == ALWAYS_WRITES:
        assert res.exit_code == 0, res.output
        assert f"always: {MARGIN}" in res.output  # what the CLI says (tests/cli/test_scar_numbers.py)
    return res


BELOW_MARGIN = ("below 80% (within its 10-point margin: its runs rule out 90% or more) — its 95% interval 43–89% "
                "still reaches over 80%")


def _below_margin_session(project, tmp_path, monkeypatch):
    """A real --runs auto session the rule decides below at 10 passes of 15 (90% ruled out), its 95% interval
    after the stop, 43–89%, still reaching over 80% (tests/helpers/pattern_agent.py: the runs pass and fail
    in the order of its task): exit 1, the files of _margin_session."""
    res = _margin_session(project, tmp_path, monkeypatch, agent=PATTERN_AGENT, case="mostly",
                          module="pattern_agent", task="ppppfffpppfpppf")
    assert res.exit_code == 1, res.output
    assert f"mostly: {BELOW_MARGIN}" in res.output  # what the CLI says
    return res


def test_the_step_summary_says_a_runs_auto_decision_within_its_margin_under_its_table(within_margin, tmp_path):
    md = (tmp_path / "summary.md").read_text().splitlines()
    row = next(i for i, line in enumerate(md) if line.startswith("| `always` |"))
    # the gate cell names the decision with its margin (it said a bare "ok" beside 74–100%)
    assert md[row] == "| `always` | 100% | 74–100% | 100% | green | above (10-pt margin) | 12 / 0 / 0 |"
    assert md.index(f"always: {MARGIN}") > row  # a paragraph of its own under the table


def test_junit_says_a_runs_auto_decision_within_its_margin(within_margin, tmp_path):
    (tc,) = ET.parse(tmp_path / "junit.xml").getroot().findall("testcase")
    props = {p.get("name"): p.get("value") for p in tc.find("properties")}
    # the gate property names the decision with its margin, as the step summary's gate cell (it said a bare "ok")
    assert (props["gate"], props["decision"], props["margin_note"]) == ("above (10-pt margin)", "above", MARGIN)
    assert tc.find("system-out").text.splitlines()[1] == f"always: {MARGIN}"  # after the case's summary line


def test_junit_says_a_runs_auto_decision_below_within_its_margin_in_its_failure(project, tmp_path, monkeypatch):
    """Below at 10 of 15, its interval 43–89% reaching over 80%: the gate property said a bare "below" and the
    failure's message and text had nothing of the margin (only the system-out had it); now they name it as the
    step summary does."""
    _below_margin_session(project, tmp_path, monkeypatch)
    (tc,) = ET.parse(tmp_path / "junit.xml").getroot().findall("testcase")
    props = {p.get("name"): p.get("value") for p in tc.find("properties")}
    assert (props["gate"], props["decision"], props["margin_note"]) == ("below (10-pt margin)", "below", BELOW_MARGIN)
    summary = "pass rate 73% (10/15), 95% CI 43-89%, pass^5 8%, 0 errors, threshold 80%"
    failure = tc.find("failure")
    assert failure.get("message") == f"below threshold (10-pt margin): {summary}"
    assert failure.text.splitlines()[:3] == [summary, f"mostly: {BELOW_MARGIN}",
                                              "run 5: fail — check 1 (file_exists): out.txt does not exist [cause agent: check-fail]"]


def test_the_html_report_says_a_runs_auto_decision_within_its_margin_beside_it(within_margin, tmp_path):
    out = tmp_path / "report.html"
    assert within_margin.cli("report", "--html", str(out)).exit_code == 0
    cells = _page(out).text_after("case-always", 400)
    # threshold, then the gate cell: its decision with its margin (it said a bare "ok"), then the margin in full
    assert "80%above (10-pt margin)" + MARGIN in cells, cells


def test_the_html_report_names_a_runs_auto_decision_below_within_its_margin_in_its_gate_cell(project, tmp_path,
                                                                                              monkeypatch):
    """Below at 10 of 15, its interval 43–89% reaching over 80%: the gate cell said a bare "BELOW" above the margin."""
    _below_margin_session(project, tmp_path, monkeypatch)
    out = tmp_path / "report.html"
    assert project.cli("report", "--html", str(out)).exit_code == 0  # `eval` is the gate
    cells = _page(out).text_after("case-mostly", 400)
    assert "80%BELOW (10-pt margin)" + BELOW_MARGIN in cells, cells


def test_the_json_report_keeps_the_margin_of_a_runs_auto_decision(within_margin, tmp_path):
    """The JSON report had the decision and the interval after the stop, and nothing of the margin the rule
    took it with; each case now has `margin` (null for a case --runs auto did not decide: test_auto_report.py)."""
    (case,) = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert (case["decision"], case["lo"] < 0.8) == ("above", True)
    assert case["margin"] == {
        "points": 10, "hypotheses": [0.7, 0.9], "rules_out": 0.7,
        "words": "above 80% (within its 10-point margin: its runs rule out 70% or less)", "note": MARGIN}


def test_github_annotates_a_runs_auto_decision_above_within_its_margin_with_a_notice(project, tmp_path, monkeypatch):
    """A case decided above passed, so it had no annotation, and a reviewer of the pull request never saw that
    its interval (74–100%) still reaches under 80%; now a `::notice` on its case.yaml says the margin."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    res = _margin_session(project, tmp_path, monkeypatch)
    assert [line for line in res.stdout.splitlines() if line.startswith("::")] == [
        "::notice file=cases/always/case.yaml,title=scarbook%3A always above within its margin::"
        + MARGIN.replace("%", "%25")]


def test_github_annotates_a_runs_auto_decision_below_within_its_margin_with_its_margin(project, tmp_path, monkeypatch):
    """10 passes of 15: the rule says below (it rules out 90% or more), and the 95% interval, 43–89%, still reaches
    over 80%. The case's `::error` said only "below threshold", where the notice of a case above within its
    margin says the margin; the error now says it after its own words."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    res = _below_margin_session(project, tmp_path, monkeypatch)
    assert [line for line in res.stdout.splitlines() if line.startswith("::")] == [
        "::error file=cases/mostly/case.yaml,title=scarbook%3A mostly below threshold::below threshold: pass rate 73%25 "
        "(10/15, 95%25 CI 43–89%25) < 80%25; " + BELOW_MARGIN.replace("%", "%25")]


def test_a_decided_case_whose_runs_the_machine_left_without_a_verdict_is_a_junit_error(project, tmp_path) -> None:
    """Run 1 dies of a 529 on both attempts, runs 2-4 pass: 3/3 is enough runs for a decision (undecided), yet the
    exit code is 3 (infra retries ran out). Before: the testcase had neither <failure> nor <error> and the suite
    said errors="0", so a dashboard read the case as passed; now an <error type="infra"> names the run."""
    from tests.run.test_causes import CASE, WRITE_OK, _agent

    _agent(project, f"""\
        import os, sys
        if os.environ["SCARBOOK_RUN"] == "1":
            print("Error code: 529 - overloaded_error", file=sys.stderr)
            sys.exit(1)
        {WRITE_OK.splitlines()[0]}
        {WRITE_OK.splitlines()[1]}
    """)
    project.case("c", CASE)
    junit = tmp_path / "j.xml"
    result = project.cli("eval", "-q", "--runs", "4", "--junit", str(junit))
    assert result.exit_code == 3, result.output
    suite = ET.parse(junit).getroot()
    assert (suite.get("failures"), suite.get("errors")) == ("0", "1")
    error = suite.find("testcase").find("error")
    assert (error.get("type"), error.get("message")) == (
        "infra", "infra retries ran out: 1 run still failed by the machine on the last attempt — no verdict (exit 3)")
    assert error.text.splitlines()[1] == ("run 1: error — agent exited with code 1: Error code: 529 - overloaded_error "
                                          "[cause infra: api-overloaded] (2 attempts)")
