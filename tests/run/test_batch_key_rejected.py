"""A --judge-batch session whose judge rejects the key (401) is one a fixed key finishes, as an online session's
is: every run the rejected key touched carries the cause judge-rejected-key, so `scarbook resume` runs exactly those
again; where part of the batch is at the API already, the session stays judging and resume collects it. The real
anthropic SDK against the tests' Messages-API server (tests/helpers/judge_server.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from scarbook.history.store import History
from tests.helpers.judge_server import judge_server, status_reply, text_reply, tool_reply  # noqa: F401
from tests.run.test_batch_session import REPLIES, SCARBOOK, _wait_for_batch, project, scarbook, verdicts  # noqa: F401


def why(judge_server) -> str:
    return (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the session "
            "stopped before grading more runs: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in "
            "scarbook.yaml) or run with --skip-judge")


def kept(judge_server) -> str:
    """A key rejected while the session's batch is out: nothing is lost, the batch waits for a key that works (not
    "run with --skip-judge", which would throw away what was sent and paid for)."""
    return (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); its verdicts were "
            "not collected: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in scarbook.yaml); the "
            "batch waits at the API meanwhile")


def causes(project, sid: str) -> list[tuple[int, str, str | None]]:
    history = History(project / "workspaces")
    return [(r.k, r.status, r.cause.rule if r.cause else None) for r in history.runs(sid, info=history.read_session(sid))]


def keys(judge_server) -> list[tuple[str, str]]:
    return [(r["path"], r["headers"].get("authorization", "")) for r in judge_server.requests]


def gate_of(report) -> dict:
    data = json.loads(report.read_text())
    return {c["case_id"]: (c["passes"], c["fails"], c["errors"], c["decision"]) for c in data["cases"]}


def aborted_eval(project, judge_server, *args: str) -> str:
    """`scarbook eval -q --judge-batch` aborted by the judge's rejected key, said as online; its session id."""
    aborted = scarbook(project, "eval", "-q", "--judge-batch", *args)
    (info,) = History(project / "workspaces").sessions()
    assert aborted.exit_code == 3 and info.state == "aborted"
    assert (f"scarbook: session aborted: {why(judge_server)}\nscarbook: its finished runs are kept: once the key is "
            f"fixed, `scarbook resume {info.id}` runs the rest of the session\n") in aborted.output
    return info.id


def resumed(project, sid: str, again: int, *args: str):
    """`scarbook resume SID` that runs again the `again` runs the key stopped, and finishes the session."""
    result = scarbook(project, "resume", sid, *args)
    assert result.exit_code == 1, result.output
    runs = f"{again} runs that met the judge's rejected key run" if again > 1 else \
        "1 run that met the judge's rejected key runs"
    assert (f"resuming session {sid}: {again} missing run{'s' if again > 1 else ''} of 1 case ({runs} again)\n"
            in result.output)
    assert causes(project, sid) == [(1, "pass", None), (2, "fail", "judge-fail"), (3, "pass", None)]
    info = History(project / "workspaces").read_session(sid)
    assert info.state == "finished" and info.note == "" and info.recorded == {"judge-me": 3}
    assert f"session {sid}: finished; 3 runs — 2 pass, 1 fail, 0 error" in result.output
    return result


