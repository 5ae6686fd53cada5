"""Every judgement of each rubric item in history, counted for its figures (issue 35.3; stats/items.py).

A run's judge record keeps each item's verdict, votes and id (models/rubric.py); a record from before ids
were kept is read with its items' words' ids, which are the ids written later. Only the items a case has
today are counted, under their ids: a deleted item or one reworded without its id is left behind.
A run graded again by `scarbook rejudge` counts once, with its latest verdicts, in the session that ran it
(sessions are read newest first); every judgement of one artifact counts among its repeats.
Runs files are read as `History.runs` reads them: damaged lines are left out, counted and named.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.history.judge_truth import current_labels
from scarbook.history.records import lines_left_out
from scarbook.history.store import History
from scarbook.judge.calibrate import CalibrationLabel
from scarbook.judge.label_store import read_labels
from scarbook.judge.settings import JudgeSettings
from scarbook.models import Case, CheckResult, CheckStatus, RunRecord, RunStatus, Vote
from scarbook.models.rubric import resolve_item_ids
from scarbook.stats.items import ItemTally, PairTally


@dataclass(frozen=True)
class ItemVerdict:
    """One item's verdict in one run: its id, words, majority verdict and each sample's vote."""

    item_id: str
    text: str
    verdict: Vote
    votes: tuple[Vote, ...]


def judged_items_of(result: CheckResult) -> list[ItemVerdict]:
    """The items a judge check's record holds a PASS/FAIL for (none when the judge did not decide)."""
    entries = list(result.judge.items) if result.judge is not None else []
    ids = resolve_item_ids([e.text for e in entries], [e.id for e in entries])
    out = []
    for entry, ident in zip(entries, ids, strict=True):
        verdict = str(entry.verdict).upper()
        if verdict not in (Vote.PASS, Vote.FAIL):
            continue
        votes = tuple(Vote(v) for v in (str(x).upper() for x in entry.votes) if v in (Vote.PASS, Vote.FAIL))
        out.append(ItemVerdict(ident, entry.text, Vote(verdict), votes))
    return out


def _artifact_key(run: RunRecord, result: CheckResult) -> str:
    """What the judge graded, so two judgements of the same artifact can be told: the kept artifact's
    digest, else the excerpt's, else the run itself."""
    kept = run.judge_artifacts.get(str(result.index)) or {}
    if kept.get("sha256"):
        return str(kept["sha256"])
    excerpt = result.judge.artifact_excerpt if result.judge is not None else None
    if isinstance(excerpt, str):
        return hashlib.sha256(excerpt.encode("utf-8", "replace")).hexdigest()
    return f"{run.session_id}/{run.k}/{result.index}"


def _fresh(result: CheckResult) -> bool:
    """The verdicts were reached now, not read from the verdict cache (a copy is no new judgement)."""
    judge = result.judge
    if judge is None:
        return True
    return (judge.cache.hits if judge.cache is not None else 0) < (judge.samples or 1)


@dataclass
class CaseItems:
    """One case's items (today's, in rubric order) with what history holds of them."""

    case_id: str
    tallies: dict[str, ItemTally]
    pairs: dict[tuple[str, str], PairTally] = field(default_factory=dict)
    _sessions: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _groups: dict[tuple[str, str], list[Vote]] = field(default_factory=lambda: defaultdict(list))
    texts: dict[str, str] = field(default_factory=dict)  # every wording of today's items history holds -> id
    _counted: set[tuple[str, int]] = field(default_factory=set)  # (the session that ran it, k) of runs counted

    def count_run(self, run: RunRecord, ran_in: str = "") -> None:
        """Count a run's verdicts; `ran_in`: the session that ran it (a rejudge's source), when read newest
        first a run already counted adds only its judgements of the artifact (repeats)."""
        verdicts: dict[str, Vote] = {}
        rule_failed = False
        for result in run.checks:
            if result.type != "llm_judge":
                rule_failed |= result.status == CheckStatus.FAIL
                continue
            key, fresh = _artifact_key(run, result), _fresh(result)
            for item in judged_items_of(result):
                if item.item_id not in self.tallies or item.item_id in verdicts:
                    continue
                verdicts[item.item_id] = item.verdict
                self.texts.setdefault(item.text, item.item_id)
                if fresh:
                    self._groups[(item.item_id, key)].extend(item.votes or (item.verdict,))
        ran_in = ran_in or run.session_id
        if not verdicts or (ran_in, run.k) in self._counted:
            return
        self._counted.add((ran_in, run.k))
        failing = [i for i, v in verdicts.items() if v == Vote.FAIL]
        for ident, verdict in verdicts.items():
            tally = self.tallies[ident]
            tally.judged += 1
            tally.fails += verdict == Vote.FAIL
            self._sessions[ident].add(ran_in)
            if run.status == RunStatus.FAIL and not rule_failed and failing == [ident]:
                tally.only_failing += 1
        judged = [i for i in self.tallies if i in verdicts]
        for n, a in enumerate(judged):
            for b in judged[n + 1:]:
                first, second = sorted((a, b))
                pair = self.pairs.setdefault((first, second), PairTally())
                pair.both += 1
                pair.agree += verdicts[a] == verdicts[b]
                pair.first_fails += verdicts[first] == Vote.FAIL
                pair.second_fails += verdicts[second] == Vote.FAIL

    def count_repeats(self, item_id: str, votes: Iterable[Vote], key: str) -> None:
        """Judgements of one artifact made elsewhere (verify --judged K)."""
        if item_id in self.tallies:
            self._groups[(item_id, key)].extend(votes)

    def count_label(self, item_id: str, label: CalibrationLabel) -> None:
        labels = self.tallies[item_id].labels
        human_fails, judge_fails = label.human_verdict == Vote.FAIL, label.judge_verdict == Vote.FAIL
        if human_fails:
            labels.fail_fail += judge_fails
            labels.fail_pass += not judge_fails
        else:
            labels.pass_fail += judge_fails
            labels.pass_pass += not judge_fails

    def finish(self) -> None:
        for ident, tally in self.tallies.items():
            tally.sessions = len(self._sessions[ident])
        for (ident, _), votes in self._groups.items():
            if len(votes) >= 2:
                self.tallies[ident].repeated += 1
                self.tallies[ident].disputed += len(set(votes)) > 1


