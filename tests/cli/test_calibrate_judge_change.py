"""Labels survive a change of judge (the user's path: `scarbook` in real subprocesses, a command agent, the real
anthropic SDK against the loopback Messages API, calibration.json a real TinyDB file).

Labelled under judge A, the judge changed to B and the runs rejudged: labelling under B used to store B's items
with A's verdict (the oldest session's item won the key), so B stayed "stale" however much was labelled, and the
draw left every artifact labelled under A out. Now each judge's verdict is kept beside the person's, the draw for B
pairs the labels already given without asking again, A's calibration reads as before, and a label changes only
by `--import FILE --relabel`, which lists what it changed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import pytest

from scarbook.judge.calibrate import artifact_digest
from scarbook.judge.label_store import read_labels
from scarbook.judge.prompt import prompt_digest
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
ITEM = "tmp.txt names the run"
WRONG = {"claude-a": {2, 7}, "claude-b": {4}}  # the runs each judge gets wrong


def truth(k: int) -> str:  # the person's verdict: odd runs pass
    return "PASS" if k % 2 else "FAIL"


def judge_says(model: str, k: int) -> str:
    return truth(k) if k not in WRONG[model] else ("FAIL" if truth(k) == "PASS" else "PASS")


@pytest.fixture
def project(tmp_path, judge_server) -> Path:  # noqa: F811
    def responder(body):
        k = int(re.search(r"artifact of c1 run (\d+)", json.dumps(body["messages"])).group(1))
        return tool_reply([(judge_says(body["model"], k), f"{body['model']} on run {k}")])

    judge_server.responder = responder
    root = tmp_path / "proj"
    (root / "cases" / "c1").mkdir(parents=True)
    (root / "agent.py").write_text('import os\nfrom pathlib import Path\n'
                                   'Path("tmp.txt").write_text(f"artifact of c1 run {os.environ[\'SCARBOOK_RUN\']}\\n")\n')
    (root / "cases" / "c1" / "case.yaml").write_text(
        f"id: c1\ntitle: t\ntask: write\nchecks:\n  - type: llm_judge\n    artifact: tmp.txt\n    rubric:\n      - {ITEM}\n")
    root.joinpath("server").write_text(judge_server.url)
    use_judge(root, "claude-a")
    return root


def use_judge(root: Path, model: str) -> None:
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(root / "agent.py"))}]
        runs: 1
        concurrency: 2
        threshold: 0.3
        judge:
          model: {model}
          base_url: {(root / "server").read_text()}
          timeout_s: {JUDGE_TIMEOUT_S}
          calibration_min_labels: 6
          calibration_min_per_class: 2
        """))


def scarbook(root: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*SCARBOOK, "-C", str(root), *args], capture_output=True, text=True, input=input,
                          timeout=300, env={**__import__("os").environ, "ANTHROPIC_API_KEY": "sk-labels"})


def run_k(row: dict) -> int:
    return int(re.search(r"run (\d+)", row["excerpt"]).group(1))


def export_and_label(root: Path, name: str, sample: int, label=truth) -> tuple[Path, subprocess.CompletedProcess]:
    sheet = root / name
    done = scarbook(root, "calibrate", "--export", str(sheet), "--sample", str(sample))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in sheet.read_text().splitlines()]
    sheet.write_text("".join(json.dumps({**row, "label": label(run_k(row))}) + "\n" for row in rows))
    return sheet, done


def head(root: Path) -> list[str]:
    """`calibrate --report`'s lines on the judge's measured error (not its advice, which reads the latest session)."""
    done = scarbook(root, "calibrate", "--report")
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n\nwhere labels help most:")[0].splitlines()


