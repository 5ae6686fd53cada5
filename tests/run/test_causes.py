"""Whose fault is a red (issue 24): each cause driven by a real process, seen in the JSON report.

The agents are small Python programs run by the `command` adapter; the judge is the loopback
Messages API (tests/helpers/judge_server.py) reached by the real anthropic SDK. They run with isolation:
none: some keep a marker outside their workspace, and the reasons read as unconfined ones (no
"[in the sandbox: …]" suffix); test_sandbox covers a sandboxed agent's signal.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.proc_helpers import oom_killer_kills_meanwhile

CASE = """\
id: c
task: write ok.txt
checks:
  - {type: file_exists, path: ok.txt}
"""


def _agent(project, body: str, *, extra: str = "") -> None:
    """A command agent running `body` (Python), plus scarbook.yaml lines `extra`."""
    script = project.root / "agent.py"
    script.write_text(textwrap.dedent(body))
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]}}\n"
                   "runs: 1\nconcurrency: 1\ntimeout_s: 30\nthreshold: 0.8\n" + extra + "isolation: none\n")


def _eval(project, *args: str):
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out), *args)
    report = json.loads(out.read_text()) if out.exists() else None
    return result, report


WRITE_OK = "from pathlib import Path\nPath('ok.txt').write_text('ok')\n"


def test_an_agent_killed_by_sigkill_is_infra_retried_once_and_its_retry_is_shown(project, monkeypatch) -> None:
    """Killed by a signal that was not our timeout, while the kernel's OOM killer killed: the machine's, maybe.
    The first attempt dies, the retry passes: the run passes, both attempts are kept. The agent can move the count
    itself (tests/run/test_infra_the_agent_causes.py): the retry is on its own word, and a lone run read as a fail
    at the worst has no verdict (exit 3)."""
    oom_killer_kills_meanwhile(monkeypatch)
    marker = project.root / "killed-once"
    _agent(project, f"""\
        import os, signal
        from pathlib import Path
        marker = Path({str(marker)!r})
        if not marker.exists():
            marker.write_text("x")
            os.kill(os.getpid(), signal.SIGKILL)
        {WRITE_OK.splitlines()[0]}
        {WRITE_OK.splitlines()[1]}
    """)
    project.case("c", CASE)
    result, report = _eval(project)
    assert result.exit_code == 3, result.output
    [run] = report["runs"]
    assert run["status"] == "pass" and run["cause"] is None
    first, second = run["attempts"]
    assert first["status"] == "fail" and first["reason"] == "agent was killed by signal 9"
    assert first["cause"] == {"kind": "infra", "rule": "killed-by-signal",
                              "evidence": "killed by signal 9 (SIGKILL), not by scarbook's timeout — the kernel's "
                                          "OOM killer killed 1 meanwhile"}
    assert (second["attempt"], second["status"], second["cause"]) == (2, "pass", None)
    assert Path(first["workspace"]).is_dir() and "attempt-2" in second["workspace"]  # the first is kept
    assert report["retried_after_infra"] == 1 and report["infra_unresolved"] == 0
    assert report["retried_on_agents_word"] == 1  # the OOM killer's count moved: the agent may have moved it
    assert ("1 run retried after infra errors (1 retry; 1 then passed; 1 on the agent's own word, which the gate also "
            "reads as fails; every attempt") in result.stdout
    shown = project.cli("show", "c").stdout
    assert (f"  attempt 1: fail — infra (killed-by-signal, the agent's own word): agent was killed by signal 9; workspace "
            f"{first['workspace']}") in shown


def test_an_overloaded_api_in_stderr_is_infra_and_when_retries_run_out_the_exit_is_3(project) -> None:
    line = ("anthropic.InternalServerError: Error code: 529 - {'type': 'error', 'error': "
            "{'type': 'overloaded_error', 'message': 'Overloaded'}}")
    _agent(project, f"""\
        import sys
        print("calling the model", file=sys.stderr)
        print({line!r}, file=sys.stderr)
        sys.exit(1)
    """, extra="retry_infra: 2\n")
    project.case("c", CASE)
    result, report = _eval(project)
    assert result.exit_code == 3, result.output  # not 1: the machine, not the agent, failed the run
    [run] = report["runs"]
    assert run["status"] == "error"  # no verdict: out of the rate, never the agent's fail
    assert run["cause"] == {"kind": "infra", "rule": "api-overloaded", "evidence": f"stderr: {line}"}
    assert [a["attempt"] for a in run["attempts"]] == [1, 2, 3]
    assert all(a["cause"]["rule"] == "api-overloaded" for a in run["attempts"])
    assert report["causes"] == {"agent": 0, "infra": 1, "judge": 0, "case": 0}
    assert report["infra_unresolved"] == 1
    assert ("infra retries ran out: 1 run still failed by the machine on the last attempt — no verdict (exit 3)"
            in result.stdout)
    assert "why runs did not pass: 1 infra" in result.stdout
    assert f"  cause: infra (api-overloaded) — stderr: {line}" in project.cli("show", "c").stdout


def test_a_run_the_agent_failed_is_never_retried(project) -> None:
    _agent(project, "print('I did nothing')\n", extra="retry_infra: 3\n")
    project.case("c", CASE)
    result, report = _eval(project)
    assert result.exit_code == 1, result.output
    [run] = report["runs"]
    assert run["cause"] == {"kind": "agent", "rule": "check-fail", "evidence": "check 1 (file_exists): ok.txt does not exist"}
    assert len(run["attempts"]) == 1 and report["retried_after_infra"] == 0
    assert (project.root / "workspaces").exists() and not list((project.root / "workspaces").glob("*/attempt-2"))


def test_an_agent_the_harness_times_out_is_the_agents_and_not_retried(project) -> None:
    _agent(project, "import time\ntime.sleep(30)\n")
    project.case("c", CASE)
    result, report = _eval(project, "--timeout", "1")
    assert result.exit_code == 1, result.output
    [run] = report["runs"]
    assert run["reason"] == "timed out after 1s"
    assert run["cause"] == {"kind": "agent", "rule": "agent-timed-out",
                            "evidence": "scarbook's timeout: the agent ran past 1s"}
    assert len(run["attempts"]) == 1


def test_a_command_check_that_crashes_is_the_cases_fault(project) -> None:
    _agent(project, WRITE_OK)
    project.case("c", """\
        id: c
        task: write ok.txt
        checks:
          - {type: file_exists, path: ok.txt}
          - {type: command, run: "python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'"}
        """)
    result, report = _eval(project)
    [run] = report["runs"]
    assert run["cause"]["kind"] == "case" and run["cause"]["rule"] == "check-crashed"
    assert run["cause"]["evidence"].startswith("check 2 (command): command \"python3 -c 'import os, signal; "
                                               "os.kill(os.getpid(), signal.SIGSEGV)'\" was killed by signal 11 (SIGSEGV)")
    assert run["checks"][1]["cause"]["rule"] == "check-crashed"
    assert len(run["attempts"]) == 1  # the case's fault: running the agent again would not help
    assert "why runs did not pass: 1 case" in result.stdout


def test_a_command_check_that_times_out_or_cannot_start_is_the_cases_fault(project) -> None:
    _agent(project, WRITE_OK)
    project.case("c", """\
        id: c
        task: write ok.txt
        checks:
          - {type: command, run: "sleep 30", timeout_s: 0.5}
        """)
    project.case("d", """\
        id: d
        task: write ok.txt
        checks:
          - {type: command, run: "no-such-program-here --check"}
        """)
    result, report = _eval(project)
    causes = {r["case_id"]: r["cause"] for r in report["runs"]}
    assert causes["c"] == {"kind": "case", "rule": "check-timed-out",
                           "evidence": "check 1 (command): command 'sleep 30' timed out after 0.5s"}
    assert causes["d"]["rule"] == "check-could-not-start"
    assert causes["d"]["evidence"].startswith("check 1 (command): command 'no-such-program-here --check' exited 127 "
                                              "(the shell did not find the program)")


def test_a_seed_that_cannot_be_laid_is_the_cases_fault(project) -> None:
    # c's seed changes under the running session: case a's agent (run first, -j 1) swaps seed/data for a FIFO,
    # which seeding refuses to read when c's first run lays its workspace. (A FIFO there from the start, this
    # test's case before, is refused when the case loads now; a clash of an inline seed with seed/ too.)
    data = project.cases_dir / "c" / "seed" / "data"
    _agent(project, f"""\
        import os
        from pathlib import Path
        if os.environ["SCARBOOK_CASE"] == "a":
            os.remove({str(data)!r})
            os.mkfifo({str(data)!r})
        {WRITE_OK.splitlines()[0]}
        {WRITE_OK.splitlines()[1]}
    """)
    project.case("a", CASE.replace("id: c", "id: a"))
    project.case("c", CASE, seed={"data": "a file"})
    result, report = _eval(project)
    first, run = report["runs"]
    assert (first["case_id"], first["status"], run["case_id"]) == ("a", "pass", "c")
    assert run["status"] == "error"
    assert (run["cause"]["kind"], run["cause"]["rule"]) == ("case", "seed-not-laid")
    assert run["reason"] == f"could not prepare the workspace {run['workspace']}: {data} is a FIFO, not a regular file"
    assert run["cause"]["evidence"].startswith("could not prepare the workspace")
    assert len(run["attempts"]) == 1


def test_a_judge_whose_samples_split_is_contested(project, judge_server, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    _agent(project, WRITE_OK, extra=f"judge: {{base_url: {judge_server.url}, samples: 3, max_retries: 0}}\n")
    project.case("c", """\
        id: c
        task: write ok.txt
        checks:
          - {type: file_exists, path: ok.txt}
          - {type: llm_judge, artifact: ok.txt, rubric: [it says ok]}
        """)
    judge_server.push(tool_reply([("PASS", "it does")]), tool_reply([("FAIL", "not sure")]),
                      tool_reply([("FAIL", "no")]))
    result, report = _eval(project)
    [run] = report["runs"]
    assert run["status"] == "fail"
    assert run["cause"] == {"kind": "judge", "rule": "judge-contested",
                            "evidence": "check 2 (llm_judge) item 1: samples split PASS, FAIL, FAIL — the majority "
                                        "said FAIL"}
    assert len(run["attempts"]) == 1 and len(judge_server.requests) == 3


def test_a_judge_that_agrees_on_fail_blames_the_agent(project, judge_server, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    _agent(project, WRITE_OK, extra=f"judge: {{base_url: {judge_server.url}, samples: 3, max_retries: 0}}\n")
    project.case("c", """\
        id: c
        task: write ok.txt
        checks:
          - {type: llm_judge, artifact: ok.txt, rubric: [it says ok]}
        """)
    judge_server.default = tool_reply([("FAIL", "it says nothing useful")])
    result, report = _eval(project)
    [run] = report["runs"]
    assert run["cause"] == {"kind": "agent", "rule": "judge-fail",
                            "evidence": "check 1 (llm_judge): 0/1 rubric items PASS; FAIL item 1: it says nothing useful"}


def test_a_project_pattern_in_scarbook_yaml_names_its_cause(project) -> None:
    _agent(project, """\
        import sys
        print("sandbox quota exceeded for tenant 7", file=sys.stderr)
        sys.exit(2)
    """, extra="retry_infra: 0\ncauses:\n  infra:\n    - 'quota exceeded'\n")
    project.case("c", CASE)
    result, report = _eval(project)
    [run] = report["runs"]
    assert run["cause"] == {"kind": "infra", "rule": "causes.infra[0]",
                            "evidence": "stderr: sandbox quota exceeded for tenant 7"}
    assert result.exit_code == 3


@pytest.mark.parametrize(("yaml", "line", "message"), [
    ("causes:\n  infra:\n    - 'ok'\n    - 'unclosed ('\n", 9,
     "causes.infra[1] 'unclosed (' is not a valid regular expression: missing ), unterminated subpattern at "
     "position 9 — escape the special characters (\\( \\[ \\.) or quote the pattern"),
    ("causes:\n  infra:\n    - '[^[:space:]]+ refused'\n", 8,
     "causes.infra[0] '[^[:space:]]+ refused' is not a valid regular expression: `[:space:]` is a POSIX class "
     "(grep's syntax), which Python's re does not have (re reads its [, : and letters as characters of the set): "
     "write `\\s` for [[:space:]], and \\[ for a [ in a set — escape the special characters (\\( \\[ \\.) or "
     "quote the pattern"),
    ("causes:\n  weather: ['rain']\n", 7, "unknown cause 'weather' under causes — causes takes: infra, judge, case, agent"),
    ("causes: ['x']\n", 6, "causes must map a cause (infra, judge, case, agent) to a list of regular expressions — "
                           "write causes: {infra: ['quota exceeded', '^ECONNRESET']}"),
    ("retry_infra: -1\n", 6, "retry_infra must be an integer of at least 0, got -1 — write e.g. retry_infra: 1"),
])
def test_bad_cause_settings_are_config_errors_naming_the_line(project, yaml, line, message) -> None:
    _agent(project, WRITE_OK, extra=yaml)
    project.case("c", CASE)
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert result.stderr == f"scarbook: {project.root / 'scarbook.yaml'}:{line}: {message}\n"
    assert not (project.root / "workspaces" / "history").exists() or not any(
        (project.root / "workspaces" / "history").iterdir())


def test_retry_infra_with_runs_auto_is_refused_before_anything_runs(project) -> None:
    _agent(project, WRITE_OK)
    project.case("c", CASE)
    result = project.cli("eval", "-q", "--runs", "auto", "--retry-infra", "2")
    assert result.exit_code == 2
    assert result.stderr == (
        "scarbook: --retry-infra cannot be combined with --runs auto: the sequential rule decides from runs as "
        "they finish, and a retry would give only the runs that did not pass a second chance. Under --runs auto "
        "a run the machine failed is never retried: it is left out of the decision and the case runs on to its "
        "decision or --max-runs. Drop --retry-infra, or give a fixed --runs N\n")
    assert not (project.root / "workspaces" / "history").exists() or not any(
        (project.root / "workspaces" / "history").iterdir())


def test_every_report_counts_the_causes_and_shows_the_attempts(project, monkeypatch, tmp_path) -> None:
    """One infra run (retries ran out) and one agent run: the JUnit properties, the step summary,
    the GitHub annotation and the HTML report each say whose fault they were."""
    _agent(project, """\
        import sys
        from pathlib import Path
        if Path('case.txt').read_text() == 'infra':
            print("openai.RateLimitError: Error code: 429 - rate limit reached for requests", file=sys.stderr)
            sys.exit(1)
        print('nothing written')
    """)
    project.case("flaky", CASE.replace("id: c", "id: flaky"), seed={"case.txt": "infra"})
    project.case("wrong", CASE.replace("id: c", "id: wrong"), seed={"case.txt": "agent"})
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    junit, html = tmp_path / "j.xml", tmp_path / "r.html"
    result, report = _eval(project, "--junit", str(junit))
    assert result.exit_code == 3, result.output
    assert report["causes"] == {"agent": 1, "infra": 1, "judge": 0, "case": 0}
    suite = ET.parse(junit).getroot()
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert (props["causes_agent"], props["causes_infra"], props["causes_judge"], props["causes_case"]) == ("1", "1", "0", "0")
    assert (props["retried_after_infra"], props["infra_unresolved"]) == ("1", "1")
    flaky = next(tc for tc in suite.iter("testcase") if tc.get("name") == "flaky")
    case_props = {p.get("name"): p.get("value") for p in flaky.find("properties")}
    assert case_props["causes_infra"] == "1" and case_props["causes_agent"] == "0"
    assert ("run 1: error — agent exited with code 1: openai.RateLimitError: Error code: 429 - rate limit reached for "
            "requests [cause infra: api-rate-limited] (2 attempts)") in flaky.find("system-out").text
    md = summary.read_text()
    assert "Why runs did not pass: 1 agent, 1 infra." in md
    assert " — cause infra: api\\-rate\\-limited, 2 attempts\n" in md
    assert "infra retries ran out: 1 run still failed by the machine on the last attempt" in md
    assert ("1 run still failed by the machine (infra) on the last attempt: no verdict" in result.stdout)  # ::warning
    res = project.cli("report", "--html", str(html))
    assert res.exit_code == 0, res.output
    page = html.read_text()
    assert "<th>why runs did not pass</th><td>1 agent, 1 infra</td>" in page
    assert "cause: infra (api-rate-limited) — stderr: openai.RateLimitError: Error code: 429" in page
    assert "<td>1</td><td>fail</td><td>infra api-rate-limited</td>" in page  # the first attempt
    assert "<td>agent check-fail</td>" not in page  # (the agent's run has one attempt: no attempts table)


@pytest.mark.parametrize(("stderr", "rule"), [
    ("anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error'}}",
     "api-rate-limited"),
    ("HTTP/1.1 429 Too Many Requests", "api-rate-limited"),
    ("openai.InternalServerError: Error code: 502 - Bad Gateway", "api-server-error"),
    ("curl: (22) The requested URL returned error: 503", "api-server-error"),
    ("requests.exceptions.HTTPError: 503 Service Unavailable for url: https://api.example.com", "api-server-error"),
    ("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", "api-overloaded"),
    ("MemoryError", "out-of-memory"),
    ("fatal: Out of memory, malloc failed (tried to allocate 1048576 bytes)", "out-of-memory"),
    ("OSError: [Errno 28] No space left on device: 'out.bin'", "disk-full"),
    ("bwrap: Creating new namespace failed: Operation not permitted", "sandbox-failed"),
    # not the machine's: the agent's own words that merely contain a number or a word
    ("AssertionError: expected 429 rows, got 430", None),
    ("processed 503 files, 2 failed", None),
    ("the rate was limited to 5 per minute by my own throttle", None),
])
def test_the_built_in_stderr_patterns(stderr, rule) -> None:
    from scarbook.models import Cause, CauseKind, RunRecord, RunStatus
    from scarbook.run.causes import AgentFacts, attribute

    record = RunRecord("s", "c", 1, RunStatus.FAIL, "agent exited with code 1")
    cause = attribute(record, AgentFacts(exit_code=1, stderr_tail=f"starting\n{stderr}\n"))
    if rule is None:
        assert cause == Cause(CauseKind.AGENT, "agent-exited", f"exit code 1; stderr: {stderr}")
    else:
        assert cause == Cause(CauseKind.INFRA, rule, f"stderr: {stderr}")


def test_the_library_says_how_many_infra_runs_are_beside_a_red_rate(project) -> None:
    """Two runs the machine failed (retries off) and one the agent failed: a red rate, and the library's
    notes say "2 infra" so a reader sees that part of the red is the machine's."""
    from scarbook.tui.screens.library.notes import notes_text
    from scarbook.views.library_rows import build_rows

    _agent(project, """\
        import os, sys
        if os.environ["SCARBOOK_RUN"] in ("1", "2"):
            print("Error code: 529 - overloaded_error", file=sys.stderr)
            sys.exit(1)
    """, extra="retry_infra: 0\n")
    project.case("c", CASE)
    result, report = _eval(project, "--runs", "3")
    assert report["causes"] == {"agent": 1, "infra": 2, "judge": 0, "case": 0}
    [row] = build_rows(project.load())
    assert row.stats.band == "red" and row.infra_note == "2 infra"
    assert notes_text(row).plain == "2 infra"


