"""Every screen works by keyboard: the "Broken" items of issue 16, each driven by keys (Pilot press)."""

from __future__ import annotations

import io

import pytest

from scarbook.history.store import History
from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo
from scarbook.tui.app import make_app
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.live import LiveScreen
from scarbook.tui.screens.review import ReviewScreen
from tests.helpers.paths import FIXTURES
from tests.helpers.tui_fixtures import (
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    live_screen_caught_up,
    move_library_cursor,
    palette_offers,
    plain,
    project_root,
    review_loaded,
    save_done,  # noqa: F401
    wait_for_session,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


async def open_launch(pilot) -> None:
    """From the library (loaded), r opens the launch modal."""
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LaunchScreen), what="the launch modal")


async def launch_by_keys(pilot, runs: str = "2") -> None:
    """r opens the launch modal; the runs field has focus: replace its value and press Enter."""
    await open_launch(pilot)
    await pilot.press("ctrl+a", "ctrl+k", *runs, "enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LiveScreen), what="the live screen")


async def test_enter_and_v_on_the_live_screen_open_the_runs_review(project_root):
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await launch_by_keys(pilot)
        await wait_until(pilot, lambda: app.live.done, timeout=60, what="the session to end")
        await pilot.pause()
        assert "Enter reviews a case's runs" in plain(app.screen.query_one("#live-status"))
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review (Enter)")
        assert app.screen.case_id == app.live.cases[1].id
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="back on the live screen")
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review (v)")
        assert app.screen.case_id == app.live.cases[1].id


def record_judged_run(root, sid: str = "20261201-100000-000aa") -> None:
    history = History(root / "workspaces")
    info = SessionInfo(id=sid, label="judged", started_at="2026-12-01T10:00:00+00:00", runs_per_case=1,
                       case_ids=["write-one-line"], agent="demo")
    history.start_session(info)
    items = [{"item": 1, "text": "tmp.txt contains exactly one line", "verdict": "PASS", "reason": "one line"},
             {"item": 2, "text": "the answer claims nothing false", "verdict": "FAIL", "reason": "says done"}]
    judge = CheckResult("llm_judge", "fail", "1 of 2 rubric items failed", 0,
                        judge=JudgeDetail.from_dict({"verdict": "fail", "items": items, "model": "m"}))
    history.record_run(RunRecord(session_id=sid, case_id="write-one-line", k=1, status="fail",
                                 reason="check 1 (llm_judge): 1 of 2 rubric items failed", checks=[judge]))
    info.state = "finished"
    history.finish_session(info)


