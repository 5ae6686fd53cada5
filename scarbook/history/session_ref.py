"""Which session a name on the command line picks: its id, a prefix of one id, a label, or `latest` / `previous`.

An exact id wins; then a label (several sessions may carry one: the newest of them, as a moved tag would);
then an id prefix — but only one that a single session's id starts with. A prefix that several ids start with
is refused, as git refuses an ambiguous short hash: picking the newest of them would report, diff, rejudge or
resume a session the user may not have meant, with nothing said. The refusal names the prefix, how many
sessions it matches, the first few (newest first) with their labels and start times, and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scarbook.errors import HistoryError
from scarbook.fs.json_store import history_folder_problem
from scarbook.models import SessionInfo
from scarbook.models.words import SELECTORS
from scarbook.text import cut_chars

LISTED = 3  # the candidates an ambiguous prefix's message names


def resolve_session(ref: str, sessions: Sequence[SessionInfo], history_dir: Path) -> SessionInfo:
    """The session `ref` names among `sessions` (newest first), or a HistoryError saying why none is."""
    if not sessions:
        raise HistoryError(history_folder_problem(history_dir)
                           or f"no sessions recorded yet in {history_dir} — run `scarbook eval` first")
    if not ref.strip():  # it matched every unlabelled session: `baseline set "$S"` with S unset blessed one
        raise HistoryError(f"{ref!r} names no session (was the variable it came from unset?) — give an id, a "
                           "label, 'latest' or 'previous' (`scarbook sessions` lists them)")
    if ref in SELECTORS:
        idx = SELECTORS.index(ref)
        if len(sessions) <= idx:
            raise HistoryError("there is no previous session: only one session is recorded")
        return sessions[idx]
    for s in sessions:
        if s.id == ref:
            return s
    labelled = [s for s in sessions if s.label == ref]
    if labelled:
        return labelled[0]  # newest with that label
    hits = [s for s in sessions if s.id.startswith(ref)]
    if not hits:
        raise HistoryError(f"no session matches {ref!r} (by id, label, 'latest' or 'previous') — "
                           "see `scarbook sessions`")
    if len(hits) > 1:
        raise HistoryError(ambiguous_prefix(ref, hits))
    return hits[0]


def ambiguous_prefix(ref: str, hits: Sequence[SessionInfo]) -> str:
    """What a prefix of several sessions' ids says: how many, the first LISTED of them, and the fix."""
    named = "; ".join(_described(s) for s in hits[:LISTED])
    more = f"; and {len(hits) - LISTED} more" if len(hits) > LISTED else ""
    return (f"session id prefix {ref!r} is ambiguous: it matches {len(hits)} sessions — {named}{more} — give "
            "more of the id (`scarbook sessions` lists them)")


def _described(info: SessionInfo) -> str:
    label = f" [{cut_chars(info.label, 40)}]" if info.label else ""
    started = f" started {info.started_at[:19].replace('T', ' ')}" if info.started_at else ""
    return f"{info.id}{label}{started}"
