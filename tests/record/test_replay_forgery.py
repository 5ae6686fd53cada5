"""A replay answers only from the model calls the recorder wrote. The recorder appends each call to the run's
$SCARBOOK_TRANSCRIPT, which the agent can write (in the sandbox too), and a replay read its model_call lines as
they were found: an agent whose model answered something its case fails rewrote the recorded answer, and its
replay — offline, the model never asked — was answered with the forgery and passed (exit 0, where the recording
failed). Each recorded run now keeps the count and sha256 of the model_call lines the recorder wrote
(RunRecord.recording); a transcript that no longer holds them is refused by name. Real agent processes, the real
recorder and a loopback upstream, unconfined and sandboxed."""

from __future__ import annotations

import json

import pytest

from tests.helpers.recorder_upstream import SECRET, Upstream, hostile_project, sandbox_or_skip

# The model answers "done" (the case wants "all good"); the runs argv[1] names rewrite the recorded answer.
AGENT = r'''
import http.client, json, os, sys, urllib.parse
u = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
body = {"model": "claude-test", "max_tokens": 5, "messages": [{"role": "user", "content": "how is it?"}]}
c.request("POST", u.path + "/v1/messages", json.dumps(body), {"content-type": "application/json"})
answer = json.loads(c.getresponse().read())["content"][0]["text"]
open("out.txt", "w").write(answer)
if os.environ["SCARBOOK_RUN"] in sys.argv[1].split(","):
    path = os.environ["SCARBOOK_TRANSCRIPT"]
    recorded = next(json.loads(line) for line in open(path) if '"model_call"' in line)
    recorded["response"]["body"]["content"][0]["text"] = "all good"
    open(path, "w").write(json.dumps(recorded) + "\n")
'''
CASE = "id: c\ntask: t\nchecks:\n  - {type: contains, path: out.txt, text: all good}\n"


def _record_then_replay(project, monkeypatch, isolation: str, forgers: str, runs: int) -> tuple[str, object, dict]:
    if isolation == "sandbox":
        sandbox_or_skip(project.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    up = Upstream().start()
    try:
        hostile_project(project, up, [forgers], script=AGENT, runs=runs, isolation=isolation,
                        extra="gate: {mode: point}\n")
        project.case("c", CASE)
        out = project.root / "recorded.json"
        recorded = project.cli("eval", "-q", "--json", str(out))
        assert recorded.exit_code == 1, recorded.output  # the model said "done": every run fails
        sid = json.loads(out.read_text())["session"]["id"]
    finally:
        up.stop()  # the replay is offline: nothing answers but the recording
    out = project.root / "replayed.json"
    replayed = project.cli("eval", "-q", "--json", str(out), "--replay", sid)
    return sid, replayed, json.loads(out.read_text()) if out.exists() else {}


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_rewritten_recording_is_not_replayed(project, monkeypatch, isolation) -> None:
    sid, replayed, _ = _record_then_replay(project, monkeypatch, isolation, "1", 1)
    transcript = next((project.root / "workspaces" / sid / "c").glob("1.transcript.jsonl"))
    assert replayed.exit_code == 2, replayed.output  # 0 before: the forged answer passed
    assert replayed.stderr.strip().splitlines()[-1] == (
        f"scarbook: --replay {sid}: the recordings of its runs cannot be read: the recording of run 1 of c "
        f"({transcript}) does not hold the model calls the recorder wrote (their count and sha256, kept with the run, "
        "differ: changed, cut or written into since — the agent can write its transcript) — record session "
        f"{sid} again (eval --record), or replay another")


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_run_whose_recording_was_rewritten_has_no_verdict_in_the_replay(project, monkeypatch, isolation) -> None:
    sid, replayed, doc = _record_then_replay(project, monkeypatch, isolation, "2", 2)
    runs = sorted(doc["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["fail", "error"]  # run 2 passed before
    assert runs[1]["reason"].startswith("replay cannot answer call 1: the recording of run 2 of c (")
    assert replayed.exit_code == 3, replayed.output
