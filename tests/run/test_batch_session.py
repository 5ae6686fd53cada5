"""Issue 27.3: `scarbook eval --judge-batch` — the judge's requests go through the Message Batches API
(the tests' server's /v1/messages/batches, through the real SDK); a killed scarbook loses nothing
(`scarbook resume`); batch errors are judge errors on the right runs; --dry-run prices both ways."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.history.store import History
from scarbook.models.session_parts import BatchRecord
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, batch_reply, judge_server, status_reply, tool_reply  # noqa: F401

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]

CASE = """\
id: judge-me
title: Claimed one line
task: Extract the first line of README.md and write it to tmp.txt
checks:
  - type: llm_judge
    artifact: output
    rubric:
      - the answer says tmp.txt holds one line
      - that line is the README's title
"""

REPLIES = [[("PASS", "one line"), ("PASS", "title")], [("PASS", "one line"), ("FAIL", "not the title")],
           [("PASS", "one line"), ("PASS", "title")]]


@pytest.fixture
def project(tmp_path, judge_server, monkeypatch, inprocess_demo):
    """The demo agent (in this process: its runs are not what is tested; the kill -9 test's scarbook
    subprocess runs it as a program) and one case graded by the judge alone."""
    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")
    (tmp_path / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent: {{type: demo, seed: 7}}
        runs: 3
        concurrency: 1
        threshold: 0.8
        gate: {{mode: point}}
        judge:
          model: claude-sonnet-4-6
          base_url: {judge_server.url}
          max_retries: 1
          timeout_s: {JUDGE_TIMEOUT_S}
          batch_poll_s: 0.02
        """))
    (tmp_path / "cases" / "judge-me").mkdir(parents=True)
    (tmp_path / "cases" / "judge-me" / "case.yaml").write_text(CASE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-batch")
    return tmp_path


def scarbook(project, *args):
    return CliRunner().invoke(main, ["-C", str(project), *args], catch_exceptions=False)


def verdicts(report: Path) -> list[tuple[int, str, str]]:
    runs = json.loads(report.read_text())["runs"]
    return sorted((r["k"], r["status"], r["reason"]) for r in runs)


def _same_but_nonce(body: dict) -> str:
    return re.sub(r"[0-9a-f]{32}", "NONCE", json.dumps(body, sort_keys=True))


def test_batch_sends_the_online_requests_and_gives_the_online_verdicts_at_half_price(project, judge_server):
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    online = scarbook(project, "eval", "-q", "--no-judge-cache", "--json", str(project / "online.json"))
    assert online.exit_code == 1, online.output

    judge_server.push(*(tool_reply(r) for r in REPLIES))
    batch = scarbook(project, "eval", "--no-judge-cache", "--judge-batch", "--json", str(project / "batch.json"))
    assert batch.exit_code == 1, batch.output
    assert verdicts(project / "batch.json") == verdicts(project / "online.json")
    assert len(judge_server.batches) == 1  # one batch for the session's three runs
    sent = judge_server.batch_requests()
    online_bodies = [r["body"] for r in judge_server.requests if r["path"] == "/v1/messages"]
    assert len(sent) == len(online_bodies) == 3
    # the same request, prompt cache breakpoints and temperature included; only the nonce is fresh
    assert [_same_but_nonce(r["params"]) for r in sent] == [_same_but_nonce(b) for b in online_bodies]
    runs = json.loads((project / "batch.json").read_text())["runs"]
    usage = runs[0]["judge_usage"]
    assert usage["input_tokens"] == 1000 and usage["cost_usd"] == pytest.approx((1000 * 3 + 100 * 15) / 1e6 / 2)
    judge = [c for c in runs[0]["checks"] if c["type"] == "llm_judge"][0]["judge"]
    assert judge["batch"] == {"id": next(iter(judge_server.batches)), "calls": 1}
    assert f"judge batch {next(iter(judge_server.batches))}: 3/3 requests done" in batch.output
    assert ("judge: 3 calls, 3300 tokens, $0.0067; 0 calls saved by cheaper checks failing first; 3 answered in a "
            "Message Batch, at the batch price") in batch.output
    info = History(project / "workspaces").sessions()[0]
    assert info.state == "finished" and info.batch.id == next(iter(judge_server.batches))


def test_a_cached_verdict_skips_the_batch(project, judge_server):
    judge_server.default = tool_reply(REPLIES[0])
    assert scarbook(project, "eval", "-q", "--judge-batch").exit_code == 0
    assert len(judge_server.batches) == 1
    second = scarbook(project, "eval", "-q", "--judge-batch")
    assert second.exit_code == 0, second.output
    assert len(judge_server.batches) == 1  # every sample came from the verdict cache: no second batch
    assert "from cache: 3" in second.output


def test_errored_expired_and_canceled_requests_are_judge_errors_on_their_runs(project, judge_server):
    judge_server.push(status_reply(500, "the model is on fire"), batch_reply("expired"), batch_reply("canceled"))
    result = scarbook(project, "eval", "-q", "--judge-batch", "--json", str(project / "r.json"))
    assert result.exit_code == 3, result.output  # no run has a verdict
    runs = sorted(json.loads((project / "r.json").read_text())["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["error", "error", "error"]
    assert [r["cause"]["kind"] for r in runs] == ["judge", "judge", "judge"]
    ids = [c["custom_id"] for c in judge_server.batch_requests()]
    assert [r["reason"] for r in runs] == [
        f"check 1 (llm_judge): judge batch request {ids[0]} errored (api_error: the model is on fire)",
        f"check 1 (llm_judge): judge batch request {ids[1]} expired: the batch did not answer it within 24 hours "
        "— run the case again",
        f"check 1 (llm_judge): judge batch request {ids[2]} was canceled (the batch "
        f"{next(iter(judge_server.batches))} was canceled)",
    ]


def test_dry_run_prints_online_and_batch_cost(project, judge_server):
    result = scarbook(project, "eval", "--dry-run", "-n", "4")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("judge: at most"))
    online, batch = (float(x) for x in re.findall(r"\$([0-9.]+)", line))
    assert line.startswith("judge: at most 4 calls, about $") and " online, $" in line and " as a batch (" in line
    assert batch == pytest.approx(online / 2, abs=1e-4)
    assert "this session judges online; --judge-batch would send" in result.output
    assert judge_server.requests == []


def _wait_for_batch(project: Path, pid: subprocess.Popen, within: float = 60) -> str:
    history = History(project / "workspaces")
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert pid.poll() is None, pid.communicate()
        for info in history.sessions():
            if info.batch is not None and info.batch.id:
                return info.id
        time.sleep(0.05)
    raise AssertionError("the batch was never recorded")


@pytest.mark.needs_proc
def test_a_batch_session_survives_kill_9_between_submit_and_collect(project, judge_server):
    """Real kill -9 of a `scarbook eval --judge-batch` process while its batch is in progress (the
    server holds it); `scarbook resume` then collects it and gives the online verdicts and exit code.
    (Seconds: a real scarbook process, started and killed, with its SDK import, is what is tested.)"""
    judge_server.hold_batches = True
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    report = project / "report.json"
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project), "eval", "-q", "--judge-batch", "--json", str(report)],
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sid = _wait_for_batch(project, proc)
    time.sleep(0.1)  # it is polling now
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert not report.exists()

    info = History(project / "workspaces").read_session(sid)
    assert info.state == "judging"  # not "interrupted": nothing is lost, the batch is recorded
    shown = scarbook(project, "report", sid)
    assert "judging" in shown.output and "3 unjudged" in shown.output
    against = scarbook(project, "eval", "-q", "--against", sid)
    assert against.exit_code == 2
    assert (f"session {sid} is still judging (its judge batch is not collected): it has no verdicts yet — "
            f"`scarbook resume {sid}` collects them") in against.output

    judge_server.end_batches()
    resumed = scarbook(project, "resume", "latest")
    assert resumed.exit_code == 1, resumed.output  # 2/3 below 0.8, as online
    assert len(judge_server.batches) == 1  # collected, not submitted again
    assert [(k, s) for k, s, _ in verdicts(report)] == [(1, "pass"), (2, "fail"), (3, "pass")]
    assert verdicts(report)[1][2] == "check 1 (llm_judge): 1/2 rubric items PASS; FAIL item 2: not the title"
    assert History(project / "workspaces").read_session(sid).state == "finished"
    again = scarbook(project, "resume", sid)
    assert again.exit_code == 2
    assert f"session {sid} already finished: it misses no runs" in again.output


