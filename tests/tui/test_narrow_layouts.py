"""Screens read whole at 80x24 and wide (issue 37.15), driven by keys: the run review's filter line, the
two-session comparison without sideways scrolling, the live screen's decisions and its footer once the
session ended, the flake view's unlabelled session ids."""

from __future__ import annotations

import pytest

from scarbook.history.store import History
from scarbook.models import Cause, CauseKind, RunRecord, SessionInfo
from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.screens.compare import CompareScreen
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.screens.live import LiveScreen
from scarbook.tui.screens.session_table import SessionTableScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.tui_fixtures import (
    fast_demo,  # noqa: F401
    library_loaded,
    live_screen_caught_up,
    move_library_cursor,
    plain,
    project_root,  # noqa: F401
    python_agent_project,
    review_loaded,
    screen_text,
    wait_until,
)

pytestmark = pytest.mark.usefixtures("inprocess_demo")

NARROW, WIDE = (80, 24), (200, 50)
SIDS = ("20260101-090000-abcd", "20260102-090000-ef01")  # no labels: the ids are the names shown


async def launch_runs(pilot, runs: str, adaptive: bool = False) -> None:
    """From the library: `r` opens the launch dialog; the runs field typed over (adaptive: the cap, and the
    adaptive box ticked), ctrl+r runs every case."""
    await library_loaded(pilot)
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LaunchScreen), what="the launch dialog")
    await pilot.press("ctrl+a", "ctrl+k", *runs)
    if adaptive:  # runs is then the cap; Tab on to the adaptive box and tick it
        for _ in range(12):
            if pilot.app.focused is not None and pilot.app.focused.id == "adaptive":
                break
            await pilot.press("tab")
        await pilot.press("space")
        assert pilot.app.screen.query_one("#adaptive").value
    await pilot.press("ctrl+r")


def write_sessions(root, label: str = "") -> None:
    """Two unlabelled sessions of every bundled case (the second labelled `label`); write-one-line's runs in the
    second fail in several ways, each with its cause (the review's filter line then has a 'why:' part)."""
    project = Project.discover(root)
    history = History(project.workspaces_dir)
    cases = ["fix-json-config", "rename-function", "review-api-claims", "write-one-line"]
    for day, sid in enumerate(SIDS, start=1):
        info = SessionInfo(id=sid, started_at=f"2026-01-0{day}T09:00:00+00:00", runs_per_case=10, case_ids=cases,
                           fingerprint=project.config.fingerprint(), agent="demo", label=label if day == 2 else "")
        history.start_session(info)
        for cid in cases:
            for k in range(1, 11):
                bad = sid == SIDS[1] and cid == "write-one-line" and k > 2
                status = ("fail" if k < 8 else "error") if bad else "pass"
                kind = (CauseKind.AGENT if k < 6 else CauseKind.CASE if k < 8 else CauseKind.INFRA) if bad else None
                history.record_run(RunRecord(
                    session_id=sid, case_id=cid, k=k, status=status, started_at=info.started_at,
                    reason="check 1 (file_exists): tmp.txt is missing" if bad else "all checks passed",
                    cause=Cause(kind, "check-fail", "tmp.txt is missing") if kind else None, workspace_kept=False))
        history.finish_session(info)


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_review_shows_every_filter_and_its_key(project_root, size):  # noqa: F811
    write_sessions(project_root)
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("v")
        await review_loaded(pilot)
        text = screen_text(app)
        for shown in ("show", "[all 10]", "failed 8", "fail 5", "error 3", "unjudged 0", "pass 2",
                      "· why: agent 3", "infra 3", "case 2", "s: filter"):
            assert shown in text, f"{shown!r} is not on the screen:\n{text}"
        await pilot.press("s")  # the filter moves on, the line stays whole
        assert "[failed 8]" in screen_text(app) and "s: filter" in screen_text(app)


