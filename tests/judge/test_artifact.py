"""Reading the artifact a judge grades: guarded, capped, text only."""

from __future__ import annotations

import os

import pytest

from scarbook.judge import ArtifactRefused, read_artifact


def test_output_artifact_is_the_final_output(tmp_path):
    artifact = read_artifact("output", tmp_path, "done — one line", 100)
    assert artifact.text == "done — one line"
    assert artifact.label == "the agent's final output"
    assert artifact.truncated is False
    assert artifact.size_bytes == len("done — one line".encode())


def test_long_output_is_truncated_with_a_note(tmp_path):
    artifact = read_artifact("output", tmp_path, "x" * 250, 100)
    assert artifact.text == "x" * 100 and artifact.truncated
    assert artifact.truncation_note(100) == (
        "[scarbook note, outside the artifact: the artifact is 250 bytes and was truncated to its first "
        "100 bytes; grade what is shown and FAIL items that need the rest.]"
    )


def test_truncation_never_splits_a_character(tmp_path):
    (tmp_path / "a.txt").write_text("é" * 100)  # 2 bytes each
    artifact = read_artifact("a.txt", tmp_path, "", 51)
    assert artifact.text == "é" * 25 and artifact.truncated and artifact.size_bytes == 200


def test_workspace_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "tmp.txt").write_text("# tiny-agent\n")
    artifact = read_artifact("sub/tmp.txt", tmp_path, "ignored", 1000)
    assert (artifact.text, artifact.label, artifact.source) == ("# tiny-agent\n", "workspace file sub/tmp.txt", "sub/tmp.txt")


def test_symlink_inside_the_workspace_is_refused_too(tmp_path):
    # A link is never followed: one that points inside now can point outside a moment later.
    (tmp_path / "real.txt").write_text("hello")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert refused("link.txt", tmp_path) == (
        "artifact 'link.txt' not read, nothing sent to the judge: link.txt is a symlink")


def refused(source, workspace, max_bytes=1000) -> str:
    with pytest.raises(ArtifactRefused) as caught:
        read_artifact(source, workspace, "", max_bytes)
    return caught.value.detail


def test_symlink_out_is_refused(tmp_path):
    (tmp_path / "secret").write_text("key")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "answer.txt").symlink_to(tmp_path / "secret")
    assert refused("answer.txt", ws) == "artifact 'answer.txt' not read, nothing sent to the judge: answer.txt is a symlink"


def test_symlinked_directory_out_is_refused(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text("key")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "d").symlink_to(tmp_path / "outside")
    assert refused("d/f.txt", ws) == "artifact 'd/f.txt' not read, nothing sent to the judge: d is a symlink"


@pytest.mark.parametrize(
    ("source", "detail"),
    [
        ("../x.txt", "artifact '../x.txt' not read, nothing sent to the judge: path '../x.txt' contains '..' and would leave the workspace"),
        ("/etc/passwd", "artifact '/etc/passwd' not read, nothing sent to the judge: path '/etc/passwd' is absolute; paths are relative to the workspace root"),
        ("missing.txt", "artifact 'missing.txt' does not exist in the workspace"),
    ],
)
def test_bad_paths(tmp_path, source, detail):
    assert refused(source, tmp_path) == detail


def test_directory_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    assert refused("out", tmp_path) == (
        "artifact 'out' not read, nothing sent to the judge: out is a directory, not a file")


def test_fifo_is_refused_without_hanging(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    assert refused("pipe", tmp_path) == (
        "artifact 'pipe' not read, nothing sent to the judge: pipe is not a regular file")


def test_binary_file_is_refused(tmp_path):
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert refused("a.png", tmp_path) == "artifact 'a.png' is a binary file; the judge grades text only"


def test_invalid_utf8_is_binary(tmp_path):
    (tmp_path / "b.bin").write_bytes(b"abc\xff\xfe\xfddef" * 10)
    assert refused("b.bin", tmp_path) == "artifact 'b.bin' is a binary file; the judge grades text only"
