"""The atomic writer's durability: with durable=True the file and then its directory are fsynced
(the directory entry that names the new file is what a power cut loses otherwise); without
O_DIRECTORY (Windows) the directory step is skipped and the write still lands."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from scarbook.fs.files import atomic_write_bytes, atomic_write_text


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[os.stat_result]:
    """The stat of every fd passed to os.fsync, taken at the call (the fd is closed right after)."""
    seen: list[os.stat_result] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        seen.append(os.fstat(fd))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    return seen


def test_durable_write_fsyncs_the_file_then_its_directory(tmp_path: Path, synced: list[os.stat_result]) -> None:
    path = tmp_path / "sub" / "case.yaml"
    atomic_write_text(path, "id: new\n")
    assert path.read_text() == "id: new\n"
    assert [stat.S_ISDIR(st.st_mode) for st in synced] == [False, True]
    assert synced[1].st_ino == path.parent.stat().st_ino
    assert synced[0].st_ino == path.stat().st_ino  # the temp file synced is the one renamed into place


def test_write_that_need_not_be_durable_fsyncs_nothing(tmp_path: Path, synced: list[os.stat_result]) -> None:
    atomic_write_bytes(tmp_path / "runs.jsonl", b"{}\n", durable=False)
    assert (tmp_path / "runs.jsonl").read_bytes() == b"{}\n"
    assert synced == []


def test_without_o_directory_the_directory_is_not_opened(tmp_path: Path, synced: list[os.stat_result],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows: no O_DIRECTORY, a directory cannot be opened for fsync; the file is still synced."""
    monkeypatch.delattr(os, "O_DIRECTORY")
    path = tmp_path / "case.yaml"
    path.write_text("id: old\n")
    atomic_write_text(path, "id: new\n")
    assert path.read_text() == "id: new\n"
    assert [stat.S_ISDIR(st.st_mode) for st in synced] == [False]
    assert os.listdir(tmp_path) == ["case.yaml"]


def _directory_fsync_fails(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(code, os.strerror(code))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("code", [errno.EINVAL, errno.ENOTSUP])
def test_a_mount_that_cannot_sync_directories_still_gets_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  code: int) -> None:
    _directory_fsync_fails(monkeypatch, code)
    path = tmp_path / "case.yaml"
    atomic_write_text(path, "id: new\n")
    assert path.read_text() == "id: new\n"
    assert os.listdir(tmp_path) == ["case.yaml"]


def test_an_io_error_syncing_the_directory_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _directory_fsync_fails(monkeypatch, errno.EIO)
    path = tmp_path / "case.yaml"
    with pytest.raises(OSError, match="Input/output error") as info:
        atomic_write_text(path, "id: new\n")
    assert info.value.errno == errno.EIO
    assert os.listdir(tmp_path) == ["case.yaml"]  # renamed, but not promised to survive a power cut


@pytest.mark.parametrize("portable", [False, True], ids=["renameat2", "mkdir-then-rename"])
def test_move_into_place_moves_a_folder_and_replaces_nothing(tmp_path, monkeypatch, portable):
    """A folder goes to a free name whole; at a taken name — an empty folder, a file — it is refused with
    FileExistsError, and both stay as they were (os.rename would have replaced the empty folder)."""
    from scarbook.fs import files

    if portable:
        monkeypatch.setattr(files, "_renameat2", None)
        monkeypatch.setattr(files, "_looked_up", True)
    elif files._libc_renameat2() is None:
        pytest.skip("no renameat2 here")
    src = tmp_path / "built"
    src.mkdir()
    (src / "case.yaml").write_text("id: x\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("keep")
    for taken in ("empty", "file"):
        with pytest.raises(FileExistsError):
            files.move_into_place(src, tmp_path / taken)
    assert os.listdir(tmp_path / "empty") == [] and (tmp_path / "file").read_text() == "keep"
    files.move_into_place(src, tmp_path / "x")
    assert (tmp_path / "x" / "case.yaml").read_text() == "id: x\n" and not src.exists()


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_a_report_written_over_a_file_keeps_its_mode(project, mode) -> None:
    """`eval --json private.json` over a file its user made 0600 replaced it with a 0644 one (the temp file's
    mode, renamed over it): the report, agent outputs and all, became readable by every user of the machine.
    A report over an existing file keeps that file's permissions; a new one is 0666 less the umask. (A file made
    read-only, 0444, is not written over at all: tests/cli/test_read_only_report.py.)"""
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    report, fresh = project.root / "private.json", project.root / "fresh.json"
    report.write_text("old")
    report.chmod(mode)
    assert project.cli("eval", "--runs", "1", "-q", "--json", str(report), "--junit", str(fresh)).exit_code in (0, 1)
    assert stat.S_IMODE(report.stat().st_mode) == mode
    assert report.read_text().startswith("{")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
