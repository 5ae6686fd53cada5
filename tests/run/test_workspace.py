"""Seeding and the workspace diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scarbook.fs import safefs
from scarbook.models import Case, Check
from scarbook.run.workspace import SMALL_SEED, Snapshot, diff_workspace, prepare_workspace, seed_manifest


def make_case(tmp_path: Path) -> Case:
    root = tmp_path / "cases" / "c"
    (root / "seed" / "bin").mkdir(parents=True)
    (root / "seed" / "README.md").write_text("# tiny-agent\n")
    script = root / "seed" / "bin" / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o755)
    return Case(id="c", task="t", checks=[Check("file_exists", {"path": "x"})], root=root,
                seed_files={"notes/inline.txt": "inline\n"})


def test_seed_copies_content_and_mode_and_inline_files(tmp_path):
    case = make_case(tmp_path)
    ws = tmp_path / "ws"
    prepare_workspace(case, ws, seed_manifest(case))
    assert (ws / "README.md").read_text() == "# tiny-agent\n"
    assert (ws / "notes" / "inline.txt").read_text() == "inline\n"
    assert os.access(ws / "bin" / "run.sh", os.X_OK)  # a seeded script stays executable


def test_an_inline_seed_written_with_dot_slash_wins_over_the_seed_folders_file_as_a_plain_name_does(tmp_path):
    """Inline './README.md' beside seed/README.md loaded fine (load_case: the inline one wins) and then
    errored in every run's seeding: 'File exists: README.md' (two manifest entries for one file)."""
    case = make_case(tmp_path)
    case.seed_files = {"./README.md": "inline\n", "./notes//x.txt": "x"}
    ws = tmp_path / "ws"
    snap = prepare_workspace(case, ws, seed_manifest(case))
    assert (ws / "README.md").read_text() == "inline\n"
    assert sorted(snap.files) == ["README.md", "bin/run.sh", "notes/x.txt"]


def test_seeded_files_keep_exactly_their_permission_bits_whatever_the_umask(tmp_path):
    case = make_case(tmp_path)
    modes = {"shared.txt": 0o666, "private.txt": 0o600, "group.txt": 0o664}
    for name, mode in modes.items():
        (case.root / "seed" / name).write_text(name)
        os.chmod(case.root / "seed" / name, mode)
    (case.root / "seed" / "big.bin").write_bytes(b"x" * (2 << 20))  # past SMALL_SEED: copied, not held
    os.chmod(case.root / "seed" / "big.bin", 0o660)
    modes["big.bin"] = 0o660
    old = os.umask(0o022)
    try:
        prepare_workspace(case, tmp_path / "ws", seed_manifest(case))
    finally:
        os.umask(old)
    assert {n: os.stat(tmp_path / "ws" / n).st_mode & 0o777 for n in modes} == modes
    assert (tmp_path / "ws" / "big.bin").stat().st_size == 2 << 20
    assert os.stat(tmp_path / "ws" / "notes" / "inline.txt").st_mode & 0o777 == 0o644  # inline: as any new file


def test_diff_created_modified_deleted_and_same_bytes_rewrite_is_not_a_change(tmp_path):
    case = make_case(tmp_path)
    ws = tmp_path / "ws"
    snap = prepare_workspace(case, ws)
    (ws / "README.md").write_text("# tiny-agent\n")  # same bytes, new mtime
    (ws / "notes" / "inline.txt").write_text("INLINE\n")  # same size, other bytes
    (ws / "bin" / "run.sh").unlink()
    (ws / "tmp.txt").write_text("x")
    diff = diff_workspace(snap, ws)
    assert diff.created == ["tmp.txt"]
    assert diff.modified == ["notes/inline.txt"]
    assert diff.deleted == ["bin/run.sh"]


def test_a_deleted_workspace_deletes_every_seeded_file(tmp_path):
    case = make_case(tmp_path)
    ws = tmp_path / "ws"
    snap = prepare_workspace(case, ws)
    import shutil

    shutil.rmtree(ws)
    assert diff_workspace(snap, ws).deleted == ["README.md", "bin/run.sh", "notes/inline.txt"]


