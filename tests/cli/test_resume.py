"""`scarbook resume SESSION` of a session that stopped short (killed, cancelled): it runs exactly the runs the
session is missing under its own id, then gates and reports as an uninterrupted eval would on the same runs;
and it refuses, with what changed and the fix, where going on would mix runs that are not comparable."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from scarbook.history.store import History
from tests.helpers.judge_server import judge_server, status_reply, tool_reply  # noqa: F401  (the fixture)
from tests.helpers.stopped_session import as_stopped, stopped_short

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]

# Run k fails when k is a multiple of 3, else passes; runs past 3 wait for the `go` file, runs past 5 for
# `go2` too (at most 60 s), so a session can be stopped with some runs recorded and others mid-run.
AGENT = """\
import os, sys, time
k = int(os.environ["SCARBOOK_RUN"])
deadline = time.monotonic() + 60
while ((k > 3 and not os.path.exists(sys.argv[1])) or (k > 5 and not os.path.exists(sys.argv[1] + "2"))) \\
        and time.monotonic() < deadline:
    time.sleep(0.05)
open(os.path.join(os.path.dirname(sys.argv[1]), "ran"), "a").write(f"{k}\\n")  # outside its workspace
open("tmp.txt", "w").write("bad\\n" if k % 3 == 0 else "ok\\n")
print("done")
"""
RUNS = 8


def make_project(project, go: Path, judge_url: str | None = None) -> None:
    """Two cases of AGENT: flaky (fails at every third run), steady (passes); with `judge_url`, steady's output
    is graded by the judge there too (no verdict cache: every run's grading is a request)."""
    agent = project.root / "agent.py"
    agent.write_text(AGENT)
    judge = f"judge: {{base_url: {judge_url}, cache: false, max_retries: 1}}\n" if judge_url else ""
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}, {go}]}}\nruns: {RUNS}\n"
                   f"concurrency: 2\nthreshold: 0.8\nisolation: none\n{judge}")
    project.case("flaky", "id: flaky\ntask: t\nchecks: [{type: contains, path: tmp.txt, text: ok}]\n")
    judged = ", {type: llm_judge, artifact: output, rubric: [the answer says it is done]}" if judge_url else ""
    project.case("steady", f"id: steady\ntask: t\nchecks: [{{type: file_exists, path: tmp.txt}}{judged}]\n")


def recorded(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in (root / "workspaces" / "history").glob("*/runs-*.jsonl"))


def scarbook(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*SCARBOOK, "-C", str(root), *args], capture_output=True, text=True, timeout=timeout)


def gate_of(report: Path) -> dict:
    data = json.loads(report.read_text())
    return {c["case_id"]: (c["passes"], c["fails"], c["errors"], c["decision"]) for c in data["cases"]}


def killed_session(project) -> str:
    """A real `scarbook eval` killed with SIGKILL while runs 4 of both cases are mid-run; its session id."""
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and recorded(project.root) < 6:
        time.sleep(0.02)
    time.sleep(0.3)  # runs 4 started: their workspaces and logs are there
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    (info,) = History(project.workspaces).sessions()
    assert info.state == "interrupted" and recorded(project.root) == 6
    return info.id