def test_labels_given_under_one_judge_count_for_the_next_and_the_first_keeps_its_own(project):
    today = date.today().isoformat()
    digest = prompt_digest()[:8]
    assert scarbook(project, "eval", "-q", "-n", "8").returncode in (0, 1)
    sheet_a, _ = export_and_label(project, "a.jsonl", 4)
    assert scarbook(project, "calibrate", "--import", str(sheet_a)).returncode == 0
    report_a = head(project)
    assert report_a[0] == f"judge claude-a (prompt {digest}): 4 labels, last {today}"

    use_judge(project, "claude-b")
    assert scarbook(project, "rejudge", "-q", "latest").returncode in (0, 1)
    sheet_b, exported = export_and_label(project, "b.jsonl", 8)
    assert exported.stdout.splitlines()[0] == ("4 items drawn you labelled before: your label now stands beside the "
                                               "verdict of judge claude-b on them too — not asked again")
    assert len(sheet_b.read_text().splitlines()) == 4  # only the items never labelled are asked about
    imported = scarbook(project, "calibrate", "--import", str(sheet_b))
    assert imported.stdout.splitlines()[0] == f"imported 4 labels from {sheet_b}"
    assert head(project)[:2] == [f"judge claude-b (prompt {digest}): 8 labels, last {today}", "corrected rates: on"]
    # the first sheet imported again under B: nothing to add (B's verdicts pair with labels its own draws take)
    again = scarbook(project, "calibrate", "--import", str(sheet_a))
    assert again.stdout == f"imported 0 labels from {sheet_a}; 4 labels you had given already\n"
    assert head(project)[0] == f"judge claude-b (prompt {digest}): 8 labels, last {today}"

    use_judge(project, "claude-a")
    assert head(project) == report_a  # judge A's calibration reads as it did before the change
    labels = read_labels(project / "workspaces" / "history" / "calibration.json")
    assert sorted((lab.judge_model, lab.human_verdict == truth(int(lab.artifact.split()[-1])),
                   lab.judge_verdict == judge_says(lab.judge_model, int(lab.artifact.split()[-1]))) for lab in labels) \
        == [("claude-a", True, True)] * 4 + [("claude-b", True, True)] * 8
    # grading under A again: the 4 items labelled under B are paired with A's verdicts, nothing is asked
    graded = scarbook(project, "calibrate", "--sample", "8", input="")
    assert graded.returncode == 0, graded.stderr
    assert graded.stdout.splitlines()[1] == ("4 items drawn you labelled before: your label now stands beside the "
                                             "verdict of judge claude-a on them too — not asked again")
    assert "--- artifact ---" not in graded.stdout
    assert head(project)[0] == f"judge claude-a (prompt {digest}): 8 labels, last {today}"


def test_a_label_changes_only_by_relabel_which_says_what_it_changed(project):
    assert scarbook(project, "eval", "-q", "-n", "4").returncode in (0, 1)
    sheet, _ = export_and_label(project, "a.jsonl", 4)
    assert scarbook(project, "calibrate", "--import", str(sheet)).returncode == 0
    store = project / "workspaces" / "history" / "calibration.json"
    before = store.read_bytes()
    rows = [json.loads(line) for line in sheet.read_text().splitlines()]
    first = rows[0]
    flipped = "PASS" if first["label"] == "FAIL" else "FAIL"
    sheet.write_text("".join(json.dumps({**row, "label": flipped} if row is first else row) + "\n" for row in rows))
    today = date.today().isoformat()
    said = (f"case c1, item {ITEM!r} (artifact {artifact_digest(first['excerpt'])}) is labelled {first['label']} in "
            f"calibration.json ({today}) and {flipped} here")

    refused = scarbook(project, "calibrate", "--import", str(sheet))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (f"scarbook: {sheet} line 1: {said}\nnothing imported from {sheet}: fix this line and "
                              f"import it again — or, to change your labels to the file's, `scarbook calibrate --import "
                              f"{sheet} --relabel`\n")
    assert store.read_bytes() == before

    changed = scarbook(project, "calibrate", "--import", str(sheet), "--relabel")
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.splitlines()[:2] == [
        f"relabelled case c1, item {ITEM!r} (artifact {artifact_digest(first['excerpt'])}): {first['label']} → "
        f"{flipped} (yours since {today})",
        f"imported 0 labels from {sheet}; 1 label changed; 3 labels you had given already"]
    labels = read_labels(store)
    assert len(labels) == 4
    assert [lab.human_verdict for lab in labels if lab.artifact == first["excerpt"]] == [flipped]

    alone = scarbook(project, "calibrate", "--relabel")
    assert alone.returncode == 2
    assert alone.stderr == "scarbook: --relabel changes your labels to those of a file — give it with --import FILE\n"