@pytest.fixture(params=["dirfd", "portable"])
def fs_mode(request, monkeypatch) -> str:
    """The diff also runs through safefs's portable walk (what Windows takes), forced here."""
    monkeypatch.setattr(safefs, "MODE", request.param)
    return request.param


def test_diff_never_opens_or_follows_what_the_agent_swapped_in(tmp_path, fs_mode):
    case = make_case(tmp_path)
    ws = tmp_path / "ws"
    snap = prepare_workspace(case, ws)
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.txt").write_text("x")
    (ws / "README.md").unlink()
    os.mkfifo(ws / "README.md")  # same size as... nothing: opening it for a digest would block forever
    (ws / "notes" / "inline.txt").unlink()
    (ws / "notes" / "inline.txt").symlink_to(ws / "bin" / "run.sh")
    (ws / "bin").rename(ws / "bin2")
    (ws / "bin").symlink_to(outside)  # a link to a folder is listed, never entered
    diff = diff_workspace(snap, ws)
    assert diff.created == ["bin", "bin2/run.sh"]
    assert diff.modified == ["README.md", "notes/inline.txt"]
    assert diff.deleted == ["bin/run.sh"]


def test_an_empty_seed_file_replaced_with_a_fifo_is_modified(tmp_path, fs_mode):
    case = Case(id="c", task="t", seed_files={"empty.txt": ""})
    ws = tmp_path / "ws"
    snap = prepare_workspace(case, ws)
    (ws / "empty.txt").unlink()
    os.mkfifo(ws / "empty.txt")
    assert diff_workspace(snap, ws).modified == ["empty.txt"]


def test_a_folder_deeper_than_the_walk_goes_is_a_change_itself(tmp_path, fs_mode, monkeypatch):
    """(It raised TooDeep, which made the run an infra error: an agent that knew it failed could leave a deep
    tree to take the run out of its rate; now the folder past the limit is what the diff names.)"""
    monkeypatch.setattr(safefs, "MAX_DEPTH", 5)
    ws = tmp_path / "ws"
    (ws / "a/b/c/d/e/f/g").mkdir(parents=True)
    (ws / "a/b/c/d/e/f/g/hidden.txt").write_text("x")
    snap = Snapshot()  # an empty seed (a snapshot of another folder is refused now: issue 25)
    assert diff_workspace(snap, ws).created == ["a/b/c/d/e/f"]
    (ws / "a/b/c/d/e/f/g/hidden.txt").unlink()
    (ws / "a/b/c/d/e/f/g").rmdir()
    (ws / "a/b/c/d/e/f").rmdir()
    (ws / "a/b/c/d/e/x.txt").write_text("x")
    assert diff_workspace(snap, ws).created == ["a/b/c/d/e/x.txt"]


def test_a_file_deleted_while_the_walk_lists_its_folder_does_not_cut_the_listing(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(20):
        (ws / f"f{i:02d}.txt").write_text("x")
    gone: list[str] = []

    def look(rel: str) -> bool:  # a leftover process deletes the first file right as it is looked at
        if not gone:
            gone.append(rel)
            (ws / rel).unlink()
        return True

    found = safefs.walk(ws, look)
    assert sorted(found) == sorted(f"f{i:02d}.txt" for i in range(20) if f"f{i:02d}.txt" not in gone)


def _seeded_keys(snap_root: Path) -> set[tuple[int, int]]:
    return {(st.st_dev, st.st_ino) for st in (p.lstat() for p in snap_root.rglob("*") if not p.is_dir())}


def test_a_pruned_workspace_without_folders_is_listed_once_and_goes_whole(tmp_path, monkeypatch):
    """Issue 38.3: a passing run's workspace (most hold no folder) is listed once and its files unlinked
    there; the walk for the seeded files and rmtree's own listing were two (each call a hand-over of the
    GIL between the janitor's thread and the loop's)."""
    from scarbook.run.workspace import remove_workspace

    ws = tmp_path / "workspaces" / "s1" / "c" / "1"
    prepare_workspace(Case(id="c", task="t", seed_files={"README.md": "# seed\n", "b.txt": "b"}), ws)
    (ws / "out.txt").write_text("made by the agent")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workspace's")
    (ws / "link").symlink_to(outside)
    seeded = _seeded_keys(ws) & safefs._SEEDED
    assert len(seeded) == 2
    listed = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda *a: listed.append(a) or real(*a))
    remove_workspace(ws)
    assert len(listed) == 1  # 2 before
    assert not ws.exists() and (ws.parent).is_dir()
    assert outside.read_text() == "not the workspace's"  # the link went, not what it leads to
    assert not seeded & safefs._SEEDED  # forgotten: a later file with a reused inode is not taken for a seed


