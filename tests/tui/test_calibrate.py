"""Calibration screen in Pilot: grade 5 judged items blind, see agreement and kappa.

The judged runs are real: `scarbook eval` runs a command agent and grades each run through the
loopback Messages API (tests/helpers/judge_server.py). The agent writes a different tmp.txt per run, so
every run's rubric item is a distinct calibration item. The expected kappa is computed here from
the 2x2 table, independently of scarbook.judge.calibrate.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.judge.label_store import read_labels
from scarbook.tui.app import make_app
from scarbook.tui.screens.calibrate import CalibrateScreen
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401
from tests.helpers.tui_fixtures import SIZE, Gate, screen_text, type_at_once, wait_until

AGENT = """\
import os
from pathlib import Path
Path("tmp.txt").write_text(f"artifact of {os.environ['SCARBOOK_CASE']} run {os.environ['SCARBOOK_RUN']}\\n")
print("done")
"""

CASE = """\
id: {cid}
title: Wrote the summary line
task: Write one summary line to tmp.txt
checks:
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - {item}
"""

ITEMS = {"judge-a": "tmp.txt names the case and the run", "judge-b": "tmp.txt is a single line"}

# What the judge says, per (case, run k) — reasons are distinctive so the test can look for them.
JUDGE = {("judge-a", 1): ("PASS", "zebra-a1"), ("judge-a", 2): ("FAIL", "zebra-a2"),
         ("judge-a", 3): ("PASS", "zebra-a3"),
         ("judge-b", 1): ("PASS", "zebra-b1"), ("judge-b", 2): ("PASS", "zebra-b2")}
# What the human answers: disagrees on judge-a run 3 only; judge-b is all PASS on both sides.
HUMAN = {("judge-a", 1): "PASS", ("judge-a", 2): "FAIL", ("judge-a", 3): "FAIL",
         ("judge-b", 1): "PASS", ("judge-b", 2): "PASS"}


@pytest.fixture
def judged_root(tmp_path, judge_server, monkeypatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "agent.py").write_text(AGENT)
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(root / "agent.py"))}]
        runs: 1
        concurrency: 1
        threshold: 0.5
        judge:
          model: claude-sonnet-4-6
          base_url: {judge_server.url}
          max_retries: 1
          timeout_s: {JUDGE_TIMEOUT_S}
        """))
    for cid, item in ITEMS.items():
        (root / "cases" / cid).mkdir(parents=True)
        (root / "cases" / cid / "case.yaml").write_text(CASE.format(cid=cid, item=item))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-calibrate")
    return root


