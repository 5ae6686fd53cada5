"""`scarbook merge` brings the judge's kept artifacts of every shard (workspaces/judge-artifacts, beside the
history folder a shard job left), so the merged session can be graded again (`scarbook rejudge`) as one run on
one machine can. Before, they stayed on the shard machines: `rejudge` of the merged session refused every run
('its artifact … is no longer in …/judge-artifacts', though it never was)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.helpers.hostile_project import good_or_bad, hostile_project, judged_case
from tests.helpers.judge_server import judge_server  # noqa: F401

AGENT = "from pathlib import Path\nPath('out.txt').write_text('good')\nprint('done')\n"


def merged_on_two_machines(project, judge_server, tmp_path, agent: str, sid: str, *args: str):
    """The project's case c judged, run as shards 1/2 and 2/2 on two 'machines' (folders moved away after each),
    merged here with `args`; the machines are gone after it. The merge's result."""
    judge_server.responder = good_or_bad
    root = hostile_project(project.root, agent, judge_server.url, cases={"c": judged_case("c")}, runs=2)
    shards = []
    for i in (1, 2):
        ran = project.cli("eval", "-q", "--shard", f"{i}/2", "--session-id", sid)
        assert ran.exit_code == 0, ran.stdout + ran.stderr
        shards.append(shutil.move(root / "workspaces", tmp_path / f"machine-{i}"))
    merged = project.cli("merge", *(str(s) for s in shards), *args)
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    for machine in shards:  # the shard machines are gone; the merged session is whole without them
        shutil.rmtree(machine)
    return merged


def test_a_merged_session_can_be_graded_again(project, judge_server, monkeypatch, tmp_path):  # noqa: F811
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    merged_on_two_machines(project, judge_server, tmp_path, AGENT, "ci-7")
    again = project.cli("rejudge", "ci-7")
    assert again.exit_code == 0, again.stdout + again.stderr
    assert ("rejudge of session ci-7: 2 runs graded again from kept artifacts, 0 carried (rule checks failed), no "
            "agent runs; the source session's rates are unchanged") in again.stdout


def test_a_shard_uploaded_without_its_artifacts_is_said(project, judge_server, monkeypatch, tmp_path):  # noqa: F811
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    judge_server.responder = good_or_bad
    root = hostile_project(project.root, AGENT, judge_server.url, cases={"c": judged_case("c")}, runs=2)
    ran = project.cli("eval", "-q", "--shard", "1/1", "--session-id", "ci-8")
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    upload = shutil.move(root / "workspaces" / "history", tmp_path / "history")  # only the history folder
    shutil.rmtree(root / "workspaces")
    merged = project.cli("merge", str(upload))
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    assert (f"scarbook: judge artifacts not copied: shard 1/1: the 1 artifact its judge saw would be in "
            f"{tmp_path / 'judge-artifacts'}, which is not there — upload the shard's whole workspaces/ folder "
            "(not only workspaces/history) to grade the merged session again") in merged.stderr


# Appends one record to its transcript and says something on stderr: each run's two files beside its workspace.
TALKER = """\
import json, os, sys
from pathlib import Path
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as t:
    t.write(json.dumps({"type": "assistant", "text": "wrote out.txt in " + Path.cwd().name}) + "\\n")
print("a word on stderr", file=sys.stderr)
Path("out.txt").write_text("good")
print("done")
"""


def test_a_merged_sessions_runs_keep_their_transcripts(project, judge_server, monkeypatch, tmp_path):  # noqa: F811
    """Before: the merged records pointed at the shard machines' transcripts (workspaces/ci-9.shard-1-of-2/…),
    gone with them: no replay, no import of a failed run, no transcript in the review."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    out = tmp_path / "merged.json"
    merged_on_two_machines(project, judge_server, tmp_path, TALKER, "ci-9", "--json", str(out))
    root = project.root
    runs = json.loads(out.read_text())["runs"]
    assert len(runs) == 2
    for r in runs:
        transcript = Path(r["transcript_path"])
        assert transcript.parent == root / "workspaces" / "ci-9" / "c"
        assert json.loads(transcript.read_text())["text"] == f"wrote out.txt in {r['k']}"
        assert "a word on stderr" in Path(r["stderr_path"]).read_text()


def test_the_judge_stand_in_reads_the_artifact_not_the_requests_nonce():
    """good_or_bad failed a good artifact when the request's random nonce (32 hex digits, four times in the
    request) held "bad": about 1 request in 140, so this file's tests failed now and then under xdist."""
    from tests.helpers.hostile_project import good_or_bad

    def request(nonce: str, artifact: str) -> dict:
        text = f"<<<ARTIFACT {nonce}>>>\n{artifact}\n<<<END ARTIFACT {nonce}>>>"
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}

    def verdict(body: dict) -> str:
        return json.dumps(good_or_bad(body).body)

    nonce = "0123456789abcdef0bad456789abcdef"
    assert '"PASS"' in verdict(request(nonce, "good")) and '"FAIL"' not in verdict(request(nonce, "good"))
    assert '"FAIL"' in verdict(request(nonce, "bad"))