def test_an_agent_that_finished_and_was_wrong_is_the_agents_whatever_its_log_mentions(project) -> None:
    """A 429 it retried past (stderr) and a task about rate limits (transcript): it exited 0 and its
    check failed — the agent's failure, never retried."""
    _agent(project, """\
        import json, os, sys
        print("warning: 429 Too Many Requests, retrying in 2s", file=sys.stderr)
        with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as fh:
            fh.write(json.dumps({"type": "final", "text": "I added a rate limit: overloaded callers get a 503"}) + "\\n")
    """, extra="retry_infra: 2\n")
    project.case("c", CASE)
    result, report = _eval(project)
    [run] = report["runs"]
    assert run["cause"] == {"kind": "agent", "rule": "check-fail", "evidence": "check 1 (file_exists): ok.txt does not exist"}
    assert len(run["attempts"]) == 1 and result.exit_code == 1


def test_history_keeps_old_records_and_refuses_a_forged_cause(project) -> None:
    """A record from before causes (no cause, no attempts) still counts; one whose cause is not one the
    runner writes is left out and named."""
    _agent(project, "print('nothing')\n")
    project.case("c", CASE)
    _eval(project, "--runs", "2")
    runs_file = next((project.workspaces / "history").glob("*/runs-*"))
    docs = [json.loads(line) for line in runs_file.read_text().splitlines()]
    del docs[0]["cause"], docs[0]["attempts"]  # as an older scarbook wrote it
    docs[1]["cause"] = {"kind": "weather", "rule": "rain", "evidence": "it rained"}
    runs_file.write_text("".join(json.dumps(d) + "\n" for d in docs))
    from scarbook.history.store import History

    runs = History(project.workspaces).runs(docs[0]["session_id"])
    old = next(r for r in runs if r.k == docs[0]["k"])
    assert old.cause is None and old.attempts == [] and old.status != "unjudged"
    # issue 33.14: the session recorded 2 runs; the left-out one shows unjudged, so the case has no verdict
    assert [r.status for r in runs if r.k != docs[0]["k"]] == ["unjudged"]
    assert len(runs.problems) == 2
    assert "line 2 is not counted: cause kind 'weather' is not one of agent, infra, judge, case" in str(runs.problems[0])
    assert "holds 1 run of case c, but session" in str(runs.problems[1])