async def sessions_listed(pilot) -> None:
    """From the library: `h` opens the sessions list, once it lists write_sessions' two."""
    await library_loaded(pilot)
    await pilot.press("h")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen) and len(pilot.app.screen.sessions) == 2,
                     what="the sessions")


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_two_sessions_compared_need_no_sideways_scroll(project_root, size):  # noqa: F811
    write_sessions(project_root)
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await sessions_listed(pilot)
        await pilot.press("space", "down", "space", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded,
                         what="the comparison")
        await pilot.pause()
        table = app.screen.query_one("#compare-table")
        assert table.max_scroll_x == 0, f"the table is {table.virtual_size.width} wide in {table.size.width}"
        text = screen_text(app)
        for shown in ("B − A", "verdict", "regressed", "write-one-line", f"A = {SIDS[0]}"):
            assert shown in text, f"{shown!r} is not on the screen:\n{text}"
        if size == WIDE:
            assert f"A {SIDS[0]}" in text and "95% CI of diff" in text  # room for the whole headers


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_a_session_s_case_table_needs_no_sideways_scroll(project_root, size):  # noqa: F811
    """Enter on a session: its case table at 80 columns cut the band column to "ba" and hid the runs' strip
    past the edge; there the band goes (the rate is coloured by it) and the strip, as on the live screen."""
    write_sessions(project_root)
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await sessions_listed(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session's table")
        await pilot.pause()
        table = app.screen.query_one("#session-table")
        assert table.max_scroll_x == 0, f"the table is {table.virtual_size.width} wide in {table.size.width}"
        keys = [column.key.value for column in table.ordered_columns]
        assert keys == (["case", "count", "err", "rate", "ci", "bar"] if size == NARROW else
                        ["case", "count", "err", "rate", "ci", "bar", "band", "strip"])
        row = next(line for line in screen_text(app).splitlines() if "write-one-line" in line)
        assert "2/7" in row and "29%" in row, row  # 2 passes of 7 judged (3 errors beside)
        if size == WIDE:
            assert "red" in row and "✓✓✗✗✗✗✗!!!" in row, row


LONG_LABEL = ("prompt-v7: the shorter system prompt, tool-use examples moved to the end, temperature 0.2, "
              "against the March 2026 builds")
assert len(LONG_LABEL) == 120  # the most a label may be (session/plan.MAX_LABEL_CHARS)


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_a_long_label_leaves_the_state_and_figures_in_view(project_root, size):  # noqa: F811
    """The sessions list with a 120-character label: the label column is cut with "…" so the state (and, where
    the terminal has room, the figures) stay in view; the highlighted session's label is whole under the table,
    and whole in the session's own screen."""
    write_sessions(project_root, label=LONG_LABEL)
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await sessions_listed(pilot)
        await pilot.pause()
        row = next(line for line in screen_text(app).splitlines() if SIDS[1] in line)
        assert "interrupted" in row, f"the state is off the screen:\n{screen_text(app)}"
        if size == WIDE:
            assert "32/5/3/0" in row, f"the figures are off the screen:\n{screen_text(app)}"
        label = row.split(SIDS[1])[1].strip().split("…")[0]
        assert LONG_LABEL.startswith(label) and len(label) >= 11, row  # cut, with an ellipsis
        below = app.screen.query_one("#session-label")
        assert plain(below) == f"{SIDS[1]}: {LONG_LABEL}"  # the newest, highlighted first
        assert below.region.bottom <= size[1] - 1 and below.region.height >= 1  # above the footer
        await pilot.press("down")
        assert plain(below) == f"{SIDS[0]}: no label"
        await pilot.press("up", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session's table")
        assert plain(app.screen.query_one("#sessions-help")).startswith(
            f"{SIDS[1]} · {LONG_LABEL} · interrupted · exit code ")


JUDGED_ONLY = """\
id: judged-only
task: Summarise the test log in summary.md
checks:
  - type: llm_judge
    artifact: output
    rubric: [the answer names the failing test]
"""


@pytest.mark.parametrize("size", [(100, 30), WIDE])
async def test_the_live_screen_shows_no_verdict_whole(project_root, monkeypatch, size):  # noqa: F811
    """A case only a judge grades, with no API key: its runs are unjudged and the gate says 'no verdict'."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (project_root / "cases" / "judged-only").mkdir()
    (project_root / "cases" / "judged-only" / "case.yaml").write_text(JUDGED_ONLY)
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=size) as pilot:
        await launch_runs(pilot, "3")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=120, what="the session")
        await wait_until(pilot, lambda: "no verdict" in screen_text(app), timeout=10,
                         what=f"'no verdict' whole on the screen (it shows {app.live.gate})")


HANGING_AGENT = """
import asyncio

async def run(task, cwd):
    await asyncio.sleep(3600)  # runs until the session is cancelled
"""


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_live_footer_offers_cancel_only_while_the_session_runs(tmp_path, fast_demo, size):  # noqa: F811
    root = tmp_path / "proj"
    (root / "cases" / "one-case").mkdir(parents=True)
    (root / "cases" / "one-case" / "case.yaml").write_text(
        "id: one-case\ntask: write out.txt\nchecks:\n  - {type: file_exists, path: out.txt}\n")
    (root / "hanging_agent.py").write_text(HANGING_AGENT)
    (root / "scarbook.yaml").write_text("agent: {type: python, function: hanging_agent:run}\nconcurrency: 1\n")
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await launch_runs(pilot, "2")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen) and sum(app.live.running.values()) == 1,
                         what="a run going")
        # the footer is drawn at the live screen's next refresh, which a loaded machine may not give at one pause
        await wait_until(pilot, lambda: "esc Cancel session" in screen_text(app).splitlines()[-1],
                         what="the footer to offer Cancel session")
        assert "Back" not in screen_text(app).splitlines()[-1]
        await pilot.press("escape", "y")  # cancel it: asked, then yes
        await wait_until(pilot, lambda: app.live.done, what="the session to end")
        await wait_until(pilot, lambda: "esc Back" in screen_text(app).splitlines()[-1], timeout=10,
                         what="the footer to offer Back")
        assert "Cancel" not in screen_text(app).splitlines()[-1]
        await pilot.press("escape")  # ended: straight back, no question
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_flake_view_shows_unlabelled_session_ids_whole(project_root, size):  # noqa: F811
    """At 80 columns the case column took 28 for ids of 17 and cut both session ids to 19."""
    write_sessions(project_root)
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: app.screen.query("#flake-grid"), what="the flake view")
        await wait_until(pilot, lambda: any("flips" in line for line in screen_text(app).splitlines()),
                         what="the grid's header painted")
        header = next(line for line in screen_text(app).splitlines() if "flips" in line)
        assert SIDS[0] in header and SIDS[1] in header, header


WRITING_AGENT = """
async def run(task, cwd):
    (cwd / "out.txt").write_text("ok")
    return "done"
"""


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_live_screen_shows_each_gate_decision_at_every_size(tmp_path, fast_demo, size):  # noqa: F811
    """Two cases at a 50% threshold, 6 runs each: one always passes (above: P = .016), one never does (below:
    Holm-adjusted .031 < .05). At 200 columns the decided column says the words; at 80, where that column
    does not fit, a compact gate column shows a symbol per case and the line under the progress bar says
    what each symbol means and how many cases it holds. Before, at 80 columns no decision was shown."""
    root = python_agent_project(tmp_path / "proj", {
        cid: f"task: write out.txt\nthreshold: 0.5\nchecks:\n  - {{type: file_exists, path: {path}}}\n"
        for cid, path in (("always-meets", "out.txt"), ("never-meets", "missing.txt"))}, "writing_agent", WRITING_AGENT, "concurrency: 2\n")
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await launch_runs(pilot, "6")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=120, what="the session")
        await live_screen_caught_up(pilot)
        assert app.live.gate == {"always-meets": "above", "never-meets": "below"}
        table = app.screen.query_one("#live-table")
        assert table.max_scroll_x == 0, f"the table is {table.virtual_size.width} wide in {table.size.width}"
        rows = {line.split()[0]: line.split() for line in screen_text(app).splitlines()
                if line.split() and line.split()[0] in ("always-meets", "never-meets")}
        if size == NARROW:
            assert rows["always-meets"][-1] == "✓" and rows["never-meets"][-1] == "✗", rows
            assert "gate: ✓ 1 above · ✗ 1 below" in screen_text(app), screen_text(app)
        else:  # wide: unchanged, the decided column's words and no summary line
            assert rows["always-meets"][-1] == "above" and rows["never-meets"][-1] == "below", rows
            assert "gate:" not in screen_text(app)


@pytest.mark.parametrize("size", [NARROW, (120, 40)])
async def test_the_live_screen_shows_every_case_row_beside_the_gate_counts(tmp_path, fast_demo, size):  # noqa: F811
    """Nine cases, 8 runs each: four always pass at 50% (above), four never do (below), one always passes at 99%
    (undecided: 8 of 8 does not show 99%). At 80x24 the gate's counts ('gate: ✓ 4 above · ✗ 4 below · ? 1
    undecided') do not fit beside the figures and take a line of their own. Before, that line came out of the
    table, which then showed its header and 8 rows, the ninth behind a scroll; now it comes out of the
    histogram's bars and the table shows every row. At 120x40 (the decided column's words, no counts line) every
    row is shown too."""
    ids = [f"meets-{i}" for i in range(4)] + [f"misses-{i}" for i in range(4)] + ["meets-but-strict"]
    root = python_agent_project(tmp_path / "proj", {
        cid: f"task: write out.txt\nthreshold: {0.99 if cid.endswith('strict') else 0.5}\nchecks:\n"
             f"  - {{type: file_exists, path: {'missing.txt' if cid.startswith('misses') else 'out.txt'}}}\n"
        for cid in ids}, "writing_agent_rows", WRITING_AGENT, "concurrency: 2\n")
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await launch_runs(pilot, "8")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=120, what="the session")
        await live_screen_caught_up(pilot)
        assert app.live.gate == {cid: "undecided" if cid.endswith("strict") else "above" if cid.startswith("meets")
                                 else "below" for cid in ids}
        text = screen_text(app)
        shown = [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in ids]
        assert shown == sorted(ids), f"rows shown: {shown}\n{text}"
        assert "pass rate (cases per 10% bucket)" in text, text  # the histogram is still there, shorter
        if size == NARROW:
            assert "\n gate: ✓ 4 above · ✗ 4 below · ? 1 undecided" in text, text

LOOKING_AGENT = """
import asyncio

async def run(task, cwd):
    if "flaky" in task:  # every other run passes; after its first 8 it never ends (the session keeps running)
        count = cwd.parents[3] / "flaky-runs.txt"
        done = int(count.read_text()) if count.exists() else 0
        if done >= 8:
            await asyncio.sleep(3600)
        count.write_text(str(done + 1))
        if done % 2:
            (cwd / "out.txt").write_text("ok")
    else:
        (cwd / "out.txt").write_text("ok")
    return "done"
"""


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_a_case_a_look_decides_shows_its_decision_while_the_session_runs(tmp_path, fast_demo, size):  # noqa: F811
    """`undecided: more`, 8 runs a look (looks 8, 16, 32, 40: each at .05 / 4): the steady case passes 8 of 8
    at its 50% threshold (P = .004), decided above at the first look; the flaky one (4 of 8) runs on, and
    its runs after the first look never end. While it runs the screen shows the steady case's decision:
    at 200 columns in the decided column, at 80 as the gate column's ✓ and the counts beside the figures,
    and the runs the look added are in the figures' total. Before, a look's decision reached neither the
    screen nor the CLI until the session ended."""
    root = python_agent_project(tmp_path / "proj", {
        cid: f"task: a {cid} task\nthreshold: 0.5\nchecks:\n  - {{type: file_exists, path: out.txt}}\n"
        for cid in ("steady-passing-case", "flaky-half-passing")}, "looking_agent", LOOKING_AGENT,
        "concurrency: 2\ngate: {undecided: more}\n")
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await launch_runs(pilot, "8")
        await wait_until(pilot, lambda: app.live is not None and app.live.decided == {"steady-passing-case": "above"}
                         and sum(app.live.running.values()) == 2, timeout=60, what="the first look and the runs after it")
        await live_screen_caught_up(pilot)
        assert not app.live.done
        rows = {line.split()[0]: line.split() for line in screen_text(app).splitlines()
                if line.split() and line.split()[0] in ("steady-passing-case", "flaky-half-passing")}
        if size == NARROW:
            assert rows["steady-passing-case"][-1] == "✓" and rows["flaky-half-passing"][-1] != "✓", rows
            assert "gate: ✓ 1 above · 1 not decided yet" in screen_text(app), screen_text(app)
        else:
            assert rows["steady-passing-case"][-1] == "above" and rows["flaky-half-passing"][-1] != "above", rows
        # the look's 8 more runs of the flaky case are counted in the total (before: 16/16 runs, and on past it)
        assert "16/24 runs" in screen_text(app), screen_text(app)
        await pilot.press("escape", "y")  # cancel it: asked, then yes
        await wait_until(pilot, lambda: app.live.done, what="the session to end")


ONE_MARGIN = ("always-0: above 80% (within its 10-point margin: its runs rule out 70% or less) — its 95% interval "
              "74–100% still reaches under 80%")
MARGINS = ("4 cases decided within --runs auto's 10-point margin: their 95% intervals still reach past their "
           "thresholds (the report says each)")


@pytest.mark.parametrize(("cases", "size", "said"), [(1, NARROW, ONE_MARGIN), (1, WIDE, ONE_MARGIN), (4, NARROW, MARGINS)])
async def test_the_live_screen_names_the_margin_of_runs_auto_decisions(tmp_path, fast_demo, cases, size, said):  # noqa: F811
    """--runs auto, cases that pass every run at 80%: each is decided above after 12 runs with a 95% interval of
    74–100%. The screen says the decision in the CLI's words (run/gate.margin_line), with the margin it was taken
    with; before, it showed 'above' beside 74–100% and nothing else. Several such cases are one line (each case's
    own line, two lines at 80 columns, took the table's rows: at 80x24 one of four case rows was left on screen),
    the status's lines past its first come out of the histogram's bars, and every case row is shown."""
    ids = [f"always-{i}" for i in range(cases)]
    root = python_agent_project(tmp_path / "proj", {
        cid: "task: write out.txt\nthreshold: 0.8\nchecks:\n  - {type: file_exists, path: out.txt}\n" for cid in ids},
        f"writing_agent_margin_{cases}", WRITING_AGENT, "concurrency: 2\n")
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await launch_runs(pilot, "40", adaptive=True)
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=120, what="the session")
        await live_screen_caught_up(pilot)
        assert app.live.gate == dict.fromkeys(ids, "above")
        text = screen_text(app)
        shown = [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in ids]
        assert shown == ids, f"rows shown: {shown}\n{text}"
        assert said in " ".join(" ".join(text.split("\n")).split()), text  # the line as words (it wraps at 80)


STUCK_AGENT = """
import asyncio

async def run(task, cwd):
    if "stuck" in task:  # its first run never ends: --runs auto reads in launch order, so it never decides it
        first = cwd.parents[3] / "stuck-started.txt"
        if not first.exists():
            first.write_text("1")
            await asyncio.sleep(3600)
    (cwd / "out.txt").write_text("ok")
    return "done"
"""


async def test_the_live_screen_names_the_margin_of_a_runs_auto_decision_as_soon_as_it_is_taken(tmp_path, fast_demo):  # noqa: F811
    """--runs auto at 80x24: `always` passes every run and is decided above after 12 with a 95% interval of
    74–100%; `stuck`'s first run never ends, so the session runs on. Before, the screen said "above" and nothing
    more until the session ended (LiveSession.margin_line read only the final numbers); now the status says the
    decision with its margin (run/gate.margin_line) as soon as the case is decided."""
    root = python_agent_project(tmp_path / "proj", {
        cid: f"task: {cid}, write out.txt\nthreshold: 0.8\nchecks:\n  - {{type: file_exists, path: out.txt}}\n"
        for cid in ("always", "stuck")},
        "stuck_agent_margin", STUCK_AGENT, "concurrency: 2\n")
    app = make_app(root)
    async with app.run_test(size=NARROW) as pilot:
        await launch_runs(pilot, "40", adaptive=True)
        await wait_until(pilot, lambda: app.live is not None and app.live.decided.get("always") == "above",
                         timeout=60, what="always to be decided")
        await live_screen_caught_up(pilot)
        assert not app.live.done and "stuck" not in app.live.decided
        text = screen_text(app)
        said = ("always: above 80% (within its 10-point margin: its runs rule out 70% or less) — its 95% interval "
                "74–100% still reaches under 80%")
        assert said in " ".join(" ".join(text.split("\n")).split()), text  # the line as words (it wraps at 80)
        row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["always"])
        assert row[1:4] == ["12/12", "100%", "74–100%"], row  # its numbers as the gate read them (was 76–100%)
        await pilot.press("escape", "y")  # cancel it: asked, then yes
        await wait_until(pilot, lambda: app.live.done, what="the session to end")


@pytest.mark.parametrize("size", [NARROW, WIDE])
async def test_the_new_case_editor_shows_every_placeholder_whole(project_root, size):  # noqa: F811
    """n opens the editor on a new case: each empty field's placeholder (what to type there) fits its field; at 80
    columns "failed artifact" and "artifact at" were cut mid-sentence ("… — the", "(empty:")."""
    from rich.cells import cell_len
    from textual.widgets import Input

    from tests.helpers.tui_fixtures import new_case_editor

    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await new_case_editor(pilot)
        await pilot.pause()
        cut = {field.id: (str(field.placeholder), field.content_region.width) for field in app.screen.query(Input)
               if field.placeholder and not field.value and cell_len(str(field.placeholder)) > field.content_region.width}
        assert cut == {}
