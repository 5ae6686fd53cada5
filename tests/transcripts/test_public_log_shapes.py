"""Issue 26, "Import on real logs": each fixture under tests/fixtures/transcripts/public_shapes/ is a small
faithful reconstruction of a public log shape (sources in its README); every assertion is what the
user sees."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cli import main
from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task
from scarbook.transcripts.text import group_warnings
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts" / "public_shapes"


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
        f"scarbook: {FIX / 'cc_exit_synthetic.jsonl'}: the transcript holds no work of the agent to import: only "
        "slash commands and messages the "
        "harness wrote in the model's place (/exit; You're out of extra usage · resets 4pm (UTC); "
        "output of a local command)\n")
    assert not (tmp_path / "cases" / "x").exists()


def test_edits_of_nothing_create_files_and_the_last_one_is_the_default():
    """4. Claude Code creates a file with Edit (or MultiEdit) whose first `old_string` is empty: that
    is the file's whole content, not "edits only", and it (not the answer) is the default."""
    t = load_transcript(FIX / "cc_edit_creates.jsonl")
    assert [(f.path, f.content, f.note) for f in t.files_written] == [
        ("notes.md", "# Release\n- bump\n- tag\n", ""), ("tools/bump.py", "VERSION = '1.1'\nprint(VERSION)\n", "")]
    cands = candidates(t)
    assert [(c.number, c.label) for c in cands][:4] == [
        (1, "final answer"), (2, "file notes.md (final content)"), (3, "file tools/bump.py (final content)"),
        (4, "plan (ExitPlanMode)")]
    assert default_artifact(cands) == 3


def test_a_rejected_plan_is_a_candidate_and_the_default(tmp_path):
    """4. In plan mode the plan (ExitPlanMode's `plan`) is the agent's work: offered as a candidate,
    marked rejected, and the default when it came after the last answer."""
    res = run(tmp_path, "import", str(FIX / "cc_plan_rejected.jsonl"), "--list")
    assert res.exit_code == 0
    assert ("  2  plan         plan (ExitPlanMode, rejected)  [50 B]\n"
            "     Delete config.py and rewrite every caller by hand.\n") in res.stdout
    res = run(tmp_path, "import", str(FIX / "cc_plan_rejected.jsonl"), "--id", "plan")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cases" / "plan" / "scar" / "artifact.txt").read_text() == \
        "Delete config.py and rewrite every caller by hand."


def test_text_editor_view_results_lose_the_viewers_line_numbers(tmp_path):
    """5. `view` results ("1: # tiny-agent", and `cat -n` with its header line) seed the file as it
    is on disk; the artifact the agent wrote is kept byte for byte, numbers and all."""
    res = run(tmp_path, "import", str(FIX / "anthropic_editor_view.json"), "--id", "view", "--seed-suggested")
    assert res.exit_code == 0, res.output
    seed = tmp_path / "cases" / "view" / "seed"
    assert (seed / "README.md").read_text() == "# tiny-agent\n\nA tiny agent.\n    indented: kept\n"
    assert (seed / "src" / "main.py").read_text() == "import sys\n\nprint(sys.argv)\n"
    assert (tmp_path / "cases" / "view" / "scar" / "artifact.txt").read_text() == "1: # tiny-agent\n"


def test_an_artifact_outside_the_root_says_to_use_root(tmp_path):
    """1. Two sessions in one file, the cwd changing: the last write is outside the root. Import
    names the folder to pass as --root instead of failing on an absolute check path; the read
    outside the root is named in a warning; with that --root the draft is written."""
    log = str(FIX / "cc_concatenated_cwds.jsonl")
    res = run(tmp_path, "import", log, "--id", "x")
    assert res.exit_code == 2
    assert res.stderr == (
        "warning: the parentUuid chain does not cover this file; every record was kept in file order\n"
        "warning: read /home/dev/tiny/README.md outside the root /home/dev/proj: not a seed suggestion "
        "(--root /home/dev/tiny would make it one)\n"
        "scarbook: the artifact /home/dev/tiny/tmp.txt is outside the transcript's root /home/dev/proj, so no "
        "check can name it: import again with --root /home/dev/tiny (the folder that was the agent's workspace; "
        "`scarbook import PATH --list --root DIR` shows the paths), or pick another artifact\n")
    assert not (tmp_path / "cases" / "x").exists()
    res = run(tmp_path, "import", log, "--id", "x", "--root", "/home/dev/tiny", "--seed-suggested")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "x")
    assert case.scar.artifact_at == "tmp.txt"
    assert (tmp_path / "cases" / "x" / "seed" / "README.md").read_text() == "# tiny-agent\nA tiny agent.\n"