def _judging_session(project: Path, judge_server, runs: int = 2, label: str = "", cases: tuple[str, ...] = ()):
    """A --judge-batch session (of `cases`, else all) left judging: its batch never ends, and the wait is
    stopped as Ctrl-C stops it (control.cancel) once the batch is submitted."""
    import asyncio

    from scarbook.project import Project
    from scarbook.run.events import BatchProgress
    from scarbook.run.runner import SessionControl, run_session
    from scarbook.run.session import SessionPlan, SessionSite, ready_session

    judge_server.hold_batches = True
    proj = Project.open(project)
    chosen = [c for c in proj.load_cases().cases if not cases or c.id in cases]
    ready = ready_session(SessionSite.of(proj), SessionPlan(chosen, runs, label=label, judge_batch=True, judge_cache=False))

    async def go():
        control = SessionControl()
        async for ev in run_session(ready, control=control):
            if isinstance(ev, BatchProgress):
                control.cancel()
            last = ev
        return last

    return asyncio.run(go())


def test_ctrl_c_while_waiting_leaves_the_session_judging(project, judge_server):
    judge_server.default = tool_reply(REPLIES[0])
    finished = _judging_session(project, judge_server)
    info = finished.session
    assert info.state == "judging"
    assert info.note == (f"session {info.id} is judging: its judge requests wait in batch {info.batch.id} "
                         f"(scarbook stopped waiting for it) — `scarbook resume {info.id}` collects the verdicts "
                         "and finishes the session")
    assert [r.status for r in finished.runs] == ["unjudged", "unjudged"]
    assert History(project / "workspaces").read_session(info.id).state == "judging"


