"""The blessed session a branch is gated against: `scarbook-baseline.json` at the project root.

History lives under workspaces/ (git-ignored), so the baseline carries its own numbers: per case
the counts of passes, fails, errors and unjudged runs and the digest of the case's checks. It is
small, sorted and stable so it diffs well in review, and travels with the branch.

`compare_to_baseline` gives the same statistics as `scarbook diff` (Newcombe interval, Fisher p,
Holm across cases, runs needed to detect the observed difference).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scarbook.config import BASELINE_FILE
from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error, read_regular_bytes
from scarbook.fs.yamlio import atomic_write_text
from scarbook.history.records import primary_runs
from scarbook.models import RunRecord, SessionInfo, SessionState
from scarbook.stats.compare import Counts, SessionComparison, compare_sessions, counts_by_case

if TYPE_CHECKING:
    from scarbook.history.store import History

FORMAT = 1
_COUNT_KEYS = ("passes", "fails", "errors", "unjudged")
# A session whose runs stopped early measured only part of what it planned: not a baseline.
COMPLETE_STATES = ("finished",)


@dataclass
class Baseline:
    session_id: str
    label: str
    recorded_at: str
    git_revision: str | None
    fingerprint: str
    agent: str
    judge_model: str
    partial: bool
    state: str
    cases: dict[str, Counts] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    source: str = BASELINE_FILE  # where it was read from (not stored): the file, or "session" for --against ID

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "session": self.session_id, "label": self.label, "recorded_at": self.recorded_at,
            "git_revision": self.git_revision, "fingerprint": self.fingerprint, "agent": self.agent,
            "judge_model": self.judge_model, "partial": self.partial, "state": self.state,
            "cases": {cid: {**c._asdict(), "digest": self.digests.get(cid, "")} for cid, c in sorted(self.cases.items())},
        }

    @property
    def name(self) -> str:
        return f"{self.session_id}{f' [{self.label}]' if self.label else ''}"


def baseline_path(root: Path) -> Path:
    return Path(root) / BASELINE_FILE


def load_against(ref: str, root: Path, history: History) -> Baseline:
    """`baseline` (the committed file in the project folder `root`) or a past session of `history` (id,
    label, latest, previous) as a baseline: what `--against` names, read here in one place."""
    if ref == "baseline":
        return load_baseline(root)
    info = history.resolve(ref)
    refuse_judging(info)
    runs = history.runs(info.id)
    baseline = baseline_from_session(info, runs, info.finished_at or info.started_at)
    baseline.source = "session"
    return baseline


def refuse_judging(info: SessionInfo) -> None:
    """A session whose judge batch is not collected has no verdicts: no gate or baseline reads it."""
    if info.state == SessionState.JUDGING:
        raise ScarbookError(f"session {info.id} is still judging (its judge batch is not collected): it has no "
                            f"verdicts yet — `scarbook resume {info.id}` collects them")


def baseline_from_session(info: SessionInfo, runs: list[RunRecord], recorded_at: str) -> Baseline:
    primary = primary_runs(info, runs)  # a session of several agents: its baseline agent's
    counts = counts_by_case(primary)
    for cid in info.case_ids:  # a case that ran no run still belongs to the baseline, at 0/0
        counts.setdefault(cid, Counts(0, 0))
    return Baseline(info.id, info.label, recorded_at, info.git_revision, info.fingerprint, info.agent,
                    info.judge_model, info.partial, info.state, dict(sorted(counts.items())),
                    {cid: d for cid, d in info.case_digests.items() if cid in counts})


def write_baseline(root: Path, baseline: Baseline) -> Path:
    path = baseline_path(root)
    try:
        atomic_write_text(path, json.dumps(baseline.to_dict(), indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise ScarbookError(f"cannot write the baseline {path}: {describe_os_error(exc)} — move it aside (mv {path} "
                            f"{path}.old) and run `scarbook baseline set` again") from None
    return path


def _bad(path: Path, problem: str) -> ScarbookError:
    return ScarbookError(f"{path}: {problem} — record it again with `scarbook baseline set [SESSION]` "
                         "(or restore it from git)")


def load_baseline(root: Path) -> Baseline:
    """The project's baseline; a ScarbookError (exit 2) naming the file and the fix otherwise."""
    path = baseline_path(root)
    try:
        text = read_regular_bytes(path).decode("utf-8")  # (a FIFO is refused, not waited on)
    except FileNotFoundError:
        raise ScarbookError(f"no baseline: {path} does not exist — record one with "
                            "`scarbook baseline set [SESSION]` and commit it") from None
    except UnicodeDecodeError:
        raise _bad(path, "not UTF-8 text") from None
    except OSError as exc:
        raise _bad(path, f"cannot be read ({describe_os_error(exc)})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _bad(path, f"not valid JSON ({exc})") from None
    return _parse(path, data)


def _parse(path: Path, data: Any) -> Baseline:
    if not isinstance(data, dict):
        raise _bad(path, "expected a JSON object")
    if data.get("format") != FORMAT:
        raise _bad(path, f"unknown format {data.get('format')!r} (this scarbook reads format {FORMAT})")
    session = data.get("session")
    if not isinstance(session, str) or not session:
        raise _bad(path, "`session` must be the id of the blessed session")
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, dict):
        raise _bad(path, "`cases` must map case ids to their counts")
    cases, digests = {}, {}
    for cid, entry in raw_cases.items():
        if not isinstance(entry, dict):
            raise _bad(path, f"case {cid!r}: expected an object with {', '.join(_COUNT_KEYS)}")
        values = [entry.get(k, 0) for k in _COUNT_KEYS]
        if not all(type(v) is int and v >= 0 for v in values):
            raise _bad(path, f"case {cid!r}: {', '.join(_COUNT_KEYS)} must be whole numbers >= 0")
        cases[cid] = Counts(*values)
        digest = entry.get("digest", "")
        digests[cid] = digest if isinstance(digest, str) else ""

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    return Baseline(session, text("label"), text("recorded_at"), data.get("git_revision") if isinstance(
        data.get("git_revision"), str) else None, text("fingerprint"), text("agent"), text("judge_model"),
        data.get("partial") is True, text("state") or "finished", cases, digests)