@pytest.mark.needs_proc
def test_a_killed_session_resumed_runs_what_it_missed_and_gates_as_uninterrupted(project, tmp_path: Path,
                                                                                   judge_server, monkeypatch) -> None:
    judge_server.default = tool_reply([("PASS", "it says done")])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-resume")
    go = project.root / "go"
    make_project(project, go, judge_server.url)
    sid = killed_session(project)
    go.touch()
    (project.root / "go2").touch()
    resumed = scarbook(project.root, "resume", sid, "--json", str(tmp_path / "resumed.json"))
    history = History(project.workspaces)
    (info,) = history.sessions()
    runs = history.runs(sid, info=info)
    assert info.id == sid and info.state == "finished" and not runs.problems
    assert sorted((r.case_id, r.k) for r in runs) == [(c, k) for c in ("flaky", "steady") for k in range(1, RUNS + 1)]
    assert info.recorded == {"flaky": RUNS, "steady": RUNS}
    assert f"resuming session {sid}: 10 missing runs of 2 cases" in resumed.stderr
    assert len(judge_server.requests) == RUNS  # steady's 3 runs graded before the kill, its 5 missing ones now
    assert all(r.judge_calls == 1 for r in runs if r.case_id == "steady")
    # the same project run afresh, uninterrupted: the same runs, the same gate and exit code
    fresh = scarbook(project.root, "eval", "-q", "--json", str(tmp_path / "fresh.json"))
    assert (resumed.returncode, fresh.returncode) == (1, 1), (resumed.stderr, fresh.stderr)
    assert gate_of(tmp_path / "resumed.json") == gate_of(tmp_path / "fresh.json") == {
        "flaky": (6, 2, 0, "below"), "steady": (8, 0, 0, "above")}
    assert len(judge_server.requests) == 2 * RUNS


@pytest.mark.needs_proc
def test_a_session_the_judge_s_rejected_key_aborted_resumes_once_the_key_is_fixed(project, tmp_path: Path,
                                                                                   judge_server, monkeypatch) -> None:
    """Before: resume refused an aborted session ("only an interrupted or cancelled session can be resumed"), and
    the run that met the 401 stayed an error of the session: the user had to `eval` afresh. Now that run runs again
    (its line leaves history), every other finished run is kept, and the session ends as an uninterrupted one."""
    passed = tool_reply([("PASS", "it says done")])
    go = project.root / "go"
    make_project(project, go, judge_server.url)
    go.touch()
    (project.root / "go2").touch()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-revoked")
    for reply in (passed, passed, status_reply(401, "invalid x-api-key")):  # steady's runs 1 and 2, then its run 3
        judge_server.push(reply)
    judge_server.default = passed
    # one run at a time, round robin: flaky 1, steady 1, flaky 2, steady 2, flaky 3, steady 3 (the 401)
    aborted = scarbook(project.root, "eval", "-q", "-j", "1")
    history = History(project.workspaces)
    (info,) = history.sessions()
    sid = info.id
    why = (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the session "
           "stopped before grading more runs: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in "
           "scarbook.yaml) or run with --skip-judge")
    assert aborted.returncode == 3, aborted.stderr
    assert aborted.stderr.endswith(f"scarbook: session aborted: {why}\nscarbook: its finished runs are kept: once the "
                                   f"key is fixed, `scarbook resume {sid}` runs the rest of the session\n")
    before = history.runs(sid, info=info)
    assert info.state == "aborted" and info.recorded == {"flaky": 3, "steady": 3}
    assert [(r.case_id, r.k, r.status, r.cause.rule if r.cause else None) for r in before] == [
        ("flaky", 1, "pass", None), ("flaky", 2, "pass", None), ("flaky", 3, "fail", "check-fail"),
        ("steady", 1, "pass", None), ("steady", 2, "pass", None), ("steady", 3, "error", "judge-rejected-key")]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fixed")
    resumed = scarbook(project.root, "resume", sid, "--json", str(tmp_path / "resumed.json"))
    assert f"resuming session {sid}: 11 missing runs of 2 cases (1 run that met the judge's rejected key runs " \
           "again)\n" in resumed.stderr
    (info,) = history.sessions()
    runs = history.runs(sid, info=info)
    assert info.state == "finished" and info.note == "" and not runs.problems
    assert sorted((r.case_id, r.k) for r in runs) == [(c, k) for c in ("flaky", "steady") for k in range(1, RUNS + 1)]
    assert info.recorded == {"flaky": RUNS, "steady": RUNS}
    assert not [r for r in runs if r.status == "error"]
    assert [r["headers"]["authorization"] for r in judge_server.requests] == (
        ["Bearer sk-revoked"] * 3 + ["Bearer sk-fixed"] * 6)
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert sorted((r["case_id"], r["k"]) for r in report["runs"]) == sorted((r.case_id, r.k) for r in runs)
    # the same project run afresh, uninterrupted: the same runs, the same gate and exit code
    fresh = scarbook(project.root, "eval", "-q", "--json", str(tmp_path / "fresh.json"))
    assert (resumed.returncode, fresh.returncode) == (1, 1), (resumed.stderr, fresh.stderr)
    assert gate_of(tmp_path / "resumed.json") == gate_of(tmp_path / "fresh.json") == {
        "flaky": (6, 2, 0, "below"), "steady": (8, 0, 0, "above")}
    again = scarbook(project.root, "resume", sid)
    assert again.returncode == 2
    assert again.stderr == (f"scarbook: session {sid} already finished: it misses no runs — see `scarbook report "
                            f"{sid}`, or run `scarbook eval` afresh\n")