def test_a_judging_session_has_no_verdict_in_any_view(project, judge_server):
    judge_server.default = tool_reply(REPLIES[0])
    assert scarbook(project, "eval", "-q", "-l", "online").exit_code == 0
    sid = _judging_session(project, judge_server, label="batched").session.id

    report = scarbook(project, "report", "latest")
    assert "judge-me                    0    0    0    2   –         –" in report.output
    assert f"session {sid} [batched]: judging; 2 runs — 0 pass, 0 fail, 0 error, 2 unjudged" in report.output
    assert ("gate: no verdict yet — the session is judging (its judge batch is not collected): exit 3"
            in report.output)
    sessions = scarbook(project, "sessions").output.splitlines()
    assert any(line.startswith(sid) and " judging " in line and line.split()[-1] == "judging" for line in sessions)
    listed = scarbook(project, "list").output
    assert re.search(r"judge-me\s+–\s+0/0/0 .* judging ", listed), listed
    diff = scarbook(project, "diff", "online", "batched").output
    assert "n/a 2 unjudged" in diff
    assert (f"note: session {sid} is judging: no verdicts yet (its judge batch is not collected) — "
            f"`scarbook resume {sid}` collects them") in diff
    trends = scarbook(project, "trends").output
    assert re.search(r"judge-me\s+0\s+100\s+·", trends), trends
    baseline = scarbook(project, "baseline", "set", "latest", "--force")
    assert baseline.exit_code == 2 and f"session {sid} is still judging" in baseline.output


@pytest.mark.parametrize("status, why", [
    (503, "judge answered HTTP 503 (after 1 retry): scripted outage"),
    (401, "the judge at {url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401)"),  # a key revoked meanwhile
])
def test_an_outage_while_waiting_exits_3_and_resume_finishes_later(project, judge_server, status, why):
    judge_server.push(*(tool_reply(REPLIES[0]) for _ in range(3)))
    assert scarbook(project, "eval", "-q", "-l", "before").exit_code == 0
    before = History(project / "workspaces").sessions()[0].id
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    judge_server.hold_batches = True
    judge_server.batch_read_status = status
    result = scarbook(project, "eval", "-q", "--judge-batch", "--no-judge-cache", "--against", "before")
    assert result.exit_code == 3
    info = History(project / "workspaces").sessions()[0]
    assert info.state == "judging"  # the batch is not given up: its results can still be collected
    assert (f"scarbook: session {info.id} is judging: its judge requests wait in batch {info.batch.id} (judge "
            f"batch {info.batch.id} could not be polled: {why.format(url=judge_server.url)}") in result.output
    assert (f"— `scarbook resume {info.id}` collects the verdicts and finishes the session (exit 3: no "
            "verdict until then)") in result.output
    judge_server.batch_read_status = 200
    judge_server.end_batches()
    resumed = scarbook(project, "resume")
    assert resumed.exit_code == 1, resumed.output
    assert f"session {info.id}: finished; 3 runs — 2 pass, 1 fail, 0 error" in resumed.output
    # the eval's --against, compared once the verdicts are in
    assert f"against the baseline (session: session {before}" in resumed.output
    assert re.search(r"judge-me +100% +3/3 +67% +2/3 +-33 ", resumed.output), resumed.output


