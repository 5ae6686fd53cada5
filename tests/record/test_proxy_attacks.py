"""Issue 33 (1, 2, 4, 5): a hostile agent against the recorder's proxy. A real agent process, the real
proxy in a whole `scarbook eval --record` session, and a loopback model API that records what reaches
it: the real key reaches only the endpoints the recorder knows, never follows a redirect, a request
over record.max_body_bytes never costs more than the cap, and the transcript is never written
through a hard link."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.recorder_upstream import SECRET, Upstream, hostile_project, sandbox_or_skip


@pytest.fixture
def upstream():
    up = Upstream().start()
    yield up
    up.stop()


@pytest.fixture
def evil():
    up = Upstream().start()
    up.echo_headers = True
    yield up
    up.stop()


@pytest.fixture(params=["none", "sandbox"])
def isolation(request, project):
    if request.param == "sandbox":
        sandbox_or_skip(project.root)
    return request.param


def run_eval(project) -> tuple[object, dict]:
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out))
    assert out.exists(), result.output + result.stderr
    (run,) = json.loads(out.read_text())["runs"]
    return result, run


def agent_lines(run: dict) -> dict[str, str]:
    """The agent's `PATH -> STATUS ...` lines, by path (the last one of a path wins)."""
    out = {}
    for line in run["output_excerpt"].splitlines():
        path, _, rest = line.partition(" -> ")
        out[path] = rest
    return out


def everything_kept(project) -> str:
    """Every file scarbook wrote under workspaces/ (history, transcripts, logs), as one text."""
    return "\n".join(p.read_text(errors="replace") for p in project.workspaces.rglob("*") if p.is_file())


def test_a_path_that_leaves_the_api_never_reaches_the_upstream(project, upstream, isolation, monkeypatch):
    """`..`, `%2e%2e` and `..%2f` in the path, a doubled slash, an endpoint the recorder does not know:
    each is a 404 from the proxy; the upstream sees only the Messages calls, with the real key."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    hostile_project(project, upstream, ["traversal"], isolation=isolation)
    result, run = run_eval(project)
    assert run["status"] == "pass", run
    assert [(r["method"], r["path"]) for r in upstream.requests] == [("POST", "/v1/messages")]
    assert upstream.requests[0]["headers"]["x-api-key"] == SECRET
    said = agent_lines(run)
    for path in ("/v1/../../admin/secret", "/v1/%2e%2e/%2e%2e/admin/secret", "/v1/..%2f..%2fadmin/secret",
                 "/v1/messages/../../../admin/secret", "/v1//messages", "/v1/models"):
        assert said[path].startswith("404 "), (path, said[path])
        assert "not an API endpoint the recorder forwards" in said[path]
    assert said["/v1/messages"].startswith("200 ")
    assert SECRET not in everything_kept(project)


def test_a_redirect_is_handed_to_the_agent_and_never_followed_with_the_key(project, upstream, evil, isolation,
                                                                           monkeypatch):
    """The upstream answers 307 to another server (which echoes what it got): the key never goes
    there, the agent gets the 307 itself, and nothing scarbook keeps holds the key."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    upstream.redirect_to = evil.url
    hostile_project(project, upstream, ["redirect"], isolation=isolation)
    result, run = run_eval(project)
    assert evil.requests == []
    assert agent_lines(run)["/v1/messages"].startswith(f"307 {evil.url}/steal ")
    assert [r["headers"]["x-api-key"] for r in upstream.requests] == [SECRET, SECRET]
    assert SECRET not in everything_kept(project)
    calls = [json.loads(line) for line in Path(run["transcript_path"]).read_text().splitlines()]
    assert [c["response"]["status"] for c in calls if c["type"] == "model_call"] == [307, 307]


def test_a_request_over_max_body_bytes_is_refused_streamed_or_not(project, upstream, isolation, monkeypatch):
    """record.max_body_bytes: 200000. A 3 MB request (with a length, and chunked) is a 413 that never
    reaches the upstream; one under the cap goes, and its derived records are capped too."""
    from scarbook.record.recording import FIELD_CAP

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    hostile_project(project, upstream, ["big", "3000000", str(FIELD_CAP * 2)], isolation=isolation,
                    record=", max_body_bytes: 200000")
    result, run = run_eval(project)
    assert run["status"] == "pass", run
    said = agent_lines(run)
    for name in ("big", "big-chunked"):
        assert said[name].startswith("413 "), (name, said[name])
        assert "over record.max_body_bytes (200000 bytes)" in said[name]
    assert said["under"].startswith("200 ")
    assert [r["bytes"] for r in upstream.requests][0] > FIELD_CAP * 2 and len(upstream.requests) == 2
    transcript = Path(run["transcript_path"])
    assert transcript.stat().st_size < 1_000_000
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    refused = [c for c in lines if c["type"] == "model_call" and c["response"]["status"] == 413]
    assert len(refused) == 2 and all(c["request"]["bytes"] > 200000 and "body" not in c["request"] for c in refused)
    (task,) = [r for r in lines if r["type"] == "task"]
    assert len(task["text"]) < FIELD_CAP + 200 and task["text"].endswith("characters in all; the whole text is in model_call 3]")
    assert run["notes"] == ["recorder: call 1: a request of more than 200000 bytes was refused (record.max_body_bytes; "
                            "raise it in scarbook.yaml to let such requests through)",
                            "recorder: call 2: a request of more than 200000 bytes was refused (record.max_body_bytes; "
                            "raise it in scarbook.yaml to let such requests through)"]


def test_the_transcript_is_never_appended_through_a_hard_link(project, upstream, tmp_path, monkeypatch):
    """Unconfined, the agent hard-links a file outside at $SCARBOOK_TRANSCRIPT before its calls: the
    recorder refuses to write there (said on the run), and the outside file is untouched."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    outside = tmp_path / "precious.txt"
    outside.write_text("mine\n")
    hostile_project(project, upstream, ["hardlink", str(outside)])
    result, run = run_eval(project)
    assert outside.read_text() == "mine\n"
    assert len(upstream.requests) == 2
    transcript = project.workspaces / run["session_id"] / "c" / "1.transcript.jsonl"
    assert run["notes"] == [f"recorder: could not append to {transcript}: it has 2 links (one may lead outside "
                            "the run's folder); the run's model calls are not in its transcript"]
