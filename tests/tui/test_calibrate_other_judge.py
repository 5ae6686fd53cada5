"""A sitting in the calibrate screen after the judge changed and before the new one graded anything: the draw takes
the old judge's items (there are no others), so the labels stand beside its verdicts — and recording them as the new
judge's calibration made the library say "calibrated" for a judge no label measures. The screen says so instead, and
the library still says what holds (the real app by Pilot keys at 80x24; the judged runs real, tests/tui/test_calibrate)."""

from __future__ import annotations

from scarbook.judge.label_store import read_labels
from scarbook.judge.prompt import prompt_digest
from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.screens.calibrate import CalibrateScreen
from scarbook.views.library_rows import build_rows, judge_calibration_line
from tests.helpers.tui_fixtures import screen_text, wait_until
from tests.tui.test_calibrate import HUMAN, judge_server, judged_a, judged_root, run_of  # noqa: F401


async def test_labels_given_on_another_judges_items_do_not_calibrate_the_judge_in_use(judged_root, judged_a):  # noqa: F811
    config = judged_root / "scarbook.yaml"
    config.write_text(config.read_text().replace("model: claude-sonnet-4-6", "model: claude-opus-4-1"))
    app = make_app(judged_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = CalibrateScreen(sample=3)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the judged items")
        assert [item.judge_model for item in screen.items] == ["claude-sonnet-4-6"] * 3
        for n in range(3):
            await wait_until(pilot, lambda n=n: screen.position == n, what=f"item {n + 1}")
            await pilot.press("p" if HUMAN[run_of(screen.items[n].artifact)] == "PASS" else "f")
        await wait_until(pilot, lambda: "overall" in screen_text(app), what="the report painted")
        await pilot.pause()
        assert ("judge claude-opus-4-1 graded none of these items (run or rejudge the cases with it): your labels "
                "stand beside the verdicts of the judges that did, and its own calibration is not recorded from them") \
            in " ".join(screen_text(app).split())
    labels = read_labels(judged_root / "workspaces" / "history" / "calibration.json")
    assert sorted(lab.judge_model for lab in labels) == ["claude-sonnet-4-6"] * 3
    project = Project.at(judged_root)
    digest = prompt_digest()[:8]
    assert judge_calibration_line(project, list(build_rows(project))) == (  # its labels exist, for another judge
        f"judge: never calibrated for claude-opus-4-1 (prompt {digest}) — 3 labels exist for judge claude-sonnet-4-6 "
        f"(prompt {digest}): `scarbook calibrate` (press j) pairs them with claude-opus-4-1's verdicts on the same "
        "artifacts, not asking again (after `scarbook rejudge latest` if claude-opus-4-1 graded none)")