def test_resume_submits_the_batch_when_scarbook_died_before_its_id_was_recorded(project, judge_server):
    """batch.json and the `judging` state are written before the batch is created; a scarbook killed
    in between leaves no id: resume looks for the batch among the API's (issue 33.13: it finds none, the
    create never reached the API) and submits the recorded requests then."""
    judge_server.default = tool_reply(REPLIES[1])
    info = _judging_session(project, judge_server).session
    history = History(project / "workspaces")
    info.batch = info.batch.updated(id=None, ids=(None,))
    history.update_session(info)
    judge_server.batches.clear()  # the create never reached the API
    judge_server.hold_batches = False
    resumed = scarbook(project, "resume", info.id)
    assert resumed.exit_code == 1, resumed.output
    assert len(judge_server.batches) == 1  # its requests were sent now
    assert history.read_session(info.id).batch.id == list(judge_server.batches)[0]
    assert [r.status for r in history.runs(info.id)] == ["fail", "fail"]


def test_a_session_past_the_batch_limits_is_sent_in_chunks(project, judge_server, monkeypatch):
    from scarbook.run import batch_session

    monkeypatch.setattr(batch_session, "MAX_REQUESTS", 2)  # the API's is 100,000 requests (and 256 MB)
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    result = scarbook(project, "eval", "--judge-batch", "--no-judge-cache", "--json", str(project / "r.json"))
    assert result.exit_code == 1, result.output
    first, second = judge_server.batches
    assert [len(b["requests"]) for b in judge_server.batches.values()] == [2, 1]
    assert f"judge batch {first}: 2/2 requests done" in result.output
    assert f"judge batch {second}: 1/1 request done" in result.output
    assert [(k, s) for k, s, _ in verdicts(project / "r.json")] == [(1, "pass"), (2, "fail"), (3, "pass")]
    info = History(project / "workspaces").sessions()[0]
    assert info.batch.batch_ids == [first, second] and info.batch.requests == 3


def test_a_chunk_that_could_not_be_sent_is_sent_by_resume(project, judge_server, monkeypatch):
    from scarbook.run import batch_session

    monkeypatch.setattr(batch_session, "MAX_REQUESTS", 2)
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    judge_server.batch_create_statuses.extend([200, 500, 500])  # the second chunk: 500, and 500 on the retry
    result = scarbook(project, "eval", "-q", "--judge-batch", "--no-judge-cache")
    assert result.exit_code == 3
    info = History(project / "workspaces").sessions()[0]
    first = next(iter(judge_server.batches))
    assert info.state == "judging" and info.batch.batch_ids == [first, None]
    assert (f"session {info.id} is judging: its judge requests wait in batch {first} (judge batch 2 of 2 could not "
            "be submitted: judge answered HTTP 500 (after 1 retry): scripted create failure)") in result.output
    resumed = scarbook(project, "resume", "-q")
    assert resumed.exit_code == 1, resumed.output
    assert [len(b["requests"]) for b in judge_server.batches.values()] == [2, 1]  # only the unsent chunk again
    assert [r.status for r in History(project / "workspaces").runs(info.id)] == ["pass", "fail", "pass"]


def test_judge_batch_true_in_scarbook_yaml_judges_every_eval_in_a_batch(project, judge_server):
    config = project / "scarbook.yaml"
    config.write_text(config.read_text().replace("  batch_poll_s: 0.02\n", "  batch_poll_s: 0.02\n  batch: true\n"))
    judge_server.default = tool_reply(REPLIES[0])
    result = scarbook(project, "eval", "-q", "--no-judge-cache")
    assert result.exit_code == 0, result.output
    assert len(judge_server.batches) == 1 and not [r for r in judge_server.requests if r["path"] == "/v1/messages"]
    dry = scarbook(project, "eval", "--dry-run")
    assert "this session judges as a batch (--judge-batch): half the price, verdicts within 24 hours" in dry.output