def test_the_task_is_the_prompt_of_the_artifacts_turn(tmp_path):
    """3. After `/compact` the artifact answers turn 2: the task is turn 2's prompt, not turn 1's;
    --list numbers the turns; --turn 1 picks the first prompt and that turn's artifact."""
    log = str(FIX / "cc_compact_turns.jsonl")
    res = run(tmp_path, "import", log, "--list")
    assert res.exit_code == 0, res.output
    assert ("turns (* = the one whose prompt is the task: the turn of the artifact, or --turn N):\n"
            "     1  Write hello to a.txt\n"
            "  *  2  Now write the changelog to CHANGES.md\n"
            "task: Now write the changelog to CHANGES.md\n") in res.stdout
    res = run(tmp_path, "import", log, "--id", "two")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "two")
    assert (case.task, case.scar.artifact_at) == ("Now write the changelog to CHANGES.md", "CHANGES.md")
    res = run(tmp_path, "import", log, "--id", "one", "--turn", "1")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "one")
    assert (case.task, case.scar.artifact_at) == ("Write hello to a.txt", "a.txt")
    res = run(tmp_path, "import", log, "--id", "three", "--turn", "3")
    assert res.exit_code == 2
    assert res.stderr == "scarbook: there is no turn 3: the transcript has 2 turns (see --list)\n"


def test_a_few_bad_bytes_are_named_not_the_whole_file_refused(tmp_path):
    """8. Three Windows-1252 bytes in a prompt: the log imports, they read as U+FFFD and a warning
    names their byte offsets; a plain-text log too. A file of NUL bytes is still binary."""
    res = run(tmp_path, "import", str(FIX / "cc_cp1252_bytes.jsonl"), "--list")
    assert res.exit_code == 0, res.output
    assert res.stderr == ("warning: 3 bytes are not UTF-8 (at byte offsets 269, 292, 297): read as \ufffd, "
                          "the rest of the file imported\n")
    assert "task: Plan and then add the team\ufffds release notes and a \ufffdbump\ufffd script\n" in res.stdout
    assert "file tools/bump.py (final content)" in res.stdout
    log = tmp_path / "agent.log"
    log.write_bytes(b"$ agent run\nwrote caf\xe9.txt\ndone\n")
    t = load_transcript(log)
    assert (t.format, t.final_answer) == ("plain", "$ agent run\nwrote caf\ufffd.txt\ndone\n")
    assert t.warnings == ["1 byte is not UTF-8 (at byte offset 21): read as \ufffd, the rest of the file imported"]


PLAIN = "`scarbook import {path} --format plain` keeps the whole file as the failed artifact"


def test_detection_names_the_cause(tmp_path):
    """6. A one-record Claude Code log is Claude Code (not scarbook's format with an empty message);
    a log of only system/summary records and JSON arrays say what they hold."""
    t = load_transcript(FIX / "cc_one_record.jsonl")
    assert (t.format, t.final_answer) == ("claude-code", "tmp.txt now holds the first line of README.md.")
    res = run(tmp_path, "import", str(FIX / "cc_system_only.jsonl"), "--list")
    assert res.exit_code == 2
    assert res.stderr == (
        f"scarbook: {FIX / 'cc_system_only.jsonl'}: nothing to import: a Claude Code log with only summary and "
        "system records, no user or assistant message (the session ended before a prompt, or this is its "
        "summary file)\n")
    res = run(tmp_path, "import", str(FIX / "cc_stream_init_only.jsonl"), "--list")
    assert res.stderr == (
        f"scarbook: {FIX / 'cc_stream_init_only.jsonl'}: nothing to import: a Claude Code log with only system "
        "records, no user or assistant message (the session ended before a prompt, or this is its summary file)\n")
    # a JSON array of Claude Code records is what `claude -p --output-format json --verbose` prints (issue 34.4)
    res = run(tmp_path, "import", str(FIX / "cc_records_array.json"), "--list")
    assert res.exit_code == 0, res.output
    assert "format: claude-json\n" in res.stdout
    nums = tmp_path / "nums.json"
    nums.write_text("[1, 2]")
    res = run(tmp_path, "import", str(nums), "--list")
    assert res.stderr == (
        f"scarbook: {nums}: not a transcript scarbook can read: a JSON array of 2 int values; no format is close; "
        f"{PLAIN.replace('{path}', str(nums))}\n")


