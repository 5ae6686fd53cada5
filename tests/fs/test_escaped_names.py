"""A recorded (escaped) name back to the file it was made from (scarbook.fs.escaped_names.real_name): found folder by
folder inside its root, never through a link, never above the root; what it cannot find or tell apart, said with
the shown name — on safefs's dir-fd path and its portable one (what Windows takes, forced here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scarbook.fs import safefs
from scarbook.fs.escaped_names import real_name


@pytest.fixture(params=["dirfd", "portable"])
def ws(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(safefs, "MODE", request.param)
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_each_escaped_part_of_a_name_is_found_in_its_folder(ws: Path) -> None:
    (ws / "d\x1b[1m").mkdir()
    (ws / "d\x1b[1m" / "plain").mkdir()
    (ws / "d\x1b[1m" / "plain" / "in\u202e.txt").write_text("x")
    os.close(os.open(os.fsencode(ws) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    assert real_name(ws, "d\\x1b[1m/plain/in\\u202e.txt") == "d\x1b[1m/plain/in\u202e.txt"
    assert real_name(ws, "bad\\udcff.txt") == "bad\udcff.txt"
    assert real_name(ws, "tmp.txt") == "tmp.txt"  # no escape in it: the name is its own, nothing listed


@pytest.mark.parametrize(("shown", "said"), [
    ("link/\\x1b[0mf.txt", "link is a symlink or inside one: not followed"),
    ("\\x1b[0mlink/\\x1b[0mf.txt", "\\x1b[0mlink is a symlink or inside one: not followed"),
    ("../outside/\\x1b[0mf.txt", "../outside/\\x1b[0mf.txt does not name a file below its folder"),
    ("\\x1b[0mgone.txt", "\\x1b[0mgone.txt does not exist"),
    ("file/\\x1b[0mf.txt", "file/\\x1b[0mf.txt does not exist"),
])
def test_a_link_a_folder_above_or_a_missing_name_is_refused_by_its_shown_name(ws: Path, shown: str, said: str) -> None:
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "\x1b[0mf.txt").write_text("SECRET")
    os.symlink(outside, ws / "link")
    os.symlink(outside, ws / "\x1b[0mlink")
    (ws / "file").write_text("a file, not a folder")
    with pytest.raises(safefs.Refused) as refused:
        real_name(ws, shown)
    assert str(refused.value) == said
    assert refused.value.missing == said.endswith("does not exist")


def test_two_files_whose_names_escape_alike_are_not_guessed_between(ws: Path) -> None:
    (ws / "\x1b[0mout.txt").write_text("ESC")
    (ws / "\\x1b[0mout.txt").write_text("backslash")  # a name the agent wrote with a backslash in it
    with pytest.raises(safefs.Refused) as refused:
        real_name(ws, "\\x1b[0mout.txt")
    assert str(refused.value) == "2 files are named \\x1b[0mout.txt once escaped: which one the run changed cannot be told"


def test_a_seed_folder_s_links_are_followed_as_seeding_follows_them(tmp_path: Path) -> None:
    seed, shared = tmp_path / "seed", tmp_path / "shared"
    seed.mkdir()
    shared.mkdir()
    (shared / "\x1b[0ma.txt").write_text("a")
    os.symlink(shared, seed / "docs")
    assert real_name(seed, "docs/\\x1b[0ma.txt", follow_links=True) == "docs/\x1b[0ma.txt"
