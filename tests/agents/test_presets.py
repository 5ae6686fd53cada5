"""The `claude-code` and `codex` agent presets, driven against stand-in executables named `claude`
and `codex` on PATH that replay a recorded event stream (no network): the arguments they get, the
final output, usage and cost, the transcript kept per run (importable), failures, and the
preflight error when the CLI is missing."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.agents import make_agent
from scarbook.agents.usage import read_agent_usage
from scarbook.cli import main
from scarbook.errors import ScarbookError
from scarbook.project import Project
from scarbook.transcripts import candidates, load_transcript, suggest_task
from tests.helpers.paths import FIXTURES

REAL = FIXTURES / "transcripts" / "real"
CLAUDE_STREAM = (REAL / "claude_stream.jsonl").read_text().splitlines()[1:]  # as `claude -p` prints it
CODEX_STREAM = (REAL / "codex_exec_stream.jsonl").read_text().splitlines()
TASK = "Put the first line of README.md in tmp.txt"


def stand_in(bin_dir: Path, name: str, lines: list[str], *, writes: dict[str, str] | None = None,
             exit_code: int = 0, stderr: str = "") -> Path:
    """An executable `name` that records its argv, stdin and environment, writes `writes` into its
    cwd as the real agent did, prints `lines` in small chunks (lines split across reads) and exits."""
    bin_dir.mkdir(exist_ok=True)
    record = bin_dir / f"{name}.called.json"
    script = bin_dir / name
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(f"""\
        import json, os, sys
        stdin = sys.stdin.read() if not sys.stdin.isatty() else ""
        json.dump({{"argv": sys.argv[1:], "stdin": stdin, "env": sorted(os.environ)}}, open({str(record)!r}, "w"))
        for path, text in {writes or {}!r}.items():
            open(path, "w").write(text)
        data = "".join(line + "\\n" for line in {lines!r}).encode()
        for i in range(0, len(data), 97):
            sys.stdout.buffer.write(data[i:i + 97]); sys.stdout.buffer.flush()
        sys.stderr.write({stderr!r})
        sys.exit({exit_code})
        """))
    script.chmod(0o755)
    return record


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


@pytest.fixture
def run_dirs(tmp_path):
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    logs.mkdir()
    env = {"SCARBOOK_TRANSCRIPT": str(logs / "1.transcript.jsonl"), "SCARBOOK_USAGE": str(logs / "1.usage.jsonl"),
           "SCARBOOK_WORKSPACE": str(ws)}
    return ws, logs, env


async def test_claude_code_runs_headless_and_keeps_its_stream(on_path, run_dirs):
    ws, logs, env = run_dirs
    called = stand_in(on_path, "claude", CLAUDE_STREAM, writes={"tmp.txt": "# tiny-agent\n"})
    agent = make_agent({"type": "claude-code", "args": ["--model", "claude-sonnet-4-5", "--allowedTools", "Read Write"]})
    agent.preflight()
    result = await agent.run(TASK, ws, env, 20, logs, "1")
    assert (result.exit_code, result.crashed) == (0, None)
    assert result.output == "Done: tmp.txt holds the first line of README.md."
    got = json.loads(called.read_text())
    assert got["argv"] == ["-p", TASK, "--output-format", "stream-json", "--verbose",
                           "--model", "claude-sonnet-4-5", "--allowedTools", "Read Write"]
    assert "SCARBOOK_TRANSCRIPT" not in got["env"] and "SCARBOOK_USAGE" not in got["env"]  # scarbook writes them
    # the transcript: the task, then the stream byte for byte
    transcript = Path(env["SCARBOOK_TRANSCRIPT"]).read_text().splitlines()
    assert transcript[1:] == CLAUDE_STREAM
    assert json.loads(transcript[0])["message"]["content"] == TASK
    usage = read_agent_usage(env["SCARBOOK_USAGE"])
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cost_usd) == (14, 230, 27000, 0.0213)
    # importable: the task, the written file, the answer
    t = load_transcript(env["SCARBOOK_TRANSCRIPT"])
    assert (t.format, suggest_task(t), t.final_answer) == ("claude-code", TASK, result.output)
    assert [c.path for c in candidates(t) if c.kind == "file"] == ["tmp.txt"]


async def test_codex_runs_headless_with_the_task_on_stdin(on_path, run_dirs):
    ws, logs, env = run_dirs
    called = stand_in(on_path, "codex", CODEX_STREAM)
    agent = make_agent({"type": "codex", "args": ["--full-auto", "-m", "gpt-5-codex"]})
    agent.preflight()
    result = await agent.run(TASK, ws, env, 20, logs, "1")
    assert (result.exit_code, result.crashed) == (0, None)
    assert result.output == "Done: tmp.txt now holds the first line of README.md."
    got = json.loads(called.read_text())
    assert got["argv"] == ["exec", "--json", "--skip-git-repo-check", "--full-auto", "-m", "gpt-5-codex", "-"]
    assert got["stdin"] == TASK
    usage = read_agent_usage(env["SCARBOOK_USAGE"])
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.cost_usd) == (315, 24448, 122, 0.0)
    t = load_transcript(env["SCARBOOK_TRANSCRIPT"])
    assert (t.format, suggest_task(t), t.final_answer) == ("codex", TASK, result.output)
    assert [(c.id, c.name, c.input) for c in t.tool_calls][:2] == [
        ("item_1", "shell", {"command": "bash -lc 'head -n 1 README.md'"}),
        ("item_2", "shell", {"command": "bash -lc 'cat README.md > tmp.txt'"})]
    assert [m.text for m in t.messages if m.kind == "thinking"] == [
        "**Reading README.md**\n\nI need the first line, then write it to tmp.txt."]
    assert t.warnings == []


@pytest.mark.parametrize("kind, events, reason", [
    ("claude-code", CLAUDE_STREAM[:-1], "claude ended without a result event (the stream was cut off)"),
    ("claude-code", CLAUDE_STREAM[:-1] + [json.dumps({"type": "result", "subtype": "error_max_turns", "is_error": True,
                                                      "num_turns": 3, "session_id": "s"})],
     "claude reported error_max_turns"),
    ("codex", CODEX_STREAM[:-1] + [json.dumps({"type": "turn.failed", "error": {"message": "stream disconnected"}})],
     "codex reported an error: stream disconnected"),
    ("codex", CODEX_STREAM[:-1], "codex ended without completing its turn (the stream was cut off)"),
])
async def test_a_stream_that_ends_badly_is_a_crashed_run(on_path, run_dirs, kind, events, reason):
    ws, logs, env = run_dirs
    stand_in(on_path, kind.split("-")[0], events)
    result = await make_agent({"type": kind}).run(TASK, ws, env, 20, logs, "1")
    assert (result.exit_code, result.crashed) == (0, reason)


async def test_a_crashing_cli_reads_as_its_error_line(on_path, run_dirs):
    ws, logs, env = run_dirs
    stand_in(on_path, "claude", [], exit_code=1, stderr=(
        "file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1402\n    throw e;\n    ^\n\n"
        "Error: Could not resolve authentication method\n    at q (cli.js:1402:13)\n\nNode.js v20.20.2\n"))
    result = await make_agent({"type": "claude-code"}).run(TASK, ws, env, 20, logs, "1")
    assert result.crashed == "agent exited with code 1: Error: Could not resolve authentication method"


@pytest.mark.parametrize("kind, message", [
    ("claude-code", "agent type claude-code runs the `claude` CLI, which is not on PATH: install it with "
                    "`npm install -g @anthropic-ai/claude-code` (or put it on PATH), then run again"),
    ("codex", "agent type codex runs the `codex` CLI, which is not on PATH: install it with "
              "`npm install -g @openai/codex` (or put it on PATH), then run again"),
])
def test_a_missing_cli_is_a_preflight_error_naming_the_install(tmp_path, monkeypatch, kind, message):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    with pytest.raises(ScarbookError) as exc:
        make_agent({"type": kind}).preflight()
    assert exc.value.message == message
    # and through `scarbook eval`: exit 2, that one line, no session started
    (tmp_path / "scarbook.yaml").write_text(f"agent: {{type: {kind}}}\n")
    case = tmp_path / "cases" / "c"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text("id: c\ntitle: t\ntask: t\nchecks:\n  - {type: output_contains, text: x}\n")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "eval", "--runs", "1"], catch_exceptions=False)
    assert res.exit_code == 2
    assert f"scarbook: {message}\n" in res.stderr


def test_eval_with_the_claude_code_preset_records_transcript_and_cost_and_imports(tmp_path, on_path):
    """End to end: `scarbook eval` runs the preset; the run's transcript and cost are stored, and
    `scarbook import` turns the run's transcript into a new scar."""
    stand_in(on_path, "claude", CLAUDE_STREAM, writes={"tmp.txt": "# tiny-agent\nA tiny agent.\n"})
    # isolation: none — the stand-in records its call beside itself, outside the workspace
    (tmp_path / "scarbook.yaml").write_text("agent: {type: claude-code, args: [--model, claude-sonnet-4-5]}\n"
                                            "isolation: none\n")
    case = tmp_path / "cases" / "one-line"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text(f"id: one-line\ntitle: t\ntask: {TASK}\nchecks:\n"
                                    "  - {type: line_count, path: tmp.txt, equals: 1}\n")
    # point mode: one failed run is below the line (evidence mode would call 0/1 undecided, issue 22)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "eval", "--runs", "1", "--gate", "point"],
                             catch_exceptions=False)
    assert res.exit_code == 1, res.output  # the agent wrote two lines: the run fails its check
    history = Project.at(tmp_path).history
    (run,) = history.runs(history.sessions()[0].id)
    assert run.status == "fail" and run.agent_usage.cost_usd == 0.0213
    assert Path(run.transcript_path).read_text().splitlines()[1:] == CLAUDE_STREAM
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", run.transcript_path, "--id", "from-run"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cases" / "from-run" / "case.yaml").read_text().count(TASK) == 2  # title and task


