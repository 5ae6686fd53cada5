"""A log's text is untrusted: no message, however it is made, may make an import take more than linear time.
Each input below hung the import or one of its steps (a pattern that backtracked over a long run of blanks,
in one C call that holds the GIL, so not even pytest-timeout's thread could stop it). Each runs in a
subprocess with its own timeout: before the fix each one was still running when it expired (hours, for the
cubic ones), after it each takes milliseconds. The property tests below them check that each replacement
finds what the pattern it replaces found, on short texts made of the pieces that matter."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scarbook.transcripts.claude_code import _split_reminders
from scarbook.transcripts.shape import scan_keys
from scarbook.transcripts.shell import _SWE_RANGE
from scarbook.transcripts.subagents import summary_of
from scarbook.transcripts.swe_agent import _BASH, issue_of
from scarbook.transcripts.text import _VARIES, between, command_args, command_label, strip_harness
from tests.helpers.paths import REPO

LIMIT_S = 60  # what each input below takes after the fix: well under a second; before: hours, or minutes
BLANKS = 20_000  # a cubic pattern on this many blanks: 10 s at 2,000, hours here
LONG = 300_000  # a quadratic one: 9e10 steps here


def _finishes(code: str, *args: str) -> str:
    """Run `code` in a fresh interpreter; its output, or a failure saying it was still running at LIMIT_S."""
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=REPO, capture_output=True,
                              text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {LIMIT_S} s (a pattern backtracking over the input)")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


IMPORT = """
    import sys
    from scarbook.transcripts import candidates, load_transcript, pick_task, suggest_seeds
    t = load_transcript(sys.argv[1])
    candidates(t); suggest_seeds(t)
    print(t.format, "|", pick_task(t, None).text[:30].strip(), "|", (t.final_answer or "")[:30].strip())
