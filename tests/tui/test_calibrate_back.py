"""u on the calibrate screen: back one item to grade it again. `scarbook calibrate --import FILE --relabel` changes a
stored label; the screen had no way to take back a key typed by mistake — the grade was stored at once and the draw
never offers a labelled item again. A relabel key on the report would let the judge's verdict and reason, shown there,
change the truth it is measured against; u goes back while the judge's verdict is still unseen, and a grade changed
so is a relabel (the person's explicit act). The real app by Pilot keys at 80x24; the judged runs real
(tests/tui/test_calibrate.py)."""

from __future__ import annotations

import re

from scarbook.judge.label_store import read_labels
from scarbook.tui.app import make_app
from scarbook.tui.screens.calibrate import CalibrateScreen
from tests.helpers.tui_fixtures import screen_text, wait_until
from tests.tui.test_calibrate import judge_server, judged_a, judged_root  # noqa: F401


async def test_u_goes_back_and_a_grade_given_again_replaces_the_mistyped_one(judged_root, judged_a):  # noqa: F811
    app = make_app(judged_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = CalibrateScreen(sample=3)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the judged items")
        first, second, third = screen.items
        await pilot.press("u")  # nothing before the first item: u does nothing
        await pilot.press("p")  # meant f
        await wait_until(pilot, lambda: screen.position == 1, what="the second item")
        await pilot.press("s")  # skipped by mistake too
        await wait_until(pilot, lambda: screen.position == 2, what="the third item")
        assert "graded 1 · skipped 1" in screen_text(app)
        await pilot.press("u")
        await wait_until(pilot, lambda: screen.position == 1, what="back on the second item")
        assert "[2/3]" in screen_text(app) and "graded 1 · skipped 0" in screen_text(app)
        await pilot.press("u")
        await wait_until(pilot, lambda: screen.position == 0, what="back on the first item")
        text = " ".join(screen_text(app).split())
        assert "[1/3]" in text and "graded 0 · skipped 0" in text, text
        assert first.artifact.strip() in screen_text(app)
        await pilot.press("f")  # the grade meant
        await wait_until(pilot, lambda: screen.position == 1, what="the second item again")
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.position == 2, what="the third item again")
        await pilot.press("p")
        await wait_until(pilot, lambda: "overall" in screen_text(app), what="the report painted")
        text = screen_text(app)
        assert "graded 3 · skipped 0" in " ".join(text.split())
        assert re.search(r"overall\s*│\s*3\s*│", text), text
    labels = read_labels(judged_root / "workspaces" / "history" / "calibration.json")
    assert sorted((lab.artifact, lab.human_verdict) for lab in labels) == \
        sorted([(first.artifact, "FAIL"), (second.artifact, "PASS"), (third.artifact, "PASS")])
