"""Issue 38.5: the TUI's first screen loads only what it shows. The App imported every screen, and with them
the runner, the rejudge and rubric-draft pipelines and the judge's SDK (anthropic: 3,300 modules), before
the library's first paint: 2.2-2.6 s of CPU at a launch, where the library needs about 0.4. Now a screen is
imported when it is first opened, the core behind it when it is used, and the library's rows (history, the
verifications, the trends) are read in its worker after the first paint.

Each launch here is a real `scarbook` TUI in its own interpreter (sys.modules is per process), driven by key
presses; what it has imported is read at four moments: as the library starts reading its rows (everything the
first paint needed), once the library is full (rows and trends), with a case open in the editor, and with its
rubric-draft dialog saying what drafting will cost (the SDK loads in the thread that drafts, after Enter)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.tui_fixtures import fast_demo, project_root  # noqa: F401

LAUNCH = """
import asyncio, json, sys, time
from scarbook.tui.app import make_app
from scarbook.tui.screens.library import LibraryScreen

seen = {}
real_reload = LibraryScreen.reload

def reload(self):
    seen.setdefault("before the rows", sorted(sys.modules))  # the first read starts after the first paint
    real_reload(self)

LibraryScreen.reload = reload

async def until(pilot, what, condition):
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await pilot.pause(0.02)

async def main():
    app = make_app(sys.argv[1])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, "the library to fill", lambda: isinstance(app.screen, LibraryScreen)
                    and app.screen.loaded and app.screen.trends_loaded)
        seen["library full"] = sorted(sys.modules)
        await pilot.press("e")
        await until(pilot, "the editor", lambda: type(app.screen).__name__ == "EditorScreen"
                    and app.screen.built and app.screen.accepts_keys and app.screen.case is not None)
        seen["editor open"] = sorted(sys.modules)
        await pilot.press("ctrl+r")  # draft the rubric: the dialog says the cost first
        await until(pilot, "the rubric draft's cost", lambda: type(app.screen).__name__ == "DraftRubricScreen"
                    and app.screen.plan is not None)
        seen["draft dialog"] = sorted(sys.modules)
    print(json.dumps(seen))

asyncio.run(main())
"""

# Screens, dialogs and widgets the library does not show.
OTHER_SCREENS = tuple(f"scarbook.tui.screens.{name}" for name in (
    "editor", "review", "import_scar", "calibrate", "sessions", "launch", "live", "flakes", "help")) + tuple(
    f"scarbook.tui.dialogs.{name}" for name in ("draft_rubric", "rejudge_offer", "case_dialogs", "confirm")) + tuple(
    f"scarbook.tui.widgets.{name}" for name in (
        "check_editor", "seed_files", "item_list", "timeline", "run_detail", "distribution", "diff_bar", "path_suggester"))
# What no screen needs until a session, a judge call, a rejudge or a rubric draft is asked for.
NOT_UNTIL_USED = ("anthropic", "ray", "aiohttp", "pydantic", "scarbook.run.runner", "scarbook.run.session",
                  "scarbook.run.ray", "scarbook.judge.client", "scarbook.judge.judge", "scarbook.judge.grader",
                  "scarbook.judge.batch", "scarbook.tools.rejudge", "scarbook.tools.rubric_draft",
                  "scarbook.session.certify", "scarbook.session.rubric_draft", "scarbook.agents.command",
                  "scarbook.agents.python", "scarbook.proc.spawn", "scarbook.transcripts.formats",
                  "scarbook.reports")
# What only the rows need: read in the library's worker, after the first paint.
ROWS_ONLY = ("scarbook.views.library_rows", "scarbook.views.trends", "scarbook.history.store",
             "scarbook.history.judge_truth", "scarbook.cases.verifications", "tinydb", "filelock")


def _loaded(names: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in names if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_the_first_screen_loads_only_what_it_shows(project_root) -> None:
    done = subprocess.run([sys.executable, "-c", LAUNCH, str(project_root)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    first, full, editor, draft = seen["before the rows"], seen["library full"], seen["editor open"], seen["draft dialog"]

    assert "scarbook.tui.screens.library.screen" in first and "textual.app" in first  # it did launch
    assert _loaded(first, OTHER_SCREENS + NOT_UNTIL_USED + ROWS_ONLY) == []
    # the worker read the rows and the trends: with them, nothing another screen or a session needs
    assert {"scarbook.views.library_rows", "scarbook.views.trends"} <= set(full)
    assert _loaded(full, OTHER_SCREENS + NOT_UNTIL_USED) == []
    # `e` loads the editor, and still not the judge's SDK nor the pipelines its other keys start
    assert "scarbook.tui.screens.editor" in editor
    assert _loaded(editor, NOT_UNTIL_USED) == []
    # ctrl+r shows the draft's cost at once: the judge's SDK is not imported on the UI thread to say it
    assert "scarbook.tui.dialogs.draft_rubric" in draft and "scarbook.judge.client" in draft
    assert _loaded(draft, ("anthropic", "aiohttp", "pydantic")) == []
