"""Seeding and the workspace diff."""

from __future__ import annotations

import os
from pathlib import Path

from scarbook.models import Case, Check
from scarbook.workspace import diff_workspace, prepare_workspace, seed_manifest


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
