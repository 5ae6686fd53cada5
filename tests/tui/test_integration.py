"""The TUI's wiring into scar verification, adaptive N and judge calibration."""

from __future__ import annotations

import pytest

from scarbook.history.store import History
from scarbook.judge.calibrate import CalibrationReport
from scarbook.judge.label_store import CalibrationStore
from scarbook.stats.sequential import SequentialRule
from scarbook.tui.app import make_app
from scarbook.tui.screens.calibrate import CalibrateScreen
from scarbook.tui.screens.import_scar import ImportScreen
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.screens.live import LiveScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    add_judged_case,
    editor_ready,
    fast_demo,
    library_loaded,
    live_screen_caught_up,
    move_library_cursor,
    plain,
    project_root,
    wait_for_session,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


def badge_of(lib: LibraryScreen, case_id: str) -> str:
    return next(r.badge for r in lib.rows if r.key == case_id)


async def test_verify_key_sets_the_scar_badge(project_root):
    # Make write-one-line's checks too weak to catch its scar: drop the line-count check.
    case_yaml = project_root / "cases" / "write-one-line" / "case.yaml"
    case_yaml.write_text(case_yaml.read_text().replace("  - {type: line_count, path: tmp.txt, equals: 1}\n", ""))
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        assert badge_of(lib, "write-one-line") == "unverified"
        for cid, expected in (("write-one-line", "misses"), ("fix-json-config", "verified")):
            await move_library_cursor(pilot, cid)
            await pilot.press("c")
            await wait_until(pilot, lambda cid=cid, expected=expected: badge_of(lib, cid) == expected,
                             what=f"{cid} badge {expected}")


async def test_import_key_opens_the_import_screen(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, ImportScreen), what="the import screen")


async def test_adaptive_launch_decides_cases_and_the_live_screen_shows_it(project_root):
    app = make_app(project_root, agent_seed=7)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        app.screen.query_one("#runs").value = "30"
        app.screen.query_one("#adaptive").value = True
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        await wait_for_session(pilot, app.live)  # up to 30 runs a case: as long as they keep finishing
        await live_screen_caught_up(pilot)
        live = app.live
        assert set(live.decided) == {c.id for c in live.cases}
        table = app.screen.query_one("#live-table")
        concurrency = app.project.config.concurrency
        for case in live.cases:
            shown = str(table.get_cell(case.id, "decided"))
            assert shown == live.decided[case.id]
            # Replay the rule over the runs in launch order (issue 22: result k counts only once 1..k-1
            # are in, so slow failures cannot bias it): once it decided, no new run of the case started
            # (only those already in flight may finish after it).
            rule = SequentialRule(case.threshold or 0.8, max_runs=30)
            passes = fails = 0
            verdict, decided_after = None, len(live.runs[case.id])
            for n, run in enumerate(sorted(live.runs[case.id], key=lambda r: r.k), 1):
                passes += run.status == "pass"
                fails += run.status == "fail"
                verdict = rule.decide(passes, fails)
                if verdict is not None:
                    decided_after = n
                    break
            assert verdict == live.decided[case.id] or live.decided[case.id] == "undecided"
            assert len(live.runs[case.id]) <= decided_after + concurrency - 1
    info = History(project_root / "workspaces").sessions()[0]
    assert info.decisions == live.decided


async def test_library_shows_when_the_judge_was_last_calibrated(project_root):
    add_judged_case(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        assert "judge: never calibrated — press j" in plain(lib.query_one("#detail"))
        settings = app.project.config.judge
        store = CalibrationStore(project_root / "workspaces" / "history" / "calibration.json")
        store.record_calibration(CalibrationReport({}, (0.85, 0.6, 20)), settings, when="2026-11-30")
        store.close()
        lib.reload()
        await wait_until(pilot, lambda: "calibrated 2026-11-30, 85% agreement" in plain(lib.query_one("#detail")),
                         what="the calibration line")
        assert "stale" not in plain(lib.query_one("#detail"))
        await pilot.press("j")
        await wait_until(pilot, lambda: isinstance(app.screen, CalibrateScreen), what="the calibration screen")


async def test_editor_shows_live_rubric_hints_and_clears_them_for_a_sharp_item(project_root):
    from textual.widgets import Input

    from scarbook.tui.screens.editor import EditorScreen
    from tests.helpers.tui_fixtures import type_text

    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        ed.query_one("#rubric-input", Input).focus()
        await type_text(pilot, "Evaluate whether this review output is good")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "hint (vague-item)" in plain(ed.query_one("#lint-hints")),
                         what="the vague-item hint")
        assert "hint (judge-only)" in plain(ed.query_one("#lint-hints"))
        ed.query_one("#rubric").items = ["the review names the cache_control assertion as unsourced"]
        ed.update_hints()
        await pilot.pause()
        assert "vague-item" not in plain(ed.query_one("#lint-hints"))


async def test_editor_verify_key_saves_and_verifies_the_scar(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("e")
        from scarbook.tui.screens.editor import EditorScreen

        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await pilot.press("ctrl+t")
        # issue 24.4: its good artifact passes and no judge takes part, so the badge is certified (was verified)
        await wait_until(pilot, lambda: badge_of(lib, "write-one-line") == "certified", what="the certified badge")


@pytest.mark.parametrize("fields,warning", [
    (({"case_digests": {"write-one-line": "d1"}}, {"case_digests": {"write-one-line": "d2"}}),
     "changed task or checks between the sessions (rates measure different things): write-one-line"),
    (({"partial": False}, {"partial": True}),
     "session 20260102-000000-bbbb skipped its judge checks (--skip-judge: partial) and session "
     "20260101-000000-aaaa graded them — their rates measure different checks"),
])
async def test_compare_screen_warns_when_the_sessions_measured_different_things(project_root, fields, warning):
    from scarbook.models import RunRecord, SessionInfo
    from scarbook.tui.screens.compare import CompareScreen

    history = History(project_root / "workspaces")
    infos = []
    for sid, extra in zip(("20260101-000000-aaaa", "20260102-000000-bbbb"), fields, strict=False):
        info = SessionInfo(id=sid, started_at="2026-01-01T00:00:00+00:00", case_ids=["write-one-line"], **extra)
        history.start_session(info)
        history.record_run(RunRecord(session_id=sid, case_id="write-one-line", k=1, status="pass", reason="ok"))
        history.finish_session(info)
        infos.append(info)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        app.push_screen(CompareScreen(*infos))
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded, what="the comparison")
        await pilot.pause()
        assert warning in plain(app.screen.query_one("#sessions-help"))
