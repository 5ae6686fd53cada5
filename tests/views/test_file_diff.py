"""The run review's −/+ diff (scarbook.views.file_diff) and what the review reads (scarbook.views.run_review):
the workspace side through safefs (a link, a pipe, a huge or non-UTF-8 file never hang, leak or
flood it), the seed side as seeding reads it, and a run's transcript read safely."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from scarbook.cases.io import load_case
from scarbook.models import RunRecord
from scarbook.views.file_diff import DiffLine, diff_file
from scarbook.views.run_review import filter_counts, load_run_transcript, read_log_start, shown_runs

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

SEED = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.fixture
def case(tmp_path: Path):
    folder = tmp_path / "cases" / "c"
    (folder / "seed" / "docs").mkdir(parents=True)
    (folder / "case.yaml").write_text("id: c\ntask: t\nseed: {inline.txt: \"from the yaml\\n\"}\n"
                                      "checks:\n  - {type: file_exists, path: a}\n")
    (folder / "seed" / "notes.txt").write_text(SEED)
    (folder / "seed" / "docs" / "gone.md").write_text("old\ntext\n")
    (folder / "seed" / "inline.txt").write_text("seed folder copy, overridden\n")
    return load_case(folder)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def signs(d) -> list[str]:
    return [line.text if line.sign == "@" else line.sign + line.text for line in d.lines]


def test_a_modified_file_shows_the_changed_lines_with_context_not_the_whole_file(case, ws):
    (ws / "notes.txt").write_text(SEED.replace("line 5\n", "line five\n"))
    d = diff_file("notes.txt", "modified", case=case, workspace=ws)
    assert signs(d) == ["@@ -3,5 +3,5 @@", " line 3", " line 4", "-line 5", "+line five", " line 6", " line 7"]
    assert d.note == "" and d.more == 0


def test_created_files_are_plus_lines_and_deleted_files_their_seed_as_minus_lines(case, ws):
    (ws / "new.txt").write_text("a\nb\n")
    assert signs(diff_file("new.txt", "created", case=case, workspace=ws)) == ["+a", "+b"]
    # a deleted file needs no workspace: the seed says what was there
    assert signs(diff_file("docs/gone.md", "deleted", case=case, workspace=None)) == ["-old", "-text"]


def test_an_inline_seed_wins_over_the_seed_folder_as_seeding_does(case, ws):
    (ws / "inline.txt").write_text("changed\n")
    assert signs(diff_file("inline.txt", "modified", case=case, workspace=ws)) == [
        "@@ -1 +1 @@", "-from the yaml", "+changed"]


def test_an_inline_seed_written_with_dot_slash_wins_too(case, ws):
    """Seeding writes inline './inline.txt' over seed/inline.txt; the diff read seed/'s copy as the before."""
    case.seed_files = {"./inline.txt": "from the yaml\n"}
    (ws / "inline.txt").write_text("changed\n")
    assert signs(diff_file("inline.txt", "modified", case=case, workspace=ws)) == [
        "@@ -1 +1 @@", "-from the yaml", "+changed"]


def test_long_diffs_are_capped_with_the_count_of_lines_left_out(case, ws):
    (ws / "big.txt").write_text("".join(f"row {i}\n" for i in range(200)))
    d = diff_file("big.txt", "created", case=case, workspace=ws, max_lines=60)
    assert len(d.lines) == 60 and d.more == 200 - 60
    assert d.lines[-1] == DiffLine("+", "row 59")


@pytest.mark.parametrize("change, kwargs, note", [
    ("modified", {"workspace": None}, "not shown: workspace not kept"),
    ("modified", {"case": None, "case_problem": "cases/c/case.yaml: unknown key 'x'"},
     "not shown: seed not available: cases/c/case.yaml: unknown key 'x'"),
])
def test_a_side_that_is_not_there_is_named(case, ws, change, kwargs, note):
    args = {"case": case, "workspace": ws, **kwargs}
    d = diff_file("notes.txt", change, **args)
    assert d.note == note and d.lines == []


def test_a_seed_file_the_case_no_longer_has_is_named(case, ws):
    (ws / "elsewhere.txt").write_text("x\n")
    d = diff_file("elsewhere.txt", "modified", case=case, workspace=ws)
    assert d.note == "not shown: elsewhere.txt is not in the case's seed now (the case changed since the run?)"


# -- a hostile workspace -----------------------------------------------------------------------

def _in_thread(fn, timeout=15):
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "the diff blocked"
    return out[0]


