"""What the run review shows, read from disk without Textual: a case's runs in one session, the
status filters over them, and per run its output, stderr log, file diffs and transcript.

Every function here does blocking file work: the review calls them on a thread (asyncio.to_thread).
Files the agent could have written or replaced go through scarbook.fs.safefs; text shown goes through
safetext.clean_text.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.cases.drafts import run_output
from scarbook.cases.io import load_case
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.history.item_history import judged_items_of
from scarbook.models import CAUSE_KINDS, Case, RunRecord, RunStatus, Vote
from scarbook.project import Project
from scarbook.run.causes import cause_kind, count_causes
from scarbook.stats.rates import count_statuses
from scarbook.text import clean_text
from scarbook.transcripts import Transcript
from scarbook.transcripts.run_file import TranscriptUnreadable, read_run_transcript
from scarbook.views.file_diff import FileDiff, diff_file

LOG_CHARS = 2000
LOG_CAP = 1 << 20  # bytes of the stderr log read to show its start
TRANSCRIPT_CAP = 32 << 20  # bytes of a transcript the review reads (`t` imports any size)
MAX_DIFFED = 40  # changed files diffed per run (each read up to file_diff.READ_CAP); the rest are named
MAX_LISTED = 200  # changed files named per run; the rest are counted

# The runs that failed: a fail verdict or an error. An unjudged run reached no verdict (no verdict, no
# rate: stats/rates.py), so it is not counted failed; the "unjudged" filter shows those.
FAILED = frozenset({RunStatus.FAIL, RunStatus.ERROR})
# name -> statuses shown
FILTERS: dict[str, frozenset[str] | None] = {
    "all": None, "failed": FAILED,
    **{s.value: frozenset({s}) for s in (RunStatus.FAIL, RunStatus.ERROR, RunStatus.UNJUDGED, RunStatus.PASS)},
}


ITEM_FILTER = "item "  # + a rubric item's id: the runs that item failed (issue 35.3)


def failed_items(run: RunRecord) -> set[str]:
    """The ids of the rubric items the judge failed in this run."""
    return {i.item_id for r in run.checks if r.type == "llm_judge" for i in judged_items_of(r) if i.verdict == Vote.FAIL}


def shown_runs(runs: list[RunRecord], name: str) -> list[RunRecord]:
    if name in CAUSE_KINDS:  # a cause filter: the runs put there (run/causes.py)
        return [r for r in runs if cause_kind(r) == name]
    if name.startswith(ITEM_FILTER):
        return [r for r in runs if name.removeprefix(ITEM_FILTER) in failed_items(r)]
    wanted = FILTERS[name]
    return list(runs) if wanted is None else [r for r in runs if r.status in wanted]


def _item_counts(runs: list[RunRecord]) -> Counter[str]:
    return Counter(ident for r in runs for ident in failed_items(r))


def filter_names(runs: list[RunRecord]) -> list[str]:
    """The status filters, then a filter for each cause some run has (agent, infra, judge, case), then one for
    each rubric item that failed some run, most failing first."""
    causes = count_causes(runs)
    items = [f"{ITEM_FILTER}{ident}" for ident, _ in _item_counts(runs).most_common()]
    return [*FILTERS, *(kind for kind in CAUSE_KINDS if causes[kind]), *items]


def filter_counts(runs: list[RunRecord]) -> dict[str, int]:
    """How many runs each filter shows, in filter_names' order."""
    c = count_statuses(runs)
    return {"all": len(runs), "failed": c[RunStatus.FAIL] + c[RunStatus.ERROR],
            **{s.value: c[s] for s in (RunStatus.FAIL, RunStatus.ERROR, RunStatus.UNJUDGED, RunStatus.PASS)},
            **{kind.value: n for kind, n in count_causes(runs).items()},
            **{f"{ITEM_FILTER}{ident}": n for ident, n in _item_counts(runs).most_common()}}


@dataclass
class ReviewData:
    runs: list[RunRecord]
    label: str
    case: Case | None  # for the seed side of diffs; None when it does not load now
    case_problem: str = ""


def load_review(project: Project, session_id: str, case_id: str) -> ReviewData:
    runs = project.history.runs(session_id, case_id)
    try:
        label = project.history.read_session(session_id).label
    except ScarbookError:
        label = ""
    try:
        case, problem = load_case(project.cases_dir / case_id), ""
    except ScarbookError as exc:
        case, problem = None, clean_text(str(exc), one_line=True)
    return ReviewData(runs, label, case, problem)


@dataclass
class RunDetail:
    output: str
    stderr: str | None  # None: no log recorded
    diffs: list[FileDiff] = field(default_factory=list)
    kept: bool = False
    where: str = ""  # the workspace, relative to the project when inside it
    more_files: int = 0  # changed files past MAX_LISTED, not listed


def read_log_start(path: str, limit: int = LOG_CHARS) -> str:
    """The start of a log beside the workspace, read as checks read files (a link is not followed, a
    pipe never opened): a hostile run can neither hang the review nor show a secret through it."""
    folder, name = os.path.split(path)
    try:
        data, size = safefs.read_file(folder, name, LOG_CAP)
    except safefs.Refused as exc:
        return f"(not shown: {exc})"
    except OSError as exc:
        return f"(cannot read: {exc.strerror or exc})"
    if b"\0" in data[:4096]:
        return f"(binary file, {size:,} bytes)"
    text = clean_text(data.decode("utf-8", errors="replace"))
    if size > len(data):
        return text[:limit] + f"\n… ({size:,} bytes in all)"
    return text[:limit] + (f"\n… ({len(text) - limit:,} more characters)" if len(text) > limit else "")


def load_run_detail(project: Project, run: RunRecord, data: ReviewData) -> RunDetail:
    ws = Path(run.workspace) if run.workspace else None
    kept = bool(ws and run.workspace_kept and ws.is_dir())
    detail = RunDetail(clean_text(run_output(project, run)),
                       read_log_start(run.stderr_path) if run.stderr_path else None, kept=kept)
    changed = [(change, rel) for change, paths in (("created", run.diff.created), ("modified", run.diff.modified),
                                                   ("deleted", run.diff.deleted)) for rel in paths]
    for i, (change, rel) in enumerate(changed[:MAX_LISTED]):
        if i < MAX_DIFFED:
            detail.diffs.append(diff_file(rel, change, case=data.case, case_problem=data.case_problem,
                                          workspace=ws if kept else None))
        else:
            detail.diffs.append(FileDiff(rel, change, note=f"not diffed: the review diffs the first {MAX_DIFFED} "
                                                           "changed files"))
    detail.more_files = max(0, len(changed) - MAX_LISTED) + sum(run.diff.left_out.values())  # (not in the record)
    if ws is not None:
        try:
            detail.where = str(ws.relative_to(project.root))
        except ValueError:
            detail.where = str(ws)
    return detail


def load_run_transcript(run: RunRecord, cap: int = TRANSCRIPT_CAP) -> tuple[Transcript | None, str]:
    """(Transcript, "") or (None, one line saying why there is none to show). The file sits beside the
    workspace where the agent could replace it: scarbook.transcripts.run_file reads it safely."""
    if not run.transcript_path:
        return None, "this run left no transcript (the agent did not write $SCARBOOK_TRANSCRIPT)"
    try:
        return read_run_transcript(run.transcript_path, cap), ""
    except TranscriptUnreadable as exc:
        if exc.kind == "too-big":
            return None, f"transcript not shown: {exc.size:,} bytes, more than the {cap:,} the review reads (t imports it)"
        if exc.kind == "empty":
            return None, "this run's transcript is empty"
        return None, f"transcript not shown: {exc}"