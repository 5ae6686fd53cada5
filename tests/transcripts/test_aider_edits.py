"""aider's chat history with SEARCH/REPLACE blocks (found as a user): the failed artifact was never the file the
edit made — the blocks were only words of the reply, so the draft's artifact was the whole reply. Each block is
now an edit of its file: a file the log itself created (a block with an empty SEARCH) is rebuilt through every
later block, and a file the history never holds (added with /add: its content is not logged) is said to be so,
its blocks kept as fragments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task
from tests.helpers.paths import REPO, TRANSCRIPTS

LOG = TRANSCRIPTS / "aider" / "search_replace.chat.history.md"


def test_each_block_is_an_edit_and_a_file_the_log_created_is_rebuilt():
    t = load_transcript(LOG)
    assert t.format == "plain" and t.date == "2026-11-20"
    assert suggest_task(t) == ('Create NOTES.md with a one-line summary of the project, and fix the typo "teh" in '
                               "README.md. Change nothing else.")
    files = {f.path: f for f in t.files_written}
    assert files["NOTES.md"].content == "tiny-agent: a small agent that answers in one line.\nLicense: GPL-3.0\n"
    readme = files["README.md"]
    assert readme.content is None
    assert readme.note == "edit changed a file whose earlier content is not in the transcript"
    assert readme.fragments == ["Run the agent with `python agent.py`.\n"]
    assert ("aider's chat history does not hold the files added to the chat (`/add` logs their names only): an "
            "edited file is rebuilt only from what the log itself wrote into it") in t.warnings
    cands = candidates(t)
    chosen = cands[default_artifact(cands) - 1]
    assert (chosen.path, chosen.content) == ("NOTES.md", files["NOTES.md"].content)


def test_a_block_aider_could_not_apply_changes_nothing(tmp_path):
    log = tmp_path / ".aider.chat.history.md"
    log.write_text(LOG.read_text().replace("> Applied edit to NOTES.md  \n> Commit 9c1d2e0 docs: license line  \n",
                                           "> # 1 SEARCH/REPLACE block failed to match!  \n"))
    t = load_transcript(log)
    assert {f.path: f.content for f in t.files_written}["NOTES.md"] == \
        "tiny-agent: a small agent that answers in one line.\n"


def test_import_drafts_the_rebuilt_file_as_the_failed_artifact(tmp_path):
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    done = subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(tmp_path), "import", str(LOG),
                           "--id", "license", "--skip-judge"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "cases" / "license"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert case["scar"]["artifact_at"] == "NOTES.md"
    assert (folder / "scar" / "artifact.md").read_text().endswith("License: GPL-3.0\n")
