"""From transcript to draft case on disk, round-tripped through case_io.load_case."""

from pathlib import Path

import pytest
import yaml

from scarbook.cases.io import load_case
from scarbook.cases.transcript_draft import write_draft_case
from scarbook.errors import ScarbookError
from scarbook.transcripts import candidates, format_candidates, load_transcript
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts"
README = "# tiny-agent\nA tiny agent.\n"


def test_claude_code_log_to_draft_case_with_seeds(tmp_path):
    t = load_transcript(FIX / "claude_code_session.jsonl")
    folder = write_draft_case(t, tmp_path / "cases", "write-one-line", None, True, FIX / "claude_code_session.jsonl")
    assert folder == tmp_path / "cases" / "write-one-line"
    data = yaml.safe_load((folder / "case.yaml").read_text())
    assert data == {
        "id": "write-one-line",
        "title": "Extract the first line of README.md and write it to tmp.txt",
        "task": "Extract the first line of README.md and write it to tmp.txt",
        "checks": [{"type": "file_exists", "path": "tmp.txt"}],
        # the incident's day, from the log's timestamps (not the day of the import)
        "scar": {"date": "2026-11-14", "transcript": "scar/transcript.jsonl",
                 "failed_artifact": "scar/artifact.txt", "artifact_at": "tmp.txt"},
    }
    # default artifact: the last file written, with the Edit applied
    assert (folder / "scar" / "artifact.txt").read_text() == "# tiny-agent\nA tiny agent!\n"
    assert (folder / "scar" / "transcript.jsonl").read_bytes() == (FIX / "claude_code_session.jsonl").read_bytes()
    seeds = sorted(str(p.relative_to(folder / "seed")) for p in (folder / "seed").rglob("*") if p.is_file())
    assert seeds == ["README.md", "docs/notes.md"]  # no content for src/ or the screenshot
    assert (folder / "seed" / "README.md").read_text() == README
    case = load_case(folder)
    assert (case.id, case.scar.failed_artifact, case.scar.artifact_at) == ("write-one-line", "scar/artifact.txt", "tmp.txt")


def test_final_answer_artifact_without_seeds(tmp_path):
    t = load_transcript(FIX / "scarbook_run.jsonl")
    folder = write_draft_case(t, tmp_path, "one-line-claim", 1, False, FIX / "scarbook_run.jsonl")
    case = load_case(folder)
    assert [c.to_dict() for c in case.checks] == [{
        "type": "llm_judge", "artifact": "output",
        "rubric": ["TODO: say what the answer must do; the failed artifact must FAIL this item"]}]
    assert case.scar.artifact_at == "output"
    assert (folder / "scar" / "artifact.txt").read_text() == "Done — tmp.txt has one line."
    assert not (folder / "seed").exists()


def test_plain_log_gets_a_todo_task(tmp_path):
    t = load_transcript(FIX / "terminal.log")
    case = load_case(write_draft_case(t, tmp_path, "from-log", None, False, FIX / "terminal.log"))
    assert (case.task, case.title, case.scar.transcript) == (
        "TODO: write the instruction the agent was given", "Imported from terminal.log", "scar/transcript.log")


def test_bad_requests_say_what_to_do(tmp_path):
    t = load_transcript(FIX / "scarbook_run.jsonl")
    with pytest.raises(ScarbookError) as exc:
        write_draft_case(t, tmp_path, "x", 8, False, FIX / "scarbook_run.jsonl")
    assert str(exc.value) == "there is no artifact 8: the transcript has 7 candidates (see --list)"
    with pytest.raises(ScarbookError) as exc:
        write_draft_case(t, tmp_path, "Bad Id", 1)
    assert str(exc.value) == ("case id 'Bad Id' is not valid: use lowercase letters, digits, '-' and '_', "
                              "starting with a letter or digit")
    write_draft_case(t, tmp_path, "taken", 2)
    with pytest.raises(ScarbookError) as exc:
        write_draft_case(t, tmp_path, "taken", 2)
    assert str(exc.value) == f"{tmp_path / 'taken'} already exists; choose another --id"
    assert not (tmp_path / "x").exists()


def test_format_candidates_is_the_list_text():
    t = load_transcript(FIX / "scarbook_run.jsonl")
    assert format_candidates(candidates(t)) == "\n".join([
        "  1  answer       final answer  [30 B]",
        "     Done — tmp.txt has one line.",
        "  2  file         file tmp.txt (final content)  [27 B]",
        "     # tiny-agent A tiny agent.",
        "  3  tool result  result of list_dir .  [10 B]",
        "     README.md",
        "  4  tool result  result of read_file README.md  [27 B]",
        "     # tiny-agent A tiny agent.",
        "  5  tool result  result of write_file tmp.txt  [14 B]",
        "     wrote 27 bytes",
        "  6  tool result  result of read_file tmp.txt  [27 B]",
        "     # tiny-agent A tiny agent.",
        "  7  tool result  result of read_file LICENSE (error)  [21 B]",
        "     no such file: LICENSE",
    ])
    assert format_candidates([]) == "no candidate artifacts in this transcript"
