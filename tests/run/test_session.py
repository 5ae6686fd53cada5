"""Issue 12 (pipeline part): no number that lies. Unjudged runs, one preflight for every front-end,
project-relative agent arguments, crashes and harness errors, and exit codes from one function."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from scarbook.text import plural
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, status_reply  # noqa: F401

JUDGE_ONLY = """\
id: judged
task: say hello
checks:
  - type: llm_judge
    rubric: [the answer says hello]
"""

RULE_AND_JUDGE = """\
id: mixed
task: write a.txt
checks:
  - {type: file_exists, path: a.txt}
  - type: llm_judge
    artifact: a.txt
    rubric: [a.txt says hello]
"""

WRITE_A = "from pathlib import Path\nPath('a.txt').write_text('hello\\n')\nprint('hello')\n"


def _command_agent(project, body: str, name: str = "agent.py") -> Path:
    path = project.root / name
    path.write_text(body)
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(path))}]}}\n"
                   "runs: 3\nconcurrency: 2\ntimeout_s: 30\nthreshold: 0.8\n")
    return path


def _summary(stdout: str) -> str:
    return [ln for ln in stdout.splitlines() if ln.startswith("session ")][0]


# -- green with nothing checked -----------------------------------------------------------------
def test_judge_only_case_under_skip_judge_has_no_verdict_and_exits_3(project) -> None:
    _command_agent(project, WRITE_A)
    project.case("judged", JUDGE_ONLY)
    out, junit = project.root / "r.json", project.root / "r.xml"
    result = project.cli("eval", "judged", "--runs", "3", "--skip-judge", "-q", "--json", str(out),
                         "--junit", str(junit))
    assert result.exit_code == 3, result.output
    row = [ln for ln in result.stdout.splitlines() if ln.startswith("judged")][0].split()
    assert row[1:6] == ["0", "0", "0", "3", "–"]  # pass fail err unjudged rate
    assert "no verdict" in " ".join(row)
    assert _summary(result.stdout).endswith("finished; 3 runs — 0 pass, 0 fail, 0 error, 3 unjudged")
    assert "partial: judge checks were skipped (--skip-judge); 3 unjudged runs have no verdict " \
           "and are not in any rate" in result.stdout
    report = json.loads(out.read_text())
    assert report["exit_code"] == 3
    assert report["cases"][0]["unjudged"] == 3 and report["cases"][0]["rate"] is None
    assert report["cases"][0]["meets_threshold"] is None
    assert [r["status"] for r in report["runs"]] == ["unjudged"] * 3
    assert report["runs"][0]["reason"] == "no verdict: rule checks passed, 1 judge check skipped (--skip-judge)"
    tc = ET.parse(junit).getroot().find("testcase")
    # issue 26.12: no verdict, no rate and no fraction ("(0/0)" before): the counts by name
    assert tc.find("error").get("message").startswith("no verdict: pass rate – (3 unjudged), 95% CI –, ")


def test_rule_pass_with_judge_skipped_is_unjudged_but_a_rule_fail_is_a_fail(project) -> None:
    _command_agent(project, "import os, sys\nk = int(os.environ['SCARBOOK_RUN'])\n"
                            "if k % 2: open('a.txt', 'w').write('hello')\n")
    project.case("mixed", RULE_AND_JUDGE)
    out = project.root / "r.json"
    result = project.cli("eval", "--runs", "4", "--skip-judge", "-q", "-j", "1", "--json", str(out))
    assert result.exit_code == 3, result.output
    runs = sorted(json.loads(out.read_text())["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["unjudged", "fail", "unjudged", "fail"]
    assert _summary(result.stdout).endswith("finished; 4 runs — 0 pass, 2 fail, 0 error, 2 unjudged")


# -- one pipeline: agent arguments, preflight ---------------------------------------------------
@pytest.fixture
def python_on_path(tmp_path, monkeypatch):
    """`python` on PATH is this interpreter, whatever the machine calls it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


README_AGENT = "import sys\nfrom pathlib import Path\nPath('a.txt').write_text('hello ' + sys.argv[1])\n"


def test_the_readme_command_agent_example_runs(project, python_on_path) -> None:
    (project.root / "agent.py").write_text(README_AGENT)
    project.config('agent: {type: command, argv: [python, agent.py, "{task}"]}\nruns: 2\n')
    project.case("c", "id: c\ntask: t\nchecks: [{type: contains, path: a.txt, text: hello t}]\n")
    result = project.cli("eval", "-q")
    assert result.exit_code == 0, result.output
    assert _summary(result.stdout).endswith("finished; 2 runs — 2 pass, 0 fail, 0 error")