def test_runs_auto_is_not_judged_in_a_batch(project, judge_server):
    """--runs auto's rule decides from verdicts as the runs end; a batch gave them after every run, so the rule
    read none ("judge-me: decided undecided after 0 runs"), every judged case ran to --max-runs, and `resume` (which
    decides nothing: the rule's decisions are the eval's) reported it undecided at 31/31 passes, exit 3 until
    then. --judge-batch is refused with it; scarbook.yaml's judge.batch: true judges such a session online."""
    result = scarbook(project, "eval", "--runs", "auto", "--judge-batch")
    assert (result.exit_code, result.stderr) == (
        2, "scarbook: --judge-batch cannot be combined with --runs auto: its rule decides each case from verdicts as "
           "the runs end, and a batch gives them only after every run (each judged case would run to --max-runs and "
           "end undecided) — judge online, or give a fixed --runs N\n")
    assert not (project / "workspaces").exists() or not History(project / "workspaces").sessions()
    config = project / "scarbook.yaml"
    config.write_text(config.read_text().replace("  batch_poll_s: 0.02\n", "  batch_poll_s: 0.02\n  batch: true\n"))
    judge_server.default = tool_reply(REPLIES[0])
    result = scarbook(project, "eval", "-q", "--runs", "auto", "--no-judge-cache")
    assert result.exit_code == 0, result.output
    assert ("warning: scarbook.yaml's judge.batch: true is set aside for this session: --runs auto's rule decides "
            "each case from verdicts as the runs end, and a batch gives them only after every run — the judge grades "
            "online\n") in result.stderr
    assert not judge_server.batches and [r for r in judge_server.requests if r["path"] == "/v1/messages"]
    info = History(project / "workspaces").sessions()[0]
    assert (info.state, info.batch, info.decisions) == ("finished", None, {"judge-me": "above"})


def _in_yaml(project: Path, batch: bool = False, more: bool = False) -> None:
    config = project / "scarbook.yaml"
    text = config.read_text()
    if batch:
        text = text.replace("  batch_poll_s: 0.02\n", "  batch_poll_s: 0.02\n  batch: true\n")
    if more:
        text = text.replace("gate: {mode: point}", "gate: {mode: point, undecided: more}")
    config.write_text(text)


def _runs_and_batches(project: Path, judge_server) -> tuple[int, int, int]:
    """The session's runs, the batches sent and the judge's online calls."""
    info = History(project / "workspaces").sessions()[0]
    online = [r for r in judge_server.requests if r["path"] == "/v1/messages"]
    return len(History(project / "workspaces").runs(info.id)), len(judge_server.batches), len(online)


def test_undecided_more_and_judge_batch_together_are_refused(project, judge_server):
    """`undecided: more`'s looks read verdicts as the runs end; under a batch every judged run was unjudged at
    each look, so a case asked 3 runs ran to --max-runs (12 of 12, every look blind), ending "ok"."""
    result = scarbook(project, "eval", "--runs", "3", "--max-runs", "12", "--undecided", "more", "--judge-batch")
    assert (result.exit_code, result.stderr) == (
        2, "scarbook: --judge-batch cannot be combined with --undecided more: its looks decide each case from "
           "verdicts as the runs end, and a batch gives them only after every run (each judged case would run to "
           "--max-runs) — judge online, or give --undecided pass or fail\n")
    assert not (project / "workspaces").exists() or not History(project / "workspaces").sessions()


@pytest.mark.parametrize("more_in_yaml, args, whose", [
    (False, ("--undecided", "more"), "--undecided more's looks decide"),
    (True, (), "gate.undecided: more's looks decide")])
def test_judge_batch_true_in_scarbook_yaml_is_set_aside_for_the_looks(project, judge_server, more_in_yaml, args,
                                                                        whose):
    """--undecided more (or gate.undecided: more, both in scarbook.yaml): the looks win, judged online."""
    _in_yaml(project, batch=True, more=more_in_yaml)
    judge_server.default = tool_reply(REPLIES[0])
    result = scarbook(project, "eval", "-q", "--runs", "3", "--max-runs", "12", "--no-judge-cache", *args)
    assert result.exit_code == 0, result.output
    assert (f"warning: scarbook.yaml's judge.batch: true is set aside for this session: {whose} each case from "
            "verdicts as the runs end, and a batch gives them only after every run — the judge grades online\n"
            ) in result.stderr
    assert _runs_and_batches(project, judge_server) == (3, 0, 3)  # decided above at the first look


