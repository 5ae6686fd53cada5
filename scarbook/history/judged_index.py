"""Each session's judged rubric items, remembered beside the session, so the judge's calibration reads
one small file per session instead of every run ever recorded (issue 38.4).

The calibration needs, for the judge in use, the distinct items it graded per (case, verdict): the
strata's sizes (history/judge_truth.py). A session that has ended does not change, so what its runs
files hold of that — per judged item its case, rubric item, artifact digest, verdict and the judge
that gave it — is kept in `workspaces/history/<session>/.judged.json`, keyed as `.counts.json` is
(history/counts_cache.py): by the stat of session.json and of each runs file, and scarbook's version.
A file that changed in any way, a damaged index, one from another version or folder, or a session still
recording or judging: read again from the runs files. The index is as trustworthy as the runs files
beside it: whoever can write one can write the other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from scarbook import __version__
from scarbook.fs.files import atomic_write_text, read_regular_bytes
from scarbook.history.counts_cache import case_stamps, file_stamp
from scarbook.history.store import History
from scarbook.judge.calibrate import judged_items
from scarbook.models import SessionInfo
from scarbook.models.words import SessionState

INDEX_NAME = ".judged.json"
FORMAT = f"2 scarbook {__version__}"  # 2: judge_sampling names max_tokens and base_url
LIMIT = 64 * 1024 * 1024


class JudgedItem(NamedTuple):
    """What the calibration reads of one judged rubric item (judge.calibrate.CalibrationItem's fields)."""

    case_id: str
    item: str
    artifact_digest: str
    judge_verdict: str
    judge_model: str
    judge_prompt_digest: str
    judge_sampling: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case_id, self.item, self.artifact_digest)


def judged_in_history(history: History, started_by: str = "") -> Iterator[JudgedItem]:
    """Every judged item of every readable session (with `started_by`, an ISO time or a day, only of the
    sessions that started by then): from each session's index where it holds."""
    for info in history.sessions():
        at = info.started_at
        if not started_by or not at or (at[:10] <= started_by if len(started_by) <= 10 else at <= started_by):
            yield from session_judged(history, info)


def session_judged(history: History, info: SessionInfo) -> list[JudgedItem]:
    folder = history.dir / info.id
    ended = info.state not in (SessionState.RUNNING, SessionState.JUDGING)  # (still appending, or to be replaced)
    stamps = [file_stamp(str(folder / "session.json")), *(case_stamps(str(folder), cid) for cid in info.case_ids)]
    if ended and stamps[0] is not None:
        cached = _load(folder / INDEX_NAME, folder, stamps)
        if cached is not None:
            return cached
    runs = history.runs(info.id, info=info)
    items = [JudgedItem(i.case_id, i.item, i.artifact_digest, i.judge_verdict, i.judge_model, i.judge_prompt_digest,
                        i.judge_sampling) for i in judged_items(runs)]
    if ended and stamps[0] is not None:
        doc = {"format": FORMAT, "folder": str(folder), "stamps": stamps, "items": [list(i) for i in items]}
        try:
            atomic_write_text(folder / INDEX_NAME, json.dumps(doc, separators=(",", ":")), durable=False)
        except OSError:
            pass  # a read-only or full disk: read from the runs files next time too
    return items


def _load(path: Path, folder: Path, stamps: list) -> list[JudgedItem] | None:
    """The index's items, or None when it is missing, damaged, or for another state of the session."""
    try:
        doc: Any = json.loads(read_regular_bytes(path, limit=LIMIT))
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT and doc.get("folder") == str(folder)
            and doc.get("stamps") == stamps and isinstance(doc.get("items"), list)):
        return None
    rows = doc["items"]
    if not all(isinstance(r, list) and len(r) == len(JudgedItem._fields) and all(type(v) is str for v in r)
               for r in rows):
        return None
    return [JudgedItem(*r) for r in rows]