@dataclass
class BaselineComparison:
    baseline: Baseline
    comparison: SessionComparison
    changed: list[str]  # cases whose checks changed since the baseline: left out of the comparison
    given_away: list[str] = field(default_factory=list)  # ids given to another case since: left out too

    @property
    def regressed(self) -> list[str]:
        return self.comparison.regressed


def compare_to_baseline(baseline: Baseline, session: SessionInfo, runs: list[RunRecord],
                        given_away: list[str] | tuple[str, ...] = ()) -> BaselineComparison:
    """This session's cases against the baseline's, the same statistics as `scarbook diff`.

    A case whose checks changed since the baseline (by digest) measures something else now: it is
    named in `changed` and kept out of the comparison (and out of the Holm family); so is a case id
    `given_away` to another case since the baseline's session (case_lineage.given_away_between)."""
    current = counts_by_case(primary_runs(session, runs))
    for cid in session.case_ids:
        current.setdefault(cid, Counts(0, 0))
    changed = sorted(cid for cid in set(current) & set(baseline.cases)
                     if baseline.digests.get(cid) and session.case_digests.get(cid)
                     and baseline.digests[cid] != session.case_digests[cid])
    away = sorted(set(given_away) & set(current) & set(baseline.cases))
    before = {cid: c for cid, c in baseline.cases.items() if cid not in changed and cid not in away}
    after = {cid: c for cid, c in current.items() if cid not in changed and cid not in away}
    return BaselineComparison(baseline, compare_sessions(before, after), changed, away)


def partial_mismatch_with(baseline: Baseline, partial: bool) -> str | None:
    """Why this session cannot be compared with the baseline because only one skipped the judge."""
    if baseline.partial == partial:
        return None
    if partial:
        return (f"the baseline ({baseline.name}) graded its judge checks and this session skips them "
                "(--skip-judge) — their rates measure different checks; run without --skip-judge")
    return (f"the baseline ({baseline.name}) skipped its judge checks (--skip-judge) and this session grades "
            "them — their rates measure different checks; record a judged baseline with `scarbook baseline set`")
