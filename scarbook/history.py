"""Run history in TinyDB, one small file per (session, case) so recording a run stays cheap.

    workspaces/history/<session>/session.json        session meta (TinyDB table "session")
    workspaces/history/<session>/runs-<case>.jsonl   that case's runs in that session, one per line
    workspaces/history/<session>/.lock               held by the live process (filelock)

TinyDB rewrites its whole file on every write, so a single history file would make each recorded run
cost more as history grows. Sharding by session and case bounds what one read touches, and runs files
are appended to, one line per run (see runs_file.py), so recording a run costs the same whatever came
before it. session.json is rewritten through a temp file and a rename: a crash leaves the old file or
the new one, never half of one. Either way every finished run stays readable. Runs files written by
earlier versions (`runs-<case>.json`, plain TinyDB) are still read.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from filelock import FileLock, Timeout
from tinydb import TinyDB
from tinydb.storages import Storage

from scarbook.errors import HistoryError
from scarbook.models import RunRecord, SessionInfo
from scarbook.runs_file import SUFFIX, RunsDB, damaged_message, open_runs
from scarbook.yamlio import atomic_write_text

LEGACY_SUFFIX = ".json"


class AtomicJSONStorage(Storage):
    """TinyDB storage that never leaves a half-written file behind."""

    def __init__(self, path: str, **_: Any) -> None:
        # No mkdir here: atomic_write_text makes the folder on the first write, and opening a file
        # to read it (every session.json, for `scarbook list`) must cost no extra system calls.
        self.path = Path(path)

    def read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        if not text.strip():
            raise HistoryError(damaged_message(self.path, "the file is empty"))
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise HistoryError(damaged_message(self.path, f"{exc.msg}: line {exc.lineno} column {exc.colno}")) from None

    def write(self, data: dict[str, Any]) -> None:
        atomic_write_text(self.path, json.dumps(data, separators=(",", ":")), durable=False)

    def close(self) -> None:
        pass


_now_cache: list = [0, ""]


def now_iso() -> str:
    """The current UTC time to the second, ISO 8601 (made once per second: every run asks)."""
    t = int(time.time())
    if t != _now_cache[0]:
        _now_cache[:] = [t, datetime.fromtimestamp(t, timezone.utc).isoformat()]
    return _now_cache[1]


def _open(path: Path) -> TinyDB:
    return TinyDB(str(path), storage=AtomicJSONStorage)


@dataclass
class CaseLatest:
    """A case's figures in the most recent session that ran it."""

    case_id: str
    session: SessionInfo
    runs: list[RunRecord]