def test_judge_batch_given_sets_aside_undecided_more_from_scarbook_yaml(project, judge_server):
    """The command line's --judge-batch wins over scarbook.yaml's gate.undecided: more: no blind looks."""
    _in_yaml(project, more=True)
    judge_server.default = tool_reply(REPLIES[0])
    result = scarbook(project, "eval", "-q", "--runs", "3", "--max-runs", "12", "--no-judge-cache", "--judge-batch")
    assert result.exit_code == 0, result.output
    assert ("warning: scarbook.yaml's gate.undecided: more is set aside for this session: --judge-batch gives "
            "verdicts only after every run, so its looks would see none — an undecided case passes with a warning "
            "(give --undecided fail to fail it)\n") in result.stderr
    assert _runs_and_batches(project, judge_server) == (3, 1, 0)


AUTO_WHY = ("--runs auto's rule decides each case from verdicts as the runs end, and a batch gives them only after "
            "every run")
MORE_WHY = ("--undecided more's looks decide each case from verdicts as the runs end, and a batch gives them only "
            "after every run")


@pytest.mark.parametrize("args, why", [(("--runs", "auto"), AUTO_WHY), (("--undecided", "more"), MORE_WHY)])
def test_dry_run_says_the_notes_and_suggests_no_batch_where_verdicts_decide_as_runs_end(project, judge_server,
                                                                                          args, why):
    """--dry-run printed neither what scarbook.yaml's judge.batch: true set aside nor why the session judged
    online, and said "--judge-batch would send…" with --runs auto or --undecided more, where it is refused."""
    plain = scarbook(project, "eval", "--dry-run", *args)
    assert plain.exit_code == 0, plain.output
    assert f"this session judges online: {why}\n" in plain.stdout and "--judge-batch" not in plain.stdout
    _in_yaml(project, batch=True)
    dry = scarbook(project, "eval", "--dry-run", *args)
    assert dry.exit_code == 0, dry.output
    assert dry.stderr == (f"warning: scarbook.yaml's judge.batch: true is set aside for this session: {why} — the "
                          "judge grades online\n")
    assert f"this session judges online: {why}\n" in dry.stdout and "--judge-batch" not in dry.stdout
    assert judge_server.requests == []


AGENTS_WHY = "a session of several agents is a comparison, decided when its verdicts are in"


def test_judge_batch_true_in_scarbook_yaml_is_set_aside_for_several_agents_with_a_note(project, judge_server):
    """--agents with scarbook.yaml's judge.batch: true judged online, unsaid (where --runs auto and the looks
    have a note); its dry run suggested --judge-batch, which --agents refuses."""
    config = project / "scarbook.yaml"
    config.write_text(config.read_text() + "agents:\n  a: {type: demo, seed: 7}\n  b: {base: a}\n")
    dry = scarbook(project, "eval", "--dry-run", "--agents", "a,b")
    assert dry.exit_code == 0, dry.output
    assert f"this session judges online: {AGENTS_WHY}\n" in dry.stdout and "--judge-batch" not in dry.stdout
    _in_yaml(project, batch=True)
    judge_server.default = tool_reply(REPLIES[0])
    result = scarbook(project, "eval", "-q", "--agents", "a,b", "--no-judge-cache")
    assert result.exit_code == 0, result.output
    assert (f"warning: scarbook.yaml's judge.batch: true is set aside for this session: {AGENTS_WHY} — the judge "
            "grades online\n") in result.stderr
    assert _runs_and_batches(project, judge_server) == (6, 0, 6)



@pytest.mark.parametrize("args, why", [(("--runs", "auto"), AUTO_WHY), (("--undecided", "more"), MORE_WHY)])
def test_every_reason_judge_batch_true_is_set_aside_is_said(project, judge_server, args, why):
    """--agents with --runs auto (or --undecided more) under scarbook.yaml's judge.batch: true: the note, eval's and
    --dry-run's, gave the first reason only (the rule's, or the looks'), never the comparison of several agents."""
    config = project / "scarbook.yaml"
    config.write_text(config.read_text() + "agents:\n  a: {type: demo, seed: 7}\n  b: {base: a}\n")
    _in_yaml(project, batch=True)
    both = f"{why}; {AGENTS_WHY}"
    note = f"warning: scarbook.yaml's judge.batch: true is set aside for this session: {both} — the judge grades online\n"
    dry = scarbook(project, "eval", "--dry-run", "--agents", "a,b", *args)
    assert dry.exit_code == 0, dry.output
    assert dry.stderr == note
    assert f"this session judges online: {both}\n" in dry.stdout and "--judge-batch" not in dry.stdout
    judge_server.default = tool_reply(REPLIES[0])
    result = scarbook(project, "eval", "-q", "--agents", "a,b", "--max-runs", "12", "--no-judge-cache", *args)
    assert result.exit_code in (0, 1, 3), result.output  # (what the comparison decides is not this test's)
    assert note in result.stderr
    assert not judge_server.batches and [r for r in judge_server.requests if r["path"] == "/v1/messages"]