JUDGED_CASE = """\
    id: c
    task: write ok.txt
    checks:
      - {type: file_exists, path: ok.txt}
      - {type: llm_judge, artifact: ok.txt, rubric: [it says ok]}
    """


def test_runs_whose_judge_was_skipped_are_nobodys_fault(project) -> None:
    """--skip-judge (issue 37.12): the judge was never asked, so its unjudged runs are not counted
    under the judge's cause (it printed 'why runs did not pass: 2 judge … judge: its error or split
    samples'); the summary's partial line says what they are."""
    _agent(project, WRITE_OK)
    project.case("c", JUDGED_CASE)
    out = project.root / "report.json"
    result = project.cli("eval", "--skip-judge", "--runs", "2", "--json", str(out))
    report = json.loads(out.read_text())
    assert [(r["status"], r["cause"]) for r in report["runs"]] == [("unjudged", None)] * 2
    assert report["causes"] == {"agent": 0, "infra": 0, "judge": 0, "case": 0}
    assert "why runs did not pass" not in result.output
    assert ("partial: judge checks were skipped (--skip-judge); 2 unjudged runs have no verdict and are "
            "not in any rate") in result.output


def test_an_older_records_skipped_judge_is_not_counted_as_the_judges_fault() -> None:
    """A --skip-judge session an older scarbook recorded (its runs carry cause judge/judge-skipped)
    counts no judge cause in the reports nor in the run review's filters."""
    from scarbook.history.store import History
    from scarbook.run.causes import count_causes
    from scarbook.views.run_review import filter_names, shown_runs

    history = Path(__file__).resolve().parents[1] / "fixtures" / "records" / "judged"
    runs = list(History(history).runs("20261205-021530-799c6"))
    skipped = [r for r in runs if r.cause is not None and r.cause.rule == "judge-skipped"]
    assert skipped and all(r.status == "unjudged" for r in skipped)
    assert count_causes(runs)["judge"] == 0
    assert "judge" not in filter_names(runs) and shown_runs(runs, "judge") == []