def test_a_symlink_in_place_of_the_file_is_refused_and_its_target_never_shown(case, ws, tmp_path):
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    os.symlink(secret, ws / "notes.txt")
    d = diff_file("notes.txt", "modified", case=case, workspace=ws)
    assert d.note == "not shown: notes.txt is a symlink" and d.lines == []


def test_a_fifo_in_place_of_the_file_is_refused_without_blocking(case, ws):
    os.mkfifo(ws / "notes.txt")
    d = _in_thread(lambda: diff_file("notes.txt", "modified", case=case, workspace=ws))
    assert d.note == "not shown: notes.txt is not a regular file"


def test_a_huge_file_is_named_with_its_size_not_read_whole(case, ws):
    with open(ws / "huge.bin", "wb") as fh:
        fh.truncate(3 << 30)  # 3 GiB, sparse: reading it whole would take the review down
    d = _in_thread(lambda: diff_file("huge.bin", "created", case=case, workspace=ws))
    assert d.note == "not shown: huge.bin is 3,221,225,472 bytes, more than the 262,144 the review reads"


def test_a_non_utf8_file_is_diffed_with_replacement_characters_and_says_so(case, ws):
    (ws / "notes.txt").write_bytes(SEED.replace("line 5\n", "line \xe9\n").encode("latin-1"))
    d = diff_file("notes.txt", "modified", case=case, workspace=ws)
    assert "+line \ufffd" in signs(d) and "-line 5" in signs(d)
    assert d.note == "not UTF-8: bytes that do not decode are shown as �"


def test_a_binary_file_is_not_diffed(case, ws):
    (ws / "notes.txt").write_bytes(b"\x7fELF\0\0\1")
    d = diff_file("notes.txt", "modified", case=case, workspace=ws)
    assert d.note == "binary file (71 bytes → 7 bytes): not diffed" and d.lines == []


def test_terminal_escapes_in_a_file_are_dropped(case, ws):
    (ws / "new.txt").write_text("ok\x1b]0;pwned\x07 \x1b[2Jdone\x07\n")
    assert signs(diff_file("new.txt", "created", case=case, workspace=ws)) == ["+ok done\\x07"]


# -- the runs filter, the stderr log and the transcript -----------------------------------------

def _run(k: int, status: str, **kw) -> RunRecord:
    return RunRecord(session_id="s", case_id="c", k=k, status=status, reason=status, **kw)


def test_filters_show_the_runs_of_their_statuses_and_count_them():
    runs = [_run(1, "pass"), _run(2, "fail"), _run(3, "error"), _run(4, "unjudged"), _run(5, "fail")]
    # "failed" is fails and errors (an unjudged run has no verdict: issue 26.12); then one count per cause
    assert filter_counts(runs) == {"all": 5, "failed": 3, "fail": 2, "error": 1, "unjudged": 1, "pass": 1,
                                   "agent": 0, "case": 0, "infra": 0, "judge": 0}
    assert [r.k for r in shown_runs(runs, "failed")] == [2, 3, 5]
    assert [r.k for r in shown_runs(runs, "fail")] == [2, 5]
    assert [r.k for r in shown_runs(runs, "all")] == [1, 2, 3, 4, 5]


def test_the_stderr_log_is_read_through_safefs(tmp_path):
    os.mkfifo(tmp_path / "1.stderr.log")
    assert _in_thread(lambda: read_log_start(str(tmp_path / "1.stderr.log"))) == "(not shown: 1.stderr.log is not a regular file)"
    (tmp_path / "2.stderr.log").write_text("boom\x1b[31m red\n")
    assert read_log_start(str(tmp_path / "2.stderr.log")) == "boom red\n"


def _transcript_run(path: Path) -> RunRecord:
    return _run(1, "fail", transcript_path=str(path))


def test_a_runs_transcript_is_parsed_into_its_tool_calls(tmp_path):
    path = tmp_path / "1.transcript.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [
        {"type": "task", "text": "write tmp.txt"},
        {"type": "tool_call", "id": "c1", "name": "write_file", "input": {"path": "tmp.txt", "content": "x"}},
        {"type": "tool_result", "id": "c1", "output": "wrote 1 byte", "is_error": False}]) + "\n")
    transcript, why = load_run_transcript(_transcript_run(path))
    assert why == "" and [getattr(e, "name", None) for e in transcript.entries if hasattr(e, "input")] == ["write_file"]