TWO_JUDGES = """\
id: two-judges
title: Two judge checks
task: Extract the first line of README.md and write it to tmp.txt
checks:
  - {type: llm_judge, artifact: output, rubric: [the answer names tmp.txt]}
  - {type: llm_judge, artifact: output, rubric: [the answer is polite]}
"""


def test_judge_checks_count_in_order_up_to_the_first_miss_as_online(project, judge_server):
    """Online, the second judge check is not asked once the first FAILs; a batch sent both: the
    second's answer (here: expired, which would make the run an error) does not count."""
    (project / "cases" / "two-judges").mkdir()
    (project / "cases" / "two-judges" / "case.yaml").write_text(TWO_JUDGES)
    judge_server.push(tool_reply([("FAIL", "no file named")]), batch_reply("expired"))
    result = scarbook(project, "eval", "-q", "-n", "1", "--judge-batch", "--json", str(project / "r.json"), "two-judges")
    assert result.exit_code == 1, result.output
    (run,) = json.loads((project / "r.json").read_text())["runs"]
    assert (run["status"], run["reason"]) == ("fail", "check 1 (llm_judge): 0/1 rubric items PASS; FAIL item 1: no file named")
    second = run["checks"][1]
    assert (second["status"], second["detail"]) == (
        "skipped", "not run: check 1 (llm_judge) did not pass (graded in the batch, not counted)")
    assert run["cause"]["kind"] == "agent"


def test_resume_refuses_a_session_another_scarbook_still_collects(project, judge_server):
    from filelock import FileLock

    judge_server.default = tool_reply(REPLIES[0])
    info = _judging_session(project, judge_server).session
    with FileLock(str(project / "workspaces" / "history" / info.id / ".lock")):  # as the live eval holds it
        held = scarbook(project, "resume", info.id)
    assert held.exit_code == 2
    assert (f"session {info.id} is held by another scarbook that is still running (it collects the verdicts "
            "itself): wait for it, or stop it first") in held.output
    assert History(project / "workspaces").read_session(info.id).state == "judging"


# -- a batch endpoint answering something that is not a message batch (issue 37.5) -------------------------
WRONG_SHAPE = {"object": "list", "data": []}  # e.g. a vendor's or proxy's own answer on this path


def _not_a_batch(url: str, asked: str) -> str:
    return (f"the judge at {url} answered {asked} with something that is not a message batch "
            f"({json.dumps(WRONG_SHAPE)}) — does it offer the Message Batches API? Judge online (without "
            "--judge-batch, or judge.batch: false)")


