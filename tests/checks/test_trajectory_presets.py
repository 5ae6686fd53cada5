"""Trajectory checks on the transcripts the CLI presets keep (issue 28.4): stand-in `claude` and `codex`
executables replay recorded event streams (tests/agents/test_presets); the checks read the stream scarbook
saved as the run's transcript, whatever its format."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scarbook.cli import main
from tests.agents.test_presets import CLAUDE_STREAM, CODEX_STREAM, TASK, on_path, stand_in  # noqa: F401


def _eval(tmp_path, agent: str, cases: dict[str, list[dict]]) -> dict[str, dict]:
    # isolation: none — the stand-in CLIs record their calls beside themselves, outside the workspace
    (tmp_path / "scarbook.yaml").write_text(f"agent: {{type: {agent}}}\nconcurrency: 2\ngate: {{mode: point}}\n"
                                            "isolation: none\n")
    for cid, checks in cases.items():
        folder = tmp_path / "cases" / cid
        folder.mkdir(parents=True)
        body = "\n".join(f"  - {json.dumps(c)}" for c in checks)
        (folder / "case.yaml").write_text(f"id: {cid}\ntask: {TASK}\nchecks:\n{body}\n")
    out = tmp_path / "report.json"
    CliRunner().invoke(main, ["-C", str(tmp_path), "eval", "--runs", "1", "-q", "--json", str(out)],
                       catch_exceptions=False)
    return {r["case_id"]: r for r in json.loads(out.read_text())["runs"]}


def test_claude_code_runs_are_checked_on_their_stream(tmp_path, on_path) -> None:
    stand_in(on_path, "claude", CLAUDE_STREAM, writes={"tmp.txt": "# tiny-agent\n"})
    runs = _eval(tmp_path, "claude-code", {
        "good": [{"type": "tool_order", "names": ["Read", "Write"]}, {"type": "max_turns", "n": 3},
                 {"type": "no_writes_outside", "paths": ["tmp.txt"]}, {"type": "max_cost_usd", "usd": 0.05}],
        "bad": [{"type": "max_cost_usd", "usd": 0.01}],
    })
    assert runs["good"]["status"] == "pass", runs["good"]["checks"]
    assert [c["detail"] for c in runs["good"]["checks"]] == [
        "called in order: Read (call 1), Write (call 2)", "3 turns (at most 3)", "1 write, all inside tmp.txt",
        "$0.0213 reported by the agent, at most $0.05"]  # the write's /tmp/ws/tmp.txt is under the stream's cwd
    assert runs["bad"]["checks"][0]["detail"] == "$0.0213 reported by the agent, at most $0.01 allowed"


def test_codex_runs_are_checked_on_their_stream(tmp_path, on_path) -> None:
    stand_in(on_path, "codex", CODEX_STREAM, writes={"tmp.txt": "# tiny-agent\n"})
    runs = _eval(tmp_path, "codex", {
        "good": [{"type": "tool_called", "name": "shell", "min": 2}, {"type": "max_tokens", "n": 30000}],
        "bad": [{"type": "max_tool_calls", "n": 2}],
    })
    assert runs["good"]["status"] == "pass", runs["good"]["checks"]
    assert runs["bad"]["checks"][0]["detail"] == (
        '3 tool calls, at most 2 allowed: call 3 (apply_patch {"changes": [{"path": "/tmp/ws/notes.md", "kind": '
        '"add"}]}) went past it (calls: shell ×2, apply_patch ×1)')
