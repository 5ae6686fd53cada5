"""Claude Code session logs: split records, abandoned branch, sidechain, truncated last line."""

from pathlib import Path

from scarbook.models import Usage
from scarbook.transcripts import Message, SeedSuggestion, candidates, load_transcript, suggest_seeds, suggest_task
from tests.helpers.paths import FIXTURES

FIXTURE = FIXTURES / "transcripts" / "claude_code_session.jsonl"
README = "# tiny-agent\nA tiny agent.\n"


def rows(t):
    return [(c.number, c.kind, c.label, c.path, c.content) for c in candidates(t)]


def test_detects_and_reads_metadata():
    t = load_transcript(FIXTURE)
    assert t.format == "claude-code"
    assert t.cwd == "/home/dev/tiny-agent"
    assert t.model == "claude-sonnet-4-5-20250929"
    # usage counted once per message.id (split records repeat it); the rewound answer is not counted
    assert t.usage == Usage(input_tokens=300, output_tokens=338, cache_read_tokens=18800, cache_write_tokens=40)
    assert t.warnings == [
        "last line truncated by a crash (line 25); it was skipped",
        "1 records on an abandoned branch (an edited or rewound prompt) were skipped",
    ]


def test_split_assistant_records_are_one_message():
    t = load_transcript(FIXTURE)
    assert t.entries[1] == Message("assistant", "I'll read README.md first.")
    assert [c.id for c in t.tool_calls[:3]] == ["toolu_01", "toolu_02", "toolu_03"]
    assert "README.md is empty." not in [m.text for m in t.messages]  # the abandoned branch


def test_sidechain_and_system_records_are_marked():
    t = load_transcript(FIXTURE)
    side = [m.text for m in t.messages if m.sidechain]
    assert side == ["List TODO comments in src/", "There are no TODO comments in src/."]
    assert [m.text for m in t.messages if m.role == "system"] == ["Running PostToolUse hooks…"]
    assert t.final_answer == "Done — tmp.txt now holds the first line of README.md."


def test_candidates_with_edit_applied_to_write():
    t = load_transcript(FIXTURE)
    assert [(f.path, f.content, f.tools) for f in t.files_written] == [
        ("tmp.txt", "# tiny-agent\nA tiny agent!\n", ["Write", "Edit"])]  # the failed Edit changed nothing
    got = rows(t)
    assert got[:2] == [
        (1, "final_answer", "final answer", None, "Done — tmp.txt now holds the first line of README.md."),
        (2, "file", "file tmp.txt (final content)", "tmp.txt", "# tiny-agent\nA tiny agent!\n"),
    ]
    assert [(n, label) for n, _, label, _, _ in got[2:]] == [
        (3, "result of Read README.md"),
        (4, "result of Read docs/notes.md"),
        (5, "result of LS src"),
        (6, "result of Read screenshot.png"),
        (7, "result of Grep: TODO"),
        (8, "result of Task"),
        (9, "result of Write tmp.txt"),
        (10, "result of Edit tmp.txt"),
        (11, "result of Edit missing.txt (error)"),
    ]
    assert got[5][4] == "[image: image/png, 12 kB]"  # the image block is a placeholder


def test_task_and_seeds():
    t = load_transcript(FIXTURE)
    assert suggest_task(t) == "Extract the first line of README.md and write it to tmp.txt"
    assert suggest_seeds(t) == [
        SeedSuggestion("README.md", README, "read by Read; content from its result"),
        # no toolUseResult: the content comes from the numbered `cat -n` text
        SeedSuggestion("docs/notes.md", "Notes\n- keep it small\n", "read by Read; content from its result"),
        SeedSuggestion("src", None, "listed by LS; a directory, add its files yourself"),
        SeedSuggestion("screenshot.png", None, "read by Read; its whole content is not in the transcript"),
    ]


def test_partial_read_is_not_a_whole_seed(tmp_path):
    lines = FIXTURE.read_text().splitlines()
    # the same session, but the README Read asked for lines 1-1 only and has no toolUseResult
    lines = [line.replace('"input": {"file_path": "/home/dev/tiny-agent/README.md"}',
                       '"input": {"file_path": "/home/dev/tiny-agent/README.md", "offset": 1, "limit": 1}')
             .replace(', "toolUseResult": {"type": "text", "file"', ', "ignored": {"type": "text", "file"') for line in lines]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines))
    seeds = suggest_seeds(load_transcript(p))
    assert seeds[0] == SeedSuggestion("README.md", None, "read by Read; its whole content is not in the transcript")
