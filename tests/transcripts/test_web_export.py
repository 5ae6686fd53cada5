"""Chat web apps' data exports (found as a newcomer with a ChatGPT incident): ChatGPT's and claude.ai's
`conversations.json` were refused ("not a transcript scarbook can read … no format is close"). They are read now
(formats chatgpt and claude-ai), one conversation at a time: the latest updated, or the one --trace names. Fixtures
in tests/fixtures/transcripts/web_export/: hand-written in the shapes the two exports have."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scarbook.errors import ScarbookError
from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task
from scarbook.transcripts.model import Message
from tests.helpers.paths import REPO, TRANSCRIPTS

FIX = TRANSCRIPTS / "web_export"
CHATGPT = FIX / "chatgpt_conversations.json"
CLAUDE_AI = FIX / "claude_ai_conversations.json"
Q3 = "67a0c1f2-0002-8000-9000-00000000bbbb"
SEMVER = "67a0c1f2-0001-8000-9000-00000000aaaa"


def test_a_chatgpt_export_shows_its_latest_conversation_as_it_stands_on_screen():
    """The branch that ends at `current_node`: the prompt edited away and its reply are not in it, nor the custom
    instructions; the code interpreter's code is a call and its output the result."""
    t = load_transcript(CHATGPT)
    assert (t.format, t.trace, t.model, t.date) == ("chatgpt", Q3, "gpt-4o", "2025-11-19")
    assert t.traces == [(Q3, "Q3 revenue, updated 2025-11-19"), (SEMVER, "Regex for semver, updated 2025-11-10")]
    assert t.warnings == [f"the file holds 2 conversations; showing {Q3} (the latest updated); pick another with "
                          "--trace ID (see --list)"]
    assert suggest_task(t) == "Here is sales.csv. Compute total revenue for Q3 (Jul-Sep) only and tell me the number."
    assert [m.text for m in t.entries if isinstance(m, Message)] == [
        suggest_task(t), "Total Q3 revenue is $1,284,000."]
    assert [(c.name, c.input) for c in t.tool_calls] == [
        ("python", {"code": "import pandas as pd\ndf = pd.read_csv('/mnt/data/sales.csv')\ndf['revenue'].sum()"})]
    assert [r.text for r in t.tool_results] == ["1284000.0"]
    cands = candidates(t)
    assert cands[default_artifact(cands) - 1].content == "Total Q3 revenue is $1,284,000."


def test_trace_picks_another_conversation_and_an_unknown_one_is_named_with_those_there_are():
    t = load_transcript(CHATGPT, trace=SEMVER)
    assert (t.trace, suggest_task(t), t.final_answer, t.warnings) == (
        SEMVER, "A regex for semver, please.", "^\\d+\\.\\d+\\.\\d+$", [])
    with pytest.raises(ScarbookError) as exc:
        load_transcript(CHATGPT, trace="nope")
    assert str(exc.value) == f"{CHATGPT}: no conversation 'nope' in this export; it holds {Q3}, {SEMVER}"


def test_a_claude_ai_export_reads_the_pasted_file_into_the_task_and_an_artifact_as_a_file_written():
    t = load_transcript(CLAUDE_AI)
    assert (t.format, t.traces, t.date) == ("claude-ai", [], "2026-11-02")
    assert suggest_task(t) == ("Turn the attached changelog into release notes. Keep every entry; do not invent "
                               "features.\n\n[attached CHANGELOG.txt]\n4.2: faster sync; fix login crash; drop Python 3.8")
    cands = candidates(t)
    chosen = cands[default_artifact(cands) - 1]
    assert (chosen.label, chosen.content) == (
        "file notes.md (final content)", "## Release 4.2\n- Faster sync\n- Fixes a crash on login\n- New dark mode\n")


def test_import_files_a_claude_ai_incident_as_a_case_whose_artifact_is_the_document(tmp_path):
    """Through the real command, in a subprocess: before, exit 2 and nothing written."""
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    done = subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(tmp_path), "import",
                           str(CLAUDE_AI), "--id", "release-notes"], capture_output=True, text=True, timeout=120,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "cases" / "release-notes"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert case["scar"]["artifact_at"] == "notes.md" and case["scar"]["date"] == "2026-11-02"
    assert case["task"].startswith("Turn the attached changelog into release notes.")
    assert (folder / "scar" / "artifact.md").read_text().endswith("- New dark mode\n")
    listed = subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(tmp_path), "import",
                             str(CHATGPT), "--list"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert listed.returncode == 0, listed.stderr
    assert (f"format: chatgpt\nconversations (pick one with --trace ID):\n  * {Q3}  Q3 revenue, updated 2025-11-19\n"
            f"    {SEMVER}  Regex for semver, updated 2025-11-10\n") in listed.stdout
