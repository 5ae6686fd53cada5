"""Runs files: TinyDB queries over JSON Lines, inserts as single appends, and a full disk that leaves
the file a list of whole runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tinydb import Query

from scarbook.errors import HistoryError
from scarbook.history.runs_file import open_runs


def test_inserts_append_lines_and_tinydb_queries_them(tmp_path: Path) -> None:
    path = tmp_path / "runs-a.jsonl"
    with open_runs(path) as db:
        assert [db.insert({"k": k, "status": "pass" if k % 2 else "fail"}) for k in (1, 2, 3)] == [1, 2, 3]
        first = path.read_bytes()
        db.insert({"k": 4, "status": "fail"})
        assert path.read_bytes().startswith(first)  # appended, the earlier lines untouched
    assert path.read_text().splitlines() == ['{"k":1,"status":"pass"}', '{"k":2,"status":"fail"}',
                                             '{"k":3,"status":"pass"}', '{"k":4,"status":"fail"}']
    with open_runs(path) as db:
        assert [d["k"] for d in db.search(Query().status == "fail")] == [2, 4]
        assert db.get(doc_id=3)["k"] == 3
        assert db.insert({"k": 5}) == 5  # a reopened file numbers on from its last line


def test_update_rewrites_whole_and_remove_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs-a.jsonl"
    with open_runs(path) as db:
        db.insert_multiple([{"k": 1}, {"k": 2}])
        db.update({"note": "x"}, doc_ids=[2])
        db.insert({"k": 3})  # the append after a rewrite goes to the new file, not the replaced one
        with pytest.raises(HistoryError) as exc:
            db.remove(doc_ids=[1])
    assert exc.value.message == (f"history file {path} holds runs numbered by line: runs can be added or "
                                 "updated, not removed, and there is one table")
    assert [json.loads(ln) for ln in path.read_text().splitlines()] == [{"k": 1}, {"k": 2, "note": "x"}, {"k": 3}]


def test_a_last_line_missing_only_its_newline_is_a_whole_run(tmp_path: Path) -> None:
    path = tmp_path / "runs-a.jsonl"
    path.write_text('{"k":1}\n{"k":2}')
    db = open_runs(path)
    assert [d["k"] for d in db.all()] == [1, 2] and db.storage.cut is None


def test_a_line_that_is_not_a_record_is_left_out_and_named(tmp_path: Path) -> None:
    path = tmp_path / "runs-a.jsonl"
    path.write_text('{"k":1}\n[1, 2]\n{"k":3}\n')
    db = open_runs(path)
    assert [(d.doc_id, d["k"]) for d in db.all()] == [(1, 1), (3, 3)]
    assert db.storage.bad_lines == {2: "it is a JSON list, not a run record"}


FULL_DISK = """
import os, resource, signal, sys
from scarbook.history.runs_file import open_runs
path = sys.argv[1]
db = open_runs(path)
db.insert({"k": 1})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit, write() then fails with EFBIG
limit = os.path.getsize(path) + 10
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    db.insert({"k": 2, "output": "x" * 100})  # only 10 bytes of this line fit
except OSError as exc:
    print(exc.strerror)
"""


def test_a_write_the_disk_cannot_finish_is_taken_back(tmp_path: Path) -> None:
    path = tmp_path / "runs-a.jsonl"
    out = subprocess.run([sys.executable, "-c", FULL_DISK, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout == "File too large\n", out.stderr
    assert path.read_text() == '{"k":1}\n'  # the part line was cut off again: nothing half-written stays