"""


def _claude_code(user: str, answer: str = "done", sidechain: bool = False) -> str:
    records = [{"type": "user", "message": {"role": "user", "content": user}, "uuid": "u1", "parentUuid": None,
                "sessionId": "s", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z", "isSidechain": sidechain},
               {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "cwd": "/w",
                "timestamp": "2026-01-01T00:00:01Z", "isSidechain": sidechain,
                "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": answer}]}}]
    return "".join(json.dumps(r) + "\n" for r in records)


def _swe_agent(prompt: str) -> str:
    return json.dumps({"environment": "swe_main", "trajectory": [
        {"action": "ls", "observation": "a.py", "response": "ls", "thought": ""}],
        "history": [{"role": "system", "content": "SETTING: you are a programmer"},
                    {"role": "user", "content": prompt}, {"role": "assistant", "content": "ls"}],
        "info": {"exit_status": "submitted", "submission": "diff --git a/a.py b/a.py\n"}})


def _mini_swe_agent(reply: str) -> str:
    return json.dumps({"info": {"exit_status": "Submitted", "submission": ""}, "trajectory_format": "mini-swe-agent-1",
                       "messages": [{"role": "system", "content": "You are a helpful assistant"},
                                    {"role": "user", "content": "<pr_description>fix add()</pr_description>"},
                                    {"role": "assistant", "content": reply}]})


DIFF = "diff --git a/a.py b/a.py"
LOGS = {  # name: (file name, content, what the import prints: the format | the task | the artifact)
    "claude-code: <command-args> then blanks": (
        "s.jsonl", _claude_code("<command-name>/fix</command-name><command-args>" + " " * BLANKS),
        "claude-code |  | done"),
    "claude-code: a prompt after blank lines": (
        "s.jsonl", _claude_code("\n" * LONG + "fix the parser"), "claude-code | fix the parser | done"),
    "claude-code compaction: <summary> then blanks": (
        "agent-acompact-1.jsonl", _claude_code("Your task is to create a detailed summary of the conversation so far",
                                               "<summary>" + " " * BLANKS, sidechain=True),
        "claude-code | Your task is to create a detai | <summary>"),
    "swe-agent: <pr_description> then blanks": (
        "t.traj", _swe_agent("<pr_description>" + " " * BLANKS), f"swe-agent | <pr_description> | {DIFF}"),
    "swe-agent: <issue> then blank lines": (
        "t.traj", _swe_agent("<issue>" + "\n" * BLANKS), f"swe-agent | <issue> | {DIFF}"),
    "swe-agent: ISSUE: then blank lines": ("t.traj", _swe_agent("ISSUE:\n" + "\n" * BLANKS), f"swe-agent | ISSUE: | {DIFF}"),
    "mini-swe-agent: an unclosed ```bash then blank lines": (
        "t.traj.json", _mini_swe_agent("```bash" + "\n" * LONG), "mini-swe-agent | fix add() | ```bash"),
}


@pytest.mark.parametrize("name", list(LOGS))
def test_a_hostile_log_is_imported_in_linear_time(tmp_path: Path, name: str) -> None:
    file_name, content, shown = LOGS[name]
    path = tmp_path / file_name
    path.write_text(content, encoding="utf-8")
    assert _finishes(IMPORT, str(path)) == shown


STEPS = {  # name: (a call on a hostile text, what it returns)
    "command_label: <command-name> then blanks": (
        f"command_label('<command-name>' + ' ' * {BLANKS})", "'<command-name>'"),
    "summary_of: <summary> then blank lines": (f"summary_of('<summary>' + chr(10) * {BLANKS})[:9]", "'<summary>'"),
    "scan_keys: a string of escaped quotes never closed": (
        f"scan_keys('{{\"a\": \"' + '\\\\\"' * {LONG})[3]", "1"),
    "shell_ops: a SWE-agent edit of blank lines without end_of_edit": (
        f"shell_ops('edit 1:2' + chr(10) * {LONG} + 'x', 'a.py', swe_agent=True)", "[]"),
    "a Read result of blanks before a reminder": (
        f"_split_reminders(chr(9) * {LONG} + 'x<system-reminder>r</system-reminder>')[1][-2:]", "'x\\n'"),
    "a Read result of unclosed reminders": (  # (each searched to the end: 60,000 times 1 MB)
        "len(_split_reminders('<system-reminder></system-reminder>' + '<system-reminder>' * 60_000)[1])",
        str(1 + 17 * 60_000)),
    "group_warnings: a warning of one long word": (f"group_warnings(['a' * {LONG}, 'b'])[1]", "'b'"),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_a_hostile_text_is_read_in_linear_time(name: str) -> None:
    call, shown = STEPS[name]
    assert _finishes(f"""
        from scarbook.transcripts.claude_code import _split_reminders
        from scarbook.transcripts.shape import scan_keys
        from scarbook.transcripts.shell import shell_ops
        from scarbook.transcripts.subagents import summary_of
        from scarbook.transcripts.text import command_label, group_warnings
        print(repr({call}))
    """) == shown


# The patterns replaced, kept here as the reference each replacement must agree with.
OLD_ISSUE = [re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S),
             re.compile(r"<issue>\s*(.*?)\s*</issue>", re.S), re.compile(r"ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.S)]
OLD_PREAMBLE = re.compile(r"\A(?:Consider the following PR description:|Here's the issue text:)\s*", re.S)
OLD_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.S)
OLD_HARNESS = re.compile(
    r"\A\s*(?:\[Request interrupted by user[^\]]*\]|Caveat: The messages below were generated by the user while "
    r"running local commands|<local-command-|<bash-(?:input|stdout|stderr)>|\[Tool result missing|"
    r"This session is being continued from a previous conversation|API Error:|"
    r"Another Claude session sent a message|Validation feedback:|(?=.*\n\nFix the errors and try again\.\s*\Z))",
    re.S)
OLD_BLOCKS = re.compile(r"<(task-notification|system-reminder|user-prompt-submit-hook|ide_opened_file|ide_selection|"
                        r"teammate-message)\b[^>]*>.*?(?:</\1>|\Z)", re.S)
OLD_VARIES = re.compile(r"\S*\d\S*|/\S+|\\\S+")
OLD_BASH = re.compile(r"```(?:bash|sh|shell|mswea_bash_command)?\s*\n(.*?)```", re.S)
OLD_SWE_RANGE = re.compile(r"\Aedit\s+(\d+):(\d+)\s*\n(.*?)\n?end_of_edit\s*\Z", re.S)
OLD_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)


def _texts(*pieces: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from([" ", "\n", "\t", "a", "7", *pieces]), max_size=14).map("".join)


@given(_texts("<x>", "</x>", "<x", "x>"))
def test_between_finds_what_the_tag_pattern_found(text: str) -> None:
    def old(tag: str) -> tuple[str, re.Match[str] | None]:
        tagged = text.replace("x>", f"{tag}>")
        return tagged, re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", tagged, re.S)
    tagged, m = old("x")
    assert between(tagged, "<x>", "</x>") == (m.group(1) if m else None)
    tagged, m = old("command-args")
    assert command_args(tagged) == (m.group(1).strip() if m else "")
    tagged, m = old("command-name")
    if m:
        assert command_label(tagged) == m.group(1)
    tagged, m = old("summary")
    assert summary_of(tagged) == (m.group(1) if m else tagged)


@given(_texts("<pr_description>", "</pr_description>", "<issue>", "</issue>", "ISSUE:", "INSTRUCTIONS:", "ISSUE",
              "Here's the issue text:"))
@example("ISSUE:\nINSTRUCTIONS:\nINSTRUCTIONS:")  # (the first INSTRUCTIONS: is the issue: found by the fuzz profile)
def test_issue_of_finds_what_the_issue_patterns_found(text: str) -> None:
    def old(prompt: str) -> str:
        for pattern in OLD_ISSUE:
            m = pattern.search(prompt)
            if m and m.group(1).strip():
                return OLD_PREAMBLE.sub("", m.group(1).strip())
        return prompt.strip()
    assert issue_of(text) == old(text)


@given(_texts('"', '\\', '\\"', "{", "}", "[", "]", ":", ",", '"k"', '"type"'))
def test_scan_keys_reads_what_the_token_pattern_read(text: str) -> None:
    from scarbook.transcripts import shape

    def old(text: str) -> object:
        saved = shape._tokens
        shape._tokens = OLD_TOKEN.finditer  # type: ignore[assignment]
        try:
            return scan_keys(text)
        finally:
            shape._tokens = saved
    for opened in (text, "{" + text, "[" + text):
        assert scan_keys(opened) == old(opened)


@given(_texts("[Request interrupted by user]", "API Error:", "\n\nFix the errors and try again.", ".",
              "<system-reminder>", "</system-reminder>"))
def test_strip_harness_strips_what_the_harness_pattern_stripped(text: str) -> None:
    blocks_gone = OLD_BLOCKS.sub("", text)
    assert strip_harness(text) == ("" if OLD_HARNESS.match(blocks_gone) else blocks_gone.strip())


@given(_texts("/", "\\", "x1", "/7", "b"))
def test_varying_words_are_what_the_old_pattern_found(text: str) -> None:
    assert _VARIES.sub("#", text) == OLD_VARIES.sub("#", text)


@given(_texts("```", "```bash", "```sh", "```shell", "ls"))
def test_bash_blocks_are_what_the_old_pattern_found(text: str) -> None:
    assert _BASH.findall(text) == OLD_BASH.findall(text)


@given(_texts("end_of_edit", "edit 1:2", ":"))
def test_swe_agent_edits_are_what_the_old_pattern_found(text: str) -> None:
    for command in (text, "edit 1:2" + text):
        new, old = _SWE_RANGE.match(command), OLD_SWE_RANGE.match(command)
        assert (new and new.groups()) == (old and old.groups())


@given(_texts("<system-reminder>", "</system-reminder>", "r"))
@example("<system-reminder></system-reminder> <system-reminder></system-reminder>")  # (the second after blanks)
def test_reminders_are_split_as_the_old_pattern_split_them(text: str) -> None:
    assert _split_reminders(text) == ("".join(OLD_REMINDER.findall(text)), OLD_REMINDER.sub("\n", text))
