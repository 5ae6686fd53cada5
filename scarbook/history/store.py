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

import errno
import os
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Generic, TypeVar

from filelock import FileLock, Timeout
from tinydb import TinyDB

from scarbook.errors import HistoryError
from scarbook.fs.files import describe_os_error
from scarbook.fs.json_store import AtomicJSONStorage, damaged_message, history_folder_problem
from scarbook.history.records import (
    RunOutcome,
    fill_short,
    missing_doc,
    outcome_from_doc,
    primary_runs,
    run_from_doc,
    session_from_doc,
    session_problem,
    short_message,
    sort_runs,
)
from scarbook.history.runs_file import SUFFIX, RunsDB, drop_lines, mend_tail, open_runs, replace_lines
from scarbook.history.session_ref import resolve_session
from scarbook.models import RunRecord, SessionInfo
from scarbook.models.words import SessionState
from scarbook.text import clean_record_text

LEGACY_SUFFIX = ".json"
T = TypeVar("T")


class ReadResult(list[T], Generic[T]):
    """What a read of history gives: the records that could be read (it is their list), and
    `problems`, what could not be (each names the file and the fix; the caller says them).

    Every read returns its own result, so two readers (TUI threads) never share a list of problems."""

    def __init__(self, records: Iterable[T] = (), problems: Iterable[HistoryError | str] = ()) -> None:
        super().__init__(records)
        self.problems: list[HistoryError] = []
        self.add_problems(problems)

    def add_problems(self, problems: Iterable[HistoryError | str]) -> None:
        """Add problems, each once (a read may meet one file twice)."""
        for problem in problems:
            problem = problem if isinstance(problem, HistoryError) else HistoryError(problem)
            if str(problem) not in map(str, self.problems):
                self.problems.append(problem)




_now_cache: list = [0, ""]


def now_iso() -> str:
    """The current UTC time to the second, ISO 8601 (made once per second: every run asks)."""
    t = int(time.time())
    if t != _now_cache[0]:
        _now_cache[:] = [t, datetime.fromtimestamp(t, UTC).isoformat()]
    return _now_cache[1]


def _open(path: Path) -> TinyDB:
    return TinyDB(str(path), storage=AtomicJSONStorage)


@dataclass
class CaseLatest:
    """A case's figures in the most recent session that ran it."""

    case_id: str
    session: SessionInfo
    runs: list[RunRecord]
    # What could not be read in that session's runs file of the case (each names the file and the
    # fix): the runs above are then only part of what the session recorded.
    problems: list[str] = field(default_factory=list)


