"""Nothing to calibrate yet, and why: a judge check skipped without a judge (no key: --skip-judge) apart from one
that never ran because a cheaper check before it failed — the screen used to call every skipped judge check "no
API key". Real runs (`scarbook eval` in process, a command agent), the real app by Pilot keys at 80x24 and wide, and
`scarbook calibrate --export` in a subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.tui.app import make_app
from tests.helpers.tui_fixtures import screen_text, wait_until
from tests.tui.test_calibrate import judge_server, judged_root, open_by_j  # noqa: F401

CASE = """\
id: ruled
title: Wrote the first run's line
task: Write one summary line to tmp.txt
checks:
  - {type: contains, path: tmp.txt, text: "run 1"}
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - tmp.txt names the run
"""


@pytest.fixture
def ruled(judged_root, monkeypatch):  # noqa: F811
    """One case, three runs without a key: run 1 passes its rule check (the judge skipped: --skip-judge), runs 2 and
    3 fail it (the judge check not run)."""
    for case in (judged_root / "cases").iterdir():
        (case / "case.yaml").unlink()
        case.rmdir()
    (judged_root / "cases" / "ruled").mkdir()
    (judged_root / "cases" / "ruled" / "case.yaml").write_text(CASE)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = CliRunner().invoke(main, ["-C", str(judged_root), "eval", "-q", "-n", "3", "--skip-judge"])
    assert result.exit_code in (1, 3), result.output
    return judged_root


WHY = ("the judge never ran: of 3 llm_judge checks in the history, 1 skipped without a judge (--skip-judge) — set "
       "$ANTHROPIC_API_KEY and run those cases again; 2 not judged because a cheaper check before them failed (the "
       "judge grades a run only once its rule checks pass)")


@pytest.mark.parametrize("size", [(80, 24), (160, 40)])
async def test_the_calibrate_screen_says_why_each_judge_check_was_not_judged(ruled, size):
    app = make_app(ruled, judge_env={})
    async with app.run_test(size=size) as pilot:
        await open_by_j(app, pilot)
        await wait_until(pilot, lambda: "Grade its verdicts" in screen_text(app), what="the words painted")
        shown = " ".join(screen_text(app).split())
        assert f"{WHY}. Grade its verdicts here once it has graded some." in shown, shown
        assert "(no API key)" not in shown


def test_calibrate_export_says_the_same(ruled):
    done = subprocess.run([sys.executable, "-c", "from scarbook.cli import main; main()", "-C", str(ruled),
                           "calibrate", "--export", str(ruled / "labels.csv")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"scarbook: no judged rubric items left to label — {WHY}\n"
    assert not (ruled / "labels.csv").exists()
