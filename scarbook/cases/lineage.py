"""When a case id was last given to a case, so history recorded under it before then is not shown
as that case's.

Runs are recorded under the case id they ran as, and history is never rewritten. So renaming a case
from `a` to `b` leaves a's runs under `a`, and the renamed case starts with no runs; deleting `a` and
later filing a new case `a` must not show the old case's rate beside the new one. Each case-management
step that gives an id a new owner (rename, duplicate, delete) records the moment here:

    workspaces/history/case-ids.json   {"ids": {"b": {"since": ISO, "renamed_from": "a"}, ...}}

and the library counts only sessions of that id that started at or after `since` (to the second).
Restoring a deleted case puts its entry back as it was before the deletion.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.fs.files import atomic_write_text, describe_os_error, read_regular_bytes
from scarbook.fs.json_store import history_folder_problem

FILE_NAME = "case-ids.json"
MAX_BYTES = 8_000_000


@dataclass
class IdEntry:
    since: str  # ISO time (UTC) the id was given to its present case
    renamed_from: str = ""
    copied_from: str = ""
    before: dict | None = None  # a rename: renamed_from's entry before it, given back if renamed back

    @property
    def mark(self) -> str:
        """The note in one word, for a notes column."""
        return "renamed" if self.renamed_from else "copied" if self.copied_from else "id reused"

    def note(self, case_id: str) -> str:
        """Why the library shows no runs of this case from before `since`."""
        day = self.since[:10]
        if self.renamed_from:
            return (f"renamed from {self.renamed_from} on {day}: no runs since; its earlier runs stay under "
                    f"{self.renamed_from} (scarbook show {self.renamed_from})")
        if self.copied_from:
            return f"copied from {self.copied_from} on {day}: no runs of the copy yet"
        return (f"the id {case_id} was freed on {day} (deleted or renamed): the runs recorded under it "
                "before then belong to that case, not this one")


def now_stamp() -> str:
    return datetime.now(UTC).isoformat()


def counts_session(entry: IdEntry | None, session_id: str, started_at: str) -> bool:
    """Does this session of the id belong to the id's present case (did it start after `since`)?
    A session's start is known to the millisecond from its id (YYYYmmdd-HHMMSS-mmm...), else to
    the second from `started_at` (an id chosen by hand, e.g. a shard's)."""
    if entry is None:
        return True
    try:
        since = datetime.fromisoformat(entry.since)
        try:
            started = datetime.strptime(session_id[:19], "%Y%m%d-%H%M%S-%f").replace(tzinfo=UTC)
            since = since.replace(microsecond=since.microsecond // 1000 * 1000)
        except ValueError:
            started = datetime.fromisoformat(started_at)
            started = started if started.tzinfo else started.replace(tzinfo=UTC)
            since = since.replace(microsecond=0)
    except ValueError:
        return True
    return started >= since


def fresh_start(entry: IdEntry | None, sessions: list[tuple[str, str]], since: str) -> IdEntry | None:
    """The entry an id needs when a new case is created under it (its folder was removed by hand, so
    nothing recorded the id's last owner leaving), given the id's recorded sessions as (id, started_at):
    a new `since` when any of them would count as the new case's runs; else the entry as it was, minus a
    renamed/copied note, which told of a folder that is gone."""
    if any(counts_session(entry, sid, started) for sid, started in sessions):
        return IdEntry(since)
    if entry is not None and (entry.renamed_from or entry.copied_from):
        return IdEntry(entry.since)
    return entry


def given_away_between(log: dict[str, IdEntry], a, b, case_ids) -> list[str]:
    """The ids among `case_ids` whose case changed between sessions `a` and `b` (anything with .id and
    .started_at): one of them counts for the id's present case and the other does not, so their runs
    are two different cases' and comparing them would measure nothing."""
    return sorted(cid for cid in case_ids if cid in log and counts_session(log[cid], a.id, a.started_at)
                  != counts_session(log[cid], b.id, b.started_at))


def leave_out_given_away(log: dict[str, IdEntry], a, b, counts_a: dict, counts_b: dict) -> tuple[dict, dict, list[str]]:
    """Sessions a and b's per-case counts without the ids given to another case between them, and those ids."""
    away = given_away_between(log, a, b, set(counts_a) & set(counts_b))
    return ({c: n for c, n in counts_a.items() if c not in away},
            {c: n for c, n in counts_b.items() if c not in away}, away)


GIVEN_AWAY = ("not compared (the id was given to another case between the two sessions: renamed, deleted or "
              "reused — `scarbook list` says which): ")


def renamed(log: dict[str, IdEntry], old: str, new: str, since: str) -> dict[str, IdEntry | None]:
    """The changes a rename old -> new makes. Renaming back (new is the id this case was renamed from,
    and nothing took that id since) gives the case its own runs back: the entry `new` had before."""
    mine, theirs = log.get(old), log.get(new)
    if (mine is not None and mine.renamed_from == new and theirs is not None
            and theirs == IdEntry(mine.since)):  # still freed by that rename, by nothing since
        return {old: IdEntry(since), new: IdEntry(**mine.before) if mine.before else None}
    return {old: IdEntry(since), new: IdEntry(since, renamed_from=old, before=asdict(mine) if mine else None)}


class CaseIdLog:
    def __init__(self, workspaces_dir: Path) -> None:
        self.path = Path(workspaces_dir) / "history" / FILE_NAME

    def load(self) -> dict[str, IdEntry]:
        """Every recorded id; a damaged file is a ScarbookError naming it and the fix."""
        try:
            raw = read_regular_bytes(self.path, limit=MAX_BYTES)
        except FileNotFoundError:
            return {}
        except NotADirectoryError as exc:
            raise ScarbookError(history_folder_problem(self.path.parent) or self._damaged(describe_os_error(exc)).message) from None
        except OSError as exc:
            raise ScarbookError(history_folder_problem(self.path.parent) or self._damaged(describe_os_error(exc)).message) from None
        try:
            ids = json.loads(raw.decode("utf-8"))["ids"]
            return {str(k): IdEntry(**v) for k, v in ids.items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._damaged(f"not the expected JSON ({type(exc).__name__})") from None

    def _damaged(self, why: str) -> ScarbookError:
        return ScarbookError(f"{self.path} cannot be read: {why} — move it aside (mv {self.path} "
                             f"{self.path}.damaged); the library then shows every run recorded under each id")

    def read(self) -> tuple[dict[str, IdEntry], list[str]]:
        """load(), and the problem when the file is damaged (said with the history's problems) rather
        than raised: every run recorded under each id then counts."""
        try:
            return self.load(), []
        except ScarbookError as exc:
            return {}, [str(exc)]

    def update(self, changes: dict[str, IdEntry | None]) -> None:
        """Set (or, for None, remove) entries; written atomically."""
        ids = self.load()
        for case_id, entry in changes.items():
            if entry is None:
                ids.pop(case_id, None)
            else:
                ids[case_id] = entry
        data = {"ids": {k: asdict(v) for k, v in sorted(ids.items())}}
        atomic_write_text(self.path, json.dumps(data, indent=1))