@pytest.mark.needs_proc
def test_ctrl_c_during_a_resume_keeps_its_runs_and_it_resumes_again(project) -> None:
    go = project.root / "go"
    make_project(project, go)
    sid = killed_session(project)
    go.touch()  # runs 4 and 5 of each case can finish now; 6 to 8 wait for go2
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "resume", sid], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and recorded(project.root) < 10:
        time.sleep(0.02)
    time.sleep(0.3)  # runs 6 started
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, (out, err)
    info = History(project.workspaces).read_session(sid)
    assert info.state == "cancelled" and info.recorded == {"flaky": 5, "steady": 5}
    (project.root / "go2").touch()
    again = scarbook(project.root, "resume", sid)
    assert again.returncode == 1, again.stderr
    assert f"resuming session {sid}: 6 missing runs of 2 cases" in again.stderr
    runs = History(project.workspaces).runs(sid)
    assert sorted((r.case_id, r.k) for r in runs) == [(c, k) for c in ("flaky", "steady") for k in range(1, RUNS + 1)]


def test_a_cancelled_session_resumed_gets_its_missing_runs(project) -> None:
    sid = stopped_short(project, "cancelled")
    result = project.cli("resume", sid)
    assert result.exit_code in (0, 1), result.output
    info = History(project.workspaces).read_session(sid)
    assert info.state == "finished" and info.recorded == {"c": 3} and info.finished_at


def test_a_half_written_last_run_is_run_again(project) -> None:
    sid = stopped_short(project, keep=2)
    runs = project.workspaces / "history" / sid / "runs-c.jsonl"
    runs.write_bytes(runs.read_bytes() + b'{"session_id": "' + sid.encode() + b'", "case_id": "c", "k": 3, "sta')
    result = project.cli("resume", sid)
    assert result.exit_code in (0, 1), result.output
    read = History(project.workspaces).runs(sid)
    assert [r.k for r in read] == [1, 2, 3] and not read.problems


def test_resume_of_a_finished_session_is_refused(project) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    project.cli("eval", "-q", "--runs", "2")
    (info,) = History(project.workspaces).sessions()
    result = project.cli("resume", info.id)
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: session {info.id} already finished: it misses no runs — see "
                             f"`scarbook report {info.id}`, or run `scarbook eval` afresh\n")


def test_resume_of_a_running_session_is_refused(project) -> None:
    sid = stopped_short(project)
    with FileLock(str(project.workspaces / "history" / sid / ".lock")):  # its scarbook is alive
        result = project.cli("resume", sid)
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: session {sid} is still running: its scarbook is alive — wait for it to "
                             "end, or stop it (Ctrl-C) and resume it then\n")


def test_two_resumes_at_once_one_is_refused(project) -> None:
    from scarbook.run.plan import SessionSite
    from scarbook.session.resume import plan_resume

    sid = stopped_short(project, "cancelled")
    loaded = project.load()
    first = History(project.workspaces)
    plan_resume(SessionSite(loaded.root, loaded.config, first), loaded.load_cases(), first.read_session(sid))
    try:
        result = project.cli("resume", sid)
    finally:
        first.let_go(sid)
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: session {sid} is held by another scarbook that is still running (it "
                             "resumes the session itself): wait for it, or stop it first\n")


