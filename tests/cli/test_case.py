"""`scarbook case rm / restore / trash / mv / cp`: exact messages and exit codes, on real folders."""

from __future__ import annotations

import re
from datetime import UTC
from pathlib import Path

import pytest

from tests.helpers.paths import TRANSCRIPTS

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")


CASE = """\
id: {cid}
title: Wrote the wrong file
task: write out.txt
checks:
  - {{type: file_exists, path: out.txt}}
"""


def make(project, cid: str) -> None:
    project.case(cid, CASE.format(cid=cid), seed={"README.md": "# hi\n"})


def test_rm_trash_restore_round_trip(project):
    make(project, "alpha")
    res = project.cli("case", "rm", "alpha")
    assert res.exit_code == 0, res.output
    [name] = [p.name for p in (project.workspaces / ".trash").iterdir() if not p.name.startswith(".")]
    assert re.fullmatch(r"alpha--\d{8}T\d{6}Z", name)
    assert res.stdout == (f"moved cases/alpha to the trash ({project.workspaces / '.trash' / name}); "
                          "`scarbook case restore alpha` puts it back\n")
    listed = project.cli("list")
    assert listed.exit_code == 0 and "alpha" not in listed.stdout
    trash = project.cli("case", "trash")
    assert trash.exit_code == 0
    lines = trash.stdout.splitlines()
    assert lines[0] == f"{'case':<24} {'deleted (UTC)':<17} {'trash folder':<40} title"
    when = lines[1][25:42]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d ", when), lines[1]
    assert lines[1] == f"{'alpha':<24} {when:<17} {name:<40} Wrote the wrong file"
    res = project.cli("case", "restore", "alpha")
    assert (res.exit_code, res.stdout) == (0, f"restored alpha to {project.cases_dir / 'alpha'}\n")
    assert project.cli("case", "trash").stdout == f"the trash is empty ({project.workspaces / '.trash'})\n"
    assert "alpha" in project.cli("list").stdout


def test_restore_when_the_id_is_taken_again_exits_2_naming_the_fix(project):
    make(project, "alpha")
    project.cli("case", "rm", "alpha")
    make(project, "alpha")
    res = project.cli("case", "restore", "alpha")
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: cannot restore alpha: a case named 'alpha' exists again "
                          f"({project.cases_dir / 'alpha'}) — rename it first (scarbook case mv alpha NEW-ID), "
                          "then restore again\n")


def test_mv_and_cp(project):
    make(project, "alpha")
    res = project.cli("case", "mv", "alpha", "beta")
    assert (res.exit_code, res.stdout) == (0, f"renamed alpha to beta ({project.cases_dir / 'beta'}); its earlier "
                                              "runs stay recorded under alpha\n")
    res = project.cli("case", "cp", "beta")
    assert (res.exit_code, res.stdout) == (0, f"copied beta to beta-copy ({project.cases_dir / 'beta-copy'})\n")
    res = project.cli("case", "cp", "beta", "gamma")
    assert (res.exit_code, res.stdout) == (0, f"copied beta to gamma ({project.cases_dir / 'gamma'})\n")
    assert sorted(p.name for p in project.cases_dir.iterdir()) == ["beta", "beta-copy", "gamma"]


