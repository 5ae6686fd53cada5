"""Trends in the TUI, driven by keys: the library's trend column and "regressed since" note, the flake
view (t, the palette, ? help), arrows + Enter opening the review of that case in that session, and
snapshots of both at 80×24 and 200×50. Each frame was looked at; what it proves is in its docstring.

Update with: pytest tests/tui/test_trends.py --snapshot-update (then look at the SVGs).
"""

from __future__ import annotations

import io

import pytest

from scarbook.history.store import History
from scarbook.tui.app import make_app
from scarbook.tui.screens.flakes import FlakeScreen, grid_widths
from scarbook.tui.screens.help import HelpScreen
from scarbook.tui.screens.review import ReviewScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.after_paint import HeldRequests, drop_after_paint
from tests.helpers.tui_fixtures import (  # noqa: F401
    fast_demo,
    library_loaded,
    move_library_cursor,
    palette_offers,
    project_root,
    type_text,
    wait_until,
)
from tests.tui.test_snapshots import freeze_cursors
from tests.views.test_trends import record, sid

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

G, B = "p" * 10, "pp" + "f" * 8  # 100% and 20% in ten runs
W, F, R = "write-one-line", "fix-json-config", "rename-function"  # review-api-claims never runs
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")]


def write_trend_history(root) -> None:
    """Six sessions: write-one-line drops after prompt-v3 (s4), fix-json-config flips every session,
    rename-function is stable; s3 skipped the judge (partial), s5 was cancelled."""
    history = History(root / "workspaces")
    record(history, 1, {W: G, F: G, R: G}, label="prompt-v1")
    record(history, 2, {W: G, F: B}, label="prompt-v2")
    record(history, 3, {W: "pp" + "u" * 8, R: "ppu"}, label="skip-judge", partial=True)
    record(history, 4, {W: G, F: G, R: G}, label="prompt-v3")
    record(history, 5, {W: B, F: B, R: "ppp"}, label="prompt-v4", state="cancelled")
    record(history, 6, {W: B, F: G}, label="prompt-v5")


def cell(table, row: str, column: str):
    return table.get_cell(row, column)


async def test_the_trend_column_shows_each_session_and_the_notes_say_regressed_since(project_root):
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(200, 50)) as pilot:
        lib = await library_loaded(pilot)
        table = lib.query_one("#cases")
        assert "trend" in lib.columns
        trend = cell(table, W, "trend")
        assert trend.plain == "██·█▂▂"  # oldest at the left; · = the partial session (no rate)
        styles = [str(s.style) for s in trend.spans]
        assert styles[2] == "bold magenta" and styles[4] == "bold magenta"  # partial, cancelled: marked
        assert styles[0] == "bold green" and styles[5] == "bold red"
        assert cell(table, F, "trend").plain == "█▂█▂█"
        assert cell(table, R, "trend").plain == "█·██"
        assert cell(table, "review-api-claims", "trend").plain == ""
        assert cell(table, W, "notes").plain == "regressed since…"  # cut at a word in 18 columns
        assert cell(table, F, "notes").plain == "stale"
        await move_library_cursor(pilot, W)
        detail = str(lib.query_one("#detail").render())
        assert "regressed since prompt-v3: 100% then, 20% in prompt-v5" in detail


async def test_at_80_columns_the_detail_line_still_says_regressed_since(project_root):
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        lib = await library_loaded(pilot)
        assert "trend" not in lib.columns
        await move_library_cursor(pilot, W)
        assert "regressed since prompt-v3: 100% then, 20% in prompt-v5" in str(lib.query_one("#detail").render())
        await move_library_cursor(pilot, F)
        assert "regressed" not in str(lib.query_one("#detail").render())