class History:
    def __init__(self, workspaces_dir: Path) -> None:
        self.dir = Path(workspaces_dir) / "history"
        self._locks: dict[str, FileLock] = {}
        self._writers: dict[tuple[str, str], RunsDB] = {}
        self._recorded: dict[str, dict[str, set[int]]] = {}  # session -> case -> the k's this process recorded

    # -- writing ------------------------------------------------------------------------------
    def new_session_id(self) -> str:
        """A sortable id, unique even when two processes start in the same second.

        Milliseconds come before the random part: sessions are listed newest first by id, and two
        sessions started in one second (quick CI runs) must still sort in the order they began."""
        self.dir.mkdir(parents=True, exist_ok=True)
        while True:
            now = datetime.now(UTC)
            sid = now.strftime("%Y%m%d-%H%M%S-") + f"{now.microsecond // 1000:03d}" + secrets.token_hex(1)
            try:
                (self.dir / sid).mkdir()
                return sid
            except FileExistsError:
                continue

    def claim_session_id(self, sid: str) -> str:
        """Reserve an id the user chose (a shard's); a HistoryError if this history already has it."""
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            (self.dir / sid).mkdir()
        except FileExistsError:
            raise HistoryError(f"session {sid} is already recorded in {self.dir}") from None
        return sid

    def start_session(self, info: SessionInfo) -> None:
        folder = self.dir / info.id
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / ".lock"))
        lock.acquire()
        self._locks[info.id] = lock
        self._write_session(info)

    def update_session(self, info: SessionInfo) -> None:
        """Write the session record of a session this process holds (its state, its batch)."""
        self._write_session(info)

    def hold_session(self, info: SessionInfo, held: str = "it collects the verdicts itself") -> None:
        """Take over a recorded session to finish it (`scarbook resume`): its lock, as start_session
        holds it; a HistoryError when another live scarbook holds it (`held`: what that one does)."""
        folder = self.dir / info.id
        lock = FileLock(str(folder / ".lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise HistoryError(f"session {info.id} is held by another scarbook that is still running "
                               f"({held}): wait for it, or stop it first") from None
        self._locks[info.id] = lock

    def let_go(self, sid: str) -> None:
        """Release a session this process holds without writing it (a resume that did not start)."""
        lock = self._locks.pop(sid, None)
        if lock is not None:
            lock.release()

    def resume_session(self, info: SessionInfo, held: dict[str, list[int]]) -> None:
        """A held session runs again (`scarbook resume`): written as `info` says, the runs k it holds of each
        case counted with those recorded now when it ends (SessionInfo.recorded)."""
        if info.id not in self._locks:
            self.hold_session(info, "it resumes the session itself")
        self._recorded[info.id] = {cid: set(ks) for cid, ks in held.items()}
        self._write_session(info)

    def mend_cut_runs(self, sid: str) -> list[str]:
        """A session this process holds, before runs are added to it: each runs file whose last line a crash
        cut short ends at its last whole run again (the cut line is no run; an append after it would be
        glued to it). The files mended, by name."""
        assert sid in self._locks, "mend only a session this process holds"
        return [path.name for path in sorted((self.dir / sid).glob(f"runs-*{SUFFIX}")) if mend_tail(path)]

    def drop_runs(self, info: SessionInfo, ks_by_case: dict[str, list[int]]) -> None:
        """Take the runs k of each case out of a session this process holds (`scarbook resume` runs them again:
        they met the judge's rejected key). session.json's count of each case's runs is lowered first, so a crash
        between the two writes leaves a file with more runs than the count (read whole), never fewer (damaged).
        Atomic per file: a crash leaves the old file or the new one."""
        assert info.id in self._locks, "drop runs only of a session this process holds"
        for case_id, ks in ks_by_case.items():
            if case_id in info.recorded:
                info.recorded[case_id] = max(0, info.recorded[case_id] - len(ks))
        self._write_session(info)
        for case_id, ks in ks_by_case.items():
            path = self.dir / info.id / f"runs-{case_id}{SUFFIX}"
            writer = self._writers.pop((info.id, case_id), None)
            if writer is not None:
                writer.close()
            try:
                drop_lines(path, info.id, set(ks))
            except OSError as exc:
                raise HistoryError(f"could not rewrite {path}: {describe_os_error(exc)} — {_fix_for(exc)}") from None

    def replace_runs(self, sid: str, case_id: str, runs: list[RunRecord]) -> None:
        """Put `runs` in place of the lines of the same k in the session's runs file of `case_id` (a
        --judge-batch session's runs, once judged); every other line is kept as it is. Atomic: a
        crash leaves the old file or the new one."""
        path = self.dir / sid / f"runs-{case_id}{SUFFIX}"
        writer = self._writers.pop((sid, case_id), None)
        if writer is not None:
            writer.close()
        for run in runs:
            run.diff.cap()
            clean_record_text(run)
        try:
            replace_lines(path, sid, {r.k: r.to_dict() for r in runs})
        except OSError as exc:
            raise HistoryError(f"could not rewrite {path}: {describe_os_error(exc)} — {_fix_for(exc)}") from None

    def _write_session(self, info: SessionInfo) -> None:
        path = self.dir / info.id / "session.json"
        try:
            with _open(path) as db:
                table = db.table("session")
                table.truncate()
                table.insert({**info.to_dict(), "pid": os.getpid()})
        except OSError as exc:
            raise HistoryError(f"could not write {path}: {describe_os_error(exc)} — {_fix_for(exc)} "
                               "(the runs recorded so far are kept)") from None

    def _writer(self, sid: str, case_id: str) -> RunsDB:
        """The open runs file of one case in a session this process records; each insert is one
        append, written at once, so nothing waits in memory."""
        key = (sid, case_id)
        db = self._writers.get(key)
        if db is None:
            db = self._writers[key] = open_runs(self.dir / sid / f"runs-{case_id}{SUFFIX}")
        return db

    def record_run(self, run: RunRecord) -> None:
        """Append one run. Its list of changed files is cut to the first names of each kind (WorkspaceDiff.cap:
        the checks ran on the whole list) and its agent-made text cleaned, in place (clean_record_text), so the
        record stored and the one the caller goes on to print and report are the same, small and safe."""
        run.diff.cap()
        clean_record_text(run)
        try:
            self._writer(run.session_id, run.case_id).insert(run.to_dict())
            self._recorded.setdefault(run.session_id, {}).setdefault(run.case_id, set()).add(run.k)
        except OSError as exc:
            raise HistoryError(f"could not record run {run.case_id}#{run.k} in {self.dir / run.session_id}: "
                               f"{describe_os_error(exc)} — {_fix_for(exc)} (the runs recorded before it are "
                               "kept)") from None

    def finish_session(self, info: SessionInfo) -> None:
        """Write the session's end, with how many runs of each case it recorded (SessionInfo.recorded:
        every later read checks the runs files still hold them)."""
        info.finished_at = info.finished_at or now_iso()
        recorded = self._recorded.pop(info.id, None)
        if recorded is not None:
            info.recorded = {cid: len(ks) for cid, ks in sorted(recorded.items())}
        for key in [k for k in self._writers if k[0] == info.id]:
            self._writers.pop(key).close()
        try:
            self._write_session(info)
        finally:
            lock = self._locks.pop(info.id, None)
            if lock is not None:
                lock.release()
                try:
                    os.unlink(lock.lock_file)
                except OSError:
                    pass

    # -- reading ------------------------------------------------------------------------------
    def session_dirs(self) -> list[Path]:
        """The session folders, by name (folders moved aside as `.damaged` are not listed); `sessions` orders
        the sessions by their start."""
        if not self.dir.is_dir():
            return []
        try:
            found = [p for p in self.dir.iterdir() if p.is_dir() and not p.name.startswith(".")
                     and not p.name.endswith(".damaged")]
        except OSError:  # a folder closed to this user: `sessions` says so (history_folder_problem)
            return []
        return sorted(found, key=lambda p: p.name, reverse=True)

    def read_session(self, sid: str) -> SessionInfo:
        path = self.dir / sid / "session.json"
        if not path.exists() and not path.is_symlink():
            raise HistoryError(f"no session {sid!r} in {self.dir}")
        with _open(path) as db:
            docs = db.table("session").all()
        if not docs:
            raise HistoryError(damaged_message(path, "it holds no session record"))
        why = session_problem(dict(docs[0]))
        if why:
            raise HistoryError(damaged_message(path, why))
        info = session_from_doc(docs[0])
        if info.state == SessionState.RUNNING and not self._is_live(sid):
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
        except OSError:  # a lock file we may not open is not a live session's
            return False

    def sessions(self) -> ReadResult[SessionInfo]:
        """Every readable session, newest first (by start time: `latest` is the session that began last,
        whatever its id); damaged ones are in the result's `problems`."""
        out: ReadResult[SessionInfo] = ReadResult(problems=filter(None, [history_folder_problem(self.dir)]))
        for folder in self.session_dirs():
            if not (folder / "session.json").exists() and not (folder / "session.json").is_symlink():
                orphans = sorted(p.name for p in folder.iterdir() if p.name.startswith("runs-"))
                if orphans:  # an id reserved a moment ago has no runs yet; this one lost its session.json
                    out.add_problems([HistoryError(
                        f"history folder {folder} has runs ({', '.join(orphans)}) but no session.json (deleted?): "
                        f"its runs are not listed — restore session.json, or move the folder aside to silence "
                        f"this: mv {folder} {folder}.damaged")])
                continue
            try:
                out.append(self.read_session(folder.name))
            except HistoryError as exc:
                out.add_problems([exc])
        out.sort(key=SessionInfo.start_order, reverse=True)
        return out

    def runs(self, session_id: str, case_id: str | None = None,
             info: SessionInfo | None = None) -> ReadResult[RunRecord]:
        """The session's runs (of one case, or all), by case and k: only records the runner wrote.

        A line that is not one (forged or damaged: see history_records) is left out and listed in
        the result's `problems`, as is a runs file that cannot be read at all; the other runs still count.
        A runs file whose last line a crash cut short gives its complete runs, and the cut is listed
        too (unless the session is still recording: then the line is being written, and is left for
        the next read). `info` saves reading session.json again when the caller has it."""
        return self._read(session_id, case_id, info, run_from_doc)

    def outcomes(self, session_id: str, case_id: str, info: SessionInfo) -> ReadResult[RunOutcome]:
        """The (case, k, status) of the session's runs of one case that count — the same lines `runs`
        counts, without building each RunRecord (trends read thousands) — with the problems found."""
        return self._read(session_id, case_id, info, outcome_from_doc)

    def _read(self, session_id: str, case_id: str | None, info: SessionInfo | None, make) -> ReadResult:
        info = info or self.read_session(session_id)
        folder = self.dir / session_id
        if case_id:
            files = [folder / f"runs-{case_id}{SUFFIX}", folder / f"runs-{case_id}{LEGACY_SUFFIX}"]
        else:
            files = sorted([*folder.glob(f"runs-*{SUFFIX}"), *folder.glob(f"runs-*{LEGACY_SUFFIX}")])
        out: ReadResult = ReadResult()
        read: set[str] = set()
        for path in files:
            if not path.exists() and not path.is_symlink():
                continue
            read.add(path.name[len("runs-"):-len(path.suffix)])
            out.extend(self._read_runs_file(path, info, make, out.problems))
        for cid in [case_id] if case_id else list(info.recorded):
            if info.recorded.get(cid) and cid not in read:  # its whole runs file is gone
                path = folder / f"runs-{cid}{SUFFIX}"
                out.add_problems([short_message(path, info, cid, 0)])
                out.extend(make(missing_doc(info, cid, k)) for k in range(1, info.recorded[cid] + 1))
        out.sort(key=lambda r: (r.case_id, r.k))
        return out

    def _read_runs_file(self, path: Path, info: SessionInfo, make, found: list[HistoryError]) -> list:
        def tell(problem: HistoryError | str) -> None:
            problem = problem if isinstance(problem, HistoryError) else HistoryError(problem)
            if str(problem) not in map(str, found):
                found.append(problem)

        cid = path.name[len("runs-"):-len(path.suffix)]
        if cid not in info.case_ids:
            tell(f"history file {path} is not counted: session {info.id} did not run case {cid!r} — the "
                       f"runner never writes that (forged or damaged); move it aside to silence this: "
                       f"mv {path} {path}.damaged")
            return []
        db = open_runs(path) if path.suffix == SUFFIX else _open(path)
        try:
            with db:
                docs = {d.doc_id: dict(d) for d in db.all()}
        except HistoryError as exc:
            tell(exc)
            return []
        bad = dict(getattr(db.storage, "bad_lines", {}))
        runs, messages = sort_runs(path, docs, info, cid, bad, make)
        for message in messages:
            tell(message)
        cut = getattr(db.storage, "cut", None)
        # A live session may be mid-append as we read: its last line is not cut, only not there yet.
        if cut is not None and not self._is_live(info.id):
            tell(cut)
        short = fill_short(path, info, cid, runs, make)  # fewer than it recorded: no verdict for the case
        if short:
            tell(short)
        return runs

    def iter_all_runs(self) -> Iterator[RunRecord]:
        """Every run of every readable session, one at a time, for callers that only count them (what
        could not be read is left out unsaid: `all_runs` says it)."""
        for info in self.sessions():
            yield from self.runs(info.id, info=info)

    def all_runs(self) -> ReadResult[RunRecord]:
        """Every run of every readable session, with what could not be read."""
        sessions = self.sessions()
        out: ReadResult[RunRecord] = ReadResult(problems=sessions.problems)
        for info in sessions:
            runs = self.runs(info.id, info=info)
            out.extend(runs)
            out.add_problems(runs.problems)
        return out

    def resolve(self, ref: str, sessions: list[SessionInfo] | None = None) -> SessionInfo:
        """A session by id, id prefix (of one session only), label, or `latest` / `previous` (session_ref.py).
        `sessions`: the listing the caller read already (whose problems it says), else it is read here."""
        return resolve_session(ref, self.sessions() if sessions is None else sessions, self.dir)

    def latest_by_case(self, case_ids: list[str] | None = None,
                       sessions: list[SessionInfo] | None = None) -> dict[str, CaseLatest]:
        """For each case, its runs in the newest session that ran it (reads only what it needs), with
        the problems of that runs file. `sessions`: the listing the caller read (and says the problems
        of), else it is read here.

        A session whose runs of the case were all left out (forged, damaged: see `problems`) is still
        that case's latest, with no runs: an older session's rate must not stand in for it."""
        wanted = set(case_ids) if case_ids is not None else None
        out: dict[str, CaseLatest] = {}
        for info in self.sessions() if sessions is None else sessions:
            for cid in info.case_ids:
                if cid in out or (wanted is not None and cid not in wanted):
                    continue
                runs = self.runs(info.id, cid, info)
                if runs or runs.problems:  # (a session of several agents: its baseline's runs stand for it)
                    out[cid] = CaseLatest(cid, info, primary_runs(info, runs), [str(p) for p in runs.problems])
            if wanted is not None and len(out) == len(wanted):
                break
        return out


def session_age_s(info: SessionInfo) -> float:
    try:
        started = datetime.fromisoformat(info.started_at)
    except ValueError:
        return float("inf")
    return time.time() - started.timestamp()


def _fix_for(exc: OSError) -> str:
    """What to do about a failed history write: room for a full disk, else write access."""
    full = exc.errno in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC))
    return "free some disk space" if full or exc.errno is None else "make that folder writable"
