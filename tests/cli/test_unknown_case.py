"""An unknown case id gets the same line from every command that takes one (cases/ids.no_such_cases): it names
the cases folder and the fix, exits 2, and nothing is run, recorded or moved."""

from __future__ import annotations

import pytest

GOOD = "id: good\ntitle: Good\ntask: write a\nchecks: [{type: file_exists, path: a}]\n"
LINE = "scarbook: no case 'ghost' in {cases} — `scarbook list` shows the cases\n"

COMMANDS = [
    ("eval", "ghost"),
    ("eval", "good", "ghost"),  # beside a good one: refused before anything runs
    ("lint", "ghost"),
    ("verify", "ghost"),
    ("trends", "ghost"),
    ("noise", "ghost"),
    ("show", "ghost"),
    ("rubric", "stats", "ghost"),
    ("rubric", "draft", "ghost"),
    ("case", "rm", "ghost"),
    ("case", "mv", "ghost", "spirit"),
    ("case", "cp", "ghost"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_every_command_says_the_same_line_for_an_unknown_case(project, args) -> None:
    project.case("good", GOOD)
    result = project.cli(*args)
    assert (result.exit_code, result.stderr) == (2, LINE.format(cases=project.cases_dir))
    assert sorted(p.name for p in project.cases_dir.iterdir()) == ["good"]
    history = project.workspaces / "history"
    assert not history.is_dir() or not any(p.is_dir() for p in history.iterdir())


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_show_of_a_name_that_is_the_cases_folder_itself_is_an_unknown_case(project, name) -> None:
    """cases/ + '' (or '.', '..') is a folder, so `show` took it for a case without runs and advised
    `scarbook eval .`; every other command says the unknown-case line."""
    project.case("good", GOOD)
    result = project.cli("show", name)
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: no case {name!r} in {project.cases_dir} — `scarbook list` shows the cases\n")


def test_several_unknown_cases_and_an_invalid_one_are_named_in_that_line(project) -> None:
    project.case("good", GOOD)
    project.case("bad", "id: bad\ntask: t\nbogus: 1\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("lint", "ghost", "bad", "spectre")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"scarbook: no case 'ghost', 'bad' (its case.yaml is invalid, see above) or 'spectre' in {project.cases_dir} "
        "— `scarbook list` shows the cases")


def test_show_of_a_case_a_named_session_did_not_run_says_so(project) -> None:
    """`show CASE --session S` where S ran other cases printed S's header line over nothing, exit 0."""
    project.config("agent: {type: demo, seed: 3}\n")
    project.case("good", GOOD)
    project.case("other", GOOD.replace("good", "other").replace("Good", "Other"))
    assert project.cli("eval", "-q", "-n", "1", "good", "-l", "only-good").exit_code in (0, 1, 3)
    res = project.cli("show", "other", "--session", "only-good")
    (sid,) = [p.parent.name for p in (project.workspaces / "history").glob("*/session.json")]
    assert (res.exit_code, res.stdout, res.stderr) == (2, "", f"scarbook: session {sid} did not run other (it ran "
                                                              "good) — `scarbook show other` shows the latest session "
                                                              "that did\n")