@pytest.mark.parametrize("make, why", [
    (None, "this run left no transcript (the agent did not write $SCARBOOK_TRANSCRIPT)"),
    ("link", "transcript not shown: 1.transcript.jsonl is a symlink"),
    ("fifo", "transcript not shown: 1.transcript.jsonl is not a regular file"),
    ("missing", "transcript not shown: 1.transcript.jsonl does not exist"),
    ("empty", "this run's transcript is empty"),
    ("huge", "transcript not shown: 4,096 bytes, more than the 1,000 the review reads (t imports it)"),
    ("json", "transcript not shown: 1.transcript.jsonl: not a transcript scarbook can read: a JSON object with "
             "keys "),
])
def test_a_missing_or_hostile_transcript_is_one_clear_line(tmp_path, make, why):
    path = tmp_path / "1.transcript.jsonl"
    secret = tmp_path / "secret"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    if make == "link":
        os.symlink(secret, path)
    elif make == "fifo":
        os.mkfifo(path)
    elif make == "empty":
        path.write_text("\n")
    elif make == "huge":
        path.write_bytes(b"x" * 4096)
    elif make == "json":
        path.write_text('{"no": "shape"}\n')
    run = _run(1, "fail") if make is None else _transcript_run(path)
    transcript, shown = _in_thread(lambda: load_run_transcript(run, cap=1000))
    assert transcript is None and shown.startswith(why) and "PRIVATE KEY" not in shown


def test_a_run_that_changed_many_files_diffs_the_first_ones_and_counts_the_rest(tmp_path, case):
    from scarbook.models import WorkspaceDiff
    from scarbook.project import Project
    from scarbook.views.run_review import MAX_DIFFED, MAX_LISTED, ReviewData, load_run_detail

    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    project = Project.discover(tmp_path)
    ws = tmp_path / "workspaces" / "s" / "c" / "1"
    ws.mkdir(parents=True)
    names = [f"f{i:03}.txt" for i in range(MAX_LISTED + 50)]
    for name in names:
        (ws / name).write_text("x\n")
    run = _run(1, "fail", workspace=str(ws), workspace_kept=True, diff=WorkspaceDiff(created=names))
    detail = load_run_detail(project, run, ReviewData([run], "", case))
    assert len(detail.diffs) == MAX_LISTED and detail.more_files == 50
    assert [d.lines for d in detail.diffs[:MAX_DIFFED]] == [[DiffLine("+", "x")]] * MAX_DIFFED
    assert detail.diffs[MAX_DIFFED].note == f"not diffed: the review diffs the first {MAX_DIFFED} changed files"
    assert detail.where == "workspaces/s/c/1"


def test_a_one_byte_binary_file_says_one_byte(case, ws):
    (ws / "one.bin").write_bytes(b"\0")
    d = diff_file("one.bin", "created", case=case, workspace=ws)
    assert d.note == "binary file (1 byte): not diffed"


def test_a_seed_file_named_with_an_escape_is_diffed_by_the_name_history_recorded(tmp_path: Path, ws: Path) -> None:
    """History records "\\x1b[0mnotes.txt" for the seed's file named ESC [ 0 m notes.txt: both sides are read from the
    file that name stands for. Before: "not shown: \\x1b[0mnotes.txt: path '\\\\x1b[0mnotes.txt' uses backslashes; write it
    with '/'", the escaped name taken for the file's."""
    folder = tmp_path / "cases" / "e"
    (folder / "seed").mkdir(parents=True)
    (folder / "case.yaml").write_text("id: e\ntask: t\nchecks:\n  - {type: file_exists, path: a}\n")
    (folder / "seed" / "\x1b[0mnotes.txt").write_text("old\n")
    (ws / "\x1b[0mnotes.txt").write_text("new\n")
    case = load_case(folder)
    assert signs(diff_file("\\x1b[0mnotes.txt", "modified", case=case, workspace=ws)) == ["@@ -1 +1 @@", "-old", "+new"]
    assert signs(diff_file("\\x1b[0mnotes.txt", "deleted", case=case, workspace=None)) == ["-old"]
    gone = diff_file("\\x1b[0mgone.txt", "deleted", case=case, workspace=None)
    assert gone.note == "not shown: \\x1b[0mgone.txt is not in the case's seed now (the case changed since the run?)"


def test_a_file_the_agent_named_with_a_backslash_is_diffed(case, ws):
    """On Linux a backslash is one more character of a name: an agent's `notes\\v2.txt` is one file. The review said
    "not shown: path 'notes\\\\v2.txt' uses backslashes; write it with '/'" (the rule for the paths a case names)."""
    (ws / "notes\\v2.txt").write_text("new\n")
    assert signs(diff_file("notes\\v2.txt", "created", case=case, workspace=ws)) == ["+new"]
    (ws / "dir\\x").mkdir()
    (ws / "dir\\x" / "f.txt").write_text("in\n")
    assert signs(diff_file("dir\\x/f.txt", "created", case=case, workspace=ws)) == ["+in"]
