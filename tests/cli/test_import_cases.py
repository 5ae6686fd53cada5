"""`scarbook import-cases` given a file it cannot read as a JSON case list: a message naming the file and
the fix, exit 2, never a traceback or a wait."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def test_a_case_list_that_is_not_utf8_is_named_with_the_fix(project, tmp_path: Path) -> None:
    src = tmp_path / "cases.json"
    src.write_bytes(b'[{"id": "a", "task": "caf\xe9"}]')  # Latin-1, as a spreadsheet export may save it
    result = project.cli("import-cases", str(src))
    assert result.exit_code == 2
    assert result.stderr == f"scarbook: {src}: file is not UTF-8 text — save it as UTF-8\n"
    assert list(project.cases_dir.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(project, tmp_path: Path) -> None:
    src = tmp_path / "cases.json"
    os.mkfifo(src)
    result = project.cli("import-cases", str(src))
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: {src}: cannot read the file: {src} is a FIFO, not a regular file — "
                             "save the case list to a file and import that\n")
