"""OpenHands' evaluation output (`output.jsonl`, one instance a line: instance_id, instruction, test_result, metadata,
history, metrics, error — evaluation/utils/shared.py's EvalOutput) was refused: 'not a transcript scarbook can
read: JSON lines whose first record has keys instance_id, … closest format: swe-agent'. It is read now (format
openhands-eval): `--list` lists the instances (id, the task's first words, resolved or not), the first not resolved
is imported unless `--trace ID` picks another, a bad line is an error naming the file and the line.

The fixture holds three instances in the shapes the harness writes: a resolved one whose history is a list of
events, an unresolved SWE-bench one whose history is an old run's [action, observation] pairs, and one the harness
gave up on (no history, its error)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scarbook.errors import ScarbookError
from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task
from tests.helpers.paths import REPO, TRANSCRIPTS

OUTPUT = TRANSCRIPTS / "openhands" / "output.jsonl"
LINES = OUTPUT.read_text().splitlines()
ISSUE = "Fix the off-by-one in paginate(): the last page is dropped when the count divides evenly."
LISTED = ("format: openhands-eval\n"
          "instances (pick one with --trace ID):\n"
          "    acme__acme-101  Bump the version in setup.cfg to 2.4.0 and add a …, resolved\n"
          "  * acme__acme-102  Fix the off-by-one in paginate(): the last page i…, not resolved\n"
          "    acme__acme-103  Rename the CLI flag --verbose to --debug everywhe…, error: Maximum retries (5) reached: "
          "AgentRunti…\n"
          "root: /workspace/acme (paths are relative to it; change it with --root DIR)\n"
          f"task: {ISSUE}\n")


def scarbook(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(project), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_list_names_every_instance_and_imports_the_first_not_resolved(tmp_path):
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    res = scarbook(tmp_path, "import", str(OUTPUT), "--list")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(LISTED)
    assert res.stderr == ("warning: the file holds 3 instances; showing acme__acme-102 (the first not resolved); "
                          "pick another with --trace ID (see --list)\n")


def test_the_unresolved_instance_reads_as_its_issue_its_files_and_its_answer():
    """The old run's [action, observation] pairs (a null observation has no source) are read as events are; the
    task is the issue the SWE-bench instruction wraps, paths start at its <uploaded_files> folder."""
    t = load_transcript(OUTPUT)
    assert (t.format, t.trace, t.cwd, t.model, t.date) == (
        "openhands-eval", "acme__acme-102", "/workspace/acme", "anthropic/claude-sonnet-4-20250514", "2026-11-21")
    assert suggest_task(t) == ISSUE
    assert t.final_answer == "Fixed: the last page is kept now."
    cands = candidates(t)
    assert cands[default_artifact(cands) - 1].label == "file src/page.py (final content)"


def test_trace_picks_an_instance_and_the_draft_keeps_its_line_alone(tmp_path):
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    listed = scarbook(tmp_path, "import", str(OUTPUT), "--list", "--trace", "acme__acme-101")
    assert listed.returncode == 0, listed.stderr
    assert "  * acme__acme-101  Bump the version" in listed.stdout and listed.stderr == ""
    done = scarbook(tmp_path, "import", str(OUTPUT), "--trace", "acme__acme-101", "--id", "bump", "--skip-judge")
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "cases" / "bump"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert (case["scar"]["artifact_at"], case["scar"]["transcript"]) == ("CHANGELOG.md", "scar/transcript.jsonl")
    kept = (folder / "scar" / "transcript.jsonl").read_text()
    assert json.loads(kept) == json.loads(LINES[0])  # the instance imported, not the whole run
    again = scarbook(tmp_path, "import", str(folder / "scar" / "transcript.jsonl"), "--list")
    assert again.stdout.startswith("format: openhands-eval\nroot: /workspace/acme"), again.stderr


def test_an_instance_the_harness_gave_up_on_is_its_task_and_its_error():
    t = load_transcript(OUTPUT, trace="acme__acme-103")
    assert suggest_task(t) == "Rename the CLI flag --verbose to --debug everywhere."
    assert candidates(t) == []
    assert t.warnings == ["the evaluation harness stopped this instance: Maximum retries (5) reached: "
                          "AgentRuntimeUnavailableError: runtime container exited"]


def _with_line(tmp_path: Path, line: str, at: int = 1) -> Path:
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join([*LINES[:at], line, *LINES[at:]]) + "\n")
    return path


BAD_EVENT = json.dumps({**json.loads(LINES[0]), "history": [*json.loads(LINES[0])["history"], {"foo": 1}]})


@pytest.mark.parametrize(("line", "said"), [
    ('{"instance_id": "x", "history": [oops', "line 2 is not JSON (Expecting value: line 1 column 34 (char 33))"),
    ('{"id": 3, "history": []}', "line 2 is not an OpenHands evaluation record (no instance_id with history or "
                                 "test_result)"),
    (BAD_EVENT, "line 2 (instance acme__acme-101): history[14] is not an OpenHands event (action with args, or "
                "observation with extras)"),
], ids=["not-json", "not-an-instance", "not-an-event"])
def test_a_bad_line_is_an_error_naming_the_file_and_the_line(tmp_path, line, said):
    path = _with_line(tmp_path, line)
    with pytest.raises(ScarbookError) as exc:
        load_transcript(path, trace="acme__acme-101" if line is BAD_EVENT else None)
    assert str(exc.value) == f"{path}: {said}; each line of output.jsonl is one instance: repair or remove that line"


def test_the_bad_line_is_said_through_the_command(tmp_path):
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    path = _with_line(tmp_path, '{"id": 3, "history": []}', at=2)
    res = scarbook(tmp_path, "import", str(path), "--list")
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == (f"scarbook: {path}: line 3 is not an OpenHands evaluation record (no instance_id with "
                          "history or test_result); each line of output.jsonl is one instance: repair or remove that "
                          "line\n")


def test_a_last_line_cut_short_is_a_warning_and_an_unknown_instance_an_error(tmp_path):
    """The harness appends a line per instance as it goes: a run read while it writes ends mid-line."""
    path = tmp_path / "output.jsonl"
    path.write_text("\n".join(LINES) + "\n" + LINES[1][:300])
    t = load_transcript(path)
    assert t.warnings[0] == "last line truncated by a crash (line 4); it was skipped"
    assert [tid for tid, _ in t.traces] == ["acme__acme-101", "acme__acme-102", "acme__acme-103"]
    with pytest.raises(ScarbookError) as exc:
        load_transcript(path, trace="acme__acme-9")
    assert str(exc.value) == (f"{path}: no instance 'acme__acme-9' in this evaluation output; it holds "
                              "acme__acme-101, acme__acme-102, acme__acme-103")


def test_one_instance_alone_is_one_json_document_read_as_the_line_is(tmp_path):
    path = tmp_path / "instance.json"
    path.write_text(json.dumps(json.loads(LINES[1]), indent=2))
    t = load_transcript(path)
    assert (t.format, t.traces, suggest_task(t), t.final_answer) == (
        "openhands-eval", [], ISSUE, "Fixed: the last page is kept now.")
