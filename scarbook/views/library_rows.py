"""The library's rows: each case with its latest figures, and each invalid case with its error.

Plain data (no Textual): the TUI library builds them in a thread worker so the first paint never
waits on history, and `scarbook list` prints the same rows, so both show the same rates and marks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from scarbook.cases.io import CaseSet
from scarbook.cases.lineage import CaseIdLog, counts_session
from scarbook.cases.verifications import Verification, VerificationStore
from scarbook.errors import CaseError, HistoryError
from scarbook.history.judge_truth import Calibration, calibration_for
from scarbook.history.store import CaseLatest, ReadResult, session_age_s
from scarbook.models import Band, Case, RunRecord, SessionInfo
from scarbook.models.words import SessionState
from scarbook.project import Project
from scarbook.run.causes import is_infra
from scarbook.run.gate import (
    case_stats,
    gate_alpha,
    library_calibration_line,
    replay_calibration,
    session_policy,
    unbounded_words,
)
from scarbook.stats.corrected import judged_split
from scarbook.stats.rates import CaseStats, effective_threshold, summarize
from scarbook.text import interval_beside, pct_beside, plural, threshold_pct

if TYPE_CHECKING:
    from scarbook.stats.trends import CaseTrend

DAY_S = 86400.0


@dataclass
class LibraryRow:
    key: str  # case id, or the folder name of an invalid case
    case: Case | None = None
    problem: CaseError | None = None
    stats: CaseStats | None = None
    runs: list[RunRecord] = field(default_factory=list)
    last_run: str = ""  # "2026-11-14 09:30" (absolute: the frame must not change by itself)
    stale: str = ""  # why the result is stale ("" = fresh or never run)
    session_id: str = ""
    session: SessionInfo | None = None  # the latest session that ran it (its gate corrects its rate: correct_rows)
    age_s: float | None = None  # how long ago the latest session started (None = never run)
    marks: list[str] = field(default_factory=list)  # what the latest session was: cancelled, partial, ...
    badge: str = ""  # does the case catch its scar: verified / misses / rejects good / unverified
    history_note: str = ""  # renamed / copied / id reused: why runs recorded under this id are not shown
    trend: CaseTrend | None = None  # its rate across sessions, set once trends are read (scarbook/stats/trends.py)
    history_mark: str = ""  # that note in one word ("renamed", "copied", "id reused")
    damaged: list[str] = field(default_factory=list)  # the latest runs file's unreadable parts (rate partial)

    @property
    def title(self) -> str:
        if self.problem is not None:
            return f"invalid: {self.problem.problem}"
        return self.case.title if self.case else ""

    @property
    def family(self) -> str:
        return (self.case.scar.family or "") if self.case and self.case.scar else ""

    @property
    def infra_note(self) -> str:
        """"2 infra" beside a red rate: how many of the latest session's runs the machine failed (their
        infra retries ran out), so a red that is partly the machine's says so."""
        n = sum(1 for r in self.runs if is_infra(r))
        return f"{n} infra" if n and self.stats is not None and self.stats.band == Band.RED else ""

    def haystack(self) -> str:
        parts = [self.key, self.title, self.family]
        if self.case:
            parts += self.case.tags
        return " ".join(parts).lower()


STATE_MARKS = {"stopped: budget": "budget-stopped"}  # a session state, as a one-word mark


def session_marks(info: SessionInfo) -> list[str]:
    """What a reader must know before trusting a session's rate: it did not run all it planned
    (cancelled, interrupted, budget-stopped, aborted, crashed, still running) or it did not judge
    (partial, e.g. --skip-judge). A finished, complete session has no mark."""
    state = str(info.state)
    marks = [] if state == SessionState.FINISHED else [STATE_MARKS.get(state, state)]
    if info.partial:
        marks.append("partial")
    if len(info.agent_names) > 1:  # a session of several agents: the rate is its baseline agent's
        marks.append(f"{info.agent_names[0]} (--agents)")
    return marks


def notes_of(row: LibraryRow) -> list[str]:
    """`scarbook list`'s notes: "damaged" when its runs file could be read only in part (the rate covers
    the runs that could), the session's marks, "regressed since …", "stale"."""
    regressed = [row.trend.regressed_note()] if row.trend and row.trend.regressed_since else []
    return (["damaged"] if row.damaged else []) + row.marks + regressed + (["stale"] if row.stale else [])