def change_case(project) -> None:
    project.case("c", "id: c\ntask: another task\nchecks: [{type: file_exists, path: tmp.txt}]\n")


def delete_case(project) -> None:
    import shutil

    shutil.rmtree(project.cases_dir / "c")


def change_agent(project) -> None:
    text = (project.root / "scarbook.yaml").read_text()
    (project.root / "scarbook.yaml").write_text(text.replace("seed: 7", "seed: 8"))


@pytest.mark.parametrize(("change", "message"), [
    (change_case, "case c changed since session {sid} started (its task, checks or seed: digest {was} → {now}): its "
                  "new runs would not be comparable with the ones kept — put the case back as it was, or run "
                  "`scarbook eval` afresh"),
    (delete_case, "case c was deleted since session {sid} started: its missing runs cannot run — restore it "
                  "(`scarbook case restore c`), or run `scarbook eval` afresh"),
    (change_agent, "scarbook.yaml's agent (or the judge's prompt) changed since session {sid} started (fingerprint "
                   "{fp_was} → {fp_now}): its new runs would not be comparable with the ones kept — put it back as it "
                   "was, or run `scarbook eval` afresh"),
], ids=["case-changed", "case-deleted", "agent-changed"])
def test_resume_refuses_what_would_mix_runs(project, change, message) -> None:
    from scarbook.cases.io import case_digest

    sid = stopped_short(project)
    info = History(project.workspaces).read_session(sid)
    change(project)
    loaded = project.load()
    now = loaded.load_cases().by_id().get("c")
    result = project.cli("resume", sid)
    assert result.exit_code == 2
    assert result.stderr == "scarbook: " + message.format(
        sid=sid, was=info.case_digests["c"], now=case_digest(now) if now else "", fp_was=info.fingerprint,
        fp_now=loaded.config.fingerprint()) + "\n"
    after = History(project.workspaces)
    assert after.read_session(sid).state == "interrupted" and len(after.runs(sid)) == 1  # untouched, not held


def test_a_runs_auto_session_resumed_goes_on_with_its_rule(project, tmp_path: Path) -> None:
    project.bundled(agent_seed=7, gate=None)
    cases = ("fix-json-config", "rename-function")
    whole = project.cli("eval", *cases, "--runs", "auto", "-q", "--json", str(tmp_path / "whole.json"))
    (folder,) = (project.workspaces / "history").iterdir()
    assert as_stopped(folder, 5)["rule"] == "sequential"  # its scarbook killed after each case's first 5 runs
    resumed = project.cli("resume", folder.name, "-q", "--json", str(tmp_path / "resumed.json"))
    assert resumed.exit_code == whole.exit_code, resumed.output
    assert gate_of(tmp_path / "resumed.json") == gate_of(tmp_path / "whole.json")
    info = History(project.workspaces).read_session(folder.name)
    assert info.state == "finished" and set(info.decisions) == set(cases)


def test_a_session_of_two_agents_resumed_runs_each_agents_missing_runs(project, tmp_path: Path) -> None:
    agent = project.root / "agent.sh"  # passes unless its run number is a multiple of $1
    agent.write_text('#!/bin/sh\nk=${PWD##*/}\nif [ $(( k % $1 )) -eq 0 ]; then echo bad > out.txt; '
                     'else echo ok > out.txt; fi\necho done\n')
    agent.chmod(0o755)
    project.config("agent: {type: demo}\nisolation: none\nconcurrency: 2\nagents:\n"
                   "  base: {type: command, argv: [./agent.sh, '5']}\n  cand: {base: base, argv: [./agent.sh, '3']}\n",
                   gate=None)
    project.case("c", "id: c\ntask: t\nchecks: [{type: contains, path: out.txt, text: ok}]\n")
    whole = project.cli("eval", "--agents", "base,cand", "--runs", "6", "-q", "--json", str(tmp_path / "whole.json"))
    (folder,) = (project.workspaces / "history").iterdir()
    runs = folder / "runs-c.jsonl"
    before = {json.loads(line)["k"]: json.loads(line)["agent"] for line in runs.read_text().splitlines()}
    as_stopped(folder, 5)
    resumed = project.cli("resume", folder.name, "-q", "--json", str(tmp_path / "resumed.json"))
    assert resumed.exit_code == whole.exit_code, resumed.output
    read = History(project.workspaces).runs(folder.name)
    assert {r.k: r.agent for r in read} == before and len(before) == 12  # each run k by the agent its block drew
    assert json.loads((tmp_path / "resumed.json").read_text())["cases"] == \
        json.loads((tmp_path / "whole.json").read_text())["cases"]


