"""Infra retries are shown as they happen (issue 24.2), from the event stream (RunRetried): a real agent
process fails its first attempt with the model API's overloaded error (the machine's fault) and is run
again. The live screen's row and figures say so while the retry runs and keep the count after; the
CLI's progress prints a line when the retry starts. The TUI driven by keys in the real app."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from scarbook.cli import main
from scarbook.tui.app import make_app
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.live import LiveScreen
from tests.helpers.tui_fixtures import SIZE, library_loaded, plain, review_loaded, wait_until

OVERLOADED = ("anthropic.InternalServerError: Error code: 529 - {'type': 'error', 'error': "
              "{'type': 'overloaded_error', 'message': 'Overloaded'}}")


def retry_project(tmp_path, wait_for_go: bool = True):
    root = tmp_path / "proj"
    (root / "cases" / "c").mkdir(parents=True)
    (root / "cases" / "c" / "case.yaml").write_text(
        "id: c\ntask: write ok.txt\nchecks:\n  - {type: file_exists, path: ok.txt}\n")
    marker, go = tmp_path / "failed-once", tmp_path / "go"
    (root / "agent.py").write_text(textwrap.dedent(f"""\
        import sys, time
        from pathlib import Path
        marker, go = Path({str(marker)!r}), Path({str(go)!r})
        if not marker.exists():  # the first attempt: the model API is overloaded
            marker.write_text("x")
            print({OVERLOADED!r}, file=sys.stderr)
            sys.exit(1)
        deadline = time.time() + 30  # the retry: waits until the test has seen it on screen
        while not go.exists() and time.time() < deadline:
            time.sleep(0.02)
        Path("ok.txt").write_text("ok")
    """))
    (root / "scarbook.yaml").write_text(
        f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(root / 'agent.py'))}]}}\n"
        "runs: 1\nconcurrency: 1\ntimeout_s: 30\nretry_infra: 2\n"
        "isolation: none\n")  # the agent keeps its markers beside the project, outside its workspace
    if not wait_for_go:
        go.write_text("go")
    return root, go


def test_the_cli_progress_says_a_run_is_retried_as_it_starts_again(tmp_path):
    root, _ = retry_project(tmp_path, wait_for_go=False)
    res = CliRunner().invoke(main, ["-C", str(root), "eval"])
    assert res.exit_code == 0, res.output
    said = f"c #1: infra error (api-overloaded, the agent's own word: stderr: {OVERLOADED[:91]}…) — retrying, attempt 2 of 3"
    progress = [line for line in res.stderr.splitlines() if not line.startswith("warning: ")]  # isolation, the plan
    assert progress[0].startswith("session ") and progress[1:] == [said, "[1/1] c #1: pass — all checks passed"]


async def launch_by_keys(pilot) -> None:
    """From the library: r, then ctrl+r runs the session the launch modal planned; the live screen shows."""
    app = pilot.app
    await library_loaded(pilot)
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")


async def test_a_run_retried_after_an_infra_error_is_shown_while_it_runs_again(tmp_path):
    root, go = retry_project(tmp_path)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await launch_by_keys(pilot)
        screen = app.screen
        table = screen.query_one("#live-table", DataTable)
        figures = screen.query_one("#live-figures")

        def retried_cell() -> str:
            return str(table.get_cell("c", "retried")) if "retried" in screen.columns else ""

        await wait_until(pilot, lambda: retried_cell() == "1 now", what="the retry on the case's row")
        assert "1 run retried after infra errors (1 on the agent's own word; 1 running again)" in plain(figures)
        assert not app.live.done and app.live.finished_runs == 0  # the run is not over: its retry runs
        go.write_text("go")
        await wait_until(pilot, lambda: app.live.done, what="the session to end")
        await pilot.pause()
        assert retried_cell() == "1"
        assert plain(figures).endswith(" · 1 run retried after infra errors (1 on the agent's own word)")
        [run] = app.live.runs["c"]
        assert run.status == "pass" and [a.cause and a.cause.rule for a in run.attempts] == \
            ["api-overloaded", None]


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_runs_retried_on_the_agents_own_word_read_as_the_cli_reads_them(project, size):
    """The live screen and the run review say what the CLI says of runs retried on the agent's claim of infra
    (tests/run/test_infra_claims.py): 4 of 10 retried on the agent's own word, the case without a verdict."""
    from tests.run.test_infra_claims import _claiming, _note

    _claiming(project, "api-overloaded", "sandbox")
    (project.root / "scarbook.yaml").write_text((project.root / "scarbook.yaml").read_text() + "runs: 10\n")
    app = make_app(project.root)
    async with app.run_test(size=size) as pilot:
        await launch_by_keys(pilot)
        await wait_until(pilot, lambda: app.live.done, what="the session to end", timeout=60)
        await pilot.pause()
        screen = app.screen
        figures = plain(screen.query_one("#live-figures"))
        assert "4 runs retried after infra errors (4 on the agent's own word)" in figures
        if "decided" in screen.columns:
            assert str(screen.query_one("#live-table", DataTable).get_cell("c", "decided")) == "no verdict"
        else:
            assert "1 no verdict" in figures
        [s] = app.live.decide(app.live.info)
        assert s.gate_note == _note(4, "api-overloaded", "undecided")
        await pilot.press("v")
        review = await review_loaded(pilot)
        runs = [r for r in review.shown if len(r.attempts) > 1]
        assert len(runs) == 4
        while review.current_run is None or len(review.current_run.attempts) < 2:
            await pilot.press("down")
            await wait_until(pilot, lambda: review.loaded, what="the run's detail")
        await wait_until(pilot, lambda: "attempt 1:" in plain(review.query_one("#run-body")), what="the attempts")
        assert "attempt 1: fail — infra (api-overloaded, the agent's own word): agent exited with code 1: " in \
            " ".join(plain(review.query_one("#run-body")).split())