def damage_line(row: LibraryRow) -> str:
    """The detail line for a damaged runs file: how many runs the rate stands on, and why."""
    if not row.damaged:
        return ""
    more = f" (and {len(row.damaged) - 1} more)" if len(row.damaged) > 1 else ""
    return (f"damaged: the rate counts only the {plural(len(row.runs), 'run')} that could be read in session "
            f"{row.session_id} — {row.damaged[0]}{more}")


def human_age(seconds: float | None) -> str:
    """"never", "just now", "1 min ago", "3h ago", "1 day ago", "12 days ago" (at most 12 characters:
    `scarbook list` gives the column that much)."""
    if seconds is None:
        return "never"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < DAY_S:
        return f"{int(seconds // 3600)}h ago"
    return f"{plural(int(seconds // DAY_S), 'day')} ago"


def format_started(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def build_rows(project: Project, found: CaseSet | None = None) -> ReadResult[LibraryRow]:
    """Every case (valid ones with their latest session's figures, invalid ones with their error),
    sorted by id, with the history problems met on the way (`problems`). Pass `found` when the caller
    already loaded the cases."""
    found = found if found is not None else project.load_cases()
    listed = project.history.sessions() if found.cases else ReadResult()
    latest = project.history.latest_by_case([c.id for c in found.cases], listed) if found.cases else {}
    ids, id_problems = CaseIdLog(project.workspaces_dir).read()
    rows: ReadResult[LibraryRow] = ReadResult(problems=listed.problems)
    for hit in latest.values():
        rows.add_problems(hit.problems)
    rows.add_problems(id_problems)
    fingerprint = project.config.fingerprint()
    for cid, entry in ids.items():  # sessions from before the id was given to its present case
        if cid in latest and not counts_session(entry, latest[cid].session.id, latest[cid].session.started_at):
            del latest[cid]
    rows += [_row(c, latest.get(c.id), project, fingerprint) for c in found.cases]
    for row in rows:
        if row.key in ids and not row.session_id:
            row.history_note, row.history_mark = ids[row.key].note(row.key), ids[row.key].mark
    store = VerificationStore(project.workspaces_dir)
    try:
        verified: dict[str, Verification] | None = store.load()
    except HistoryError as exc:  # a damaged verify.json: said with the rows, no badge shown rather than a wrong one
        rows.add_problems([exc])
        verified = None
    for row in rows:
        if verified is not None and row.case is not None and row.case.scar:
            row.badge = store.badge(row.case, verified)
        else:
            row.badge = ""
    # (a case's problem is its case.yaml's: the folder's name; the cases folder's own, its name)
    rows += [LibraryRow(key=p.path.name if p.path == project.cases_dir else p.path.parent.name, problem=p)
             for p in found.problems]
    rows.sort(key=lambda r: r.key)
    return rows


def _row(case: Case, latest: CaseLatest | None, project: Project, fingerprint: str) -> LibraryRow:
    row = LibraryRow(key=case.id, case=case)
    cfg = project.config
    threshold = effective_threshold(case, cfg.threshold)
    if latest is None:
        row.stats = summarize(case.id, [], threshold, cfg.green)
        return row
    row.runs, row.session_id, row.session, row.damaged = latest.runs, latest.session.id, latest.session, latest.problems
    row.stats = summarize(case.id, latest.runs, threshold, cfg.green)
    row.last_run = format_started(latest.session.started_at)
    row.marks = session_marks(latest.session)
    row.age_s = session_age_s(latest.session)
    age_days = row.age_s / DAY_S
    if age_days > cfg.stale_after_days:
        row.stale = f"older than {plural(cfg.stale_after_days, 'day')}"
    elif latest.session.fingerprint and latest.session.fingerprint != fingerprint:
        row.stale = "ran under a different config"
    return row


def judge_calibration_line(project: Project, rows: list[LibraryRow]) -> str:
    """"judge: calibrated 2026-11-30, 85% agreement" (or never; or stale, saying how that judge differs from the one
    in use: judge/label_store.calibration_status), when any case is judged."""
    if not any(r.case and r.case.judge_checks for r in rows):
        return ""
    path = project.workspaces_dir / "history" / "calibration.json"
    if not path.is_file():
        return "judge: never calibrated — press j to grade a sample of its verdicts"
    from scarbook.judge.label_store import CalibrationStore, calibration_status, labels_elsewhere

    settings = project.config.judge
    store = CalibrationStore(path)
    try:
        when, agree, stale = calibration_status(store, settings)
        elsewhere = labels_elsewhere(store, settings) if when is None else ""
    except HistoryError as exc:  # a damaged calibration.json must not keep the library from opening
        return f"judge: calibration unknown — {exc}"
    finally:
        store.close()
    if elsewhere:  # labels given under another judge: not "never calibrated" as if none existed
        return f"judge: {elsewhere}"
    if when is None:
        return "judge: never calibrated — press j to grade a sample of its verdicts"
    text = f"judge: calibrated {when}" + (f", {100 * agree:.0f}% agreement" if agree is not None and agree == agree else "")
    return text + (f" — stale: {stale}; press j" if stale else "")


def correct_rows(project: Project, rows: list[LibraryRow]) -> str:
    """Each judged row's rate corrected for the judge's measured error (row.stats.corrected) as `scarbook report`
    corrects its latest session: with the calibration that session ran with (run/gate.replay_calibration; a session
    older than that record, with history's), at its gate's level; and the line that says so, or why the labels
    correct nothing (run/gate.library_calibration_line). "" when no case is judged or no label exists."""
    if not any(r.case and r.case.judge_checks for r in rows):
        return ""
    cfg = project.config
    cal = calibration_for(project.history, project.workspaces_dir, cfg.judge,
                          {r.key: r.case for r in rows if r.case is not None})
    replayed: dict[str, tuple[Calibration | None, str]] = {}
    corrected = False
    for row in rows:
        session = row.session
        if session is None or row.stats is None or row.stats.rate is None or judged_split(row.runs) is None:
            continue
        if session.id not in replayed:
            replayed[session.id] = replay_calibration(session, cal)
        ran = replayed[session.id][0]
        if ran is not None and ran.usable:
            row.stats = case_stats(row.key, row.runs, row.stats.threshold, cfg.green, ran,
                                   gate_alpha(session, session_policy(session, cfg)))
            corrected = corrected or row.stats.corrected is not None
    return library_calibration_line(cal, corrected, any(line for _, line in replayed.values()))


def corrected_line(stats: CaseStats | None) -> str:
    """The detail line of a row whose rate was corrected for the judge's measured error."""
    if stats is None or stats.corrected is None or stats.rate is None:  # corrected only when there is a rate
        return ""
    c = stats.corrected
    t = stats.threshold
    return (f"≈ {pct_beside(c.rate, t)} corrected for the judge's error ({c.ci_label.removeprefix('≈')} {interval_beside(c.lo, c.hi, t)}; "
            f"raw {pct_beside(stats.rate, t)})"
            + ("; judge-limited: more labels, not more runs, will decide it" if c.judge_limited else "")
            + (f"; {unbounded_words(c, t)}" if unbounded_words(c, t) else ""))


def figures_line(row: LibraryRow) -> str:
    """The highlighted case's figures, whole, whatever columns the table had room for: the first line
    under the library table. "80% (8/10), 95% CI 49–94%, threshold 80% · 1 error · 11 runs · last run
    2026-11-14 09:30" (": above" after the threshold once a gate has decided the case); a case never
    run, or run without a verdict, says so instead of a rate."""
    s = row.stats
    if s is None or not row.runs:
        return f"{row.key}: never run"
    if s.rate is None:
        head = f"{row.key}: no verdict ({plural(s.judged, 'judged run')})"
    else:
        head = (f"{row.key}: {pct_beside(s.rate, s.threshold)} ({s.passes}/{s.judged}), 95% CI {interval_beside(s.lo, s.hi, s.threshold)}, "
                f"threshold {threshold_pct(s.threshold)}" + (f": {s.decision}" if s.decision else ""))
    parts = [head, plural(s.errors, "error")]
    if s.unjudged:
        parts.append(f"{s.unjudged} unjudged")
    if row.infra_note:
        parts.append(row.infra_note)
    parts.append(plural(len(row.runs), "run"))
    if row.last_run:
        parts.append(f"last run {row.last_run}")
    return " · ".join(parts)