async def test_t_opens_the_flake_view_flakiest_first(project_root):
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(200, 50)) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")
        screen = app.screen
        grid = screen.query_one("#flake-grid")
        # fix-json-config crossed its line 4 times, write-one-line once, rename-function never
        assert [t.case_id for t in screen.cases] == [F, W, R]
        assert [str(c.label) for c in grid.columns.values()][:3] == ["case", "flips", "prompt-v1"]
        assert grid.get_row(F)[1].plain.strip() == "4"
        row = [c.plain.strip() for c in grid.get_row(W)[2:]]
        assert row == ["100", "100", "·", "100", "20*", "20"]  # · partial: no rate; * marked (cancelled)
        assert [c.plain.strip() for c in grid.get_row(R)[2:]] == ["100", "", "·", "100", "100*", ""]
        assert "never run: 1 case" in str(screen.query_one("#flake-detail").render())


async def test_arrows_and_enter_open_the_review_of_that_case_in_that_session(project_root):
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")
        flakes = app.screen
        assert flakes.current()[1].session_id == sid(6)  # starts on the newest session of the flakiest case
        await pilot.press("down", "left", "left")  # write-one-line, two sessions back: prompt-v3 (s4)
        await wait_until(pilot, lambda: flakes.current()[2] == sid(4), what="the cursor on s4")
        assert f"{W} in prompt-v3 ({sid(4)}): 100% (10 pass, 0 fail)" in str(flakes.query_one("#flake-detail").render())
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        assert (app.screen.session_id, app.screen.case_id) == (sid(4), W)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is flakes, what="back to the flake view")
        await pilot.press("down", "left", "left")  # rename-function in prompt-v2: it did not run
        await wait_until(pilot, lambda: flakes.current()[2] == sid(2), what="the cursor on s2")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.screen is flakes
        assert any("rename-function did not run in that session" in n.message for n in app._notifications)


async def test_the_palette_and_help_reach_the_flake_view(project_root):
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        from rich.console import Console

        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.table)
        assert "t Trends: cases × sessions" in " ".join(console.export_text().split())
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), what="help to close")
        await pilot.press("h")  # from another screen, the palette goes back to the library and opens it
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), what="the sessions")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "trends")
        await palette_offers(pilot, "trends")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")


def test_the_grid_fits_80_columns_and_uses_a_wide_terminal():
    assert grid_widths(78, 6) == (27, 5)  # six sessions fit beside the case id at 80 columns
    assert grid_widths(78, 30)[1] == 5  # more scroll sideways, the case id keeps its minimum
    assert grid_widths(78, 30)[0] == 16
    assert grid_widths(198, 6) == (28, 12)  # wide: whole labels
    # short case ids leave their room to the sessions: two unlabelled ids (20) whole at 80 columns
    assert grid_widths(78, 2, longest=20, case_longest=17) == (17, 20)
    assert grid_widths(78, 6, case_longest=40) == (27, 5)  # a long id still gets what the sessions leave
    assert grid_widths(78, 2, case_longest=3)[0] == 16  # never under the minimum


@pytest.mark.parametrize("size", SIZES)
def test_library_with_trends_fits(project_root, snap_compare, size):
    """80×24: no trend column, the notes say "regressed since…" and the detail line the whole of it;
    200×50: the trend column beside the latest runs, the partial session as ·, cancelled in magenta."""
    write_trend_history(project_root)
    app = make_app(project_root)

    async def ready(pilot):
        await library_loaded(pilot)
        await move_library_cursor(pilot, W)
        freeze_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES)
def test_flake_view_fits(project_root, snap_compare, size):
    """Cases × sessions coloured by rate, flakiest first; at 80×24 every session of this history fits
    (labels cut from the left, "…t-v3"), at 200×50 whole labels; the detail names the cell."""
    write_trend_history(project_root)
    app = make_app(project_root)

    async def ready(pilot):
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)


async def test_sorting_by_the_trend_column_puts_regressions_then_flaky_cases_first(project_root):
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(200, 50)) as pilot:
        lib = await library_loaded(pilot)
        for _ in range(len(lib.columns)):
            if lib.sort_key == "trend":
                break
            await pilot.press("o")
        await wait_until(pilot, lambda: lib.sort_key == "trend", what="the sort by trend")
        assert [r.key for r in lib.shown] == [W, F, R, "review-api-claims"]  # regressed, 4 flips, stable, never run
        assert "sorted by trend, ascending" in str(lib.query_one("#detail").render())