class History:
    def __init__(self, workspaces_dir: Path) -> None:
        self.dir = Path(workspaces_dir) / "history"
        self.problems: list[HistoryError] = []
        self._locks: dict[str, FileLock] = {}
        self._writers: dict[tuple[str, str], RunsDB] = {}

    # -- writing ------------------------------------------------------------------------------
    def new_session_id(self) -> str:
        """A sortable id, unique even when two processes start in the same second.

        Milliseconds come before the random part: sessions are listed newest first by id, and two
        sessions started in one second (quick CI runs) must still sort in the order they began."""
        self.dir.mkdir(parents=True, exist_ok=True)
        while True:
            now = datetime.now(timezone.utc)
            sid = now.strftime("%Y%m%d-%H%M%S-") + f"{now.microsecond // 1000:03d}" + secrets.token_hex(1)
            try:
                (self.dir / sid).mkdir()
                return sid
            except FileExistsError:
                continue

    def start_session(self, info: SessionInfo) -> None:
        folder = self.dir / info.id
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / ".lock"))
        lock.acquire()
        self._locks[info.id] = lock
        self._write_session(info)

    def _write_session(self, info: SessionInfo) -> None:
        with _open(self.dir / info.id / "session.json") as db:
            table = db.table("session")
            table.truncate()
            table.insert({**info.to_dict(), "pid": os.getpid()})

    def _writer(self, sid: str, case_id: str) -> RunsDB:
        """The open runs file of one case in a session this process records; each insert is one
        append, written at once, so nothing waits in memory."""
        key = (sid, case_id)
        db = self._writers.get(key)
        if db is None:
            db = self._writers[key] = open_runs(self.dir / sid / f"runs-{case_id}{SUFFIX}")
        return db

    def record_run(self, run: RunRecord) -> None:
        try:
            self._writer(run.session_id, run.case_id).insert(run.to_dict())
        except OSError as exc:
            raise HistoryError(f"could not record run {run.case_id}#{run.k} in {self.dir / run.session_id}: "
                               f"{exc.strerror or exc}") from None

    def finish_session(self, info: SessionInfo) -> None:
        info.finished_at = info.finished_at or now_iso()
        for key in [k for k in self._writers if k[0] == info.id]:
            self._writers.pop(key).close()
        self._write_session(info)
        lock = self._locks.pop(info.id, None)
        if lock is not None:
            lock.release()
            try:
                os.unlink(lock.lock_file)
            except OSError:
                pass

    # -- reading ------------------------------------------------------------------------------
    def _session_dirs(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        return sorted((p for p in self.dir.iterdir() if p.is_dir() and not p.name.startswith(".")),
                      key=lambda p: p.name, reverse=True)

    def read_session(self, sid: str) -> SessionInfo:
        path = self.dir / sid / "session.json"
        if not path.is_file():
            raise HistoryError(f"no session {sid!r} in {self.dir}")
        with _open(path) as db:
            docs = db.table("session").all()
        if not docs:
            raise HistoryError(damaged_message(path, "it holds no session record"))
        info = SessionInfo.from_dict(docs[0])
        if info.state == "running" and not self._is_live(sid):
            info.state = "interrupted"  # its process died without finishing the session
        return info

    def _is_live(self, sid: str) -> bool:
        if sid in self._locks:
            return True
        lock_path = self.dir / sid / ".lock"
        if not lock_path.exists():
            return False
        try:
            with FileLock(str(lock_path), timeout=0):
                return False
        except Timeout:
            return True

    def sessions(self) -> list[SessionInfo]:
        """Every readable session, newest first; damaged ones are listed in `self.problems`."""
        self.problems = []
        out = []
        for folder in self._session_dirs():
            if not (folder / "session.json").exists():
                continue  # an id reserved a moment ago, not yet started
            try:
                out.append(self.read_session(folder.name))
            except HistoryError as exc:
                self.problems.append(exc)
        return out

    def runs(self, session_id: str, case_id: str | None = None) -> list[RunRecord]:
        """The session's runs (of one case, or all), by case and k. A runs file whose last line a
        crash cut short gives its complete runs, and the cut is listed in `self.problems` (unless the
        session is still recording: then the line is being written, and is left for the next read)."""
        folder = self.dir / session_id
        if case_id:
            files = [folder / f"runs-{case_id}{SUFFIX}", folder / f"runs-{case_id}{LEGACY_SUFFIX}"]
        else:
            files = sorted([*folder.glob(f"runs-*{SUFFIX}"), *folder.glob(f"runs-*{LEGACY_SUFFIX}")])
        out: list[RunRecord] = []
        for path in files:
            if path.suffix == SUFFIX:
                db = open_runs(path)
            elif path.exists():
                db = _open(path)
            else:
                continue
            with db:
                out.extend(RunRecord.from_dict(d) for d in db.all())
            cut = getattr(db.storage, "cut", None)
            # A live session may be mid-append as we read: its last line is not cut, only not there yet.
            if cut is not None and str(cut) not in map(str, self.problems) and not self._is_live(session_id):
                self.problems.append(cut)
        out.sort(key=lambda r: (r.case_id, r.k))
        return out

    def iter_all_runs(self) -> Iterator[RunRecord]:
        for info in self.sessions():
            yield from self.runs(info.id)

    def resolve(self, ref: str) -> SessionInfo:
        """A session by id, id prefix, label, or `latest` / `previous`."""
        sessions = self.sessions()
        if not sessions:
            raise HistoryError(f"no sessions recorded yet in {self.dir} — run `scarbook eval` first")
        if ref in ("latest", "previous"):
            idx = 0 if ref == "latest" else 1
            if len(sessions) <= idx:
                raise HistoryError("there is no previous session: only one session is recorded")
            return sessions[idx]
        for s in sessions:
            if s.id == ref:
                return s
        hits = [s for s in sessions if s.label == ref] or [s for s in sessions if s.id.startswith(ref)]
        if not hits:
            raise HistoryError(f"no session matches {ref!r} (by id, label, 'latest' or 'previous') — "
                               "see `scarbook sessions`")
        return hits[0]  # newest with that label

    def latest_by_case(self, case_ids: list[str] | None = None) -> dict[str, CaseLatest]:
        """For each case, its runs in the newest session that ran it (reads only what it needs)."""
        wanted = set(case_ids) if case_ids is not None else None
        out: dict[str, CaseLatest] = {}
        for info in self.sessions():
            for cid in info.case_ids:
                if cid in out or (wanted is not None and cid not in wanted):
                    continue
                try:
                    runs = self.runs(info.id, cid)
                except HistoryError as exc:
                    self.problems.append(exc)
                    continue
                if runs:
                    out[cid] = CaseLatest(cid, info, runs)
            if wanted is not None and len(out) == len(wanted):
                break
        return out


def session_age_s(info: SessionInfo) -> float:
    try:
        started = datetime.fromisoformat(info.started_at)
    except ValueError:
        return float("inf")
    return time.time() - started.timestamp()