def test_root_placeholder_names_the_project_root(project, python_on_path) -> None:
    (project.root / "tools").mkdir()
    (project.root / "tools" / "agent.py").write_text(README_AGENT)
    project.config('agent: {type: command, argv: [python, "{root}/tools/agent.py", "{task}"]}\nruns: 1\n')
    project.case("c", "id: c\ntask: t\nchecks: [{type: contains, path: a.txt, text: hello t}]\n")
    result = project.cli("eval", "-q")
    assert result.exit_code == 0, result.output


def test_a_missing_agent_program_is_a_config_error_before_any_run(project) -> None:
    project.config("agent: {type: command, argv: [./no-such-agent, '{task}']}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert result.stderr == ("scarbook: agent command not found: './no-such-agent' (agent.argv in scarbook.yaml) — "
                             "install it, fix the path, or make the file executable\n")
    assert not (project.workspaces / "history").exists() or not any((project.workspaces / "history").iterdir())


def test_a_python_agent_whose_module_fails_to_import_is_a_config_error(project) -> None:
    (project.root / "broken_agent.py").write_text("raise RuntimeError('no model configured')\n")
    project.config("agent: {type: python, function: 'broken_agent:run'}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert result.stderr == ("scarbook: agent.function 'broken_agent:run': importing 'broken_agent' raised "
                             "RuntimeError: no model configured — fix the module (it runs at import)\n")


# -- unexpected exceptions: one run vs the runner -----------------------------------------------
def test_an_unexpected_exception_in_one_run_makes_it_an_error_and_the_session_goes_on(project, monkeypatch) -> None:
    import scarbook.run.session_run as session_run

    real = session_run.diff_workspace

    def diff(snap, ws):
        if ws.name == "2":
            raise RecursionError("maximum recursion depth exceeded")
        return real(snap, ws)

    monkeypatch.setattr(session_run, "diff_workspace", diff)
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: nothing}]\n")
    out = project.root / "r.json"
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q", "--json", str(out))
    # Issue 24: scarbook's own failure is not the agent's (cause infra, rule scarbook-error): it is
    # retried once (retry_infra: 1), fails again, and a session whose infra retries ran out exits 3, not 1.
    # and 2 verdicts of 3 runs: fewer than the gate's min_verdicts (3), so no verdict (issue 22)
    assert result.exit_code == 3, result.output
    runs = sorted(json.loads(out.read_text())["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["fail", "error", "fail"]
    history = project.workspaces / "history" / runs[1]["session_id"]
    trace, retry_trace = history / "c-2.traceback.txt", history / "c-2-attempt-2.traceback.txt"
    assert runs[1]["reason"] == (f"scarbook could not finish this run: RecursionError: maximum recursion depth "
                                 f"exceeded (traceback in {retry_trace})")
    assert [a["reason"] for a in runs[1]["attempts"]] == [
        f"scarbook could not finish this run: RecursionError: maximum recursion depth exceeded (traceback in {t})"
        for t in (trace, retry_trace)]
    assert runs[1]["cause"]["kind"] == "infra" and runs[1]["cause"]["rule"] == "scarbook-error"
    assert "Traceback (most recent call last)" in trace.read_text()
    assert "Traceback (most recent call last)" in retry_trace.read_text()


def test_an_exception_in_the_runner_ends_the_session_as_crashed(project, monkeypatch) -> None:
    from scarbook.history.store import History

    real, calls = History.record_run, []

    def record_run(self, run):
        calls.append(run.k)
        if len(calls) == 2:
            raise KeyError("simulated bug")
        return real(self, run)

    monkeypatch.setattr(History, "record_run", record_run)
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: nothing}]\n")
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    assert result.exit_code == 3, result.output
    sid = sorted((project.workspaces / "history").iterdir())[-1].name
    trace = project.workspaces / "history" / sid / "crash.txt"
    kept = trace.parent / "unrecorded-runs.jsonl"  # the run history refused is not lost (issue 25)
    assert result.stderr == (f"scarbook: session crashed: KeyError: 'simulated bug' — traceback in {trace}; "
                             f"1 finished run history could not take are in {kept}\n")
    assert [json.loads(line)["k"] for line in kept.read_text().splitlines()] == [2]
    assert "Traceback (most recent call last)" in trace.read_text()
    assert "crashed; 1 run — " in _summary(result.stdout)
    info = json.loads((project.workspaces / "history" / sid / "session.json").read_text())
    assert info["session"]["1"]["state"] == "crashed"
    listing = project.cli("sessions")
    assert f"{sid}" in listing.stdout and "crashed" in listing.stdout