def test_repeated_warnings_are_grouped_with_a_count(tmp_path):
    """9. Six calls without a result and three cut records: two lines, each with its count, not nine."""
    res = run(tmp_path, "import", str(FIX / "cc_repeated_warnings.jsonl"), "--list")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        "warning: line 4 is not JSON (Invalid control character at: line 1 column 65 (char 64)); it was skipped "
        "(and 2 more like this)\n"
        "warning: tool call toolu_1 (Write part1.md) has no result; assumed it succeeded (and 5 more like this)\n")
    assert group_warnings(["read /a/x.md outside the root /a/b: not a seed", "read /a/y.md outside the root /a/b: "
                           "not a seed", "the session ended with an error: 3"]) == [
        "read /a/x.md outside the root /a/b: not a seed (and 1 more like this)", "the session ended with an error: 3"]


def test_a_codex_session_log_is_importable(tmp_path):
    """7. A Codex rollout-*.jsonl: the prompt (not Codex's environment context) is the task, the file
    apply_patch added is the default artifact, the last token_count is the usage."""
    log = str(FIX / "codex_rollout.jsonl")
    t = load_transcript(log)
    assert (t.format, t.model, t.cwd, t.date) == ("codex", "gpt-5-codex", "/home/dev/tiny", "2026-11-25")
    assert (t.usage.input_tokens, t.usage.cache_read_tokens, t.usage.output_tokens) == (1500, 7000, 140)
    assert t.warnings == []
    res = run(tmp_path, "import", log, "--list")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(
        "format: codex\n"
        "root: /home/dev/tiny (paths are relative to it; change it with --root DIR)\n"
        "task: Extract the first line of README.md and write it to tmp.txt\n"
        "candidates:\n"
        "  1  answer       final answer  [46 B]\n"
        "     tmp.txt now holds the first line of README.md.\n"
        "  2  file         file tmp.txt (final content)  [27 B]\n"
        "     # tiny-agent A tiny agent.\n"
        "  3  tool result  result of shell: cat README.md  [27 B]\n")
    res = run(tmp_path, "import", log, "--id", "codex")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "codex")
    assert (case.task, case.scar.artifact_at) == ("Extract the first line of README.md and write it to tmp.txt", "tmp.txt")
    assert (tmp_path / "cases" / "codex" / "scar" / "artifact.txt").read_text() == "# tiny-agent\nA tiny agent.\n"


def test_flat_openinference_spans_are_otel(tmp_path):
    """6. Spans with a flat `attributes` mapping (console exporter documents one after another, a
    JSON list, JSON lines) and OpenInference names are read as OTel: task, tool call, file, answer,
    usage; before, the file was refused as broken JSON."""
    t = load_transcript(FIX / "openinference_console.json")
    assert (t.format, t.model, t.date) == ("otel", "gpt-4o-2024-08-06", "2026-11-26")
    assert suggest_task(t) == "Extract the first line of README.md and write it to tmp.txt"
    assert (t.final_answer, t.warnings) == ("tmp.txt now holds the first line.", [])
    assert [(f.path, f.content) for f in t.files_written] == [("tmp.txt", "# tiny-agent\n")]
    assert (t.usage.input_tokens, t.usage.output_tokens) == (300, 42)
    spans = list(_documents(FIX / "openinference_console.json"))
    as_list, as_lines = tmp_path / "spans.json", tmp_path / "spans.jsonl"
    as_list.write_text(json.dumps(spans))
    as_lines.write_text("".join(json.dumps(s) + "\n" for s in spans))
    for path in (as_list, as_lines):
        other = load_transcript(path)
        assert (other.format, other.final_answer) == ("otel", "tmp.txt now holds the first line.")


def _documents(path: Path):
    text, decoder, i = path.read_text(), json.JSONDecoder(), 0
    while text[i:].strip():
        i = len(text) - len(text[i:].lstrip())
        value, i = decoder.raw_decode(text, i)
        yield value


def test_openinference_attributes_alone_are_otel_not_an_openai_request():
    """6. A span's nested OpenInference attributes (an `input` key, like a Responses request): OTel."""
    t = load_transcript(FIX / "openinference_attributes.json")
    assert (t.format, t.model) == ("otel", "gpt-4o-mini-2024-07-18")
    assert (suggest_task(t), t.final_answer) == ("Summarise CHANGES.md in one line", "Version 1.0 adds a.txt.")
    assert (t.usage.input_tokens, t.usage.output_tokens) == (21, 7)


def test_a_log_damaged_past_its_head_names_the_first_offsets_quickly(tmp_path):
    """8. 20,000 bad bytes after a clean first 64 kB: read in linear time, the warning says "at least"
    and shows the first ten offsets."""
    log = tmp_path / "damaged.log"
    head = b"step ok\n" * 9000  # 72,000 bytes of text
    log.write_bytes(head + b"\xff" * 20_000 + b"\nend\n")
    t = load_transcript(log)
    assert t.format == "plain"
    first = ", ".join(str(72_000 + k) for k in range(10))
    assert t.warnings == [f"at least 10,000 bytes are not UTF-8 (at byte offsets {first}, …): read as \ufffd, "
                          "the rest of the file imported"]


