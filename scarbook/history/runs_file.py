"""Runs files: JSON Lines, one run per line, each run added with a single append.

TinyDB's own JSON storage rewrites the whole file on every insert, so recording the n-th run of a case
re-encodes and rewrites the n-1 before it. Here TinyDB still does the reading and querying, through a
storage that lays the lines out the way TinyDB expects (document id = line number), while an insert
is one `write(2)` of one whole line on a file opened with O_APPEND: the cost of a run does not depend
on how many came before it, and a process that dies loses nothing it had finished writing.

A crash of the machine (not just the process) can still leave the last line half written; reading
then keeps every complete run before it and reports the cut line, never an empty history. Any other
line that is not a JSON object is left out and listed in `bad_lines` (the history reader reports it),
so one bad line never hides the good ones. A file that is not a regular file, or cannot be read, is a
HistoryError naming it; a failed first append leaves no empty file behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.storages import Storage
from tinydb.table import Table

from scarbook.errors import HistoryError
from scarbook.fs.files import atomic_write_bytes, atomic_write_text
from scarbook.fs.json_store import damaged_message, read_history_file

SUFFIX = ".jsonl"
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps with options builds one per call




def cut_message(path: Path, line: int, kept: int) -> str:
    runs = f"the {kept} complete runs before it are kept" if kept != 1 else "the complete run before it is kept"
    return (f"history file {path} ends in a half-written run (line {line}, cut by a crash); {runs} — "
            f"delete that line to silence this: sed -i '$d' {path}")




def _parse_line(line: bytes) -> tuple[Any, str | None]:
    """The line's JSON value, or why it is not JSON."""
    try:
        return json.loads(line.decode("utf-8")), None  # (json.loads of bytes would guess UTF-16 too)
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    except ValueError as exc:
        why = f"{exc.msg}: column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        return None, f"it is not JSON ({why})"


class RunsStorage(Storage):
    """TinyDB storage over a JSON Lines file, with `append` for the one write history makes."""

    def __init__(self, path: str, **_: Any) -> None:
        self.path = Path(path)
        self.cut: HistoryError | None = None  # set by read() when the last line was cut short
        self.bad_lines: dict[int, str] = {}  # set by read(): line number -> why it is not a record
        self._fd: int | None = None

    def read(self) -> dict[str, Any] | None:
        data = read_history_file(self.path)
        if data is None:
            return None
        if not data.strip():
            raise HistoryError(damaged_message(self.path, "the file is empty"))
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends in a newline, as every whole write leaves it
        docs: dict[str, Any] = {}
        self.bad_lines = {}
        self.cut = None
        for n, line in enumerate(lines, 1):
            self._take(docs, n, line)
        if tail.strip():
            doc, why = _parse_line(tail)
            if why is None:
                self._take(docs, len(lines) + 1, tail)
            else:
                self.cut = HistoryError(cut_message(self.path, len(lines) + 1, len(docs)))
        return {"_default": docs}

    def _take(self, docs: dict[str, Any], n: int, line: bytes) -> None:
        """Keep line n when it is a JSON object; else note why not (the reader reports it)."""
        doc, why = _parse_line(line)
        if why is None and not isinstance(doc, dict):
            why = "it is a JSON " + type(doc).__name__.replace("NoneType", "null") + ", not a run record"
        if why is None:
            docs[str(n)] = doc
        else:
            self.bad_lines[n] = why

    def append(self, doc: Mapping[str, Any]) -> None:
        line = (_ENCODE(doc) + "\n").encode("utf-8")
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        fd = self._fd
        written = 0
        try:
            while written < len(line):  # a regular file writes it all at once unless the disk is full
                written += os.write(fd, line[written:])
        except OSError:
            self._take_back(fd, written)
            raise

    def _take_back(self, fd: int, written: int) -> None:
        """After a failed append: cut the part line off, so the file stays a list of whole runs, and
        remove a file that is left empty (a failed first append), which would read as damaged."""
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            if written:
                os.ftruncate(fd, end - written)
            if end - written == 0:
                os.unlink(self.path)
                self.close()
        except OSError:
            pass  # the append's own error is the one to report

    def write(self, data: dict[str, Any]) -> None:
        """A whole rewrite (TinyDB update/remove): only a renumbered-by-line table can be laid out."""
        docs = data.get("_default", {})
        if set(data) - {"_default"} or sorted(map(int, docs)) != list(range(1, len(docs) + 1)):
            raise HistoryError(f"history file {self.path} holds runs numbered by line: runs can be added "
                               "or updated, not removed, and there is one table")
        self.close()  # the rename below replaces the file the append descriptor points at
        atomic_write_text(self.path, "".join(_ENCODE(docs[str(i)]) + "\n" for i in range(1, len(docs) + 1)),
                          durable=False)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class AppendTable(Table):
    """A table whose insert appends one line instead of rewriting the file."""

    def insert(self, document: Mapping) -> int:
        if not isinstance(document, Mapping):
            raise ValueError("Document is not a Mapping")
        doc_id = self._get_next_id()  # reads the file once per process; an append then adds line doc_id
        storage = self._storage
        assert isinstance(storage, RunsStorage)  # RunsDB opens its tables on a RunsStorage
        storage.append(dict(document))
        self.clear_cache()
        return doc_id

    def insert_multiple(self, documents: Iterable[Mapping]) -> list[int]:
        return [self.insert(d) for d in documents]


class RunsDB(TinyDB):
    table_class = AppendTable


def replace_lines(path: Path, session_id: str, by_k: dict[int, dict[str, Any]]) -> None:
    """Rewrite a runs file with the line of each run k in `by_k` replaced by its new record (the
    session's own lines only); every other line is kept byte for byte. Atomic (OSError on failure)."""
    by_k = dict(by_k)
    out = []
    for line in path.read_bytes().split(b"\n"):
        doc, why = _parse_line(line) if line.strip() else (None, "empty")
        if why is None and isinstance(doc, dict) and doc.get("session_id") == session_id and doc.get("k") in by_k:
            line = _ENCODE(by_k.pop(doc["k"])).encode("utf-8")
        out.append(line)
    atomic_write_bytes(path, b"\n".join(out))


def drop_lines(path: Path, session_id: str, ks: set[int]) -> None:
    """Rewrite a runs file without the session's lines of the runs k in `ks`; every other line is kept byte
    for byte. Atomic (OSError on failure); a file left with no line is removed (an empty one reads as damaged)."""
    out = []
    for line in path.read_bytes().split(b"\n"):
        doc, why = _parse_line(line) if line.strip() else (None, "empty")
        if not (why is None and isinstance(doc, dict) and doc.get("session_id") == session_id and doc.get("k") in ks):
            out.append(line)
    if any(line.strip() for line in out):
        atomic_write_bytes(path, b"\n".join(out))
    else:
        path.unlink()


def mend_tail(path: Path) -> bool:
    """A runs file whose last line has no newline: a whole run gets its newline, a half-written one (cut by a
    crash) is cut off, so the next append starts a line of its own. Whether anything changed."""
    with open(path, "r+b") as fh:
        data = fh.read()
        if not data or data.endswith(b"\n"):
            return False
        start = data.rfind(b"\n") + 1
        _, why = _parse_line(data[start:])
        if why is None:
            fh.write(b"\n")
        else:
            fh.truncate(start)
    if start == 0 and why is not None:  # its one line was cut: no run, and an empty file reads as damaged
        path.unlink()
    return True


def open_runs(path: Path) -> RunsDB:
    return RunsDB(str(path), storage=RunsStorage)
