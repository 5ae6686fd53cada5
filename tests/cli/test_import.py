"""`scarbook import` / `verify` on the logs of issue 15: what the user sees on stdout and stderr,
and the exit code. Real files in tmp_path, click's CliRunner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cli import main
from tests.helpers.hostile_logs import half_emoji_log, head_cut_log
from tests.helpers.paths import TRANSCRIPTS

REAL = TRANSCRIPTS / "real"


def run(root: Path, *args: str):
    if not (root / "scarbook.yaml").exists():  # a project (every command needs one): all defaults
        (root / "scarbook.yaml").write_text("")
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def test_warnings_of_the_transcript_are_printed_on_stderr(tmp_path):
    """6. The CLI says what the TUI says: a cut-off line, a dropped branch."""
    res = run(tmp_path, "import", str(TRANSCRIPTS / "claude_code_session.jsonl"), "--list")
    assert res.exit_code == 0
    assert res.stderr == (
        "warning: last line truncated by a crash (line 25); it was skipped\n"
        "warning: 1 records on an abandoned branch (an edited or rewound prompt) were skipped\n")
    assert "warning" not in res.stdout


def test_records_with_null_parents_import_whole(tmp_path):
    """1. Through the CLI: the task is found and the written file is the default artifact."""
    res = run(tmp_path, "import", str(REAL / "cc_parent_null.jsonl"), "--id", "notes")
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    case = load_case(tmp_path / "cases" / "notes")
    assert case.task == "Write the release notes to NOTES.md"
    assert case.scar.artifact_at == "NOTES.md"
    assert str(case.scar.date) == "2025-03-01"


def test_absolute_paths_without_cwd_import_relative_to_the_common_root(tmp_path):
    """4. `/repo/tmp.txt` (Anthropic text editor tool, no cwd): --list shows the root, import works,
    --root overrides it."""
    res = run(tmp_path, "import", str(REAL / "anthropic_editor_abs.json"), "--list")
    assert res.exit_code == 0
    assert "root: /repo (paths are relative to it; change it with --root DIR)\n" in res.stdout
    assert "  2  file         file tmp.txt (final content)  [7 B]" in res.stdout
    res = run(tmp_path, "import", str(REAL / "anthropic_editor_abs.json"), "--id", "title")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "title")
    assert case.scar.artifact_at == "tmp.txt"
    assert (case.root / case.scar.failed_artifact).read_text() == "# repo\n"
    res = run(tmp_path, "import", str(REAL / "anthropic_editor_abs.json"), "--list", "--root", "/")
    assert "root: / (paths are relative to it; change it with --root DIR)\n" in res.stdout
    assert "file repo/tmp.txt (final content)" in res.stdout
    res = run(tmp_path, "import", str(REAL / "anthropic_editor_abs.json"), "--list", "--root", "repo")
    assert res.exit_code == 2
    assert res.stderr == ("scarbook: --root 'repo' is not an absolute path; name the folder as the transcript "
                          "writes it (e.g. /repo or C:\\Users\\me\\repo)\n")


def test_verify_of_an_artifact_at_a_folder_is_an_error_not_a_traceback(tmp_path):
    """3. A case saying `artifact_at: .` (as older imports wrote): verify reports it, exit 3."""
    case = tmp_path / "cases" / "dot"
    (case / "scar").mkdir(parents=True)
    (case / "scar" / "artifact.txt").write_text("x")
    (case / "case.yaml").write_text(yaml.safe_dump({
        "id": "dot", "title": "t", "task": "t", "checks": [{"type": "file_exists", "path": "a.txt"}],
        "scar": {"failed_artifact": "scar/artifact.txt", "artifact_at": "."}}))
    res = run(tmp_path, "verify", "dot")
    assert res.exit_code == 3
    assert res.stdout == ("dot  error: could not reach a verdict on the failed artifact: scar.artifact_at '.' "
                          "names a folder, not a file: write the workspace path of the file the artifact belongs in\n")


def test_import_of_a_write_to_the_cwd_offers_no_folder(tmp_path):
    """3. The Write to the cwd is not a candidate, so the draft's artifact is the answer."""
    res = run(tmp_path, "import", str(REAL / "cc_write_cwd.jsonl"), "--id", "mkdir")
    assert res.exit_code == 0, res.output
    assert res.stderr == "warning: Write /home/dev/tiny names a folder, not a file; it is not a candidate\n"
    assert load_case(tmp_path / "cases" / "mkdir").scar.artifact_at == "output"


