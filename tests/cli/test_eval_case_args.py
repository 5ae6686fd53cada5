"""Which cases `scarbook eval` runs: an invalid case stops the whole gate, a case may be named by its folder."""

from __future__ import annotations

import os
from pathlib import Path

GOOD = "id: {cid}\ntitle: Good\ntask: write a\nchecks: [{{type: file_exists, path: a}}]\n"


def sessions(project) -> list[Path]:
    history = project.workspaces / "history"
    return sorted(p for p in history.iterdir() if p.is_dir()) if history.is_dir() else []


def test_an_invalid_case_stops_the_gate_and_nothing_runs(project) -> None:
    """Issue 26.10: a typo'd key in one case printed "invalid case", ran the others and exited 0."""
    project.case("good", GOOD.format(cid="good"))
    bad = project.case("typo", "id: typo\ntitle: Typo\ntask: x\nthreshhold: 0.9\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "--runs", "2", "-q")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"invalid case: {bad}:4: unknown key 'threshhold'")
    assert lines[-1] == (f"scarbook: 1 invalid case in {project.cases_dir} (see above) — fix it, or name the cases to "
                         "run: scarbook eval CASE...")
    assert result.stdout == ""
    assert sessions(project) == []  # nothing ran, nothing recorded


def test_named_cases_still_run_beside_an_invalid_one(project) -> None:
    project.case("good", GOOD.format(cid="good"))
    project.case("bad", "id: bad\ntask: x\nchecks:\n  - {type: nope}\n")
    result = project.cli("eval", "good", "--runs", "1", "-q")
    assert result.stderr.startswith("invalid case: ") and "unknown check type 'nope'" in result.stderr
    assert result.exit_code == 1  # it ran: the agent (demo) does not write a, so the case is below its line
    assert len(sessions(project)) == 1


def test_a_case_named_by_its_folder_runs_as_by_its_id(project) -> None:
    """Issue 26.15: `eval cases/write-one-line` (a shell-completed path) said "no such case"."""
    project.case("good", GOOD.format(cid="good"))
    old = os.getcwd()
    os.chdir(project.root)
    try:
        by_path = project.cli("eval", "cases/good/", "--runs", "1", "-q", "--json", str(project.root / "a.json"))
        absolute = project.cli("eval", str(project.cases_dir / "good"), "--runs", "1", "-q")
    finally:
        os.chdir(old)
    assert by_path.exit_code == absolute.exit_code and by_path.exit_code != 2, by_path.stderr
    assert '"good"' in (project.root / "a.json").read_text()


def test_a_folder_outside_the_cases_is_refused_by_name(project, tmp_path: Path) -> None:
    project.case("good", GOOD.format(cid="good"))
    elsewhere = tmp_path / "elsewhere" / "good"
    elsewhere.mkdir(parents=True)
    result = project.cli("eval", str(elsewhere), "--runs", "1")
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: {elsewhere} is not a case folder of this project — name a case by its "
                                     f"id, or a folder directly in {project.cases_dir}")


def test_reports_are_written_readable_by_others(project) -> None:
    """Issue 26.15: report, JSON and JUnit files came out 0600 (mkstemp's mode survived the rename); CI
    artifact uploaders and other users need what any tool writes: 0666 less the umask."""
    project.case("good", GOOD.format(cid="good"))
    old = os.umask(0o022)
    try:
        project.cli("eval", "--runs", "1", "-q", "--json", str(project.root / "r.json"),
                    "--junit", str(project.root / "r.xml"))
    finally:
        os.umask(old)
    for name in ("r.json", "r.xml"):
        assert (project.root / name).stat().st_mode & 0o777 == 0o644, name


def _same_by_path_as_by_id(project, monkeypatch, *args: str) -> None:
    """`args` with `{case}` as the id and as the folder (relative, with a trailing slash; and absolute) say
    the same (rejudge refuses a session with nothing judged: by path as by id, naming the case)."""
    monkeypatch.chdir(project.root)
    by_id = project.cli(*(a.format(case="good") for a in args))
    for path in ("cases/good/", str(project.cases_dir / "good")):
        by_path = project.cli(*(a.format(case=path) for a in args))
        assert (by_path.exit_code, by_path.stdout, by_path.stderr) == (by_id.exit_code, by_id.stdout, by_id.stderr)
    assert by_id.exit_code != 2 or args[0] == "rejudge", by_id.output


def test_every_command_that_takes_a_case_takes_its_folder(project, monkeypatch) -> None:
    """Issue 37.14: a path worked for eval and verify, not for show, lint, trends or case rm."""
    project.case("good", GOOD.format(cid="good"))
    assert project.cli("eval", "--runs", "2", "-q").exit_code == 1
    for args in (("show", "{case}"), ("lint", "{case}"), ("trends", "{case}"), ("verify", "{case}"),
                 ("rejudge", "latest", "{case}", "-q")):
        _same_by_path_as_by_id(project, monkeypatch, *args)
    assert project.cli("case", "cp", "cases/good/", "cases/other").exit_code == 0
    assert project.cli("case", "mv", str(project.cases_dir / "other"), "third").exit_code == 0
    rm = project.cli("case", "rm", "cases/third/")
    assert (rm.exit_code, rm.stdout.split(" (")[0]) == (0, "moved cases/third to the trash")
    assert project.cli("case", "restore", "cases/third").exit_code == 0
    assert (project.cases_dir / "third" / "case.yaml").is_file() and (project.cases_dir / "good").is_dir()


def test_a_folder_outside_the_cases_is_refused_alike_by_every_command(project, tmp_path: Path) -> None:
    project.case("good", GOOD.format(cid="good"))
    elsewhere = tmp_path / "elsewhere" / "good"
    elsewhere.mkdir(parents=True)
    said = (f"scarbook: {elsewhere} is not a case folder of this project — name a case by its id, or a folder "
            f"directly in {project.cases_dir}\n")
    for args in (("eval", str(elsewhere)), ("verify", str(elsewhere)), ("noise", str(elsewhere)),
                 ("show", str(elsewhere)), ("lint", str(elsewhere)), ("trends", str(elsewhere)),
                 ("case", "rm", str(elsewhere)), ("case", "cp", str(elsewhere)), ("case", "mv", str(elsewhere), "x"),
                 ("case", "restore", str(elsewhere))):
        result = project.cli(*args)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", said), args
    assert (project.cases_dir / "good").is_dir() and elsewhere.is_dir()


def test_verify_and_noise_name_themselves_in_the_invalid_case_hint(project) -> None:
    """Issue 37.14: their hint said `scarbook eval CASE...`."""
    project.case("good", GOOD.format(cid="good"))
    project.case("typo", "id: typo\ntask: x\nthreshhold: 0.9\nchecks: [{type: file_exists, path: a}]\n")
    for command in ("verify", "noise"):
        result = project.cli(command)
        assert result.exit_code == 2
        assert result.stderr.splitlines()[-1] == (f"scarbook: 1 invalid case in {project.cases_dir} (see above) — fix "
                                                  f"it, or name the cases to run: scarbook {command} CASE...")
