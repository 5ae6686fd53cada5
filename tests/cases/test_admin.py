"""Case management in the core (scarbook/cases/admin.py, case_lineage.py): trash and restore, rename,
duplicate, on real case folders and real history written by `scarbook eval` with the demo agent."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from scarbook.cases import admin as case_admin
from scarbook.cases.admin import duplicate_case, rename_case, running_case_ids
from scarbook.cases.io import load_case, load_cases
from scarbook.cases.trash import list_trash, restore_case, trash_case
from scarbook.cases.verifications import Verification, VerificationStore
from scarbook.errors import ScarbookError
from scarbook.fs import files
from scarbook.models import SessionInfo
from scarbook.views.library_rows import build_rows

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = """\
id: {cid}
# why this case exists: keep this comment
title: Wrote the wrong file
task: write out.txt
checks:
  - {{type: file_exists, path: out.txt}}
"""


def make(project, cid: str, seed: dict[str, str] | None = None) -> Path:
    return project.case(cid, CASE.format(cid=cid), seed=seed or {"README.md": "# hi\n"}).parent


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def ids(project) -> list[str]:
    return [c.id for c in load_cases(project.cases_dir).cases]


# -- trash and restore ------------------------------------------------------------------------------
def test_trash_moves_the_folder_out_of_cases_and_restore_puts_it_back_whole(project):
    folder = make(project, "alpha")
    before = tree(folder)
    entry = trash_case(project.load(), "alpha")
    assert not folder.exists() and ids(project) == []
    assert entry.path.parent == project.workspaces / ".trash"
    [listed] = list_trash(project.load())
    assert (listed.case_id, listed.origin, listed.title) == ("alpha", "cases/alpha", "Wrote the wrong file")
    assert tree(listed.path / "case") == before
    restored = restore_case(project.load(), "alpha")
    assert restored.name == entry.name
    assert tree(folder) == before and ids(project) == ["alpha"]
    assert list_trash(project.load()) == [] and not entry.path.exists()


def test_two_deletions_of_one_id_in_one_second_do_not_collide(project):
    make(project, "alpha")
    first = trash_case(project.load(), "alpha")
    (make(project, "alpha") / "second.txt").write_text("the second one")
    second = trash_case(project.load(), "alpha")
    assert first.name != second.name and second.name.startswith("alpha--")
    assert {e.name for e in list_trash(project.load())} == {first.name, second.name}
    restore_case(project.load(), "alpha")  # the latest deletion
    assert (project.cases_dir / "alpha" / "second.txt").read_text() == "the second one"
    with pytest.raises(ScarbookError) as exc:
        restore_case(project.load(), first.name)
    assert str(exc.value) == (f"cannot restore alpha: a case named 'alpha' exists again ({project.cases_dir / 'alpha'}) "
                              "— rename it first (scarbook case mv alpha NEW-ID), then restore again")
    assert (first.path / "case" / "case.yaml").is_file()  # refused: nothing moved


def test_restore_of_nothing_names_the_list_command(project):
    with pytest.raises(ScarbookError) as exc:
        restore_case(project.load(), "ghost")
    assert str(exc.value) == (f"nothing named 'ghost' in the trash ({project.workspaces / '.trash'}) — "
                              "`scarbook case trash` lists what can be restored")


def test_an_invalid_case_can_be_deleted(project):
    (project.cases_dir / "Broken Case").mkdir()
    (project.cases_dir / "Broken Case" / "case.yaml").write_text("id: [\n")
    entry = trash_case(project.load(), "Broken Case")
    assert entry.title == "(invalid case)" and not (project.cases_dir / "Broken Case").exists()


def test_a_forged_trash_entry_cannot_restore_outside_cases(project):
    make(project, "alpha")
    entry = trash_case(project.load(), "alpha")
    (entry.path / "trashed.json").write_text('{"case_id": "../../escaped", "trashed_at": "x", "origin": "x"}')
    with pytest.raises(ScarbookError) as exc:
        restore_case(project.load(), entry.name)
    assert "'../../escaped' is not a case id" in str(exc.value)
    assert not (project.root / "escaped").exists() and (entry.path / "case").is_dir()


def test_across_filesystems_a_move_copies_then_removes(project, monkeypatch):
    folder = make(project, "alpha")
    before = tree(folder)
    real = os.rename
    calls = []

    def no_cross_device(src, dst, *a, **kw):
        calls.append(src)
        if len(calls) == 1:  # the direct move cases/alpha -> trash fails as across devices
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(case_admin.os, "rename", no_cross_device)
    entry = trash_case(project.load(), "alpha")
    assert len(calls) == 3  # refused, then the copy into place, then the original set aside
    assert tree(entry.path / "case") == before
    assert sorted(p.name for p in project.cases_dir.iterdir()) == []


@pytest.mark.parametrize("bad, message", [
    ("", "type a case id: the name of a folder in cases/"),
    ("..", "'..' is not a case id: a case id names one folder inside cases/ (no '/', no '..', not hidden)"),
    ("../proj", "'../proj' is not a case id: a case id names one folder inside cases/ (no '/', no '..', not hidden)"),
    ("a/b", "'a/b' is not a case id: a case id names one folder inside cases/ (no '/', no '..', not hidden)"),
    (".trash", "'.trash' is not a case id: a case id names one folder inside cases/ (no '/', no '..', not hidden)"),
    ("ghost", "no case 'ghost' in {cases} — `scarbook list` shows the cases"),
])
def test_trash_refuses_names_that_are_not_a_case_folder(project, bad, message):
    make(project, "alpha")
    with pytest.raises(ScarbookError) as exc:
        trash_case(project.load(), bad)
    assert str(exc.value) == message.format(cases=project.cases_dir)
    assert ids(project) == ["alpha"] and project.root.is_dir()


# -- rename -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("new, message", [
    ("", "type a case id: lowercase letters, digits, '-' and '_' (it names the folder cases/<id>/)"),
    ("../x", "case id '../x' is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit"),
    ("a/b", "case id 'a/b' is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit"),
    ("Beta", "case id 'Beta' is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit"),
    ("beta", "a case named 'beta' already exists ({cases}/beta); choose another id"),
    ("alpha", "case 'alpha' already has that id"),
])
def test_rename_refuses_bad_and_taken_ids(project, new, message):
    make(project, "alpha")
    make(project, "beta")
    with pytest.raises(ScarbookError) as exc:
        rename_case(project.load(), "alpha", new)
    assert str(exc.value) == message.format(cases=project.cases_dir)
    assert ids(project) == ["alpha", "beta"]


def test_rename_moves_the_folder_and_the_id_keeping_comments(project):
    make(project, "alpha")
    case = rename_case(project.load(), "alpha", "alpha-2")
    assert case.id == "alpha-2" and case.root == project.cases_dir / "alpha-2"
    assert ids(project) == ["alpha-2"]
    text = (project.cases_dir / "alpha-2" / "case.yaml").read_text()
    assert text == CASE.format(cid="alpha-2")  # only the id line changed
    assert (project.cases_dir / "alpha-2" / "seed" / "README.md").read_text() == "# hi\n"


def test_rename_of_a_flow_style_case_rewrites_it_whole(project):
    project.case("alpha", "{id: alpha, task: write out.txt, checks: [{type: file_exists, path: out.txt}]}\n")
    rename_case(project.load(), "alpha", "beta")
    assert load_case(project.cases_dir / "beta").id == "beta"


def test_a_crash_between_move_and_id_rewrite_leaves_a_case_eval_refuses_with_the_fix(project, monkeypatch):
    make(project, "alpha")

    def crash(*_a, **_kw):
        raise KeyboardInterrupt  # the process dies here

    monkeypatch.setattr(case_admin, "atomic_write_text", crash)
    with pytest.raises(KeyboardInterrupt):
        rename_case(project.load(), "alpha", "beta")
    found = load_cases(project.cases_dir)
    assert found.cases == []  # never run under the wrong id
    [problem] = found.problems
    assert str(problem) == (f"{project.cases_dir / 'beta' / 'case.yaml'}:1: id 'alpha' differs from its folder name "
                            "'beta' — rename the folder to 'alpha' or set 'id: beta'")


def test_rename_keeps_history_under_the_old_id_and_the_library_says_so(project):
    project.bundled(agent_seed=3)
    res = project.cli("eval", "write-one-line", "-n", "2")
    assert res.exit_code == 1, res.output
    VerificationStore(project.workspaces).save([Verification("write-one-line", "catches the scar", "d", digest=(
        __import__("scarbook.cases.io", fromlist=["case_digest"]).case_digest(load_case(project.cases_dir / "write-one-line"))))])
    rename_case(project.load(), "write-one-line", "one-line")
    rows = {r.key: r for r in build_rows(project.load())}
    row = rows["one-line"]
    assert row.session_id == "" and row.runs == [] and row.stats.total == 0  # never run as one-line
    day = row.history_note.split(" on ")[1][:10]
    assert row.history_note == (f"renamed from write-one-line on {day}: no runs since; its earlier runs stay under "
                                "write-one-line (scarbook show write-one-line)")
    assert row.badge == "verified"  # same checks: the verification moved with it
    hist = project.load().history.latest_by_case(["write-one-line"])
    assert len(hist["write-one-line"].runs) == 2  # still readable under the old id
    res = project.cli("eval", "one-line", "-n", "2")
    assert res.exit_code == 1, res.output
    row = {r.key: r for r in build_rows(project.load())}["one-line"]
    assert len(row.runs) == 2 and row.history_note == ""


def test_a_new_case_under_a_deleted_id_does_not_show_the_old_runs_until_restored(project):
    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "2").exit_code == 1
    trash_case(project.load(), "write-one-line")
    make(project, "write-one-line")  # a different case, same id
    row = {r.key: r for r in build_rows(project.load())}["write-one-line"]
    assert row.runs == [] and row.history_note.startswith("the id write-one-line was freed on ")
    shutil.rmtree(project.cases_dir / "write-one-line")
    restore_case(project.load(), "write-one-line")
    row = {r.key: r for r in build_rows(project.load())}["write-one-line"]
    assert len(row.runs) == 2 and row.history_note == ""


def test_a_damaged_case_ids_file_is_reported_and_every_run_counts(project):
    make(project, "alpha")
    (project.workspaces / "history").mkdir(parents=True)
    path = project.workspaces / "history" / "case-ids.json"
    path.write_text("{not json")
    rows = build_rows(project.load())
    assert [str(x) for x in rows.problems] == [
        f"{path} cannot be read: not the expected JSON (JSONDecodeError) — move it aside (mv {path} {path}.damaged); "
        "the library then shows every run recorded under each id"]


def test_list_says_a_damaged_case_ids_file_even_after_reading_the_trends(project):
    """`list` reads the rows, then the trends: the trends' read of history cleared the shared problem
    list, so the damaged id log was never said; each read now returns its own problems."""
    make(project, "alpha")
    (project.workspaces / "history").mkdir(parents=True)
    path = project.workspaces / "history" / "case-ids.json"
    path.write_text("{not json")
    listed = project.cli("list")
    assert listed.exit_code == 0
    assert listed.stderr == (f"history: {path} cannot be read: not the expected JSON (JSONDecodeError) — move it "
                             f"aside (mv {path} {path}.damaged); the library then shows every run recorded under "
                             "each id\n")


def test_rename_and_delete_are_refused_while_a_session_runs_the_case(project):
    make(project, "alpha")
    p = project.load()
    sid = p.history.new_session_id()
    p.history.start_session(SessionInfo(id=sid, started_at="2026-12-03T10:00:00+00:00", case_ids=["alpha"]))
    try:
        assert running_case_ids(project.load()) == {"alpha": sid}
        for step in (lambda q: trash_case(q, "alpha"), lambda q: rename_case(q, "alpha", "beta")):
            with pytest.raises(ScarbookError) as exc:
                step(project.load())
            assert str(exc.value) == (f"case 'alpha' is in session {sid}, which is still running — wait for it to "
                                      "finish (or cancel it), then try again")
    finally:
        info = p.history.read_session(sid)
        info.state = "finished"
        p.history.finish_session(info)
    assert running_case_ids(project.load()) == {}
    trash_case(project.load(), "alpha")


# -- duplicate -------------------------------------------------------------------------------------
def test_duplicate_copies_every_file_under_a_fresh_id_with_a_copy_title(project):
    folder = make(project, "alpha")
    (folder / "scar").mkdir()
    (folder / "scar" / "transcript.jsonl").write_text("{}\n")
    first = duplicate_case(project.load(), "alpha")
    second = duplicate_case(project.load(), "alpha")
    assert (first.id, second.id) == ("alpha-copy", "alpha-copy-2")
    assert first.title == "Wrote the wrong file (copy)"
    copy = tree(project.cases_dir / "alpha-copy")
    original = tree(folder)
    assert copy.keys() == original.keys()
    assert {k: v for k, v in copy.items() if k != "case.yaml"} == {k: v for k, v in original.items() if k != "case.yaml"}
    assert "# why this case exists: keep this comment" in copy["case.yaml"].decode()
    assert duplicate_case(project.load(), "alpha-copy-2").id == "alpha-copy-3"  # not alpha-copy-2-copy
    named = duplicate_case(project.load(), "alpha", "gamma")
    assert named.id == "gamma" and ids(project) == ["alpha", "alpha-copy", "alpha-copy-2", "alpha-copy-3", "gamma"]


def test_duplicate_copies_a_link_that_leads_out_as_a_link_never_its_target(project, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2")
    folder = make(project, "alpha")
    (folder / "notes.txt").symlink_to(secret)
    case = duplicate_case(project.load(), "alpha")
    copied = case.root / "notes.txt"
    assert copied.is_symlink() and os.readlink(copied) == str(secret)
    assert all(b"hunter2" not in p.read_bytes() for p in case.root.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_duplicate_refuses_a_fifo_and_leaves_nothing(project):
    folder = make(project, "alpha")
    os.mkfifo(folder / "pipe")
    with pytest.raises(ScarbookError) as exc:
        duplicate_case(project.load(), "alpha")
    assert str(exc.value) == f"could not copy {folder / 'pipe'}: [Errno 22] not a regular file, not copied: '{folder / 'pipe'}'"
    assert sorted(p.name for p in project.cases_dir.iterdir()) == ["alpha"]


def test_a_crash_mid_duplicate_leaves_no_loadable_half_case(project, monkeypatch):
    folder = make(project, "alpha", seed={"a.txt": "a", "b.txt": "b", "c.txt": "c"})
    copied = []
    real_copy = shutil.copy2

    def die_on_third(src, dst, **kw):
        if len(copied) == 2:
            raise KeyboardInterrupt  # killed mid-copy
        copied.append(src)
        return real_copy(src, dst, **kw)

    monkeypatch.setattr(case_admin.shutil, "copy2", die_on_third)
    monkeypatch.setattr(case_admin.shutil, "rmtree", lambda *a, **kw: None)  # a dead process cleans nothing up
    with pytest.raises(KeyboardInterrupt):
        duplicate_case(project.load(), "alpha")
    found = load_cases(project.cases_dir)
    assert [c.id for c in found.cases] == ["alpha"] and found.problems == []
    [partial] = [p for p in project.cases_dir.iterdir() if p.name != "alpha"]
    assert partial.name.startswith(".scarbook-partial-alpha-copy-")
    monkeypatch.undo()
    assert duplicate_case(project.load(), "alpha").id == "alpha-copy"  # and the next one cleans it up
    assert sorted(p.name for p in project.cases_dir.iterdir()) == ["alpha", "alpha-copy"]
    assert tree(folder)["seed/c.txt"] == b"c"


def test_a_full_disk_during_a_rename_puts_the_case_back(project, monkeypatch):
    make(project, "alpha")

    def disk_full(*_a, **_kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(case_admin, "atomic_write_text", disk_full)
    with pytest.raises(ScarbookError) as exc:
        rename_case(project.load(), "alpha", "beta")
    assert str(exc.value) == (f"could not write {project.cases_dir / 'beta' / 'case.yaml'}: No space left on device "
                              "— nothing was renamed; alpha is as it was")
    assert ids(project) == ["alpha"] and not (project.cases_dir / "beta").exists()


def test_a_second_process_holding_the_lock_makes_a_step_wait_then_say_so(project, monkeypatch):
    from filelock import FileLock

    make(project, "alpha")
    monkeypatch.setattr(case_admin, "LOCK_WAIT_S", 0.2)
    (project.workspaces / ".trash").mkdir(parents=True)
    held = FileLock(str(project.workspaces / ".trash" / ".lock"))
    with held, pytest.raises(ScarbookError) as exc:
        trash_case(project.load(), "alpha")
    assert str(exc.value) == ("another scarbook has been changing this project's cases for 0.2 s (it holds "
                              f"{project.workspaces / '.trash' / '.lock'}) — try again when it is done")
    assert ids(project) == ["alpha"] and list_trash(project.load()) == []


def test_renaming_back_gives_the_runs_back_unless_another_case_had_the_id_since(project):
    from scarbook.cases.lineage import CaseIdLog

    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "2").exit_code == 1
    rename_case(project.load(), "write-one-line", "one-line")
    rename_case(project.load(), "one-line", "write-one-line")  # undo
    row = {r.key: r for r in build_rows(project.load())}["write-one-line"]
    assert len(row.runs) == 2 and row.history_note == ""
    assert "write-one-line" not in CaseIdLog(project.workspaces).load()

    rename_case(project.load(), "write-one-line", "one-line")
    make(project, "write-one-line")  # another case took the id, then went
    trash_case(project.load(), "write-one-line")
    rename_case(project.load(), "one-line", "write-one-line")  # not an undo any more: the runs stay hidden
    row = {r.key: r for r in build_rows(project.load())}["write-one-line"]
    assert row.runs == [] and row.history_note.startswith("renamed from one-line on ")


# -- a new case under an id with history ----------------------------------------------------------
def test_fresh_start_cuts_off_sessions_that_would_count_and_drops_a_gone_folders_rename_note():
    from scarbook.cases.lineage import IdEntry, fresh_start

    now = "2026-12-03T15:00:00+00:00"
    old = [("20261101-100000-000aa", "2026-11-01T10:00:00+00:00")]
    assert fresh_start(None, [], now) is None  # no runs under the id: nothing to record
    assert fresh_start(None, old, now) == IdEntry(now)
    freed = IdEntry("2026-11-02T00:00:00+00:00")
    assert fresh_start(freed, old, now) is freed  # already cut off after those runs
    moved = IdEntry("2026-11-02T00:00:00+00:00", renamed_from="a", before={"since": "x"})
    assert fresh_start(moved, [], now) == IdEntry("2026-11-02T00:00:00+00:00")
    assert fresh_start(moved, [("20261105-100000-000aa", "2026-11-05T10:00:00+00:00")], now) == IdEntry(now)


def test_a_new_case_folders_id_record_is_undone_when_the_case_is_not_written_and_none_for_an_existing_folder(project):
    """cases/folder_save.new_case_folder (new_case_id before it: every new case is now built whole)."""
    from scarbook.cases.folder_save import new_case_folder
    from scarbook.cases.lineage import CaseIdLog

    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "1").exit_code == 1
    log = CaseIdLog(project.workspaces)
    with pytest.raises(ScarbookError, match="a case named 'write-one-line' already exists"), \
            new_case_folder(project.load(), "write-one-line"):  # the folder exists: an edit, not a new case
        pass
    assert log.load() == {}
    shutil.rmtree(project.cases_dir / "write-one-line")
    with pytest.raises(OSError), new_case_folder(project.load(), "write-one-line"):
        assert set(log.load()) == {"write-one-line"}  # recorded before anything is written
        raise OSError(errno.ENOSPC, "No space left on device")
    assert log.load() == {}
    assert sorted(os.listdir(project.cases_dir)) == ["fix-json-config", "rename-function", "review-api-claims"]


def folder_made_at_the_last_check(monkeypatch, dest: Path, built: str) -> None:
    """os.path.lexists as another process would have it: asked about `dest` once the case is built whole in its
    hidden folder (`built`: its case.yaml's pattern under dest's folder) — the last check before the rename — it
    says nothing is there, and an empty folder is made at `dest` right after (someone else's new case, just begun)."""
    real = os.path.lexists

    def lexists(path) -> bool:
        found = real(path)
        if Path(path) == dest and not found and list(dest.parent.glob(built)):
            os.mkdir(dest)
        return found

    monkeypatch.setattr(os.path, "lexists", lexists)


@pytest.mark.parametrize("portable", [False, True], ids=["renameat2", "mkdir-then-rename"])
def test_duplicate_never_replaces_an_empty_folder_made_at_its_name_after_the_check(project, monkeypatch, portable):
    """An empty folder appears at the copy's name between duplicate's check and its rename. os.rename replaced it
    silently (POSIX lets a folder be renamed over an empty one): the copy took the place of a folder someone had
    just made. Now the rename refuses to replace anything, with the message the check gives; the empty folder
    stays as it was, and no hidden half-copy is left. Both ways of refusing are run: Linux's renameat2
    (RENAME_NOREPLACE) and the portable one (the folder made first, then the copy renamed over it)."""
    if portable:
        monkeypatch.setattr(files, "_renameat2", None)
        monkeypatch.setattr(files, "_looked_up", True)
    elif files._libc_renameat2() is None:
        pytest.skip("no renameat2 here")
    make(project, "alpha")
    dest = project.cases_dir / "beta"
    folder_made_at_the_last_check(monkeypatch, dest, ".scarbook-partial-beta-*/case.yaml")
    with pytest.raises(ScarbookError) as exc:
        duplicate_case(project.load(), "alpha", "beta")
    assert str(exc.value) == f"a case named 'beta' already exists ({dest}); choose another id"
    assert dest.is_dir() and os.listdir(dest) == []  # not replaced
    assert sorted(os.listdir(project.cases_dir)) == ["alpha", "beta"]  # no hidden half-copy left