@pytest.mark.parametrize("name, data, why", [
    ("deep.json", b"[" * 2000 + b"]" * 2000, "a JSON array, nested deeper than 200 levels; no agent log nests so deep "
     "— check that this is the file you meant"),
    ("cut.json", b'{"role": "user", "content": "Fix the bu', "JSON cut off or broken (Unterminated string starting at: "
     "line 1 column 29 (char 28)), a JSON object with keys role, content; closest format: anthropic-messages; repair "
     "or export it again; `scarbook import {path} --format plain` keeps the whole file as the failed artifact"),
    ("bom.txt", b"\xef\xbb\xbf", "an empty file; no format is close; the file holds nothing: import the log the "
     "agent wrote"),
    ("ps.jsonl", b"\xff\xfe" + '{"type": "user"}\r\n'.encode("utf-16-le"), "UTF-16 text (not UTF-8); no format is "
     "close; convert it to UTF-8 and import that: `iconv -f UTF-16 -t UTF-8 {path} > {dir}/ps-utf8.jsonl` (in "
     "PowerShell, `Get-Content {path} | Set-Content -Encoding utf8 {dir}/ps-utf8.jsonl`)"),
    ("unknown.json", None, "a JSON object with keys hello; no format is close; `scarbook import {path} --format "
     "plain` keeps the whole file as the failed artifact"),
])
def test_refusals_are_one_line_and_exit_2(tmp_path, name, data, why):
    """7. Each refusal: one clear line on stderr naming what was seen, the closest format and what to do;
    exit 2, nothing written."""
    path = TRANSCRIPTS / name if data is None else tmp_path / name
    if data is not None:
        path.write_bytes(data)
    res = run(tmp_path, "import", str(path), "--id", "x")
    assert res.exit_code == 2
    why = why.replace("{path}", str(path)).replace("{dir}", str(path.parent))
    assert res.stderr == f"scarbook: {path}: not a transcript scarbook can read: {why}\n"
    assert not (tmp_path / "cases").exists()


def test_a_fifo_is_refused_at_once(tmp_path):
    """7. A FIFO would block the read forever: refused before it is opened."""
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    res = run(tmp_path, "import", str(fifo), "--list")
    assert res.exit_code == 2
    assert res.stderr == f"scarbook: {fifo}: not a regular file (a FIFO, socket or device); save the transcript to a file first\n"


def test_otel_traces_are_listed_and_picked_with_trace(tmp_path):
    """9. --list names every trace (the shown one starred); --trace picks; an unknown id is refused."""
    path = REAL / "otel_two_traces.jsonl"
    res = run(tmp_path, "import", str(path), "--list")
    assert res.exit_code == 0
    assert ("traces (pick one with --trace ID):\n"
            "    aaaa0000000000000000000000000001  2 spans, started 2026-11-10 08:00:00 UTC\n"
            "  * bbbb0000000000000000000000000002  2 spans, started 2026-11-12 17:30:00 UTC\n") in res.stdout
    assert "task: Summarise the incident report\n" in res.stdout
    assert res.stderr == ("warning: the file holds 2 traces; showing bbbb0000000000000000000000000002 (the latest); "
                          "pick another with --trace ID (see --list)\n")
    res = run(tmp_path, "import", str(path), "--trace", "aaaa0000000000000000000000000001", "--id", "fr")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "fr")
    assert (case.task, str(case.scar.date)) == ("Translate hello to French", "2026-11-10")
    assert (case.root / case.scar.failed_artifact).read_text() == "Bonjour"
    res = run(tmp_path, "import", str(path), "--trace", "nope", "--list")
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: {path}: no trace 'nope' in this file; it holds "
                          "aaaa0000000000000000000000000001, bbbb0000000000000000000000000002\n")


