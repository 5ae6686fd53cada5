"""Issue 26, "Import on real logs": each fixture under tests/fixtures/transcripts/issue26/ is a small
faithful reconstruction of a public log shape (sources in its README); every assertion is what the
user sees."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.transcripts import candidates, load_transcript, suggest_task

FIX = Path(__file__).parent / "fixtures" / "transcripts" / "issue26"


def run(root: Path, *args: str):
    if not (root / "scarbook.yaml").exists():
        (root / "scarbook.yaml").write_text("")
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def test_slash_commands_and_synthetic_messages_are_not_the_incident(tmp_path):
    """2. Only `/exit` (typed, and as `<command-name>`), its local output and a `<synthetic>` usage
    error: no task, no artifact, and import says why instead of drafting task "/exit"."""
    t = load_transcript(FIX / "cc_exit_synthetic.jsonl")
    assert suggest_task(t) == ""
    assert t.final_answer is None
    assert candidates(t) == []
    res = run(tmp_path, "import", str(FIX / "cc_exit_synthetic.jsonl"), "--list")
    assert res.exit_code == 0
    assert "task: (none found)\ncandidates:\nno candidate artifacts in this transcript\n" in res.stdout
    res = run(tmp_path, "import", str(FIX / "cc_exit_synthetic.jsonl"), "--id", "x")
    assert res.exit_code == 2
    assert res.stderr == (
        "scarbook: the transcript holds no work of the agent to import: only slash commands and messages the "
        "harness wrote in the model's place (/exit; You're out of extra usage · resets 4pm (UTC); "
        "output of a local command)\n")
    assert not (tmp_path / "cases" / "x").exists()