async def test_review_shows_each_judge_item_with_its_number_and_text(project_root):
    record_judged_run(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("v")
        await review_loaded(pilot)
        await pilot.pause()
        body = plain(app.screen.query_one("#run-body"))
        assert "     PASS 1. tmp.txt contains exactly one line\n          one line\n" in body
        assert "     FAIL 2. the answer claims nothing false\n          says done\n" in body
        assert "?." not in body


async def tab_to(pilot, widget_id: str, limit: int = 60, key: str = "tab") -> None:
    """Press Tab (or `key`: shift+tab goes back) until the widget with this id has focus, as a user would."""
    for _ in range(limit):
        if pilot.app.focused is not None and pilot.app.focused.id == widget_id:
            return
        await pilot.press(key)
    raise AssertionError(f"{key} never reached #{widget_id}")


async def test_enter_on_a_rubric_item_edits_it_in_place(project_root):
    from scarbook.tui.screens.editor import EditorScreen
    from tests.helpers.tui_fixtures import add_judged_case, type_text

    add_judged_case(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "judged-summary")
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await tab_to(pilot, "rubric-list")
        await pilot.press("down", "enter")  # the second item goes into the input
        assert app.focused.id == "rubric-input"
        await pilot.press("end")
        await type_text(pilot, " by name")
        await pilot.press("enter")
        assert app.screen.query_one("#rubric").items == [
            "the summary names the failing test", "the summary does not claim all tests passed by name",
            "the summary is under five lines"]
        await pilot.press("ctrl+s")
        await save_done(pilot)
        text = (project_root / "cases" / "judged-summary" / "case.yaml").read_text()
        assert text.count("the summary does not claim all tests passed") == 1


async def test_space_ticks_a_seed_file_without_an_arrow_key_first(project_root):
    from pathlib import Path

    from scarbook.tui.screens.import_scar import ImportScreen

    transcript = FIXTURES / "transcripts" / "claude_code_session.jsonl"
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        app.push_screen(ImportScreen(transcript))
        await wait_until(pilot, lambda: isinstance(app.screen, ImportScreen) and app.screen.transcript_path,
                         what="the transcript to load")
        await pilot.pause()
        await pilot.press("enter")  # take the default artifact: focus moves to the seed files
        seeds = app.screen.query_one("#seeds")
        assert app.focused is seeds
        await pilot.press("space")
        assert seeds.selected == ["README.md"]


async def test_adaptive_session_ends_with_a_full_bar_and_says_how_many_runs_it_saved(project_root):
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await open_launch(pilot)
        await pilot.press("ctrl+a", "ctrl+k", "4", "0")
        estimate = app.screen.query_one("#estimate")
        assert plain(estimate).startswith("160 runs: 4 cases × 40\n")
        await tab_to(pilot, "adaptive")
        await pilot.press("space")
        assert plain(estimate).startswith("20 to 160 runs: 4 cases, each stops once the evidence decides it "
                                          "(at most 40)\n")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        live = app.live
        await wait_for_session(pilot, live)  # up to 160 runs: as long as they keep finishing
        await live_screen_caught_up(pilot)
        assert live.info.state == "finished" and live.finished_runs < 160
        bar = app.screen.query_one("#progress")
        assert bar.percentage == 1.0
        saved = 160 - live.finished_runs
        assert plain(app.screen.query_one("#live-figures")).startswith(
            f"{live.finished_runs}/{live.finished_runs} runs ({saved} runs saved by adaptive stopping) · ")


async def test_adaptive_with_a_cap_below_the_rules_minimum_is_refused_in_the_modal(project_root):
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await open_launch(pilot)
        await pilot.press("ctrl+a", "ctrl+k", "3")
        await tab_to(pilot, "adaptive")
        await pilot.press("space", "ctrl+r")
        assert isinstance(app.screen, LaunchScreen)
        assert plain(app.screen.query_one("#launch-error")) == "adaptive needs a cap of at least 5 runs per case"


async def test_a_label_scarbook_reads_as_the_newest_session_is_refused_in_the_modal(project_root):
    """The launch ran a session labelled 'latest', which `scarbook report latest` never picks by its label."""
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await open_launch(pilot)
        await tab_to(pilot, "label")
        await pilot.press(*"latest", "ctrl+r")
        assert isinstance(app.screen, LaunchScreen)
        assert plain(app.screen.query_one("#launch-error")) == (
            "label 'latest' is a word scarbook reads as a session (latest: the newest, previous: the one before), "
            "so the session could not be picked by it — choose another label, e.g. latest-run")


@pytest.mark.parametrize("label, message", [
    ("20261201-100000-000aa", "label '20261201-100000-000aa' is the id of a session already recorded, so `scarbook "
                              "report 20261201-100000-000aa` would pick that session, not this one — choose another "
                              "label"),
    ("y" * 121, f"label {'y' * 24!r}… is 121 characters long; at most 120 (a name to pick the session by, e.g. "
                "prompt-v2) — choose a shorter label"),
], ids=["a-sessions-id", "121-characters"])
async def test_a_label_that_is_a_sessions_id_or_too_long_is_refused_in_the_modal(project_root, label, message):
    """The launch ran a session labelled with a recorded session's id (that id picks the older session), or
    with a label of any length."""
    record_judged_run(project_root)
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await open_launch(pilot)
        await tab_to(pilot, "label")
        await pilot.press(*label, "ctrl+r")
        assert isinstance(app.screen, LaunchScreen)
        assert plain(app.screen.query_one("#launch-error")) == message
    assert [p.name for p in (project_root / "workspaces" / "history").iterdir() if p.is_dir()] == [
        "20261201-100000-000aa"]  # nothing ran


async def test_verify_without_a_judge_key_lets_the_rule_checks_decide(project_root):
    folder = project_root / "cases" / "write-one-line"
    yaml_text = (folder / "case.yaml").read_text()
    judged = "  - type: llm_judge\n    artifact: tmp.txt\n    rubric: [tmp.txt holds only the first line]\nscar:\n"
    (folder / "case.yaml").write_text(yaml_text.replace("scar:\n", judged))
    app = make_app(project_root, judge_env={})
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("c")
        await wait_until(pilot, lambda: app._notifications, what="the verification")
        (note,) = list(app._notifications)
        assert (note.title, note.message) == (
            "write-one-line: catches the scar",
            "the failed artifact fails: check 3 (line_count): tmp.txt has 7 lines, expected exactly 1")
        await wait_until(pilot, lambda: next(r for r in lib.rows if r.key == "write-one-line").badge == "verified",
                         what="the badge")


async def choose_check_type(pilot, ctype: str) -> None:
    """Open the check-type Select with Enter and walk down to `ctype`, as a user would."""
    from scarbook.checks.spec import CHECK_SPECS

    await tab_to(pilot, "check-type")
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press("home", *["down"] * (list(CHECK_SPECS).index(ctype) + 1), "enter")  # row 0 is the blank
    select = pilot.app.screen.query_one("#check-type")
    await wait_until(pilot, lambda: select.value == ctype and pilot.app.screen.query("#cf-path"),
                     what=f"the {ctype} fields")


async def test_a_new_case_gets_its_scar_files_in_the_editor_and_verifies(project_root):
    from scarbook.tui.screens.editor import EditorScreen
    from tests.helpers.tui_fixtures import type_text

    (project_root / "bad.txt").write_text("# tiny-agent\nA tiny agent.\n")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await type_text(pilot, "one-line")
        await tab_to(pilot, "task")
        await type_text(pilot, "Write the first line of README.md to tmp.txt")
        await tab_to(pilot, "scar-failed")
        await type_text(pilot, "bad.txt")  # a file in the project: copied into scar/ on save
        await tab_to(pilot, "scar-at")
        await type_text(pilot, "tmp.txt")
        await choose_check_type(pilot, "line_count")
        await tab_to(pilot, "cf-path")
        await type_text(pilot, "tmp.txt")
        await tab_to(pilot, "cf-equals")
        await type_text(pilot, "1")
        await tab_to(pilot, "check-add", key="shift+tab")  # just above the fields (Tab goes round the form)
        await pilot.press("enter")
        await pilot.press("ctrl+t")  # save, then verify against the scar
        await wait_until(pilot, lambda: [n for n in app._notifications if n.title.startswith("one-line:")],
                         what="the verification")
        note = next(n for n in app._notifications if n.title.startswith("one-line:"))
        assert (note.title, note.message) == ("one-line: catches the scar", "the failed artifact fails: check 1 "
                                              "(line_count): tmp.txt has 2 lines, expected exactly 1")
        assert app.screen.query_one("#scar-failed").value == "scar/bad.txt"
    folder = project_root / "cases" / "one-line"
    assert (folder / "scar" / "bad.txt").read_text() == "# tiny-agent\nA tiny agent.\n"
    assert "  failed_artifact: scar/bad.txt\n  artifact_at: tmp.txt\n" in (folder / "case.yaml").read_text()


async def test_a_draft_from_a_failed_run_is_written_on_save_only_and_can_be_renamed(project_root):
    from scarbook.tui.dialogs.confirm import ConfirmScreen
    from scarbook.tui.screens.editor import EditorScreen
    from tests.helpers.tui_fixtures import type_text

    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await launch_by_keys(pilot, runs="6")
        await wait_until(pilot, lambda: app.live.done, timeout=60, what="the session to end")
        live = app.live
        case = next(c for c in live.cases if any(r.status == "fail" for r in live.runs[c.id]))
        await pilot.press(*["down"] * live.cases.index(case), "enter")
        await review_loaded(pilot)
        run = app.screen.current_run  # the review opens on the first failed run
        assert run.status == "fail"
        before = sorted(p.name for p in (project_root / "cases").iterdir())
        await pilot.press("c")
        await wait_until(pilot, lambda: editor_ready(app), what="the draft")
        assert app.screen.query_one("#case-id").value == f"{case.id}-run{run.k}"
        await pilot.press("escape")  # an unsaved draft: asks, then leaves nothing on disk
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")  # "Discard changes (y)"
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="back on the review")
        assert sorted(p.name for p in (project_root / "cases").iterdir()) == before
        await pilot.press("c")
        await wait_until(pilot, lambda: editor_ready(app), what="the draft again")
        await pilot.press("ctrl+a", "ctrl+k")  # the id field has focus: rename the draft
        await type_text(pilot, "renamed-draft")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (project_root / "cases" / "renamed-draft" / "case.yaml").is_file(),
                         what="the saved draft")
        await save_done(pilot)  # the seed files are copied after case.yaml, on the same thread
    folder = project_root / "cases" / "renamed-draft"
    from scarbook.cases.io import load_case

    draft = load_case(folder)
    assert (folder / draft.scar.failed_artifact).is_file()
    original_seed = project_root / "cases" / case.id / "seed"
    assert sorted(str(p.relative_to(original_seed)) for p in original_seed.rglob("*") if p.is_file()) == \
        sorted(str(p.relative_to(folder / "seed")) for p in (folder / "seed").rglob("*") if p.is_file())