@pytest.mark.parametrize(("given", "words", "them"), [
    (["--note", "it wrote the wrong title"], "--note only steers", "it"),
    (["--offline"], "--offline only steers", "it"),
    (["--note", "x", "--offline"], "--note and --offline only steer", "them"),
])
def test_note_or_offline_without_draft_rubric_is_refused_not_ignored(tmp_path, given, words, them):
    """--note without --draft-rubric was silently dropped: the case was written without a rubric and the note
    was lost with no word said."""
    res = run(tmp_path, "import", str(REAL / "cc_parent_null.jsonl"), "--id", "notes", *given)
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: {words} --draft-rubric: add --draft-rubric to draft the rubric from the "
                          f"incident, or leave {them} out\n")
    assert not (tmp_path / "cases").exists()


def test_a_written_path_with_a_nul_is_no_candidate_and_the_draft_loads(tmp_path):
    """A Write whose path holds a NUL (a mangled log) named no file a workspace can hold; the draft took it as its
    artifact and wrote a file_exists check that failed every run with a ValueError, and the certification
    that follows the import was a traceback. It is now left out, said, and the draft is the answer's."""
    log = tmp_path / "nul.jsonl"
    log.write_text((TRANSCRIPTS / "claude_code_session.jsonl").read_text()
                   .replace("/home/dev/tiny-agent/tmp.txt", "/home/dev/tiny-agent/a\\u0000b.txt"))
    res = run(tmp_path, "import", str(log), "--id", "nul", "--skip-judge")
    assert res.exit_code == 0, res.output
    assert ("warning: Write '/home/dev/tiny-agent/a\\x00b.txt' names no file: it holds a NUL character, which no "
            "file name can hold; it is not a candidate\n") in res.stderr
    case = load_case(tmp_path / "cases" / "nul")
    assert case.scar.artifact_at == "output"


def test_a_written_path_deeper_than_a_run_walks_is_no_candidate(tmp_path):
    """A Write 150 folders deep: the draft's check named it and certifying the draft (as every run) met a
    workspace too deep to walk — a TooDeep traceback after 'wrote draft case'."""
    deep = "/home/dev/tiny-agent/" + "d/" * 150 + "tmp.txt"
    log = tmp_path / "deep.jsonl"
    log.write_text((TRANSCRIPTS / "claude_code_session.jsonl").read_text().replace("/home/dev/tiny-agent/tmp.txt", deep))
    res = run(tmp_path, "import", str(log), "--id", "deep", "--skip-judge")
    assert res.exit_code == 0, res.output
    assert ("warning: Write '/home/dev/tiny-agent/d/d/d/d/d…/d/d/d/d/d/d/tmp.txt' names no file: it is nested more "
            "than 100 folders deep; no run walks a workspace deeper; it is not a candidate\n") in res.stderr
    assert load_case(tmp_path / "cases" / "deep").scar.artifact_at == "output"


def test_the_command_a_refusal_suggests_quotes_a_path_with_spaces(tmp_path):
    """The refusal's command is meant to be copied: a path with a space was printed bare, and the copied command
    named two files."""
    log = tmp_path / "my logs" / "run 1.jsonl"
    log.parent.mkdir()
    log.write_text('{"type": "user", "message": {"role": "user", "content": "write a.txt"}}\n'
                   '{"type": "assistant", "message": {"role": "assistant", "content": "done"}}\n')
    res = run(tmp_path, "import", str(log), "--id", "x")
    assert res.exit_code == 2
    assert res.stderr.endswith(f"if it is claude-code, `scarbook import '{log}' --format claude-code` says what does "
                               "not fit; `--format plain` keeps the whole file as the failed artifact\n")
    assert not (tmp_path / "cases").exists()


@pytest.mark.parametrize("case_id, said", [
    ("..", "case id '..' is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit"),
    (".", "case id '.' is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit"),
    ("a" * 300, f"case id {'a' * 24!r}… is 300 characters long; at most 100 (it names the folder cases/<id>/)"),
])
def test_an_id_no_case_folder_can_have_is_said_as_such(tmp_path, case_id, said):
    """--id .. was 'cases/.. already exists; choose another --id'; a 300-character id was 'File name too long
    (…/cases/.scarbook-partial-aaa…) — make that folder writable'."""
    (tmp_path / "cases").mkdir()  # a collection already started: cases/.. is a folder that exists
    res = run(tmp_path, "import", str(TRANSCRIPTS / "claude_code_session.jsonl"), "--id", case_id)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == f"scarbook: {said}"
    assert os.listdir(tmp_path / "cases") == []


