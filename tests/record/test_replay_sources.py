"""`eval --replay SESSION` from a recording damaged since: a run's transcript cut mid-line, or gone. The run
is an error that names the transcript and what is wrong with it — before, it read "replay diverged at call 2:
the recorded run made only 1 model calls" or "recorded no model calls for run 1", which blame the agent and
hide the file; and a session every transcript of which is gone was refused as one that ran without record:."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.judge_server import judge_server  # noqa: F401
from tests.record.test_recorder import eval_json, rec_project, recorded_session  # noqa: F401


def _cut_in_the_second_call(path: Path) -> None:
    data = path.read_bytes()
    second = data.index(b'"model_call"', data.index(b'"model_call"') + 1)
    path.write_bytes(data[:second + 100])


@pytest.mark.parametrize(("damage", "said"), [
    (_cut_in_the_second_call, "has a model_call line that does not parse (cut short, or altered)"),
    (Path.unlink, "is missing"),
], ids=["cut", "gone"])
def test_a_damaged_recording_is_an_error_naming_its_transcript(rec_project, judge_server, damage, said):  # noqa: F811
    sid, first = recorded_session(rec_project, judge_server, runs=2)
    damaged = Path(next(r["transcript_path"] for r in first["runs"] if r["k"] == 1))
    damage(damaged)
    result, report = eval_json(rec_project, "-n", "2", "--replay", sid)
    assert result.exit_code == 3, result.output + result.stderr
    runs = {r["k"]: r for r in report["runs"]}
    assert runs[2]["status"] == "pass"  # the intact run replays as it did
    assert runs[1]["status"] == "error"
    # (a cut recording is not answered from at all: what is left of it can no longer be told from lines the agent
    # wrote, test_replay_forgery.py)
    assert runs[1]["reason"] == (f"replay cannot answer call 1: the recording of run 1 of write-hello ({damaged}) "
                                 f"{said} — record session {sid} again (eval --record), or replay another")
    assert len(judge_server.requests) == 4  # never a live call


def test_a_session_whose_transcripts_are_all_gone_is_refused_saying_so(rec_project, judge_server):  # noqa: F811
    sid, first = recorded_session(rec_project, judge_server, runs=2)
    folder = Path(first["runs"][0]["transcript_path"]).parent
    shutil.rmtree(folder)
    result = rec_project.cli("eval", "-q", "--replay", sid)
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(
        f"scarbook: --replay {sid}: the recordings of its runs cannot be read: the recording of run 1 of write-hello "
        f"({folder / '1.transcript.jsonl'}) is missing (and 1 more) — record session {sid} again (eval --record), "
        "or replay another")


def test_a_session_of_several_agents_is_refused_as_a_replay_source(project):
    """Run k of a session of eval --agents is whichever agent its block drew first or second: replaying it run
    by run answered one agent with the other's calls (before: half the runs 'diverged', by the draw)."""
    from tests.cli.test_agents_history import agents_session

    sid = agents_session(project, "base,twin")
    result = project.cli("eval", "-q", "--replay", "ab")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"scarbook: --replay ab: session {sid} compared the agents base, twin: its runs are theirs in blocks drawn "
        "at random, and a replay answers one agent's runs — replay a session of one agent")


# The recorded agent's first call, its tool applied, and no second call: an agent that now stops early.
STOPPER = """\
import json, sys
from pathlib import Path
sys.path.insert(0, {agents!r})
from http_openai_agent import call
msg = call([{{"role": "user", "content": sys.argv[1]}}])
for tc in msg.get("tool_calls") or []:
    args = json.loads(tc["function"]["arguments"])
    Path(args["path"]).write_text(args["content"])
print("stopped after one call")
"""


def test_an_agent_that_stops_before_the_recorded_calls_end_has_diverged(rec_project, judge_server, tmp_path):  # noqa: F811
    """Before: it passed, though the behaviour replayed was not the one recorded (1 call of 2)."""
    from tests.record.test_recorder import AGENTS

    sid, _ = recorded_session(rec_project, judge_server, runs=1)
    script = tmp_path / "stopper.py"
    script.write_text(STOPPER.format(agents=str(AGENTS)))
    config = rec_project.root / "scarbook.yaml"
    # (isolation: none — the sandbox shows the agent none of tmp_path but its workspace)
    config.write_text(config.read_text().replace(str(AGENTS / "http_openai_agent.py"), str(script)) + "isolation: none\n")
    result, report = eval_json(rec_project, "--replay", sid)
    assert result.exit_code == 3, result.output + result.stderr
    (run,) = report["runs"]
    assert run["status"] == "error"
    assert run["reason"] == "replay diverged after call 1: the agent stopped there, but the recorded run made 2 model calls"
    assert len(judge_server.requests) == 2  # never a live call