async def test_sessions_list_shows_state_marks_tokens_and_dollars(project_root):
    """h opens the sessions: each says whether its figures are complete or why not, with its cost."""
    from scarbook.models import Usage
    from scarbook.tui.screens.sessions import SessionsScreen

    history = History(project_root / "workspaces")
    for sid, state, partial, statuses in [("20261201-100000-000aa", "finished", False, ["pass", "fail"]),
                                          ("20261201-110000-000bb", "cancelled", False, ["pass"]),
                                          ("20261201-120000-000cc", "finished", True, ["unjudged", "pass"]),
                                          ("20261201-130000-000dd", "stopped: budget", False, ["fail"])]:
        info = SessionInfo(id=sid, started_at="2026-12-01T10:00:00+00:00", runs_per_case=2,
                           case_ids=["write-one-line"], agent="demo", state=state, partial=partial)
        history.start_session(info)
        for k, st in enumerate(statuses, 1):
            history.record_run(RunRecord(session_id=sid, case_id="write-one-line", k=k, status=st, reason=st,
                                         agent_usage=Usage(input_tokens=1000, output_tokens=250, cost_usd=0.5),
                                         judge_usage=Usage(input_tokens=100, cost_usd=0.25)))
        history.finish_session(info)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.sessions,
                         what="the sessions")
        table = app.screen.query_one("#sessions-table")
        shown = {sid: tuple(str(table.get_cell(sid, key)) for key in ("state", "figures", "tokens", "cost"))
                 for sid in (s.id for s in app.screen.sessions)}
        assert shown == {
            "20261201-100000-000aa": ("complete", "1/1/0/0", "2,700", "$1.50"),
            "20261201-110000-000bb": ("cancelled", "1/0/0/0", "1,350", "$0.75"),
            "20261201-120000-000cc": ("partial", "1/0/0/1", "2,700", "$1.50"),
            "20261201-130000-000dd": ("budget-stopped", "0/1/0/0", "1,350", "$0.75")}