def test_a_pruned_workspace_with_folders_goes_whole_and_a_run_folder_swapped_for_a_link_is_left(tmp_path):
    from scarbook.run.workspace import remove_workspace

    case = Case(id="c", task="t", seed_files={"a/b/c.txt": "deep", "top.txt": "top"})
    ws = tmp_path / "workspaces" / "s1" / "c" / "1"
    prepare_workspace(case, ws)
    seeded = _seeded_keys(ws) & safefs._SEEDED
    assert len(seeded) == 2
    remove_workspace(ws)
    assert not ws.exists() and not seeded & safefs._SEEDED
    outside = tmp_path / "outside"
    (outside / "d").mkdir(parents=True)
    (outside / "keep.txt").write_text("mine")
    two = ws.parent / "2"
    two.symlink_to(outside)  # the agent swapped its run's folder for a link to a folder outside
    remove_workspace(two)
    assert (outside / "keep.txt").read_text() == "mine" and (outside / "d").is_dir()


def _swapping_agent(project, entry: Path, when: str, act: str = "") -> None:
    """A command agent that, where `when` (Python over os.environ) holds, swaps the seed file `entry` for a FIFO
    (or does `act`): the seed changes under the running session (a FIFO in seed/ from the start, or a link to a
    missing file, is refused when the case loads)."""
    import sys

    act = act or f"os.remove({str(entry)!r}); os.mkfifo({str(entry)!r})"
    swap = f"import os\nif {when}:\n    {act}\n"
    (project.root / "agent.py").write_text(swap)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {project.root / 'agent.py'}]}}\n"
                   "isolation: none\nretry_infra: 0\nconcurrency: 1\n")


def _eval_or_alarm(project, runs: int, exit_code: int = 3) -> list:
    """`eval --runs N` that must end (a hang fails the test, as KeyboardInterrupt, instead of hanging the suite)
    with `exit_code`; its runs."""
    import signal

    signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.alarm(20)
    try:
        result = project.cli("eval", "--runs", str(runs), "-q")
    finally:
        signal.alarm(0)
    assert result.exit_code == exit_code, result.output
    history = project.load().history
    return list(history.runs(history.sessions()[0].id))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
@pytest.mark.parametrize("kind", ["fifo", "dangling-link"])
def test_a_seed_entry_that_is_no_file_makes_the_run_an_error_naming_it_never_a_hang(project, kind):
    """A named pipe in seed/ was read for the manifest on the event loop: the session waited for a writer
    forever (no per-run timeout covers the seeding), in CI until the job was killed. A link to a seed file
    that is gone said only 'No such file or directory'. (Both are refused when the case loads now: here they
    appear under the running session — case a's agent, run first, swaps seed/odd for a FIFO, or removes the
    file seed/odd links to.)"""
    entry = project.cases_dir / "c" / "seed" / "odd"
    gone = project.cases_dir / "c" / "seed" / "gone"
    _swapping_agent(project, entry, "os.environ['SCARBOOK_CASE'] == 'a'",
                    "" if kind == "fifo" else f"os.remove({str(gone)!r})")
    project.case("a", "id: a\ntask: t\nchecks: [{type: command, run: 'true'}]\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n", {"README.md": "# r\n"})
    if kind == "fifo":
        entry.write_text("a file, when the case loads")
        why = f"{entry} is a FIFO, not a regular file"
    else:
        gone.write_text("a file, when the case loads")
        entry.symlink_to(gone)
        why = f"No such file or directory: {entry}"
    [run] = [r for r in _eval_or_alarm(project, 1) if r.case_id == "c"]
    ws = project.workspaces / run.session_id / "c" / "1"
    assert (run.status, run.reason) == ("error", f"could not prepare the workspace {ws}: {why}")