# -- exit codes -------------------------------------------------------------------------------
def test_a_budget_stopped_session_exits_3_even_with_a_case_below_threshold(project) -> None:
    _command_agent(project, "import json, os\nopen(os.environ['SCARBOOK_USAGE'], 'a').write("
                            "json.dumps({'cost_usd': 1.0}) + '\\n')\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: nothing}]\n")
    result = project.cli("eval", "--runs", "5", "-j", "1", "--max-cost", "1.5", "-q")
    assert result.exit_code == 3, result.output
    assert "stopped: budget; 2 runs — 0 pass, 2 fail, 0 error" in _summary(result.stdout)


def test_rejected_key_with_parallel_runs_says_one_thing_and_counts_what_history_holds(
        project, judge_server, monkeypatch, capfd) -> None:
    (project.root / "agent.py").write_text("import time\ntime.sleep(0.2)\nprint('hello')\n")
    agent = json.dumps(str(project.root / "agent.py"))
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {agent}]}}\n"
                   f"judge: {{base_url: {json.dumps(judge_server.url)}, max_retries: 0, timeout_s: {JUDGE_TIMEOUT_S}}}\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-bad")
    judge_server.default = status_reply(401, "invalid x-api-key")
    project.case("judged", JUDGE_ONLY)
    result = project.cli("eval", "--runs", "8", "-j", "4", "-q")
    captured = capfd.readouterr()
    assert result.exit_code == 3, result.output
    assert "Task exception was never retrieved" not in captured.err + result.stderr
    assert "Traceback" not in captured.err + result.stderr
    assert result.stderr.count("rejected the API key in ANTHROPIC_API_KEY (HTTP 401)") == 1
    sid = sorted((project.workspaces / "history").iterdir())[-1].name
    recorded = project.cli("sessions").stdout
    row = [ln for ln in recorded.splitlines() if ln.startswith(sid)][0].split()
    n = int(row[2])
    assert n >= 1 and row[1] == "aborted"
    assert f"aborted; {plural(n, 'run')} — 0 pass, 0 fail, {n} error" in _summary(result.stdout)


def test_ctrl_c_on_a_session_with_a_case_below_threshold_exits_3_and_is_marked(project) -> None:
    """Cancelled sessions saw only part of the evidence: 3, not 1, and every listing says so."""
    import signal
    import subprocess
    import time

    _command_agent(project, "import time\ntime.sleep(0.2)\n")  # never writes the file: every run fails
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: nothing}]\n")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-c", "from scarbook.cli import main; main()", "-C", str(project.root),
                             "eval", "--runs", "50", "-j", "1", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    history = project.workspaces / "history"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list(history.glob("*/runs-c*")):
        time.sleep(0.05)
    while time.monotonic() < deadline and sum(f.read_text().count("\n") for f in history.glob("*/runs-c*")) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, out + err
    summary = _summary(out)
    n = int(summary.split("cancelled; ")[1].split()[0])
    assert 2 <= n < 50 and summary.endswith(f"cancelled; {n} runs — 0 pass, {n} fail, 0 error")
    assert "below threshold: c" in out  # said, but it does not make the exit code a verdict
    listing = project.cli("sessions").stdout.splitlines()
    assert listing[0].split() == ["session", "label", "state", "runs", "pass", "fail", "err", "unj", "config", "git",
                                  "notes"]
    assert listing[1].split()[1:7] == ["cancelled", str(n), "0", str(n), "0", "0"]
    assert listing[1].split()[-1] == "cancelled"  # its notes, the last column
    row = next(ln for ln in project.cli("list").stdout.splitlines() if ln.startswith("c "))
    assert "cancelled" in row


def test_sessions_marks_a_partial_session_and_counts_its_unjudged_runs(project) -> None:
    _command_agent(project, WRITE_A)
    project.case("judged", JUDGE_ONLY)
    project.cli("eval", "--runs", "2", "--skip-judge", "-q")
    listing = project.cli("sessions").stdout.splitlines()
    assert listing[1].split()[1:7] == ["finished", "2", "0", "0", "0", "2"]
    assert listing[1].split()[-1] == "partial"  # its notes, the last column