@pytest.mark.parametrize("kept", [3, 7])
def test_an_undecided_more_session_resumed_looks_as_it_would_have(project, tmp_path: Path, kept: int) -> None:
    go = project.root / "go"
    make_project(project, go)
    go.touch()
    (project.root / "go2").touch()
    project.case("broken", "id: broken\ntask: t\nchecks: [{type: contains, path: tmp.txt, text: never}]\n")
    text = (project.root / "scarbook.yaml").read_text().replace("gate: {mode: point}", "gate: {mode: evidence}")
    (project.root / "scarbook.yaml").write_text(text)
    args = ("--runs", "5", "--max-runs", "20", "--undecided", "more", "-q")
    whole = project.cli("eval", *args, "--json", str(tmp_path / "whole.json"))
    assert gate_of(tmp_path / "whole.json") == {  # broken decided at the first look, the others at the last
        "broken": (0, 5, 0, "below"), "flaky": (14, 6, 0, "undecided"), "steady": (20, 0, 0, "above")}
    (folder,) = (project.workspaces / "history").iterdir()
    as_stopped(folder, kept)
    resumed = project.cli("resume", folder.name, "-q", "--json", str(tmp_path / "resumed.json"))
    assert resumed.exit_code == whole.exit_code == 1, resumed.output
    assert gate_of(tmp_path / "resumed.json") == gate_of(tmp_path / "whole.json")


def test_a_resumed_session_runs_as_confined_as_it_ran(project) -> None:
    go = project.root / "go"
    make_project(project, go)
    go.touch()
    (project.root / "go2").touch()
    assert project.cli("eval", "-q", "--runs", "4").exit_code == 1
    (folder,) = (project.workspaces / "history").iterdir()
    as_stopped(folder, 2)
    (project.root / "ran").unlink()
    config = project.root / "scarbook.yaml"
    config.write_text(config.read_text().replace("isolation: none", "isolation: sandbox"))
    resumed = project.cli("resume", folder.name, "-q")
    assert resumed.exit_code == 1, resumed.output  # unconfined as it ran: its agents wrote beside the project
    assert sorted((project.root / "ran").read_text().split()) == ["3", "3", "4", "4"]


def test_a_key_the_judge_rejects_while_resuming_says_resume_again_not_skip_judge(project, judge_server,
                                                                                  monkeypatch) -> None:
    """resume has no --skip-judge: a rejected key (401) says resume cannot run without its judge."""
    from tests.helpers.judge_server import status_reply

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.config(f"judge: {{base_url: {judge_server.url}, cache: false, max_retries: 0}}\nconcurrency: 1\n",
                   gate=None)
    project.case("j", "id: j\ntask: t\nchecks: [{type: llm_judge, artifact: output, rubric: [it says done]}]\n")
    judge_server.default = tool_reply([("PASS", "done")])
    assert project.cli("eval", "-q", "--runs", "3").exit_code in (0, 1)
    (folder,) = (project.workspaces / "history").iterdir()
    as_stopped(folder, 1, "cancelled")
    judge_server.default = status_reply(401, "invalid x-api-key")
    refused = project.cli("resume", folder.name)
    assert refused.exit_code == 3, refused.output
    assert (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the session "
            "stopped before grading more runs: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in "
            f"scarbook.yaml) — resuming session {folder.name} judges its runs as they were judged: it cannot run "
            "without the judge") in refused.output
    assert "--skip-judge" not in refused.output