def test_every_new_refusal_and_warning_in_its_own_words(tmp_path):
    """The other wordings of items 1, 6 and 7, each exactly as the user sees it."""
    # 1. files on two Windows drives: no root at all
    api = tmp_path / "drives.json"
    api.write_text(json.dumps({"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "Copy C:/src/a.txt to D:/out/b.txt"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "str_replace_based_edit_tool",
                                           "input": {"command": "view", "path": "C:/src/a.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1: a"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "str_replace_based_edit_tool",
                                           "input": {"command": "create", "path": "D:/out/b.txt", "file_text": "a\n"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "File created"}]}]}))
    res = run(tmp_path, "import", str(api), "--id", "drives")
    assert res.exit_code == 2
    assert res.stderr == (
        "warning: read C:/src/a.txt with no root to make it relative to: not a seed suggestion (--root C:/src would "
        "make it one)\n"
        "scarbook: the artifact D:/out/b.txt is outside any root the transcript gives, so no check can name it: "
        "import again with --root D:/out (the folder that was the agent's workspace; `scarbook import PATH --list "
        "--root DIR` shows the paths), or pick another artifact\n")
    # 6. JSON arrays of other things
    for name, value, what in [
        ("empty.json", [], f"an empty JSON array; no format is close; {PLAIN}"),
        ("objs.json", [{"a": 1, "b": 2}], f"a JSON array whose first item has keys a, b; no format is close; {PLAIN}"),
        ("nested.json", [[1], [2]], f"a JSON array of 2 list values; no format is close; {PLAIN}"),
    ]:
        path = tmp_path / name
        path.write_text(json.dumps(value))
        res = run(tmp_path, "import", str(path), "--list")
        what = what.replace("{path}", str(path))
        assert res.stderr == f"scarbook: {path}: not a transcript scarbook can read: {what}\n"
    # 6. the reasons --format gives
    res = run(tmp_path, "import", str(FIX / "cc_one_record.jsonl"), "--format", "scarbook", "--list")
    seen = ("seen: a JSON object (type 'assistant') with keys parentUuid, isSidechain, userType, cwd, sessionId, "
            "version, gitBranch, type, …; it looks closest to claude-code: import it without --format, or "
            "with --format claude-code\n")
    assert res.stderr == (f"scarbook: {FIX / 'cc_one_record.jsonl'} is not a scarbook transcript: line 1 has a "
                          f"`message` object (a Claude Code record, not a scarbook one); {seen}")
    res = run(tmp_path, "import", str(FIX / "cc_one_record.jsonl"), "--format", "otel", "--list")
    assert res.stderr == (f"scarbook: {FIX / 'cc_one_record.jsonl'} is not an otel transcript: no OTLP "
                          f"`resourceSpans` with spans, and no spans with an `attributes` mapping; {seen}")
    # 7. an error Codex reported in its session log
    log = tmp_path / "rollout-2026-11-25T14-00-00-x.jsonl"
    lines = (FIX / "codex_rollout.jsonl").read_text().splitlines()[:3]
    lines.append(json.dumps({"timestamp": "2026-11-25T14:00:02Z", "type": "event_msg",
                             "payload": {"type": "error", "message": "stream disconnected before completion"}}))
    log.write_text("\n".join(lines) + "\n")
    t = load_transcript(log)
    assert (t.format, t.warnings) == ("codex", ["codex: stream disconnected before completion"])


def test_the_root_suggested_is_the_sessions_cwd_not_the_files_folder(tmp_path):
    """1. The write lies in out/ under the second session's cwd: --root names that cwd (the
    workspace), and the draft checks out/tmp.txt."""
    log = str(FIX / "cc_concatenated_nested.jsonl")
    res = run(tmp_path, "import", log, "--id", "y")
    assert res.exit_code == 2
    assert res.stderr.endswith(
        "scarbook: the artifact /home/dev/tiny/out/tmp.txt is outside the transcript's root /home/dev/proj, so no "
        "check can name it: import again with --root /home/dev/tiny (the folder that was the agent's workspace; "
        "`scarbook import PATH --list --root DIR` shows the paths), or pick another artifact\n")
    res = run(tmp_path, "import", log, "--id", "y", "--root", "/home/dev/tiny")
    assert res.exit_code == 0, res.output
    assert load_case(tmp_path / "cases" / "y").scar.artifact_at == "out/tmp.txt"
