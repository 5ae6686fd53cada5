"""A session's label is a name to pick it by: the words that pick the newest sessions are not one."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = "id: c\ntask: t\nchecks: [{type: file_exists, path: x}]\n"


@pytest.mark.parametrize("label", ["latest", "previous", " latest "])
def test_a_label_scarbook_reads_as_the_newest_sessions_is_refused_before_any_run(project, label) -> None:
    """`eval --label latest` ran and recorded the session; `report latest` then picked the newest session
    whatever its label, and `report previous` the one before: the label picked nothing."""
    project.config("agent: {type: demo, seed: 7}\n")
    project.case("c", CASE)
    word = label.strip()
    for extra in ((), ("--dry-run",)):
        result = project.cli("eval", "--runs", "2", "--label", label, *extra)
        assert (result.exit_code, result.stderr) == (
            2, f"scarbook: label {word!r} is a word scarbook reads as a session (latest: the newest, previous: the "
               f"one before), so the session could not be picked by it — choose another label, e.g. {word}-run\n")
    assert not list((project.workspaces / "history").glob("*/session.json"))  # nothing ran, nothing recorded


def test_a_session_labelled_latest_before_the_refusal_is_still_picked_by_its_id(project) -> None:
    project.config("agent: {type: demo, seed: 7}\n")
    project.case("c", CASE)
    assert project.cli("eval", "--runs", "2", "--label", "old").exit_code in (0, 1)
    assert project.cli("eval", "--runs", "2", "--label", "new").exit_code in (0, 1)
    for path in (project.workspaces / "history").glob("*/session.json"):  # labelled so by an older scarbook
        data = json.loads(path.read_text())
        if data["session"]["1"]["label"] == "old":
            data["session"]["1"]["label"] = "latest"
            path.write_text(json.dumps(data))
            older = path
    sid = older.parent.name
    shown = project.cli("report", sid)
    assert shown.exit_code in (0, 1) and sid in shown.stdout, shown.output
    assert sid not in project.cli("report", "latest").stdout  # the word still picks the newest session


def test_a_label_that_is_a_recorded_sessions_id_is_refused_before_any_run(project) -> None:
    """`eval --label <an existing session's id>` ran and recorded the session; `report <id>` matches ids before
    labels, so it picked the older session and the new one could not be picked by its label."""
    project.config("agent: {type: demo, seed: 7}\n")
    project.case("c", CASE)
    assert project.cli("eval", "--runs", "2").exit_code in (0, 1)
    (sid,) = [p.parent.name for p in (project.workspaces / "history").glob("*/session.json")]
    for extra in ((), ("--dry-run",)):
        result = project.cli("eval", "--runs", "2", "--label", sid, *extra)
        assert (result.exit_code, result.stderr) == (
            2, f"scarbook: label {sid!r} is the id of a session already recorded, so `scarbook report {sid}` would "
               "pick that session, not this one — choose another label\n")
    assert len(list((project.workspaces / "history").glob("*/session.json"))) == 1  # nothing more recorded


def test_a_label_over_the_limit_is_refused_before_any_run(project) -> None:
    """A 5,000-character label ran and was recorded, and every listing and header that shows it."""
    project.config("agent: {type: demo, seed: 7}\n")
    project.case("c", CASE)
    for extra in ((), ("--dry-run",)):
        result = project.cli("eval", "--runs", "2", "--label", "x" * 5000, *extra)
        assert (result.exit_code, result.stderr) == (
            2, f"scarbook: label {'x' * 24!r}… is 5,000 characters long; at most 120 (a name to pick the session "
               "by, e.g. prompt-v2) — choose a shorter label\n")
    assert not (project.workspaces / "history").exists() or not list((project.workspaces / "history").iterdir())
    assert project.cli("eval", "--runs", "2", "--label", "x" * 120).exit_code in (0, 1)  # the limit itself runs


@pytest.mark.parametrize("label", ["fix parser\n\nthe body of the commit", "a\tb", "v2\x1b[31m"])
def test_a_label_with_a_control_character_is_refused_before_any_run(project, label) -> None:
    """`--label "$(git log -1 --format=%B)"` recorded the commit's body in the label: `scarbook sessions` broke its
    table over the lines, and `report 'fix parser'` found no session of that name."""
    project.config("agent: {type: demo, seed: 7}\n")
    project.case("c", CASE)
    result = project.cli("eval", "--runs", "2", "--label", label)
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: label {label.strip()[:40]!r} holds a control character (a newline, a tab) — a label is one line "
           "to pick the session by: choose one, e.g. prompt-v2\n")
    assert not list((project.workspaces / "history").glob("*/session.json"))


def test_long_notes_do_not_push_the_config_and_git_columns_out_of_line(project) -> None:
    """A session of several agents is noted `BASELINE (--agents)`: past 24 characters its notes pushed that row's
    config and git columns right of the header's (newcomer round five)."""
    project.config("agent: {type: demo, seed: 7}\nagents:\n  the-baseline-agent-of-this-team: {type: demo, seed: 7}\n"
                   "  candidate: {type: demo, seed: 8}\n")
    project.case("c", CASE)
    assert project.cli("eval", "--runs", "2", "--agents", "the-baseline-agent-of-this-team,candidate").exit_code in (0, 1)
    assert project.cli("eval", "--runs", "2", "--label", "short").exit_code in (0, 1)
    header, *rows = project.cli("sessions").stdout.splitlines()
    assert len(rows) == 2
    config = header.index("config")
    for row in rows:
        assert row[config:config + 13].strip() and " " not in row[config:config + 12], (header, row)
    assert rows[1].endswith("the-baseline-agent-of-this-team (--agents)"), rows[1]