@dataclass
class ItemHistory:
    cases: dict[str, CaseItems]
    runs_read: int = 0
    lines_skipped: int = 0  # damaged runs lines left out
    problems: list[str] = field(default_factory=list)  # each names the file and the fix


def case_items(case: Case) -> CaseItems:
    return CaseItems(case.id, {ident: ItemTally(ident, text) for check in case.judge_checks
                               for ident, text in zip(check.rubric_ids, check.rubric, strict=True)})


def read_item_history(history: History, cases: list[Case], *, workspaces_dir: Path | None = None,
                      settings: JudgeSettings | None = None,
                      before_finish: Callable[[ItemHistory], None] | None = None) -> ItemHistory:
    """The figures' counts of every rubric item of `cases` over every readable session; with
    `workspaces_dir` and `settings`, the labels people gave the judge in use (calibration.json);
    `before_finish` counts what else the caller knows (CaseItems.count_repeats)."""
    found = ItemHistory({c.id: case_items(c) for c in cases if c.judge_checks})
    sessions = history.sessions()  # newest first: a run graded again counts with its latest verdicts
    found.problems += [str(p) for p in sessions.problems]
    graded_again = {info.id: info.rerun_of.session for info in sessions
                    if info.rerun_of is not None and info.rerun_of.rejudge}
    for info in sessions:
        ran_in = _ran_in(info.id, graded_again)
        for case_id in info.case_ids:
            items = found.cases.get(case_id)
            if items is None:
                continue
            runs = history.runs(info.id, case_id, info=info)
            found.lines_skipped += sum(lines_left_out(p) for p in runs.problems)
            found.problems += [str(p) for p in runs.problems]
            found.runs_read += len(runs)
            for run in runs:
                items.count_run(run, ran_in)
    if workspaces_dir is not None and settings is not None:
        _count_labels(found, workspaces_dir, settings)
    if before_finish is not None:
        before_finish(found)
    for items in found.cases.values():
        items.finish()
    return found


def _ran_in(session_id: str, graded_again: dict[str, str]) -> str:
    """The session that ran the runs `session_id` holds: itself, or the source of a rejudge (of a rejudge...)."""
    seen = {session_id}
    while session_id in graded_again and graded_again[session_id] not in seen:
        session_id = graded_again[session_id]
        seen.add(session_id)
    return session_id


def _count_labels(found: ItemHistory, workspaces_dir: Path, settings: JudgeSettings) -> None:
    path = workspaces_dir / "history" / "calibration.json"
    if not os.path.lexists(path):  # (False, not PermissionError, in a history folder closed to this user)
        return
    try:
        labels = current_labels(read_labels(path), settings)
    except (ScarbookError, OSError, TypeError, ValueError) as exc:
        found.problems.append(f"labels not counted: {getattr(exc, 'message', exc)}")
        return
    for label in labels:
        items = found.cases.get(label.case_id)
        if items is None:
            continue
        ident = {**items.texts, **{t.text: i for i, t in items.tallies.items()}}.get(label.item)
        if ident is not None:
            items.count_label(ident, label)