def eval_judged(root: Path, judge_server, cid: str, runs: int) -> dict[str, tuple[str, str]]:
    """Run `scarbook eval CID -n RUNS` for real; returns {artifact text: (judge verdict, reason)}
    as the JSON report recorded it."""
    judge_server.push(*[tool_reply([JUDGE[(cid, k)]]) for k in range(1, runs + 1)])
    out = root / f"report-{cid}.json"
    result = CliRunner().invoke(main, ["-C", str(root), "eval", cid, "-q", "-n", str(runs), "--json", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output  # judge-a 2/3, judge-b 2/2: both at or above threshold 0.5
    judged = {}
    for run in json.loads(out.read_text())["runs"]:
        (check,) = [c for c in run["checks"] if c["type"] == "llm_judge"]
        (entry,) = check["judge"]["items"]
        judged[check["judge"]["artifact_excerpt"]] = (entry["verdict"], entry["reason"])
    return judged


def kappa_2x2(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa straight from the 2x2 table of (human, judge) counts."""
    n = len(pairs)
    pp = sum(1 for h, j in pairs if h == "PASS" and j == "PASS")
    ff = sum(1 for h, j in pairs if h == "FAIL" and j == "FAIL")
    pf = sum(1 for h, j in pairs if h == "PASS" and j == "FAIL")
    fp = sum(1 for h, j in pairs if h == "FAIL" and j == "PASS")
    po = (pp + ff) / n
    pe = ((pp + pf) * (pp + fp) + (fp + ff) * (pf + ff)) / (n * n)
    return (po - pe) / (1 - pe)


def run_of(artifact: str) -> tuple[str, int]:
    m = re.fullmatch(r"artifact of (\S+) run (\d+)\n?", artifact)
    assert m, f"unexpected artifact {artifact!r}"
    return m.group(1), int(m.group(2))


# The evals run in sync fixtures: `scarbook eval` calls asyncio.run, and a Pilot test is already
# inside an event loop.
@pytest.fixture
def judged_a(judged_root, judge_server) -> dict[str, tuple[str, str]]:
    return eval_judged(judged_root, judge_server, "judge-a", 3)


@pytest.fixture
def judged_ab(judged_a, judged_root, judge_server) -> dict[str, tuple[str, str]]:
    return judged_a | eval_judged(judged_root, judge_server, "judge-b", 2)


async def test_grade_5_items_see_kappa(judged_root, judged_ab):
    judged = judged_ab
    assert len(judged) == 5  # five distinct artifacts, hence five distinct items

    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = CalibrateScreen(sample=5)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the judged items")
        await pilot.pause()
        pairs, seen = [], []
        for n in range(1, 6):
            text = screen_text(app)
            assert f"[{n}/5]" in text
            for _, reason in JUDGE.values():
                assert reason not in text  # the judge's reasons stay hidden while grading
            shown = "".join(str(screen.query_one(sel).render()) for sel in
                            ("#calibrate-progress", "#calibrate-item", "#calibrate-artifact-text"))
            shown = shown.replace("PASS or FAIL for this artifact?", "")
            assert "PASS" not in shown and "FAIL" not in shown  # ... and so do its verdicts
            artifact = str(screen.query_one("#calibrate-artifact-text").render()).strip()
            assert artifact in text.replace("\n", "") or artifact in text
            cid, k = run_of(artifact + "\n")
            assert f"case {cid}" in text and ITEMS[cid] in text
            seen.append((cid, k))
            human = HUMAN[(cid, k)]
            pairs.append((human, judged[artifact + "\n"][0]))
            await pilot.press("p" if human == "PASS" else "f")
            await pilot.pause()
        assert sorted(seen) == sorted(HUMAN)
        assert screen.revealed
        # the report's table changes its Static's size: it is painted after a layout pass, not with the flag
        await wait_until(pilot, lambda: "overall" in screen_text(app), what="the report painted")
        text = screen_text(app)
        agree = sum(h == j for h, j in pairs) / len(pairs)
        a_pairs = [(HUMAN[key], JUDGE[key][0]) for key in HUMAN if key[0] == "judge-a"]
        assert agree == 0.8 and f"{kappa_2x2(pairs):.2f}" == "0.55"  # the hand computation, checked
        overall = re.search(r"overall\s*│\s*5\s*│\s*(\S+) \(38–96%\)\s*│\s*(\S+)", text)
        assert overall, text
        assert overall.groups() == (f"{agree:.0%}", f"{kappa_2x2(pairs):.2f}")
        row_a = re.search(r"judge-a\s*│\s*3\s*│\s*(\S+) \(21–94%\)\s*│\s*(\S+)", text)
        assert row_a and row_a.groups() == ("67%", f"{kappa_2x2(a_pairs):.2f}") == ("67%", "0.40")
        # judge-b: both said PASS every time: kappa is not measurable
        assert re.search(r"judge-b\s*│\s*2\s*│\s*100% \(34–100%\)\s*│\s*n/a \(one class\)", text), text
        assert ("only 5 labels: agreement and kappa can swing widely at this size (the agreement's 95% interval "
                "is shown) — grade at least 20 before trusting them") in " ".join(text.split())
        # issue 23: every label of this judge weighted back from the stratified sample (here all five
        # judged items are labelled, so the weighted figures are the sample's own)
        assert re.search(r"all 5 labels of this judge, weighted back from the stratified sample: agreement 80% "
                         r"\(\d+–\d+%\), kappa 0\.55", " ".join(text.split())), text
        # the one disagreement, side by side with the judge's reason
        assert re.search(r"judge-a\s*│\s*tmp\.txt names the case.*│\s*artifact of judge-a run 3\s*│"
                         r"\s*FAIL\s*│\s*PASS\s*│\s*zebra-a3", text), text
        for reason in ("zebra-a1", "zebra-a2", "zebra-b1", "zebra-b2"):
            assert reason not in text  # agreements are not listed

        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CalibrateScreen)

    stored = json.loads((judged_root / "workspaces" / "history" / "calibration.json").read_text())
    labels = read_labels(judged_root / "workspaces" / "history" / "calibration.json")
    assert len(labels) == 5 and len(stored["truths"]) == 5 and len(stored["verdicts"]) == 5
    assert {run_of(lab.artifact): (lab.human_verdict, lab.judge_verdict) for lab in labels} == \
        {key: (HUMAN[key], JUDGE[key][0]) for key in HUMAN}
    (record,) = stored["calibrations"].values()
    assert record["n"] == 5 and record["agreement"] == pytest.approx(0.8)
    assert record["kappa"] == pytest.approx(kappa_2x2(pairs))
    assert record["judge_model"] == "claude-sonnet-4-6"


async def test_skip_and_stop_early_score_only_the_graded(judged_root, judged_a):
    judged = judged_a
    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = CalibrateScreen(sample=5)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the judged items")
        assert len(screen.items) == 3
        await pilot.press("s")
        # the keys typed while the first item is put on screen wait for it (tui/key_queue.py): read the
        # artifact once the skip has shown the second, not before (on a busy machine, it was the first)
        await wait_until(pilot, lambda: screen.skipped == 1 and screen.position == 1, what="the skip")
        graded = str(screen.query_one("#calibrate-artifact-text").render()).strip() + "\n"
        assert graded == screen.items[1].artifact
        await pilot.press("f", "escape")
        await wait_until(pilot, lambda: screen.revealed, what="the reveal")
        # on a busy machine the flag and the progress line were painted before the table (load 27: no "overall" row)
        await wait_until(pilot, lambda: "overall" in screen_text(app), what="the report painted")
        text = screen_text(app)
        assert "graded 1 · skipped 1" in text
        verdict = judged[graded][0]
        # One label: agreeing on it leaves chance agreement at 1 (kappa not measurable); disagreeing
        # gives po = pe = 0, so kappa is 0.
        if verdict == "FAIL":
            rate, kappa = "100% (21–100%)", "n/a (one class)"
        else:
            rate, kappa = "0% (0–79%)", f"{kappa_2x2([('FAIL', verdict)]):.2f}"
        assert re.search(rf"overall\s*│\s*1\s*│\s*{re.escape(rate)}\s*│\s*{re.escape(kappa)}", text), text
        await pilot.press("p")  # grading is over: p does nothing
        await pilot.pause()
    stored = json.loads((judged_root / "workspaces" / "history" / "calibration.json").read_text())
    assert [(lab["artifact"], lab["human_verdict"]) for lab in stored["truths"].values()] == [(graded, "FAIL")]

    # The next sitting offers only the two items without a label.
    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = CalibrateScreen(sample=5)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the judged items")
        assert sorted(item.artifact for item in screen.items) == sorted(set(judged) - {graded})
        await pilot.press("escape")  # stopped before grading anything: nothing to score
        await wait_until(pilot, lambda: screen.revealed, what="the stop")
        assert "no labels given — nothing to compare with the judge" in screen_text(app)
    stored = json.loads((judged_root / "workspaces" / "history" / "calibration.json").read_text())
    assert len(stored["calibrations"]) == 1 and len(stored["truths"]) == 1


async def test_no_judged_runs_says_so(judged_root):
    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = CalibrateScreen(sample=5)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the (empty) pick")
        # painted at the screen's next refresh, which a loaded machine may not give at one pause
        await wait_until(pilot, lambda: "no judged rubric items to grade — run cases with llm_judge checks first"
                         in screen_text(app), what="the empty pick's words on screen")
        await pilot.press("p", "f")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CalibrateScreen)
    stored = judged_root / "workspaces" / "history" / "calibration.json"
    assert not stored.exists() or not json.loads(stored.read_text()).get("calibrations")


@pytest.fixture
def skipped_judge(judged_root, monkeypatch) -> None:
    """Both judge cases ran twice with no key: every llm_judge check was skipped."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = CliRunner().invoke(main, ["-C", str(judged_root), "eval", "-q", "-n", "2", "--skip-judge"])
    assert result.exit_code == 3, result.output


async def open_by_j(app, pilot) -> None:
    """From the library, j: the calibrate screen, its pick made."""
    await wait_until(pilot, lambda: getattr(app.screen, "loaded", False), what="the library")
    await pilot.press("j")
    await wait_until(pilot, lambda: isinstance(app.screen, CalibrateScreen) and app.screen.loaded, what="the pick")


async def test_calibrate_after_runs_without_a_key_says_the_judge_never_ran(judged_root, skipped_judge):
    """Judge cases ran with no key (judge skipped): not "run cases with llm_judge checks first"."""
    app = make_app(judged_root, judge_env={})
    async with app.run_test(size=SIZE) as pilot:
        await open_by_j(app, pilot)
        await pilot.pause()
        assert ("the judge never ran: of 4 llm_judge checks in the history, 4 skipped without a judge (--skip-judge) "
                "— set $ANTHROPIC_API_KEY and run those cases again. Grade its verdicts here once it has graded "
                "some.") in " ".join(screen_text(app).split())


@pytest.fixture
def gated_store(monkeypatch):
    """calibration.json is read only once the test sets the returned gate (a screen that reads it on the
    UI thread is not held, and fails the test instead of hanging it); let go at teardown."""
    import threading

    from scarbook.tui.screens import calibrate

    gate = Gate()
    gate.reading, gate.closed = [], []  # reads begun; stores closed, by whoever closes them

    class GatedStore(calibrate.CalibrationStore):
        def labels(self, case_id=None):
            gate.reading.append(self)
            gate.hold()
            return super().labels(case_id)

        def close(self):
            gate.closed.append(self)
            super().close()

    monkeypatch.setattr(calibrate, "CalibrationStore", GatedStore)
    yield gate
    gate.set()


async def test_keys_typed_while_calibration_json_is_read_grade_once_it_is(judged_root, judged_a, gated_store):
    """calibration.json and the history are read off the UI thread: the screen says it is loading, and
    an `f` typed meanwhile waits and grades the first item once it is shown (it was dropped)."""
    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = CalibrateScreen(sample=5)
        app.push_screen(screen)
        await wait_until(pilot, lambda: app.screen is screen and screen.is_mounted, what="the calibrate screen")
        type_at_once(app, ["f"])
        await pilot.pause()
        assert not screen.loaded and "loading judged runs…" in screen_text(app)
        gated_store.set()
        await wait_until(pilot, lambda: screen.position == 1, what="the first item graded")
        assert [lab.human_verdict for lab in screen.labels] == ["FAIL"]
        assert "[2/3]" in screen_text(app)
    stored = json.loads((judged_root / "workspaces" / "history" / "calibration.json").read_text())
    assert [lab["human_verdict"] for lab in stored["truths"].values()] == ["FAIL"]


async def test_escape_while_calibration_json_is_read_leaves_at_once(judged_root, judged_a, gated_store):
    """Escape is not held while the screen loads (a slow read can be left); a key typed before it was for
    the screen that is gone and goes nowhere: nothing is graded, the library gets no stray key."""
    from scarbook.tui.screens.library import LibraryScreen

    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")
        library = app.screen
        screen = CalibrateScreen(sample=5)
        app.push_screen(screen)
        await wait_until(pilot, lambda: gated_store.reading, what="calibration.json being read")
        type_at_once(app, ["f", "escape"])
        await wait_until(pilot, lambda: app.screen is library, what="escape to leave")
        assert not screen.loaded and list(app.keys.keys) == []
        gated_store.set()  # the read finishes for a screen that is gone: its store is closed, nothing shown
        await wait_until(pilot, lambda: gated_store.closed, what="the store read for the left screen to close")
        assert app.screen is library and not screen.labels and not screen.loaded
    stored = judged_root / "workspaces" / "history" / "calibration.json"
    assert not stored.exists() or not json.loads(stored.read_text()).get("labels")


async def test_a_damaged_calibration_json_is_a_message_on_the_screen_not_a_crash(judged_root):
    """calibration.json is read in a worker: its damage must reach the user as the CLI's message, the
    app staying up, the file left as it was, and escape going back to the library."""
    from scarbook.tui.screens.library import LibraryScreen
    from tests.helpers.tui_fixtures import library_loaded

    stored = judged_root / "workspaces" / "history" / "calibration.json"
    stored.parent.mkdir(parents=True)
    stored.write_text('{"labels": {"1": ')
    app = make_app(judged_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("j")
        await wait_until(pilot, lambda: isinstance(app.screen, CalibrateScreen) and app.screen.loaded,
                         what="the calibrate screen to load")
        said = (f"history file {stored} is damaged (Expecting value: line 1 column 18); the other sessions "
                "are unaffected")
        await wait_until(pilot, lambda: said in " ".join(screen_text(app).split()), what="the damaged file named")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")
        assert app.is_running
        assert app.screen.judge_status.startswith(f"judge: calibration unknown — history file {stored} is damaged")
    assert stored.read_text() == '{"labels": {"1": '


async def test_after_a_change_of_judge_the_items_labelled_before_are_not_asked_again_at_80x24(judged_root, judged_a,
                                                                                          judge_server):  # noqa: F811
    """Two items graded under one judge; the judge changed and the runs rejudged (`scarbook rejudge`, a real
    subprocess): the next sitting draws the new judge's three items, pairs the two labelled already with its
    verdicts without asking, asks about the third, and its counts say so — on an 80x24 terminal. Both judges'
    verdicts stay beside the person's (the draw used to leave every labelled artifact out: nothing left to grade)."""
    async def sitting(expect_items: int) -> tuple[CalibrateScreen, str]:
        app = make_app(judged_root)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = CalibrateScreen(sample=2 if expect_items == 2 else 5)
            await app.push_screen(screen)
            await wait_until(pilot, lambda: screen.loaded, what="the judged items")
            assert len(screen.items) == expect_items
            opening = " ".join(screen_text(app).split())
            for n in range(expect_items):
                await wait_until(pilot, lambda n=n: screen.position == n, what=f"item {n + 1}")
                await pilot.press("p" if HUMAN[run_of(screen.items[n].artifact)] == "PASS" else "f")
            await wait_until(pilot, lambda: "overall" in screen_text(app), what="the report painted")
            return screen, opening + "\n" + " ".join(screen_text(app).split())

    first, _ = await sitting(2)
    given = {lab.artifact for lab in first.labels}
    config = judged_root / "scarbook.yaml"
    config.write_text(config.read_text().replace("model: claude-sonnet-4-6", "model: claude-opus-4-1"))
    judge_server.default = tool_reply([("PASS", "opus passes it")])
    done = subprocess.run([sys.executable, "-c", "from scarbook.cli import main; main()", "-C", str(judged_root),
                           "rejudge", "-q", "latest"], capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr

    second, text = await sitting(1)
    assert second.items[0].artifact not in given and second.items[0].judge_model == "claude-opus-4-1"
    assert "[1/1] case judge-a graded 0 · skipped 0 · 2 labelled before, not asked" in text, text
    assert ("graded 1 · skipped 0 · 2 labelled before, not asked · judge claude-opus-4-1 — labels saved; press escape "
            "to go back") in text, text
    assert re.search(r"overall\s*│\s*3\s*│", text), text
    labels = read_labels(judged_root / "workspaces" / "history" / "calibration.json")
    assert sorted((lab.judge_model, run_of(lab.artifact)[1], lab.human_verdict) for lab in labels) == \
        [("claude-opus-4-1", k, HUMAN[("judge-a", k)]) for k in (1, 2, 3)] + \
        sorted(("claude-sonnet-4-6", run_of(a)[1], HUMAN[run_of(a)]) for a in given)
