"""Each session's per-case counts, remembered beside the session so trends stay cheap.

Trends read every case of the last 8 sessions: 1,000 cases means 8,000 runs files whose every line is
parsed and checked (history_records) — seconds. A session that has ended does not change, so what
that reading found (each case's pass/fail/error/unjudged counts, and the problems told about its file)
is kept in `workspaces/history/<session>/.counts.json`, keyed by the stat of session.json and of each
runs file (inode, size, mtime in ns) and by scarbook's version. The next read costs a stat per file.
A file that changed in any way, a cache that is damaged, from another version or another folder, or
a session still recording: read again from the runs files, as `History.outcomes` always does.

The cache is as trustworthy as the runs files beside it: whoever can write one can write the other.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from scarbook import __version__
from scarbook.fs.files import atomic_write_text, read_regular_bytes
from scarbook.history.records import primary_runs
from scarbook.history.runs_file import SUFFIX
from scarbook.history.store import LEGACY_SUFFIX, History
from scarbook.models import SessionInfo
from scarbook.models.words import SessionState
from scarbook.stats.compare import Counts, counts_by_case

CACHE_NAME = ".counts.json"
# a new version may count lines differently: its own cache (2: an old record's infra fail counts as an error)
FORMAT = f"2 scarbook {__version__}"
LIMIT = 16 * 1024 * 1024


class CaseCounts(NamedTuple):
    counts: Counts | None  # None: no run of the case counts (none recorded, or all left out)
    problems: tuple[str, ...]  # what reading its runs file told (damaged or forged lines, ...)


def file_stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def case_stamps(folder: str, cid: str) -> list:
    # plain strings: pathlib's joins cost more than the stat itself, 16,000 times over
    return [file_stamp(f"{folder}{os.sep}runs-{cid}{SUFFIX}"), file_stamp(f"{folder}{os.sep}runs-{cid}{LEGACY_SUFFIX}")]


def _load(path: Path, folder: Path, session_stamp: list[int] | None) -> dict[str, Any]:
    """The cached cases, or {} when the cache is missing, damaged, or for another state of the session."""
    try:
        doc = json.loads(read_regular_bytes(path, limit=LIMIT))
    except (OSError, ValueError):
        return {}
    ok = (isinstance(doc, dict) and doc.get("format") == FORMAT and doc.get("folder") == str(folder)
          and session_stamp is not None and doc.get("session") == session_stamp and isinstance(doc.get("cases"), dict))
    return doc["cases"] if ok else {}


def _entry(raw: Any, stamps: list) -> CaseCounts | None:
    """A cached case, when its stamps match and its shape is the one written below."""
    if not isinstance(raw, dict) or raw.get("stamps") != stamps:
        return None
    counts, problems = raw.get("counts"), raw.get("problems")
    if not (isinstance(problems, list) and all(type(p) is str for p in problems)):
        return None
    if counts is None:
        return CaseCounts(None, tuple(problems))
    if isinstance(counts, list) and len(counts) == 4 and all(type(n) is int and n >= 0 for n in counts):
        return CaseCounts(Counts(*counts), tuple(problems))
    return None


def session_counts(history: History, info: SessionInfo) -> dict[str, CaseCounts]:
    """Every planned case of the session: its counts and the problems its runs file has (from the
    cache just as from a fresh read: the caller says them)."""
    folder = history.dir / info.id
    # a live session is still appending, a judging one will have its runs replaced: never cached
    ended = info.state not in (SessionState.RUNNING, SessionState.JUDGING)
    session_stamp = file_stamp(str(folder / "session.json"))
    cached = _load(folder / CACHE_NAME, folder, session_stamp) if ended else {}
    out: dict[str, CaseCounts] = {}
    fresh = False
    entries: dict[str, Any] = {}
    for cid in info.case_ids:
        stamps = case_stamps(str(folder), cid)
        hit = _entry(cached.get(cid), stamps)
        if hit is None:
            fresh = True
            runs = history.outcomes(info.id, cid, info)
            mine = primary_runs(info, runs)  # a session of several agents: its baseline's runs
            hit = CaseCounts(counts_by_case(mine)[cid] if mine else None, tuple(str(p) for p in runs.problems))
        out[cid] = hit
        entries[cid] = {"stamps": stamps, "counts": list(hit.counts) if hit.counts else None,
                        "problems": list(hit.problems)}
    if ended and fresh and session_stamp is not None:
        doc = {"format": FORMAT, "folder": str(folder), "session": session_stamp, "cases": entries}
        try:
            atomic_write_text(folder / CACHE_NAME, json.dumps(doc, separators=(",", ":")), durable=False)
        except OSError:
            pass  # a read-only or full disk: trends are read from the runs files next time too
    return out