def _big_seed_changed_by_run_1(project, act: str = "", exit_code: int = 3) -> tuple:
    """Case c, seeded with big.bin (over SMALL_SEED: copied from seed/ at every run, its bytes not held), run twice;
    run 1's agent does `act` to it (str.format'ted with big=its path; default: a FIFO in its place). Run 1 passes:
    run 2's record, its workspace and big.bin's path."""
    big = project.cases_dir / "c" / "seed" / "big.bin"
    _swapping_agent(project, big, "os.environ['SCARBOOK_RUN'] == '1'", act.format(big=str(big)))
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: big.bin}]\n")
    big.parent.mkdir()
    big.write_bytes(b"x" * (SMALL_SEED + 1))
    first, second = _eval_or_alarm(project, 2, exit_code)
    assert first.status == "pass"
    return second, project.workspaces / second.session_id / "c" / "2", big


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_large_seed_file_swapped_for_a_fifo_mid_session_makes_the_next_run_an_error_never_a_hang(project):
    """Run 1's agent swapped the large seed file for a named pipe, and run 2's copy opened the pipe and waited for
    a writer — the session hung, as no per-run timeout covers seeding."""
    second, ws, big = _big_seed_changed_by_run_1(project)
    assert (second.status, second.reason) == ("error", f"could not prepare the workspace {ws}: {big} is a FIFO, not "
                                                       "a regular file")


# run 1's agent writes into the large seed file (isolation: none), keeping it a regular file: grown by a byte, or
# its bytes changed in place with its size and mtime put back (only its ctime tells)
GROW = "open({big!r}, 'ab').write(b'y')"
IN_PLACE = ("st = os.stat({big!r}); f = open({big!r}, 'r+b'); f.write(b'y'); f.close(); "
            "os.utime({big!r}, ns=(st.st_atime_ns, st.st_mtime_ns))")


@pytest.mark.parametrize("act", [GROW, IN_PLACE], ids=["grown", "same-size-and-mtime"])
def test_a_large_seed_file_changed_mid_session_makes_the_next_run_an_error_naming_it(project, act):
    """A large seed file's digest was taken once, for the session's first run of the case: a change after it (here
    run 1's agent's) gave run 2 other seed content, silently — the session's runs no longer ran one case."""
    second, ws, big = _big_seed_changed_by_run_1(project, act)
    assert (second.status, second.reason) == (
        "error", f"could not prepare the workspace {ws}: seed file {big} changed during the session (its content is "
                 "not what the session's earlier runs were seeded with) — put it back as it was, or start a new "
                 "session to seed from the new content")


def test_a_large_seed_file_touched_or_copied_back_mid_session_seeds_the_next_run_as_it_is(project):
    """Its stat changed, its bytes did not (a touch, the same file copied over it): run 2 digests it and runs."""
    second, _, big = _big_seed_changed_by_run_1(project, "import shutil; shutil.copy({big!r}, {big!r} + '.new'); "
                                                         "os.replace({big!r} + '.new', {big!r})", exit_code=0)
    assert (second.status, big.read_bytes()) == ("pass", b"x" * (SMALL_SEED + 1))  # (its workspace went: it passed)
