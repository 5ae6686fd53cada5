"""Report files written where the user's path leads: a symlink stays a link (its target gets the report),
and what is not a regular file (/dev/stdout, a shell's `>(jq .)` pipe, /dev/null) is written to, not
replaced by a regular file renamed over it (as root, `--json /dev/stdout` replaced /dev/stdout)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("inprocess_demo")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")


@pytest.fixture
def session(project):
    """A project with one recorded session (one run of write-one-line) to report."""
    project.bundled()
    assert project.cli("eval", "-q", "-n", "1", "write-one-line").exit_code in (0, 1, 3)
    return project


def test_a_report_path_that_is_a_link_writes_the_links_target_and_keeps_the_link(session, tmp_path: Path) -> None:
    target = tmp_path / "kept" / "report.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    res = session.cli("report", "--json", str(link))
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["session"]["case_ids"] == ["write-one-line"]


@needs_fifo
def test_a_report_path_that_is_a_pipe_gets_the_report_through_the_pipe(session, tmp_path: Path) -> None:
    pipe = tmp_path / "junit.xml"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # the reading end, as `>(...)` holds it open
    try:
        res = session.cli("report", "--junit", str(pipe))
        assert res.exit_code == 0, res.output
        assert stat.S_ISFIFO(os.lstat(pipe).st_mode)  # still the pipe, not a file renamed over it
        received = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert received.startswith(b"<?xml") and b'name="write-one-line"' in received


@needs_fifo
def test_a_pipe_nothing_reads_is_named_not_waited_on(session, tmp_path: Path) -> None:
    pipe = tmp_path / "report.json"
    os.mkfifo(pipe)
    res = session.cli("report", "--json", str(pipe))
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (f"scarbook: cannot write {pipe}: nothing reads from that pipe — choose a "
                                           "writable path")
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
