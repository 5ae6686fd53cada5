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
