"""`scarbook init` in a folder where something is in the way: a message naming it and the fix, exit 2,
and nothing written — never a traceback, and never "already exists" for a scarbook.yaml `scarbook list`
cannot read (which sent the user back to `scarbook init`, in a loop)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main


def init(*args: str):
    return CliRunner().invoke(main, ["init", *args])


@pytest.mark.parametrize(("name", "make", "what"), [
    ("scarbook.yaml", os.mkdir, "a directory"),
    pytest.param("scarbook.yaml", lambda p: os.symlink(p, p), "a symlink that leads nowhere", id="link-loop"),
    ("cases", lambda p: p.write_text("x"), "a file"),
    (".gitignore", os.mkdir, "a directory"),
])
def test_something_in_the_way_is_named_and_nothing_is_written(tmp_path: Path, name, make, what) -> None:
    make(tmp_path / name)
    before = sorted(os.listdir(tmp_path))
    result = init(str(tmp_path))
    assert result.exit_code == 2
    want = "a folder" if name == "cases" else "a file"
    assert result.stderr == (f"scarbook: {tmp_path / name} is {what}, where `scarbook init` makes {want} — "
                             f"move it aside (mv {tmp_path / name} {tmp_path / name}.old) and run `scarbook init` "
                             "again; nothing was written\n")
    assert sorted(os.listdir(tmp_path)) == before


def test_a_folder_below_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "proj"
    result = init(str(target))
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: cannot create the folder {target}: {tmp_path / 'afile'} (on the way to "
                             f"{target}) is a file, not a folder — choose another folder\n")


def test_a_gitignore_that_is_not_utf8_still_gets_the_line(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_bytes(b"caf\xe9/\n")  # Latin-1: git reads it as bytes, so may scarbook
    result = init(str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".gitignore").read_bytes() == b"caf\xe9/\n\n# scarbook: run scratch dirs and history\n/workspaces/\n"
    assert (tmp_path / "scarbook.yaml").is_file() and (tmp_path / "cases").is_dir()