def test_errors_exit_2_with_the_message(project):
    make(project, "alpha")
    make(project, "beta")
    table = [
        (("case", "rm", "ghost"), f"no case 'ghost' in {project.cases_dir} — `scarbook list` shows the cases"),
        # a path is read as a case's folder, as by every command that takes a case (issue 37.14)
        (("case", "rm", "../proj"), f"../proj is not a case folder of this project — name a case by its id, or a "
                                    f"folder directly in {project.cases_dir}"),
        (("case", "rm", ".."), "'..' is not a case id: a case id names one folder inside cases/ "
                               "(no '/', no '..', not hidden)"),
        (("case", "mv", "alpha", "beta"), f"a case named 'beta' already exists ({project.cases_dir / 'beta'}); "
                                          "choose another id"),
        (("case", "mv", "alpha", "Bad Id"), "case id 'Bad Id' is not valid: use lowercase letters, digits, '-' and "
                                            "'_', starting with a letter or digit"),
        (("case", "cp", "alpha", "beta"), f"a case named 'beta' already exists ({project.cases_dir / 'beta'}); "
                                          "choose another id"),
        (("case", "restore", "alpha"), f"nothing named 'alpha' in the trash ({project.workspaces / '.trash'}) — "
                                       "`scarbook case trash` lists what can be restored"),
    ]
    for args, message in table:
        res = project.cli(*args)
        assert (res.exit_code, res.stderr) == (2, f"scarbook: {message}\n"), args
    assert sorted(p.name for p in project.cases_dir.iterdir()) == ["alpha", "beta"]


def test_a_missing_argument_is_a_usage_error(project):
    res = project.cli("case", "mv", "alpha")
    assert res.exit_code == 2 and "Missing argument 'NEW'" in res.stderr


def test_eval_list_and_lint_never_load_a_trashed_case(project):
    project.bundled(agent_seed=3)
    assert project.cli("case", "rm", "write-one-line").exit_code == 0
    for args, code in ((("eval", "-n", "1"), 1), (("list",), 0)):  # eval: seeded, below threshold
        res = project.cli(*args)
        assert res.exit_code == code, (args, res.output)
        assert "write-one-line" not in res.output and "fix-json-config" in res.output, args
    assert project.cli("lint").stdout == "no hints for 3 cases\n"  # of the 4 bundled
    res = project.cli("eval", "write-one-line", "-n", "1")
    assert res.exit_code == 2
    assert res.stderr == f"scarbook: no case 'write-one-line' in {project.cases_dir} — `scarbook list` shows the cases\n"


def test_show_of_a_renamed_case_points_at_its_old_id_and_the_old_id_still_shows_its_runs(project):
    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "1").exit_code == 1
    assert project.cli("case", "mv", "write-one-line", "one-line").exit_code == 0
    res = project.cli("show", "one-line")
    assert res.exit_code == 2
    day = res.stderr.split(" on ")[1][:10]
    assert res.stderr == ("scarbook: case 'one-line' has no recorded runs — run `scarbook eval one-line` (renamed from "
                          f"write-one-line on {day}: no runs since; its earlier runs stay under write-one-line "
                          "(scarbook show write-one-line))\n")
    old = project.cli("show", "write-one-line")
    assert old.exit_code == 0 and old.stdout.startswith("write-one-line in session ")
    assert project.cli("case", "mv", "one-line", "write-one-line").exit_code == 0  # back: its runs are its own
    back = project.cli("show", "write-one-line")
    assert back.exit_code == 0 and back.stdout == old.stdout


def test_list_says_why_a_renamed_case_shows_never(project):
    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "1").exit_code == 1
    assert project.cli("case", "mv", "write-one-line", "one-line").exit_code == 0
    res = project.cli("list")
    assert res.exit_code == 0, res.output
    row = next(line for line in res.stdout.splitlines() if line.startswith("one-line "))
    assert row.split("never")[1].split()[:2] == ["renamed", "(note)"]
    day = res.stdout.split("renamed from write-one-line on ")[1][:10]
    assert res.stdout.endswith(
        "\nnotes:\n"
        f"  one-line: renamed from write-one-line on {day}: no runs since; its earlier runs stay under "
        "write-one-line (scarbook show write-one-line)\n")


def _freed_note(out: str, cid: str) -> str:
    day = out.split(f"the id {cid} was freed on ")[1][:10]
    return (f"the id {cid} was freed on {day} (deleted or renamed): the runs recorded under it before then "
            "belong to that case, not this one")


