"""`scarbook import` suggests trajectory checks from the incident (issue 28.4), and `scarbook verify` runs
them on the scar's transcript: the incident's README.md rewritten whole -> no_writes_outside, its loop
of 40 tool calls -> max_tool_calls. Real fixture files, the real CLI through click's CliRunner."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from scarbook.cases.trajectory_hints import suggest_trajectory_checks
from scarbook.cli import main
from scarbook.transcripts import candidates, load_transcript
from tests.helpers.paths import TRANSCRIPTS

LOOPED = TRANSCRIPTS / "looped_readme.jsonl"  # README.md rewritten whole, run_tests 38 times, then docs/usage.md
HEADER = ("trajectory checks the incident suggests (add them under checks: — they read each run's transcript, "
          "so the agent needs record:, a preset, or transcript: true):")
WRITES = ('  - {type: no_writes_outside, paths: ["docs/usage.md"]}   # the incident wrote README.md (rewrote it whole) '
          "besides the artifact docs/usage.md")
LOOP = ("  - {type: max_tool_calls, n: 20}   # the incident made 41 tool calls, the same run_tests call 38 times "
        "(a loop); a run past 20 fails")


def run(root: Path, *args: str):
    if not (root / "scarbook.yaml").exists():
        (root / "scarbook.yaml").write_text("")
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def test_the_incident_suggests_the_checks_that_would_catch_it() -> None:
    t = load_transcript(LOOPED)
    artifact = next(c for c in candidates(t) if c.path == "docs/usage.md")
    hints = suggest_trajectory_checks(t, artifact)
    assert [h.check for h in hints] == [{"type": "no_writes_outside", "paths": ["docs/usage.md"]},
                                        {"type": "max_tool_calls", "n": 20}]
    # With the answer as the artifact, no file write was wanted at all.
    answer = next(c for c in candidates(t) if c.kind == "final_answer")
    assert suggest_trajectory_checks(t, answer)[0].check == {"type": "no_writes_outside", "paths": []}
    assert suggest_trajectory_checks(t, answer)[0].why == (
        "the incident wrote README.md (rewrote it whole), docs/usage.md (the artifact is its answer)")


def test_a_tidy_incident_suggests_nothing(tmp_path) -> None:
    one_write = tmp_path / "t.jsonl"
    one_write.write_text('{"type": "task", "text": "write out.txt"}\n'
                         '{"type": "tool_call", "id": "1", "name": "write_file", "input": {"path": "out.txt", "content": "x"}}\n'
                         '{"type": "tool_result", "id": "1", "output": "ok"}\n')
    t = load_transcript(one_write)
    artifact = next(c for c in candidates(t) if c.path == "out.txt")
    assert suggest_trajectory_checks(t, artifact) == []
    res = run(tmp_path, "import", str(one_write), "--list")
    assert "trajectory checks" not in res.stdout


def test_import_lists_the_suggestions_and_says_them_again_after_the_draft(tmp_path) -> None:
    res = run(tmp_path, "import", str(LOOPED), "--list")
    assert res.exit_code == 0, res.output
    assert f"{HEADER}\n{WRITES}\n{LOOP}\n" in res.stdout
    res = run(tmp_path, "import", str(LOOPED), "--id", "looped")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(f"wrote draft case {tmp_path / 'cases' / 'looped'}\n{HEADER}\n{WRITES}\n{LOOP}\n")
    assert [c["type"] for c in yaml.safe_load((tmp_path / "cases/looped/case.yaml").read_text())["checks"]] == [
        "file_exists"]  # advice, not added unasked: they need an agent that keeps a transcript


def test_verify_runs_trajectory_checks_on_the_scars_transcript(tmp_path) -> None:
    assert run(tmp_path, "import", str(LOOPED), "--id", "looped").exit_code == 0
    case_file = tmp_path / "cases/looped/case.yaml"
    data = yaml.safe_load(case_file.read_text())
    data["checks"].append({"type": "no_writes_outside", "paths": ["docs/usage.md"]})
    data["scar"]["good_artifact"] = "scar/good.md"  # a good artifact comes with no run: the check is skipped
    (tmp_path / "cases/looped/scar/good.md").write_text("## Usage\nRun it.\n")
    case_file.write_text(yaml.safe_dump(data, sort_keys=False))
    res = run(tmp_path, "verify", "looped")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(
        "looped  catches the scar: the failed artifact fails: check 2 (no_writes_outside): call 2 (write_file "
        '{"path": "README.md", "content": "# tool\\n"}) wrote README.md, outside docs/usage.md')
    # A scar transcript that cannot be read is no verdict (never "catches").
    (tmp_path / "cases/looped/scar/transcript.jsonl").write_text("")
    res = run(tmp_path, "verify", "looped")
    assert res.exit_code == 3, res.output
    assert ("could not reach a verdict on the failed artifact: the trajectory checks cannot read scar.transcript "
            "scar/transcript.jsonl: transcript.jsonl is empty") in res.stdout


def test_in_a_multi_turn_session_only_the_artifacts_turn_is_the_incident() -> None:
    """Turn 1 asked for a.txt, turn 2 for CHANGES.md: with CHANGES.md as the artifact, writing a.txt
    was turn 1's task, not the incident (it was suggested as a write outside before)."""
    t = load_transcript(TRANSCRIPTS / "public_shapes" / "cc_compact_turns.jsonl")
    cands = candidates(t)
    changes = next(c for c in cands if c.path == "CHANGES.md")
    assert suggest_trajectory_checks(t, changes) == []
    a_txt = next(c for c in cands if c.path == "a.txt")
    assert suggest_trajectory_checks(t, a_txt) == []


def test_a_tool_result_as_the_artifact_suggests_no_write_bound() -> None:
    t = load_transcript(LOOPED)
    result = next(c for c in candidates(t) if c.kind == "tool_result")
    assert [h.check["type"] for h in suggest_trajectory_checks(t, result)] == ["max_tool_calls"]
