"""The library's judge line says a calibration is stale when its judge is not the one in use — here another
max_tokens, which before this line never noticed (views/library_rows.judge_calibration_line; the words are
judge/identity.py's, as `scarbook calibrate --report` says them) — at 80x24 and wide; j opens the calibration."""

from __future__ import annotations

import msgspec
import pytest
from textual.geometry import Region

from scarbook.judge.calibrate import CalibrationReport
from scarbook.judge.label_store import CalibrationStore
from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.screens.calibrate import CalibrateScreen
from tests.helpers.tui_fixtures import SIZE, add_judged_case, fast_demo, library_loaded, plain, project_root, wait_until  # noqa: F401  (fixtures)


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_a_calibration_made_at_another_max_tokens_is_stale_in_the_library(project_root, size):
    add_judged_case(project_root)
    judge = Project.open(project_root).config.judge
    then = msgspec.structs.replace(judge, max_tokens=judge.max_tokens * 2)
    store = CalibrationStore(project_root / "workspaces" / "history" / "calibration.json")
    store.record_calibration(CalibrationReport({}, (0.85, 0.6, 20)), then, when="2026-11-30")
    store.close()
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        lib = await library_loaded(pilot)
        await wait_until(pilot, lambda: "judge: calibrated" in plain(lib.query_one("#detail")), what="the judge line")
        line = (f"judge: calibrated 2026-11-30, 85% agreement — stale: it was made on judge {judge.model}, "
                f"max_tokens={then.max_tokens}, the judge is now {judge.model}, max_tokens={judge.max_tokens}; press j")
        detail = lib.query_one("#detail")
        assert line in plain(detail).splitlines()
        # on screen whole, wrapped to the panel's width (at 80x24 it fills the panel's last rows)
        rows = [strip.text.strip() for strip in detail.render_lines(Region(0, 0, *detail.region.size))]
        assert line in " ".join(rows), rows
        await pilot.press("j")
        await wait_until(pilot, lambda: isinstance(app.screen, CalibrateScreen), what="the calibration screen")