def test_a_batch_create_answered_with_the_wrong_shape_is_one_clear_line_and_the_session_ends(project, judge_server):
    """It printed `scarbook:  (exit 3…)` with an empty message and "Task exception was never retrieved …
    AttributeError", and the session stayed judging (resume then tracebacked)."""
    judge_server.batch_wrong_shape = WRONG_SHAPE
    out = subprocess.run([*SCARBOOK, "-C", str(project), "eval", "-q", "--judge-batch", "--no-judge-cache"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3
    assert "Traceback" not in out.stderr and "Task exception" not in out.stderr, out.stderr
    (info,) = History(project / "workspaces").sessions()
    why = f"the judge batch could not be submitted: {_not_a_batch(judge_server.url, 'POST /v1/messages/batches')}"
    assert info.state == "finished" and info.note == f"{why} (3 waiting judge checks: an error each)"
    assert f"session {info.id}: finished; 3 runs — 0 pass, 0 fail, 3 error\n" in out.stdout
    assert f"\n{info.note}\n" in out.stdout  # said below the table, once
    runs = History(project / "workspaces").runs(info.id)
    assert [(r.status, r.cause.kind) for r in runs] == [("error", "judge")] * 3
    assert {r.checks[-1].detail for r in runs} == {why}
    resumed = scarbook(project, "resume")  # nothing waits: said, not a traceback
    assert (resumed.exit_code, resumed.output) == (2, f"scarbook: session {info.id} already finished: it misses no "
                                                      f"runs — see `scarbook report {info.id}`, or run `scarbook eval` "
                                                      "afresh\n")


def test_resume_meeting_the_wrong_shape_ends_the_session_with_its_reason(project, judge_server):
    judge_server.default = tool_reply(REPLIES[1])
    info = _judging_session(project, judge_server).session
    history = History(project / "workspaces")
    info.batch = info.batch.updated(id=None, ids=(None,))
    info.batch = BatchRecord.read({k: v for k, v in info.batch.to_dict().items() if k != "sending"})
    history.update_session(info)  # as a scarbook killed before its create left it: resume sends it
    judge_server.batch_wrong_shape = WRONG_SHAPE
    resumed = scarbook(project, "resume", info.id)
    assert resumed.exit_code == 3, resumed.output
    why = f"the judge batch could not be submitted: {_not_a_batch(judge_server.url, 'POST /v1/messages/batches')}"
    assert history.read_session(info.id).state == "finished"
    assert history.read_session(info.id).note == f"{why} (2 waiting judge checks: an error each)"
    assert [r.status for r in history.runs(info.id)] == ["error", "error"]


def test_a_poll_answered_with_the_wrong_shape_leaves_the_session_for_resume(project, judge_server):
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    judge_server.hold_batches = True
    original = judge_server._batch_json

    def created_then_wrong(batch):  # the create is answered as the API does, every read after it is not
        judge_server._batch_json = lambda _b: WRONG_SHAPE
        return original(batch)

    judge_server._batch_json = created_then_wrong
    result = scarbook(project, "eval", "-q", "--judge-batch", "--no-judge-cache")
    assert result.exit_code == 3
    (info,) = History(project / "workspaces").sessions()
    batch_id = info.batch.id
    assert info.state == "judging"
    asked = _not_a_batch(judge_server.url, f"GET /v1/messages/batches/{batch_id}")
    assert (f"scarbook: session {info.id} is judging: its judge requests wait in batch {batch_id} (judge batch "
            f"{batch_id} could not be polled: {asked}) — `scarbook resume {info.id}` collects the verdicts and "
            "finishes the session (exit 3: no verdict until then)") in result.output
    judge_server._batch_json = original
    judge_server.end_batches()
    resumed = scarbook(project, "resume")
    assert resumed.exit_code == 1, resumed.output
    assert f"session {info.id}: finished; 3 runs — 2 pass, 1 fail, 0 error" in resumed.output


def test_a_judging_session_is_not_graded_again_before_it_is_collected(project, judge_server):
    """Before: `rejudge` graded its runs and the new session ended `judging` too, with no batch of its own
    for `scarbook resume` to collect."""
    judge_server.default = tool_reply(REPLIES[0])
    sid = _judging_session(project, judge_server).session.id
    result = scarbook(project, "rejudge", sid)
    assert result.exit_code == 2, result.output
    assert result.output.strip().endswith(f"scarbook: session {sid} is still judging (its judge batch is not "
                                          f"collected) — `scarbook resume {sid}` collects it; then grade it again")
    assert [i.id for i in History(project / "workspaces").sessions()] == [sid]


def test_a_key_rejected_while_resuming_says_to_resume_again_not_skip_judge(project, judge_server):
    """resume has no --skip-judge: a key the judge rejects while the batch is collected says what resume can do
    (the batch waits at the API), and a resume with the key right finishes it."""
    judge_server.default = tool_reply(REPLIES[1])
    info = _judging_session(project, judge_server).session
    judge_server.batch_read_status = 401
    refused = scarbook(project, "resume", info.id)
    assert refused.exit_code == 3, refused.output
    assert (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); its verdicts were "
            "not collected: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in scarbook.yaml) — the "
            "batch stays at the API: run this resume again once the key is right") in refused.output
    assert "--skip-judge" not in refused.output
    judge_server.batch_read_status = 200
    judge_server.end_batches()
    finished = scarbook(project, "resume", info.id)
    assert finished.exit_code == 1, finished.output
    assert f"session {info.id}: finished" in finished.output