@pytest.mark.parametrize("yaml_text, message", [
    ("agent: {type: claude-code, argv: [claude]}\n",
     "scarbook.yaml:1: unknown key 'argv' for a claude-code agent — a claude-code agent takes: type, args, env, "
     "max_output_bytes"),
    ("agent:\n  type: codex\n  args: [--full-auto, 3]\n",
     "scarbook.yaml:3: agent.args must be a list of strings (extra codex arguments) — write args: "
     "[--full-auto, -m, gpt-5-codex]"),
    ("agent:\n  type: codex\n  env: HTTPS_PROXY\n",
     "scarbook.yaml:3: agent.env must be a list of variable names — write env: [HTTPS_PROXY]"),
])
def test_preset_config_mistakes_name_the_line(tmp_path, yaml_text, message):
    (tmp_path / "scarbook.yaml").write_text(yaml_text)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "eval"], catch_exceptions=False)
    assert res.exit_code == 2
    assert res.stderr == f"scarbook: {tmp_path / message}\n"


async def test_the_run_review_imports_a_preset_runs_transcript_by_key(tmp_path, on_path):
    """The run review's `t` (import this run's transcript) opens the import screen on the stream the
    claude-code preset saved: the task and the answer are there, and ctrl+s makes the new scar."""
    from scarbook.tui.app import make_app
    from scarbook.tui.screens.import_scar import ImportScreen
    from scarbook.tui.screens.review import ReviewScreen
    from tests.helpers.tui_fixtures import SIZE, library_loaded, plain, wait_until

    stand_in(on_path, "claude", CLAUDE_STREAM, writes={"tmp.txt": "# tiny-agent\nA tiny agent.\n"})
    (tmp_path / "scarbook.yaml").write_text("agent: {type: claude-code}\ngate: {mode: point}\nisolation: none\n")
    case = tmp_path / "cases" / "one-line"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text(f"id: one-line\ntitle: t\ntask: {TASK}\nchecks:\n"
                                    "  - {type: line_count, path: tmp.txt, equals: 1}\n")
    # an async test: the eval (asyncio.run) goes on a thread of its own; the agent is the stand-in program
    done = await asyncio.to_thread(CliRunner().invoke, main, ["-C", str(tmp_path), "eval", "--runs", "1"],
                                   catch_exceptions=False)
    assert done.exit_code == 1, done.output
    sid = Project.at(tmp_path).history.sessions()[0].id
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        app.push_screen(ReviewScreen(sid, "one-line"))
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.runs, what="the review")
        await pilot.pause()
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, ImportScreen) and app.screen.transcript is not None,
                         what="the transcript in the import screen")
        screen = app.screen
        await pilot.pause()
        summary = plain(screen.query_one("#import-summary"))
        assert "1.transcript.jsonl: claude-code" in summary and f"task: {TASK}" in summary
        assert screen.transcript.final_answer == "Done: tmp.txt holds the first line of README.md."
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(p.name != "one-line" for p in (tmp_path / "cases").iterdir()),
                         what="the new scar")
    (new,) = [p for p in (tmp_path / "cases").iterdir() if p.name != "one-line"]
    assert (new / "case.yaml").read_text().count(TASK) == 2


async def test_a_link_planted_at_the_transcript_path_is_not_written_through(on_path, run_dirs, tmp_path):
    """The agent can guess where its transcript goes: a symlink planted there to a file outside
    is replaced, never written through."""
    ws, logs, env = run_dirs
    stand_in(on_path, "claude", CLAUDE_STREAM)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    for name in ("SCARBOOK_TRANSCRIPT", "SCARBOOK_USAGE"):
        os.symlink(victim, env[name])
    result = await make_agent({"type": "claude-code"}).run(TASK, ws, env, 20, logs, "1")
    assert result.crashed is None
    assert victim.read_text() == "keep me\n"
    assert not os.path.islink(env["SCARBOOK_TRANSCRIPT"])
    assert Path(env["SCARBOOK_TRANSCRIPT"]).read_text().splitlines()[1:] == CLAUDE_STREAM