async def test_question_mark_lists_every_key_of_the_screen_and_the_palette_reaches_every_action(project_root):
    from scarbook.tui.screens.calibrate import CalibrateScreen
    from scarbook.tui.screens.help import HelpScreen
    from scarbook.tui.screens.import_scar import ImportScreen
    from scarbook.tui.screens.sessions import SessionsScreen
    from tests.helpers.tui_fixtures import type_text

    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        from rich.console import Console

        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.table)
        text = " ".join(console.export_text().split())
        for key, does in [("r", "Run…"), ("i", "Import transcript"), ("c", "Verify scar"), ("j", "Calibrate judge"),
                          ("w", "Live session"), ("o", "Sort by the next column"), ("O", "Reverse the sort"),
                          ("q", "Quit"), ("? / F1", "this help")]:
            assert f"{key} {does}" in text, (key, text)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), what="help to close")
        for words, screen in [("sessions", SessionsScreen), ("import transcript", ImportScreen),
                              ("calibrate judge", CalibrateScreen)]:
            await pilot.press("ctrl+p")
            await pilot.pause()
            await type_text(pilot, words)
            await palette_offers(pilot, words)
            await pilot.press("enter")
            await wait_until(pilot, lambda screen=screen: isinstance(app.screen, screen), what=words)
            await pilot.press("f1")  # F1 works on every screen too
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what=f"help on {words}")
            await pilot.press("escape", "escape")
            await wait_until(pilot, lambda: app.screen.__class__.__name__ == "LibraryScreen", what="the library")
