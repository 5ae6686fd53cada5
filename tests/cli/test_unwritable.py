"""Issue 25 (9): places scarbook must write that it cannot — the history folder, cases/, a report path.
Before any run: one message naming the path and the fix, exit 2, no run started. Mid-session: exit 3,
crash.txt (beside the workspaces when the history refuses it), and nothing recorded is lost.

Read-only for real (tests/helpers/read_only.py): a read-only bind mount in a private mount namespace as
root, chmod as any other user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.run.session import NONE_NOTE
from tests.helpers.paths import FIXTURES
from tests.helpers.read_only import READ_ONLY_WHY, SCARBOOK, private_mounts_work, read_only
from tests.helpers.read_only import run as _run

MARKER_AGENT = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran'); open('tmp.txt', 'w').write('x')"


@pytest.fixture
def marked(project):
    """A project whose agent leaves a marker outside its workspace when it runs."""
    marker = project.root.parent / "agent-ran"
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', MARKER_AGENT, str(marker)])}}}\n"
                   "isolation: none\n")
    project.case("c", "id: c\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    return project, marker


def test_a_history_folder_that_is_a_file_is_said_before_any_run(marked) -> None:
    project, marker = marked
    project.workspaces.mkdir()
    (project.workspaces / "history").write_text("not a folder")
    result = project.cli("eval", "--runs", "2", "-q")
    assert result.exit_code == 2
    history = project.workspaces / "history"
    assert result.stderr.strip() == (f"scarbook: the session history cannot be written: {history} is a file, not a "
                                     f"folder — make {history} a writable folder, or point workspaces_dir in "
                                     "scarbook.yaml at one")
    assert not marker.exists()


def test_a_read_only_history_folder_is_said_before_any_run(marked) -> None:
    project, marker = marked
    history = project.workspaces / "history"
    history.mkdir(parents=True)
    out = _run(read_only(history, [*SCARBOOK, "-C", str(project.root), "eval", "--runs", "2", "-q"]))
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2, out.stderr
    why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert out.stderr.strip() == (f"scarbook: the session history cannot be written: cannot create files in "
                                  f"{history}: {why} — make {history} a writable folder, or point workspaces_dir "
                                  "in scarbook.yaml at one")
    assert not marker.exists()


def test_a_report_path_that_cannot_be_written_is_said_before_any_run(marked) -> None:
    project, marker = marked
    (project.root / "out").write_text("a file")
    result = project.cli("eval", "--runs", "2", "-q", "--junit", str(project.root / "out" / "r.xml"))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: --junit {project.root / 'out' / 'r.xml'} cannot be written: "
                                     f"{project.root / 'out'} is a file, not a folder — choose a writable path "
                                     "for --junit")
    assert not marker.exists()


@pytest.mark.parametrize("option, name, why, example", [
    ("--junit", "scarbook.yaml", "would replace scarbook.yaml, the project's configuration", "report.xml"),
    ("--json", "scarbook-baseline.json", "would replace scarbook-baseline.json, the blessed session", "report.json"),
    ("--html", "cases/c/case.yaml", "would write into the cases folder ({root}/cases)", "report.html"),
    ("--json", "workspaces/history/r.json", "would write into the run history ({root}/workspaces/history)",
     "report.json"),
])
def test_a_report_path_that_is_the_projects_own_file_is_refused_before_anything_is_written(marked, option, name,
                                                                                           why, example) -> None:
    """`report --junit scarbook.yaml` (a shell completes `scar<Tab>` so) wrote the JUnit XML over the project's
    configuration, and `--html cases/c/case.yaml` over the case: refused, for eval before any run."""
    project, marker = marked
    (project.root / "scarbook-baseline.json").write_text("{}")
    before = {p: p.read_bytes() for p in (project.root / "scarbook.yaml", project.root / "scarbook-baseline.json",
                                          project.cases_dir / "c" / "case.yaml")}
    message = (f"scarbook: {option} {project.root / name} {why.format(root=project.root)} — write it elsewhere, e.g. "
               f"{option} {example}")
    if option != "--html":  # (eval writes no HTML)
        result = project.cli("eval", "--runs", "1", "-q", option, str(project.root / name))
        assert (result.exit_code, result.stderr.strip()) == (2, message)
        assert not marker.exists()
    assert project.cli("eval", "--runs", "1", "-q").exit_code == 0
    result = project.cli("report", option, str(project.root / name))
    assert (result.exit_code, result.stderr.strip()) == (2, message)
    assert {p: p.read_bytes() for p in before} == before
    assert not (project.workspaces / "history" / "r.json").exists()


@pytest.mark.parametrize("args", [
    ["eval", "--runs", "1", "-q", "--junit", ""], ["eval", "--runs", "1", "-q", "--json", " "], ["report", "--html", ""],
    ["rejudge", "latest", "--json", ""], ["merge", "h", "--junit", ""], ["resume", "--json", ""],
    ["calibrate", "--export", ""], ["calibrate", "--import", ""],
])
def test_an_empty_file_name_is_refused_not_taken_as_no_file_asked_for(marked, args) -> None:
    """`--junit "$OUT"` with OUT unset: eval and report wrote no file and said nothing (exit 0), and CI found no
    report later, if it looked. Refused before anything runs."""
    project, marker = marked
    result = project.cli(*args)
    option, value = args[-2:]
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (f"Error: Invalid value for '{option}': {value!r} names no file (was the "
                                              "variable it came from unset?) — give a file name")
    assert not marker.exists()


@pytest.mark.parametrize("args", [["report", "--html", "out/"], ["eval", "--runs", "1", "-q", "--junit", "reports/"],
                                  ["calibrate", "--export", "labels/"]])
def test_a_file_name_ending_in_a_slash_is_refused(marked, args, monkeypatch) -> None:
    """`report --html out/` wrote the report as the file `out` (the slash dropped): a folder was meant."""
    project, marker = marked
    monkeypatch.chdir(project.root)  # (the relative name is the project's, not the test run's folder)
    if args[0] == "report":  # a session to report
        assert project.cli("eval", "--runs", "1", "-q").exit_code == 0
        marker.unlink()
    result = project.cli(*args)
    option, value = args[-2:]
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (f"Error: Invalid value for '{option}': {value!r} ends in /, so it names a "
                                              f"folder, not a file — give the file's name, e.g. {value}FILE")
    assert not marker.exists() and not (project.root / value.rstrip("/")).exists()


@pytest.mark.parametrize(("args", "why"), [
    (["calibrate", "--import", "-"], "--import reads the labels from a file by name, not from standard input"),
    (["calibrate", "--export", "-"], "--export writes a file you fill in and import back, so it needs a name, not "
                                     "standard output")])
def test_a_dash_is_refused_where_no_stream_can_stand_for_the_file(marked, args, why, monkeypatch) -> None:
    """A report's `-` is standard output (tests/cli/test_report_to_stdout.py); labels are read from a file by name
    and an export is a file to fill in: there `-` is refused, saying why (it said 'scarbook prints its table on
    standard output', no longer true of a report)."""
    project, marker = marked
    monkeypatch.chdir(project.root)
    result = project.cli(*args)
    option = args[-2]
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (f"Error: Invalid value for '{option}': '-' would be a file named '-': "
                                              f"{why} — give the file's name, e.g. {option} labels.csv")
    assert not (project.root / "-").exists()


@pytest.mark.parametrize("command", ["eval", "report"])
def test_two_reports_named_one_file_are_refused(marked, command, monkeypatch) -> None:
    """`eval --json out --junit ./out` wrote the JUnit XML, then the JSON over it (exit 0): the CI's JUnit reader
    found JSON. Refused before any run (eval) or any write (report)."""
    project, marker = marked
    monkeypatch.chdir(project.root)
    if command == "report":  # a session to report
        assert project.cli("eval", "--runs", "1", "-q").exit_code == 0
        marker.unlink()
    extra = ["--runs", "1", "-q"] if command == "eval" else []
    result = project.cli(command, *extra, "--json", "out", "--junit", "./out")
    assert (result.exit_code, result.stderr.strip()) == (
        2, f"scarbook: --json and --junit both name {os.path.realpath(project.root / 'out')}: one report would overwrite "
           "the other — give each its own file")
    assert not marker.exists() and not (project.root / "out").exists()


# The agent's second run makes the history read-only under scarbook (as a disk remounted read-only
# would). Run a#1 is recorded; b#1 finishes but its runs file cannot be created (a file open before
# the remount could still be appended to), nor can session.json be rewritten at the end.
RO_AGENT = """\
import os, pathlib, subprocess, sys
count = pathlib.Path(sys.argv[1])
n = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(n))
open("tmp.txt", "w").write("x")
if n == 2:
    history = sys.argv[2]
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", "-o", "ro", history, history], check=True)
    else:
        for d in [history, *(os.path.join(history, s) for s in os.listdir(history))]:
            os.chmod(d, 0o555)
"""


def test_history_going_read_only_mid_session_exits_3_with_crash_txt_and_loses_nothing(project) -> None:
    history = project.workspaces / "history"
    argv = [sys.executable, "-c", RO_AGENT, str(project.root.parent / "count"), str(history)]
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\nisolation: none\nconcurrency: 1\n")
    for cid in ("a", "b"):
        project.case(cid, f"id: {cid}\ntask: write tmp.txt\nchecks: [{{type: file_exists, path: tmp.txt}}]\n")
    cmd = [*SCARBOOK, "-C", str(project.root), "eval", "--runs", "2", "-q"]
    if os.geteuid() == 0:
        if not private_mounts_work():
            pytest.skip("running as root without unshare/mount: no way to make a folder read-only to root")
        cmd = ["unshare", "-m", *cmd]  # the agent's mount stays in this private namespace
    out = _run(cmd)
    try:
        assert "Traceback" not in out.stderr, out.stderr
        assert out.returncode == 3, out.stderr
        (info,) = History(project.workspaces).sessions()
        folder = history / info.id
        crash = project.workspaces / info.id / "crash.txt"
        unrecorded = project.workspaces / info.id / "unrecorded-runs.jsonl"
        why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
        assert out.stderr.splitlines()[0] == f"warning: {NONE_NOTE}"  # isolation: none, said first (issue 25.1)
        assert out.stderr.splitlines()[1] == (
            f"scarbook: session crashed: HistoryError: could not record run b#1 in {folder}: {why} — make that "
            f"folder writable (the runs recorded before it are kept) — traceback in {crash}; 1 finished run "
            f"history could not take are in {unrecorded}; the session record could not be written: "
            f"HistoryError: could not write {folder / 'session.json'}: {why} — make that folder writable (the "
            "runs recorded so far are kept)"), out.stderr
        assert "could not record run b#1" in crash.read_text()
        (saved,) = [json.loads(line) for line in unrecorded.read_text().splitlines()]
        assert (saved["case_id"], saved["k"], saved["status"]) == ("b", 1, "pass")
        (run,) = History(project.workspaces).runs(info.id)  # a#1, recorded before, is kept
        assert (run.case_id, run.k, run.status) == ("a", 1, "pass")
    finally:
        if os.geteuid() != 0:
            for d in [history, *history.iterdir()]:
                d.chmod(0o755)


def test_import_into_a_read_only_cases_folder_is_a_clean_error(project) -> None:
    transcript = FIXTURES / "transcripts" / "scarbook_run.jsonl"
    out = _run(read_only(project.cases_dir, [*SCARBOOK, "-C", str(project.root), "import", str(transcript),
                                              "--id", "from-log"]))
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2
    why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert out.stderr.strip() == (f"scarbook: cannot write the draft case: cannot create files in "
                                  f"{project.cases_dir}: {why} — make {project.cases_dir} a writable folder, or "
                                  "point cases_dir in scarbook.yaml at one")
    assert not (project.cases_dir / "from-log").exists()


SCARRED = """\
id: c
task: write tmp.txt
checks: [{type: file_exists, path: tmp.txt}]
scar: {date: 2026-11-14, what_went_wrong: wrote nothing, failed_artifact: scar/artifact.txt}
"""


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_read_only_cases_folder_refuses_each_change_in_one_line_and_moves_nothing(marked, tmp_path) -> None:
    """Issue 37.4: case rm, verify --reproduce (after running the agent) and import-cases ended in OSError
    tracebacks; rm left a copy of the case in the trash beside the original (cases/ is a mount of its own)."""
    project, marker = marked
    project.case("c", SCARRED)
    (project.cases_dir / "c" / "scar").mkdir()
    (project.cases_dir / "c" / "scar" / "artifact.txt").write_text("")
    listing = tmp_path / "cases.json"
    listing.write_text(json.dumps([{"id": "new", "task": "t", "checks": [{"type": "file_exists", "path": "a"}]}]))
    cases = project.cases_dir
    fix = f"make {cases} a writable folder, or point cases_dir in scarbook.yaml at one"
    table = [
        (("case", "rm", "c"), f"cannot delete c: cannot create files in {cases}: {READ_ONLY_WHY} — {fix}; "
                              "nothing was changed"),
        (("case", "mv", "c", "d"), f"cannot rename c: cannot create files in {cases}: {READ_ONLY_WHY} — {fix}; "
                                   "nothing was changed"),
        (("case", "cp", "c"), f"cannot copy c: cannot create files in {cases}: {READ_ONLY_WHY} — {fix}; "
                              "nothing was changed"),
        (("import-cases", str(listing)), f"cannot write the cases: cannot create files in {cases}: "
                                         f"{READ_ONLY_WHY} — {fix}; nothing was written"),
        (("verify", "c", "--reproduce", "2"), f"cannot record scar.reproduced in {cases / 'c' / 'case.yaml'}: cannot "
                                              f"create files in {cases / 'c'}: {READ_ONLY_WHY} — make {cases / 'c'} "
                                              "a writable folder, or point cases_dir in scarbook.yaml at one; "
                                              "nothing ran"),
    ]
    before = _tree(cases)
    try:
        for args, message in table:
            out = _run(read_only(cases, [*SCARBOOK, "-C", str(project.root), *args]))
            assert (out.returncode, out.stdout, out.stderr) == (2, "", f"scarbook: {message}\n"), args
            assert _tree(cases) == before and not marker.exists(), args  # nothing half-moved, no agent ran
        assert _tree(project.workspaces / ".trash") in ([], [".lock"])
        # a case deleted while cases/ was writable cannot be restored into it read-only
        assert project.cli("case", "rm", "c").exit_code == 0
        trash = _tree(project.workspaces / ".trash")
        out = _run(read_only(cases, [*SCARBOOK, "-C", str(project.root), "case", "restore", "c"]))
        assert (out.returncode, out.stderr) == (2, f"scarbook: cannot restore c: cannot create files in {cases}: "
                                                   f"{READ_ONLY_WHY} — {fix}; nothing was changed\n")
        assert _tree(project.workspaces / ".trash") == trash and not (cases / "c").exists()
    finally:
        if os.geteuid() != 0:
            cases.chmod(0o755)


def test_read_only_workspaces_folder_refuses_case_rm_in_one_line(marked) -> None:
    """Issue 37.4: with workspaces/ read-only, case rm tracebacked on workspaces/.trash/.lock."""
    project, _ = marked
    project.workspaces.mkdir()
    ws = project.workspaces
    out = _run(read_only(ws, [*SCARBOOK, "-C", str(project.root), "case", "rm", "c"]))
    try:
        assert (out.returncode, out.stdout) == (2, "")
        assert out.stderr == (f"scarbook: cannot delete c: cannot create files in {ws}: {READ_ONLY_WHY} — make {ws} "
                              "a writable folder, or point workspaces_dir in scarbook.yaml at one; nothing was "
                              "changed\n")
        assert (project.cases_dir / "c" / "case.yaml").is_file() and _tree(ws) == []
    finally:
        if os.geteuid() != 0:
            ws.chmod(0o755)