@pytest.mark.parametrize("how", ["import", "import-cases"])
def test_a_case_imported_under_an_id_whose_folder_was_removed_by_hand_starts_with_no_runs(project, how):
    import shutil

    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "1").exit_code == 1
    shutil.rmtree(project.cases_dir / "write-one-line")  # by hand: nothing records the id's owner leaving
    if how == "import":
        res = project.cli("import", str(TRANSCRIPTS / "claude_code_session.jsonl"), "--id", "write-one-line")
    else:
        cases = project.root / "cases.json"
        cases.write_text('[{"id": "write-one-line", "task": "write out.txt", '
                         '"checks": [{"type": "file_exists", "path": "workspace/out.txt"}]}]')
        res = project.cli("import-cases", str(cases))
    assert res.exit_code == 0, res.output
    listed = project.cli("list")
    row = next(line for line in listed.stdout.splitlines() if line.startswith("write-one-line "))
    assert row.split()[1:3] == ["–", "never"] and "id reused (note)" in row
    assert f"  write-one-line: {_freed_note(listed.stdout, 'write-one-line')}\n" in listed.stdout
    show = project.cli("show", "write-one-line")
    assert show.exit_code == 2
    assert show.stderr == ("scarbook: case 'write-one-line' has no recorded runs — run `scarbook eval write-one-line` "
                           f"({_freed_note(show.stderr, 'write-one-line')})\n")
    assert project.cli("eval", "write-one-line", "-n", "1").exit_code in (0, 1, 3)
    assert project.cli("show", "write-one-line").exit_code == 0  # its own runs count


def _reuse_write_one_line(project) -> tuple[str, str]:
    """Session A ran write-one-line; the case is deleted and a case with the same id (and the same
    checks) is filed by hand; session B runs the new one. Returns (A, B)."""
    import shutil
    from datetime import datetime

    from scarbook.history.store import History
    from tests.tui.test_library import record_session

    project.bundled(agent_seed=3)
    a = "20260101-000000-000aa"
    record_session(project.root, a, "2026-01-01T00:00:00+00:00", "fp",
                   {"write-one-line": ["pass"] * 10, "fix-json-config": ["pass"] * 9 + ["fail"]})
    shutil.copytree(project.cases_dir / "write-one-line", project.root / "kept")
    assert project.cli("case", "rm", "write-one-line").exit_code == 0
    shutil.copytree(project.root / "kept", project.cases_dir / "write-one-line")
    b = History(project.workspaces).new_session_id()
    record_session(project.root, b, datetime.now(UTC).isoformat(), "fp",
                   {"write-one-line": ["fail"] * 10, "fix-json-config": ["pass"] * 9 + ["fail"]})
    return a, b


def test_diff_leaves_out_an_id_given_to_another_case_between_the_sessions(project):
    a, b = _reuse_write_one_line(project)
    res = project.cli("diff", a, b, "--fail-on-regression")
    assert res.exit_code == 0, res.output  # write-one-line's 100% -> 0% is two cases, not a regression
    assert "\nfix-json-config " in res.stdout and "\nwrite-one-line " not in res.stdout
    assert res.stdout.endswith(
        "not compared (the id was given to another case between the two sessions: renamed, deleted or reused — "
        "`scarbook list` says which): write-one-line\n")


def test_show_of_a_session_from_before_the_id_was_reused_says_whose_runs_they_are(project):
    a, b = _reuse_write_one_line(project)
    old = project.cli("show", "write-one-line", "--session", a)
    assert old.exit_code == 0
    day = old.stdout.split("was freed on ")[1][:10]
    assert old.stdout.splitlines()[1] == (
        f"note: these runs are not the present case write-one-line's: session {a} ran the case that had the id "
        f"before (the id write-one-line was freed on {day} (deleted or renamed): the runs recorded under it before "
        "then belong to that case, not this one)")
    new = project.cli("show", "write-one-line")
    assert new.exit_code == 0 and new.stdout.startswith(f"write-one-line in session {b} ")
    assert "note:" not in new.stdout