def test_half_an_emoji_in_a_log_is_read_as_a_replacement_character_not_a_traceback(tmp_path):
    """A lone surrogate (Claude Code cuts long texts by UTF-16 units) made `--list` and the draft's writes raise
    UnicodeEncodeError: every text of the draft now holds U+FFFD in its place."""
    log = half_emoji_log(tmp_path / "cut.jsonl")
    res = run(tmp_path, "import", str(log), "--list")
    assert res.exit_code == 0, res.output
    assert res.stdout == (
        "format: claude-code\n"
        "root: /w (paths are relative to it; change it with --root DIR)\n"
        "task: Write the release note \ufffd\n"
        "candidates:\n"
        "  1  answer       final answer  [8 B]\n"
        "     Done \ufffd\n"
        "  2  file         file NOTE.md (final content)  [8 B]\n"
        "     Ship \ufffd\n"
        "  3  tool result  result of Read README.md  [15 B]\n"
        "     1\u2192Hi \ufffd\n"
        "  4  tool result  result of Write NOTE.md  [9 B]\n"
        "     wrote \ufffd\n"
        "seed suggestions:\n"
        "  README.md — read by Read; content from its result\n")
    res = run(tmp_path, "import", str(log), "--id", "cut", "--artifact", "1", "--seed-suggested", "--skip-judge")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "cut")
    assert case.task == "Write the release note \ufffd"
    assert (case.root / case.scar.failed_artifact).read_text() == "Done \ufffd"
    assert (case.root / "seed" / "README.md").read_text() == "Hi \ufffd"
    res = run(tmp_path, "import", str(log), "--id", "cut-file", "--good", "4", "--skip-judge")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "cut-file")
    assert (case.root / case.scar.failed_artifact).read_text() == "Ship \ufffd"
    assert (case.root / case.scar.good_artifact).read_text() == "wrote \ufffd"


def test_a_utf16_log_under_format_plain_is_named_utf16_with_the_command_that_converts_it(tmp_path):
    """--format plain on a log PowerShell wrote said "the file is binary": it is text, in UTF-16."""
    log = tmp_path / "deploy.log"
    log.write_bytes(b"\xff\xfe" + "Deploying...\r\nAgent: Deployment succeeded!\r\n".encode("utf-16-le"))
    res = run(tmp_path, "import", str(log), "--format", "plain", "--id", "deploy")
    assert res.exit_code == 2
    utf8 = tmp_path / "deploy-utf8.log"
    assert res.stderr == (f"scarbook: {log} is not a plain transcript: the file is not UTF-8 text; seen: UTF-16 text (not "
                          f"UTF-8); convert it to UTF-8 and import that: `iconv -f UTF-16 -t UTF-8 {log} > {utf8}` (in "
                          f"PowerShell, `Get-Content {log} | Set-Content -Encoding utf8 {utf8}`)\n")
    assert not (tmp_path / "cases").exists()


def test_a_folder_given_for_the_transcript_names_its_newest_files(tmp_path):
    """`scarbook import ~/.claude/projects/-home-me-app/` (the folder of a project's session logs) got click's
    "File … is a directory." under a usage line: it now names the logs in it, newest first."""
    logs = tmp_path / "projects" / "-home-me-app"
    (logs / "5f1c-subagents").mkdir(parents=True)  # a folder in it is no candidate
    for n, name in enumerate(["0a2b.jsonl", "5f1c.jsonl", "9c9d.jsonl", "e4e4.jsonl"]):
        (logs / name).write_text("{}\n")
        os.utime(logs / name, (1_700_000_000 + n, 1_700_000_000 + n))
    res = run(tmp_path, "import", str(logs), "--list")
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: {logs}: a folder, not a transcript file; name one of the files in it: e4e4.jsonl, "
                          "9c9d.jsonl, 5f1c.jsonl (3 of 4, newest first)\n")
    res = run(tmp_path, "import", str(logs / "5f1c-subagents"), "--id", "x")
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: {logs / '5f1c-subagents'}: a folder, not a transcript file, and no file is in it; "
                          "name the transcript file itself\n")
    assert not (tmp_path / "cases").exists()


