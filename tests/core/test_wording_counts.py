"""Counts and kinds are printed in English: "1 run" / "2 runs", "1 unjudged run has", "an openai
transcript", "3h ago" (never "1 runs", "a openai", "0d ago"). For n = 0, 1, 2, on the real commands
and screens."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.reports.table import build_report, format_summary
from scarbook.text import plural, with_article
from scarbook.tui.app import make_app
from scarbook.views.library_rows import DAY_S, human_age
from tests.helpers.paths import TRANSCRIPTS
from tests.helpers.tui_fixtures import library_loaded, plain, type_text  # noqa: F401

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

JUDGED = "id: judged\ntask: say hello\nchecks:\n  - type: llm_judge\n    rubric: [the answer says hello]\n"
HELLO = "print('hello')\n"


@pytest.mark.parametrize("n, text", [(0, "0 runs"), (1, "1 run"), (2, "2 runs")])
def test_plural(n, text) -> None:
    assert plural(n, "run") == text


@pytest.mark.parametrize("n, kw, text", [(1.0, {}, "1 day"), (1.5, {}, "1.5 days"), (7.0, {}, "7 days"),
                                         (1, {"grouped": True}, "1 byte"), (1024, {"grouped": True}, "1,024 bytes")])
def test_plural_of_a_setting_and_of_a_size(n, kw, text) -> None:
    assert plural(n, text.split()[1].removesuffix("s"), **kw) == text


@pytest.mark.parametrize("kind, text", [("openai", "an openai"), ("otel", "an otel"), ("anthropic", "an anthropic"),
                                        ("claude-code", "a claude-code"), ("scarbook", "a scarbook")])
def test_with_article(kind, text) -> None:
    assert with_article(kind) == text


@pytest.mark.parametrize("seconds, text", [
    (None, "never"), (0, "just now"), (59, "just now"), (60, "1 min ago"), (2 * 60, "2 min ago"),
    (3600, "1h ago"), (3 * 3600 + 5, "3h ago"), (DAY_S, "1 day ago"), (2 * DAY_S, "2 days ago")])
def test_human_age(seconds, text) -> None:
    assert human_age(seconds) == text
    assert len(text) <= 12


def _agent(project) -> None:
    path = project.root / "agent.py"
    path.write_text(HELLO)
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(path))}]}}\n"
                   "concurrency: 2\ntimeout_s: 30\n")


def _summary(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("session "))
    return lines[at:at + 2]


@pytest.mark.parametrize("runs, head, partial", [
    (1, "1 run — 0 pass, 0 fail, 0 error, 1 unjudged",
     "1 unjudged run has no verdict and is not in any rate"),
    (2, "2 runs — 0 pass, 0 fail, 0 error, 2 unjudged",
     "2 unjudged runs have no verdict and are not in any rate")])
def test_eval_summary_counts_runs_in_english(project, runs, head, partial) -> None:
    _agent(project)
    project.case("judged", JUDGED)
    result = project.cli("eval", "judged", "--runs", str(runs), "--skip-judge", "-q")
    assert result.exit_code == 3, result.output
    first, second = _summary(result.stdout)
    assert first.endswith(f"finished; {head}")
    assert second == f"partial: judge checks were skipped (--skip-judge); {partial}"


@pytest.mark.parametrize("calls, saved, text", [
    (1, 0, "judge: 1 call, 0 tokens, $0.0000; 0 calls saved by cheaper checks failing first"),
    (1, 1, "judge: 1 call, 0 tokens, $0.0000; 1 call saved by cheaper checks failing first"),
    (2, 2, "judge: 2 calls, 0 tokens, $0.0000; 2 calls saved by cheaper checks failing first")])
def test_the_judge_line_counts_calls_in_english(project, calls, saved, text) -> None:
    _agent(project)
    project.case("judged", JUDGED)
    assert project.cli("eval", "judged", "--runs", "1", "--skip-judge", "-q").exit_code == 3
    p = project.load()
    (info,) = p.history.sessions()
    rep = build_report(info, p.history.runs(info.id, info=info), {c.id: c for c in p.load_cases().cases}, p.config)
    rep = dataclasses.replace(rep, judge_calls=calls, judge_calls_saved=saved)
    assert text in format_summary(rep).splitlines()


def test_the_trace_option_on_an_openai_file_says_an_openai_transcript(tmp_path) -> None:
    (tmp_path / "scarbook.yaml").write_text("")
    path = TRANSCRIPTS / "openai_chat.json"
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(path), "--trace", "x", "--list"])
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: {path}: --trace picks one trace of an OTel file, one conversation of a chat "
                          "export or one instance of an OpenHands evaluation's output.jsonl; this is an openai-chat "
                          "transcript\n")


def test_scarbook_list_says_just_now_not_0d_ago(project) -> None:
    project.bundled(agent_seed=7)
    assert project.cli("eval", "write-one-line", "--runs", "1", "-q").exit_code == 0
    row = next(ln for ln in project.cli("list").stdout.splitlines() if ln.startswith("write-one-line"))
    assert " just now " in row and "ago" not in row


@pytest.mark.parametrize("n_cases, text", [(1, "no case matches the filter (1 case)"),
                                           (2, "no case matches the filter (2 cases)")])
async def test_the_library_counts_cases_in_english(project, n_cases, text) -> None:
    for i in range(n_cases):
        project.case(f"case-{i}", f"id: case-{i}\ntask: do {i}\nchecks:\n  - {{type: file_exists, path: a}}\n")
    app = make_app(project.root)
    async with app.run_test(size=(120, 30)) as pilot:
        lib = await library_loaded(pilot)
        await pilot.press("slash")
        await type_text(pilot, "zzz")
        assert plain(lib.query_one("#detail")) == text