async def test_the_flake_view_of_a_collection_never_run(project_root):
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")
        assert "no case has run yet" in str(app.screen.query_one("#flake-detail").render())
        await pilot.press("enter", "right", "enter")  # nothing to open: no crash, still here
        await pilot.pause(0.1)
        assert isinstance(app.screen, FlakeScreen)


async def test_the_grid_fills_in_chunks_and_a_resize_keeps_the_cursor(project_root, monkeypatch):
    """With 1,000 cases the grid is added 100 rows per refresh (t opens at once); here one row per
    refresh: every row arrives, in the flake order, and a resize rebuilds it around the same cell."""
    import scarbook.tui.screens.flakes as flakes

    monkeypatch.setattr(flakes, "ROWS_AT_ONCE", 1)
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")
        grid = app.screen.query_one("#flake-grid")
        await wait_until(pilot, lambda: grid.row_count == 3, what="every row")
        assert [str(grid.get_row_at(i)[0]) for i in range(3)] == [F, W, R]
        await pilot.press("down", "left")
        await wait_until(pilot, lambda: app.screen.current()[2] == sid(5), what="the cursor on s5")
        await pilot.resize_terminal(200, 50)
        await wait_until(pilot, lambda: app.screen.widths == (16, 12) and grid.row_count == 3, what="the rebuild")
        assert app.screen.current()[0].case_id == W and app.screen.current()[2] == sid(5)


async def test_the_grid_fills_when_the_screen_enter_opened_took_a_chunk_and_went(project_root, monkeypatch):
    """Each chunk of rows asks for the next after a refresh (`call_after_refresh`). Textual hands that
    callback to the screen on top when it is handled: the review Enter opened, when it came first, and
    one left (Escape) before its next paint drops it unrun. Here the next chunk's request is let go only
    once the review is on top, and the review drops it as a screen left that fast does: back on the flake
    view, the grid asks again (before: it stopped at its first row)."""
    import scarbook.tui.screens.flakes as flakes

    monkeypatch.setattr(flakes, "ROWS_AT_ONCE", 1)
    requests = HeldRequests(monkeypatch, FlakeScreen)
    write_trend_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen) and requests.held, what="the flake view")
        flake_view = app.screen
        grid = flake_view.query_one("#flake-grid")
        assert grid.row_count == 1
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        dropped = drop_after_paint(app.screen, FlakeScreen._add_rows)  # as when the review is left that fast
        requests.let_go()  # the first chunk's request, handled with the review on top
        await wait_until(pilot, lambda: dropped, what="the review to take the request")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is flake_view, what="back to the flake view")
        await wait_until(pilot, lambda: grid.row_count == 3, what="every row")
        assert [str(grid.get_row_at(i)[0]) for i in range(3)] == [F, W, R]


async def test_the_flake_view_shows_a_cases_noise_floor(project_root):
    """Issue 24.3: a case with an A/A measurement says its spread in the flake view's detail — one
    measured on the case's checks as they are (issue 39.4: its digest), never one of other checks."""
    from scarbook.cases.io import case_digest, load_case
    from scarbook.history.noise import NoiseMeasurement, NoiseStore

    write_trend_history(project_root)
    digest = case_digest(load_case(project_root / "cases" / F))
    NoiseStore(project_root / "workspaces").save([NoiseMeasurement(F, [sid(1), sid(2)], 10, 0.8, 0.9, 0.1, 0.34,
                                                                   digest=digest)])
    app = make_app(project_root)
    async with app.run_test(size=(200, 50)) as pilot:
        await library_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, FlakeScreen), what="the flake view")
        detail = str(app.screen.query_one("#flake-detail").render())  # the cursor starts on the flakiest: F
        assert "A/A spread ±34 pts (`scarbook noise`): a move smaller than that is within noise" in detail
