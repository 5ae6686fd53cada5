"""A remote run's folder packed on the worker and unpacked on the driver: capped, links not followed."""

from __future__ import annotations

import contextlib
import os
import zlib

import pytest

from scarbook.run.workspace_bundle import Bundle, Entry, pack, unpack


def test_round_trip_keeps_files_modes_folders_and_links(tmp_path):
    src = tmp_path / "ws"
    (src / "sub" / "empty").mkdir(parents=True)
    (src / "a.txt").write_text("hello\n")
    (src / "sub" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(src / "sub" / "run.sh", 0o755)
    os.symlink("a.txt", src / "link")
    bundle = pack(src, cap=1 << 20)
    assert bundle.omitted == []
    dest = tmp_path / "back"
    assert unpack(bundle, dest) == []
    assert (dest / "a.txt").read_text() == "hello\n"
    assert os.stat(dest / "sub" / "run.sh").st_mode & 0o777 == 0o755
    assert (dest / "sub" / "empty").is_dir()
    assert os.readlink(dest / "link") == "a.txt"
    assert bundle.describe() == f"2 files, {bundle.compressed_bytes} B compressed"


def test_a_link_out_of_the_workspace_is_packed_as_a_link_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    src = tmp_path / "ws"
    src.mkdir()
    os.symlink(secret, src / "answer.txt")
    os.symlink(tmp_path, src / "outdir")  # a link to a folder is not entered either
    bundle = pack(src, cap=1 << 20)
    assert sorted((e.rel, e.kind) for e in bundle.entries) == [("answer.txt", "link"), ("outdir", "link")]
    assert all(b"TOPSECRET" not in zlib.decompress(e.data) for e in bundle.entries if e.kind == "file")


def test_a_fifo_does_not_block_the_worker_and_is_named(tmp_path):
    src = tmp_path / "ws"
    src.mkdir()
    os.mkfifo(src / "pipe")
    bundle = pack(src, cap=1 << 20)
    assert bundle.entries == []
    assert bundle.omitted == ["pipe (not a regular file)"]


def test_files_past_the_cap_stay_behind_and_are_named(tmp_path):
    src = tmp_path / "ws"
    src.mkdir()
    (src / "a-small.txt").write_text("small\n")
    (src / "b-big.bin").write_bytes(os.urandom(50_000))  # random: does not compress
    (src / "c-small.txt").write_text("also small\n")
    bundle = pack(src, cap=4096)
    assert [e.rel for e in bundle.entries] == ["a-small.txt", "c-small.txt"]
    assert bundle.omitted == ["b-big.bin (48.8 KB)"]
    assert bundle.compressed_bytes <= 4096
    assert bundle.describe().endswith("cap 4.0 KB: not brought back: b-big.bin (48.8 KB)")


def test_what_stays_behind_is_named_escaped_never_as_another_file(tmp_path):
    """The names of what a remote run did not bring back reach the run's workspace note, which `show` and the run
    review print: escaped whole (text.escape_name). Before, "\x1b[0mpipe" was written raw, and printed "pipe"."""
    src = tmp_path / "ws"
    src.mkdir()
    os.mkfifo(src / "\x1b[0mpipe")
    (src / "\u202ebig.bin").write_bytes(os.urandom(50_000))
    bundle = pack(src, cap=4096)
    assert bundle.omitted == ["\\x1b[0mpipe (not a regular file)", "\\u202ebig.bin (48.8 KB)"]
    assert bundle.describe().endswith("not brought back: \\x1b[0mpipe (not a regular file), \\u202ebig.bin (48.8 KB)")


def test_a_file_named_with_a_backslash_comes_back(tmp_path):
    """On Linux `notes\\v2.txt` is one name; unpack refused it as a path a case wrote with backslashes, so a remote
    run's file of that name never reached the driver (the run's checks then saw it missing)."""
    src = tmp_path / "ws"
    (src / "dir\\x").mkdir(parents=True)
    (src / "notes\\v2.txt").write_text("v2\n")
    (src / "dir\\x" / "f.txt").write_text("f\n")
    dest = tmp_path / "back"
    assert unpack(pack(src, cap=1 << 20), dest) == []
    assert (dest / "notes\\v2.txt").read_text() == "v2\n"
    assert (dest / "dir\\x" / "f.txt").read_text() == "f\n"


@pytest.mark.parametrize("rel", ["../escape.txt", "/abs.txt", "a/../../x"])
def test_unpack_refuses_paths_that_leave_the_destination(tmp_path, rel):
    bundle = Bundle(cap=1 << 20, entries=[Entry(rel, "file", 0o644, zlib.compress(b"x"))])
    dest = tmp_path / "d" / "back"
    assert unpack(bundle, dest) == [rel]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["back", "d"]


def test_unpack_never_writes_through_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    bundle = Bundle(cap=1 << 20, entries=[Entry("a", "link", data=os.fsencode(outside)),
                                          Entry("a/owned.txt", "file", 0o644, zlib.compress(b"x"))])
    dest = tmp_path / "back"
    assert unpack(bundle, dest) == ["a"]  # the file made a real folder `a`; the link then could not be made
    assert list(outside.iterdir()) == []
    assert (dest / "a" / "owned.txt").read_bytes() == b"x"


def test_a_1200_deep_tree_is_packed_down_to_the_depth_cap_and_the_rest_named(tmp_path):
    src = tmp_path / "ws"
    src.mkdir()
    (src / "a.txt").write_text("hello\n")
    here = os.open(src, os.O_RDONLY)
    try:
        for _ in range(1200):  # what an agent can make with mkdir + chdir (os.makedirs recurses)
            os.mkdir("d", dir_fd=here)
            nxt = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = nxt
    finally:
        os.close(here)
    try:
        bundle = pack(src, cap=1 << 20)  # no RecursionError
        deep = "/".join(["d"] * 101)
        assert bundle.omitted == [f"{deep} (nested more than 100 folders deep)"]
        assert [e.rel for e in bundle.entries if e.kind == "file"] == ["a.txt"]
        assert max(e.rel.count("/") for e in bundle.entries) == 99
    finally:  # shutil.rmtree (pytest's cleanup) recurses: 1,200 levels is too deep for it
        for depth in range(1200, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(src / "/".join(["d"] * depth))