def test_purge_asks_then_deletes_for_good_and_yes_skips_the_question(project):
    make(project, "alpha")
    make(project, "beta")
    assert project.cli("case", "rm", "alpha").exit_code == 0
    assert project.cli("case", "rm", "beta").exit_code == 0
    [alpha] = [p.name for p in (project.workspaces / ".trash").iterdir() if p.name.startswith("alpha--")]
    kept = project.cli("case", "purge", "alpha", input="n\n")
    assert kept.exit_code == 1
    assert kept.stdout == (f"delete 1 trashed case folder(s) for good ({alpha})? This cannot be undone [y/N]: n\n"
                           "nothing deleted\n")
    assert (project.workspaces / ".trash" / alpha / "case" / "case.yaml").is_file()
    gone = project.cli("case", "purge", "alpha", input="y\n")
    assert gone.exit_code == 0 and gone.stdout.endswith(f"deleted for good: {alpha}\n")
    assert not (project.workspaces / ".trash" / alpha).exists()
    assert project.cli("case", "restore", "alpha").exit_code == 2
    rest = project.cli("case", "purge", "--all", "--yes")
    assert rest.exit_code == 0 and rest.stdout.startswith("deleted for good: beta--")
    assert project.cli("case", "trash").stdout == f"the trash is empty ({project.workspaces / '.trash'})\n"


@pytest.mark.parametrize("args", [[], ["alpha", "--all"]])
def test_purge_needs_a_case_id_or_all_but_not_both(project, args):
    res = project.cli("case", "purge", *args)
    assert res.exit_code == 2
    assert res.stderr.endswith("Error: name a case id or trash folder (see `scarbook case trash`), or pass --all "
                               "— not both\n")


def test_trash_lists_a_planted_link_as_refused_and_purge_removes_the_link_only(project, tmp_path):
    import os

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (project.workspaces / ".trash").mkdir(parents=True)
    os.symlink(outside, project.workspaces / ".trash" / "evil--20261203T150000Z")
    listed = project.cli("case", "trash")
    assert listed.exit_code == 0
    assert listed.stderr == (f"refused: {project.workspaces / '.trash' / 'evil--20261203T150000Z'} is a symlink to "
                             f"{outside}, not a case scarbook deleted (planted?): it is never restored — "
                             "`scarbook case purge evil--20261203T150000Z` removes the link only\n")
    assert project.cli("case", "purge", "evil--20261203T150000Z", "--yes").exit_code == 0
    assert (outside / "keep.txt").read_text() == "mine"
    assert not os.path.lexists(project.workspaces / ".trash" / "evil--20261203T150000Z")


def test_report_against_a_session_from_before_an_id_was_reused_leaves_that_case_out(project):
    a, b = _reuse_write_one_line(project)
    res = project.cli("report", b, "--against", a, "--html", str(project.root / "r.html"))
    assert res.exit_code == 0, res.output
    against = res.stdout.split("against the baseline (session: ")[1]
    assert "\nwrite-one-line " not in against and "\nfix-json-config " in against
    assert ("\nnot compared (the id was given to another case since the baseline: renamed, deleted or reused — "
            "`scarbook list` says which): write-one-line\n") in against
    assert "gate: no detectable change against the baseline" in against
    html = (project.root / "r.html").read_text()
    assert ("<p>Given to another case since the baseline (renamed, deleted or reused; not compared): "
            "write-one-line.</p>") in html


def test_eval_against_a_session_from_before_an_id_was_reused_leaves_that_case_out(project, monkeypatch):
    a, _ = _reuse_write_one_line(project)
    summary = project.root / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    res = project.cli("eval", "write-one-line", "fix-json-config", "-n", "1", "--against", a)
    against = res.stdout.split("against the baseline (session: ")[1]
    assert "\nwrite-one-line " not in against
    assert ("\nnot compared (the id was given to another case since the baseline: renamed, deleted or reused — "
            "`scarbook list` says which): write-one-line\n") in against
    assert ("Given to another case since the baseline (renamed, deleted or reused; not compared): "
            "`write-one-line`.") in summary.read_text()