def test_a_refused_batch_submission_marks_its_runs_so_resume_runs_them_again(project, judge_server, monkeypatch):
    """Before: the runs that waited for the refused batch were errors with the cause judge-error, so `scarbook resume`
    ran none of them ("0 missing runs") and marked the session finished with its 3 errors."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-revoked")
    judge_server.batch_create_statuses.append(401)
    sid = aborted_eval(project, judge_server)
    assert causes(project, sid) == [(k, "error", "judge-rejected-key") for k in (1, 2, 3)]

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fixed")
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    done = resumed(project, sid, 3, "--json", str(project / "resumed.json"))
    # judged in a Message Batch, as the session asked (before: online, at twice the price, its batch record stale)
    assert keys(judge_server) == [("/v1/messages/batches", "Bearer sk-revoked"), ("/v1/messages/batches", "Bearer sk-fixed")]
    (batch,) = judge_server.batches
    assert History(project / "workspaces").read_session(sid).batch.batch_ids == [batch]
    judged = ("judge: 3 calls, 3300 tokens, $0.0067; 0 calls saved by cheaper checks failing first; 3 answered in a "
              "Message Batch, at the batch price")
    assert judged in done.output
    # the same project run afresh, uninterrupted: the same verdicts, judge's cost, gate and exit code
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    fresh = scarbook(project, "eval", "--judge-batch", "--no-judge-cache", "--json", str(project / "fresh.json"))
    assert fresh.exit_code == 1, fresh.output
    assert judged in fresh.output
    assert verdicts(project / "resumed.json") == verdicts(project / "fresh.json")
    assert gate_of(project / "resumed.json") == gate_of(project / "fresh.json") == {"judge-me": (2, 1, 0, "below")}


def test_a_key_rejected_after_part_of_the_batch_was_sent_leaves_it_for_resume(project, judge_server, monkeypatch):
    """A session past the batch limits is sent in chunks; a key rejected at the second leaves the first at the API,
    paid for: the session stays judging (as when the key is rejected while the batch is polled) and resume, with the
    key fixed, sends only the rest. Before: every run, the first chunk's too, was an error (judge-error) of a session
    aborted, and resume ran none of them."""
    from scarbook.run import batch_session

    monkeypatch.setattr(batch_session, "MAX_REQUESTS", 2)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-revoked")
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    judge_server.batch_create_statuses.extend([200, 401])
    stopped = scarbook(project, "eval", "-q", "--judge-batch", "--no-judge-cache")
    assert stopped.exit_code == 3
    (info,) = History(project / "workspaces").sessions()
    (first,) = judge_server.batches
    assert info.state == "judging" and info.batch.batch_ids == [first, None]
    assert (f"scarbook: session {info.id} is judging: its judge requests wait in batch {first} (judge batch 2 of 2 "
            f"could not be submitted: {kept(judge_server)}) — `scarbook resume {info.id}` collects the verdicts and "
            "finishes the session (exit 3: no verdict until then)\n") in stopped.output
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fixed")
    resumed = scarbook(project, "resume", "-q", info.id)
    assert resumed.exit_code == 1, resumed.output
    assert [len(b["requests"]) for b in judge_server.batches.values()] == [2, 1]  # only the unsent chunk again
    assert keys(judge_server) == [("/v1/messages/batches", "Bearer sk-revoked")] * 2 + [
        ("/v1/messages/batches", "Bearer sk-fixed")]
    assert causes(project, info.id) == [(1, "pass", None), (2, "fail", "judge-fail"), (3, "pass", None)]
    assert History(project / "workspaces").read_session(info.id).state == "finished"


def test_a_key_rejected_while_a_malformed_batch_reply_is_asked_again_aborts_and_resume_runs_that_run(
        project, judge_server, monkeypatch):
    """The batch answered; run 2's reply had no verdict, and its one online re-ask met a rejected key. Before: run 2
    was an error (judge-error) of a session that finished, so resume refused it ("already finished"). Now the session
    is aborted as online, run 2 carries judge-rejected-key, and resume runs exactly it again."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-revoked")
    judge_server.push(tool_reply(REPLIES[0]), text_reply("no verdict"), tool_reply(REPLIES[2]),
                      status_reply(401, "invalid x-api-key"))
    sid = aborted_eval(project, judge_server, "--no-judge-cache")
    assert causes(project, sid) == [(1, "pass", None), (2, "error", "judge-rejected-key"), (3, "pass", None)]

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fixed")
    judge_server.push(tool_reply(REPLIES[1]))
    resumed(project, sid, 1)
    assert keys(judge_server) == [("/v1/messages/batches", "Bearer sk-revoked"), ("/v1/messages", "Bearer sk-revoked"),
                                  ("/v1/messages/batches", "Bearer sk-fixed")]
    assert [len(b["requests"]) for b in judge_server.batches.values()] == [3, 1]


@pytest.mark.needs_proc
def test_a_resume_killed_while_its_batch_is_out_is_collected_by_the_next(project, judge_server, monkeypatch):
    """The resume of a session the key aborted judges in a batch of its own, recorded as an eval's is (batch.json and
    its digest, not the refused batch's record): a scarbook killed while it waits leaves the session judging, and the
    next resume collects the batch rather than send it again."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-revoked")
    judge_server.batch_create_statuses.append(401)
    sid = aborted_eval(project, judge_server)
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    judge_server.hold_batches = True
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project), "resume", sid], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "ANTHROPIC_API_KEY": "sk-fixed",
                                                         "PYTHONPATH": os.pathsep.join(sys.path)})
    assert _wait_for_batch(project, proc) == sid
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert History(project / "workspaces").read_session(sid).state == "judging"

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fixed")
    judge_server.end_batches()
    collected = scarbook(project, "resume", sid)
    assert collected.exit_code == 1, collected.output
    assert len(judge_server.batches) == 1  # collected, not sent again
    assert causes(project, sid) == [(1, "pass", None), (2, "fail", "judge-fail"), (3, "pass", None)]
    assert History(project / "workspaces").read_session(sid).state == "finished"


def test_a_key_rejected_while_the_batch_is_polled_says_to_resume_not_to_skip_the_judge(project, judge_server,
                                                                                      monkeypatch):
    """The judging note of a session whose key the judge rejects while its batch is out said "or run with
    --skip-judge": the batch was sent and paid for, and its verdicts wait at the API for a key that works."""
    judge_server.push(*(tool_reply(r) for r in REPLIES))
    judge_server.hold_batches = True
    judge_server.batch_read_status = 401
    stopped = scarbook(project, "eval", "-q", "--judge-batch", "--no-judge-cache")
    assert stopped.exit_code == 3
    (info,) = History(project / "workspaces").sessions()
    assert info.state == "judging"
    assert info.note == (f"session {info.id} is judging: its judge requests wait in batch {info.batch.id} (judge batch "
                         f"{info.batch.id} could not be polled: {kept(judge_server)}) — `scarbook resume {info.id}` "
                         "collects the verdicts and finishes the session")
    assert "--skip-judge" not in stopped.output
    judge_server.batch_read_status = 200
    judge_server.end_batches()
    assert scarbook(project, "resume", "-q", info.id).exit_code == 1