def test_a_good_artifact_in_utf16_is_refused_with_the_command_that_converts_it(tmp_path):
    """--good with a file PowerShell saved (UTF-16) was taken as is: the offline draft then kept
    `not_contains '- Faster refunds'` (a line a right CHANGELOG holds) and a `contains` of NUL-spaced text as
    "catching", and certified the case — one every right result would fail."""
    log = half_emoji_log(tmp_path / "cut.jsonl")
    good = tmp_path / "NOTE.md"
    good.write_bytes(b"\xff\xfe" + "Ship it\r\n".encode("utf-16-le"))
    res = run(tmp_path, "import", str(log), "--id", "note", "--good", str(good), "--draft-rubric", "--offline")
    assert res.exit_code == 2
    utf8 = tmp_path / "NOTE-utf8.md"
    assert res.stderr == (f"scarbook: --good {good}: {good} is UTF-16 text, and the checks read UTF-8: convert it, "
                          f"`iconv -f UTF-16 -t UTF-8 {good} > {utf8}` (in PowerShell, `Get-Content {good} | "
                          f"Set-Content -Encoding utf8 {utf8}`), and name that\n")
    assert res.stdout == "" and not (tmp_path / "cases" / "note").exists()


def test_a_log_cut_at_its_head_is_read_as_its_format_with_the_cut_line_named(tmp_path):
    """A Claude Code log whose first line is the end of a record (`tail -c`) was read as plain text, the whole log
    the artifact and no task, without a word: it is read as Claude Code, the cut line named and skipped."""
    log = head_cut_log(tmp_path / "tail.jsonl")
    res = run(tmp_path, "import", str(log), "--list")
    assert res.exit_code == 0, res.output
    assert res.stderr == ("warning: line 1 is not JSON (Expecting value: line 1 column 1 (char 0)); it was skipped\n"
                          "warning: the parentUuid chain does not cover this file; every record was kept in file order\n")
    assert res.stdout.startswith(
        "format: claude-code\n"
        "root: /w (paths are relative to it; change it with --root DIR)\n"
        "task: (none found)\n"
        "no prompt in the transcript: give the task with --task TEXT\n"
        "candidates:\n"
        "  1  answer       final answer  [31 B]\n"
        "     NOTE.md says we ship on Friday.\n"
        "  2  file         file NOTE.md (final content)  [11 B]\n"
        "     Ship Monday\n")


def test_a_text_log_whose_first_line_ends_in_a_brace_stays_text(tmp_path):
    log = tmp_path / "build.log"
    log.write_text("config loaded {retries: 3}\n{not json either}\nBuild succeeded.\n")
    res = run(tmp_path, "import", str(log), "--list")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("format: plain\n")


@pytest.mark.parametrize("good", ["²", "٣"])
def test_a_good_artifact_named_by_a_non_ascii_digit_is_a_file_name_not_a_number(tmp_path, good):
    """'²' is a digit to str.isdigit but not to int: --good ² ended in a ValueError traceback."""
    res = run(tmp_path, "import", str(REAL / "cc_parent_null.jsonl"), "--id", "notes", "--good", good)
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"scarbook: --good {good}: {good} does not exist; name a candidate number (see --list) "
                          "or a file\n")


def test_the_format_names_import_help_gives_are_names_format_takes(tmp_path):
    """--help gave `claude-code, anthropic, openai` as examples of --format, and `--format openai` (or
    anthropic) was refused as an unknown format: the names it gives now are ones --format takes."""
    import re

    from scarbook.transcripts.detect import FORMATS

    res = run(tmp_path, "import", "--help")
    said = " ".join(res.stdout.split())
    named = re.search(r"--format NAME Transcript format, skipping detection: a name --list prints \(([^;]+);", said)
    assert named, said
    names = [n.strip().replace("- ", "-") for n in named.group(1).split(",") if n.strip() != "..."]
    assert names == ["claude-code", "codex", "openai-chat", "anthropic-messages", "plain"]
    assert set(names) <= set(FORMATS)
    log = tmp_path / "chat.json"
    log.write_text('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]')
    assert "format: openai-chat\n" in run(tmp_path, "import", str(log), "--format", "openai-chat", "--list").stdout
    res = run(tmp_path, "import", str(log), "--format", "openai", "--list")
    assert res.exit_code == 2
    assert res.stderr == f"scarbook: unknown transcript format 'openai'; choose one of: {', '.join(FORMATS)}\n"
