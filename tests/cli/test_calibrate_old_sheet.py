"""A sheet exported under one judge and imported after another rejudged (the user's path: `scarbook` in real
subprocesses, a command agent, the real anthropic SDK against the loopback Messages API, calibration.json a real
TinyDB file).

The person labelled the artifacts judge A's draw showed them; the import used to pair each label with the verdict
of the judge in use (B, which graded the same artifacts since), so B's calibration counted labels drawn from A's
strata and the library said "calibrated" for B. Now the sheet names the judge whose draw it holds and each label is
paired with that judge's verdict; a sheet written before it did, whose items two judges graded, keeps the person's
labels without pairing them (said), and a draw of `scarbook calibrate` pairs them without asking again."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from scarbook.judge.label_store import read_labels
from scarbook.judge.prompt import prompt_digest
from scarbook.project import Project
from scarbook.views.library_rows import build_rows, judge_calibration_line
from tests.cli.test_calibrate_judge_change import (  # noqa: F401
    export_and_label,
    head,
    judge_server,
    project,
    scarbook,
    truth,
    use_judge,
)

STORE = Path("workspaces") / "history" / "calibration.json"


def library_line(root: Path) -> str:
    proj = Project.at(root)
    return judge_calibration_line(proj, list(build_rows(proj)))


def test_a_sheet_exported_under_judge_a_is_paired_with_a_after_b_rejudged(project):
    digest = prompt_digest()[:8]
    assert scarbook(project, "eval", "-q", "-n", "8").returncode in (0, 1)
    sheet, _ = export_and_label(project, "a.jsonl", 4)
    assert all(json.loads(line)["judge"].startswith("claude-a/") for line in sheet.read_text().splitlines())

    use_judge(project, "claude-b")
    assert scarbook(project, "rejudge", "-q", "latest").returncode in (0, 1)
    imported = scarbook(project, "calibrate", "--import", str(sheet))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.splitlines()[:2] == [
        f"imported 4 labels from {sheet}",
        f"4 labels paired with the verdicts of judge claude-a (prompt {digest}), whose draw the sheet holds, not with "
        f"those of the judge in use, claude-b (prompt {digest}): a draw of `scarbook calibrate` pairs them with its "
        "verdicts without asking you again"]
    labels = read_labels(project / STORE)
    assert sorted(lab.judge_model for lab in labels) == ["claude-a"] * 4
    assert head(project)[:2] == [
        f"judge claude-b (prompt {digest}): no labels",
        f"corrected rates: not used, the raw rates stand — stale: the labels were made on judge claude-a (prompt "
        f"{digest}), the judge is now claude-b (prompt {digest}) — label items it graded with `scarbook calibrate`"]
    # not "never calibrated" as if no label existed: whose they are, and how claude-b gets them paired
    assert library_line(project) == (
        f"judge: never calibrated for claude-b (prompt {digest}) — 4 labels exist for judge claude-a (prompt {digest}): "
        "`scarbook calibrate` (press j) pairs them with claude-b's verdicts on the same artifacts, not asking again "
        "(after `scarbook rejudge latest` if claude-b graded none)")


def test_a_sheet_written_before_it_named_its_judge_keeps_labels_two_judges_graded_unpaired(project):
    assert scarbook(project, "eval", "-q", "-n", "8").returncode in (0, 1)
    sheet, _ = export_and_label(project, "old.jsonl", 4)
    rows = [json.loads(line) for line in sheet.read_text().splitlines()]
    sheet.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "judge"}) + "\n" for row in rows))
    use_judge(project, "claude-b")
    assert scarbook(project, "rejudge", "-q", "latest").returncode in (0, 1)

    imported = scarbook(project, "calibrate", "--import", str(sheet))
    assert imported.returncode == 0, imported.stderr
    digest = prompt_digest()[:8]
    assert imported.stdout.splitlines()[:2] == [
        f"imported 4 labels from {sheet}",
        f"4 labels kept beside no judge's verdict yet ({sheet} lines 1, 2, 3, 4): their items were graded by "
        f"claude-a (prompt {digest}) and claude-b (prompt {digest}), and the sheet, written before scarbook named the "
        "judge in it, does not say whose draw it holds — a draw of `scarbook calibrate` that takes one pairs it with "
        "that judge's verdict without asking you again"]
    assert read_labels(project / STORE) == []
    assert library_line(project) == (
        f"judge: never calibrated for claude-b (prompt {digest}) — 4 labels exist beside no judge's verdict yet: "
        "`scarbook calibrate` (press j) pairs them with claude-b's verdicts on the same artifacts, not asking again "
        "(after `scarbook rejudge latest` if claude-b graded none)")

    graded = scarbook(project, "calibrate", "--sample", "8", input="")  # B's draw: the 4 paired, 4 asked
    assert graded.returncode == 0, graded.stderr
    assert graded.stdout.splitlines()[0] == ("4 items drawn you labelled before: your label now stands beside the "
                                             "verdict of judge claude-b on them too — not asked again")
    assert sorted((lab.judge_model, lab.human_verdict) for lab in read_labels(project / STORE)) == \
        sorted(("claude-b", truth(int(row["excerpt"].split()[-1]))) for row in rows)


def test_rescore_does_not_call_the_new_judge_calibrated(project):
    """--rescore stored no verdicts of the new judge yet recorded its agreement as a calibration of it: the library
    said "calibrated" while --report said "stale". It records nothing now, and says so."""
    assert scarbook(project, "eval", "-q", "-n", "8").returncode in (0, 1)
    sheet, _ = export_and_label(project, "a.jsonl", 8)
    assert scarbook(project, "calibrate", "--import", str(sheet)).returncode == 0
    calibrated = library_line(project)
    assert calibrated.startswith(f"judge: calibrated {date.today().isoformat()}, ")
    use_judge(project, "claude-b")
    rescored = scarbook(project, "calibrate", "--rescore")
    assert rescored.returncode == 0, rescored.stderr
    assert rescored.stdout.splitlines()[-1] == (
        "agreement only — not recorded as judge claude-b's calibration: its calibration weighs labels drawn from its "
        "own verdicts in history; to calibrate it, `scarbook calibrate` draws items it graded and pairs the labels "
        "you gave without asking again")
    digest = prompt_digest()[:8]
    assert library_line(project) == (f"{calibrated} — stale: it was made on judge claude-a (prompt {digest}), the "
                                     f"judge is now claude-b (prompt {digest}); press j")


def test_a_sheet_imported_again_after_a_change_of_judge_says_how_the_new_judge_gets_its_labels(project):
    """The week of a calibration user: a sheet labelled and imported under judge A, the judge changed to B and the runs
    rejudged, the same sheet imported again — "imported 0 labels; 4 labels you had given already", and B still stale
    without a word of why or what next. It says so now."""
    assert scarbook(project, "eval", "-q", "-n", "8").returncode in (0, 1)
    sheet, _ = export_and_label(project, "a.jsonl", 4)
    assert scarbook(project, "calibrate", "--import", str(sheet)).returncode == 0
    use_judge(project, "claude-b")
    assert scarbook(project, "rejudge", "-q", "latest").returncode in (0, 1)
    again = scarbook(project, "calibrate", "--import", str(sheet))
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        f"imported 0 labels from {sheet}; 4 labels you had given already\n"
        "the judge in use, claude-b, has no labels yet: yours stand beside the verdicts of the judge whose draw held "
        "them — `scarbook calibrate` (or --export) draws its items and pairs the ones you labelled without asking "
        "again\n")
    paired = scarbook(project, "calibrate", "--sample", "8", input="")
    assert paired.stdout.splitlines()[0] == ("4 items drawn you labelled before: your label now stands beside the "
                                             "verdict of judge claude-b on them too — not asked again")
