"""The judge's measured error for the judge configuration in use, from the labels in calibration.json
and the judged items in history — or why there is none and the raw numbers stand.

Only labels made on the current judge's verdicts count — same judge model, judge prompt digest, samples,
temperature, max_tokens and endpoint (base_url, as a run's judge record keeps it; judge/identity.same_judge,
which the library's "calibrated …" line uses too): the sample was drawn
stratified by that judge's verdicts, and the strata's sizes come from the items the same judge graded in
history. After a change the calibration is *stale* until new items are labelled (`scarbook calibrate`
draws them from the new judge's verdicts).

A label (or a judged item of history) older than a part does not name it. Not naming samples, temperature or
max_tokens is not held against it; not naming base_url is: the same model name behind another vendor's endpoint
is another judge, so such a label counts as made at the default endpoint (https://api.anthropic.com) only, and
for a judge reached elsewhere the calibration is stale, saying `base_url not recorded (counted as …)`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.history.judged_index import JudgedItem, judged_in_history
from scarbook.history.session_judge import SessionJudge, described, judge_in_use, judges_line, match_judges
from scarbook.history.store import History
from scarbook.judge.calibrate import (
    CalibrationItem,
    CalibrationLabel,
    CalibrationReport,
    LabelKey,
    judged_items,
    pick_items,
    pick_planned,
    stratum_counts,
)
from scarbook.judge.identity import judges_apart, same_judge
from scarbook.judge.label_store import read_labels
from scarbook.judge.settings import JudgeSettings
from scarbook.models import Case, SessionInfo, Vote
from scarbook.stats.corrected import judged_split, more_labels_words
from scarbook.stats.judge_error import JudgeError, Stratum, estimate_error
from scarbook.stats.label_plan import CaseTarget, LabelNeeds, allocate
from scarbook.stats.rates import effective_threshold
from scarbook.text import interval_beside, pct_beside, plural, threshold_pct

NO_JUDGED_CASE = "no case has an llm_judge check"


@dataclass
class Calibration:
    error: JudgeError | None  # None: not usable, `reason` says why
    reason: str | None
    labels: int = 0
    calibrated_at: str = ""
    notes: list[str] = field(default_factory=list)  # labels left out, and why
    strata: list[Stratum] = field(default_factory=list)  # the (case, judge verdict) strata measured
    # which labels it counts and their verdicts (label_digest): what a person changes, apart from the strata's
    # sizes, which move as history grows (run/gate.replay_calibration compares it); "" without labels counted
    label_digest: str = ""

    @property
    def usable_error(self) -> JudgeError | None:
        """The judge's measured error when the rates may be corrected with it, else None."""
        return self.error if self.reason is None else None

    @property
    def usable(self) -> bool:
        return self.usable_error is not None

    @property
    def labels_key(self) -> tuple[str, bool]:
        """What a person changes of a calibration: the labels it counts with their verdicts (label_digest), and
        whether rates are corrected with them — not the strata's sizes, which follow a machine's history."""
        return self.label_digest, self.usable

    @property
    def judged(self) -> float:
        """How many judged items of history its strata's sizes (the pool's W) were counted from; 0 without."""
        counts = self.error.pooled.counts if self.error is not None else None
        return counts[0].n if counts is not None else 0

    def to_dict(self) -> dict:
        return {"usable": self.usable, "reason": self.reason, "labels": self.labels,
                "calibrated_at": self.calibrated_at, "notes": list(self.notes),
                **({"error": self.error.to_dict()} if self.error is not None else {})}

    def to_record(self, cases: Iterable[str] | None = None) -> dict:
        """What a session records of the calibration it was prepared with (session.json's gate.calibration,
        run/gate.py): to_dict's words, and the measured error as its inputs (JudgeError.to_record: the pool and
        each of `cases`' own model), so from_record corrects and decides as this one did."""
        return {"usable": self.usable, "reason": self.reason, "labels": self.labels,
                "calibrated_at": self.calibrated_at, "notes": list(self.notes), "label_digest": self.label_digest,
                **({"error": self.error.to_record(cases)} if self.error is not None else {})}

    @classmethod
    def from_record(cls, d: Mapping) -> Calibration:
        """to_record's calibration back (ValueError, TypeError or KeyError on a damaged record)."""
        error = JudgeError.from_record(d["error"]) if d.get("error") is not None else None
        reason = d.get("reason")
        if reason is None and error is None:
            raise ValueError("a usable calibration without its error")
        return cls(error, None if reason is None else str(reason), int(d.get("labels") or 0),
                   str(d.get("calibrated_at") or ""), [str(n) for n in d.get("notes") or []],
                   label_digest=str(d.get("label_digest") or ""))


def label_digest(labels: Iterable[CalibrationLabel]) -> str:
    """The labels a calibration counts, each item with the judge's verdict and the person's, as one digest: it
    changes when a label is added, left out or relabelled, not when it is saved again with the same verdict."""
    rows = sorted([*lab.key, lab.judge_verdict, lab.human_verdict] for lab in labels)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def strata_from(labels: Iterable[CalibrationLabel], judged: Iterable[CalibrationItem | JudgedItem]) -> list[Stratum]:
    """(case, judge verdict) strata: the distinct judged items in history and the labels in each."""
    seen: set[tuple[str, str, str]] = set()
    population: Counter[tuple[str, str]] = Counter()
    for item in judged:
        if item.key not in seen:
            seen.add(item.key)
            population[(item.case_id, item.judge_verdict)] += 1
    tally: Counter[tuple[str, str, str]] = Counter()
    for lab in labels:
        tally[(lab.case_id, lab.judge_verdict, lab.human_verdict)] += 1
    cases = sorted({c for c, _ in population} | {c for c, _, _ in tally})
    return [Stratum(c, v, population[(c, v)], tally[(c, v, Vote.PASS)], tally[(c, v, Vote.FAIL)])
            for c in cases for v in Vote]


def current_labels(labels: Iterable[CalibrationLabel], settings: JudgeSettings) -> list[CalibrationLabel]:
    """The labels made on the verdicts of the judge configuration in use: model, prompt digest,
    samples, temperature, max_tokens and base_url (judge/identity.same_judge)."""
    return [lab for lab in labels if same_judge(lab.judge_model, lab.judge_prompt_digest, lab.judge_sampling, settings)]


def gone_items(labels: list[CalibrationLabel], rubrics: Mapping[str, Collection[str]]) -> tuple[list[CalibrationLabel], list[str]]:
    """The labels whose rubric item their case still has, and a note per case on those it no longer
    has (the rubric was edited): those measure a judge on a question no longer asked."""
    kept, gone = [], defaultdict(list)
    for lab in labels:
        if lab.case_id in rubrics and lab.item not in rubrics[lab.case_id]:
            gone[lab.case_id].append(lab.item)
        else:
            kept.append(lab)
    notes = [f"calibration.json: {plural(len(items), 'label')} of case {case} {'is' if len(items) == 1 else 'are'} "
             f"for rubric items it no longer has ({', '.join(repr(i) for i in sorted(set(items))[:3])}"
             f"{', …' if len(set(items)) > 3 else ''}): left out — label its current items with `scarbook calibrate`"
             for case, items in sorted(gone.items())]
    return kept, notes


def measure(labels: list[CalibrationLabel], judged: Iterable[CalibrationItem | JudgedItem], settings: JudgeSettings,
            rubrics: Mapping[str, Collection[str]] | None = None) -> Calibration:
    """The judge's error from the stored labels (all of them, every judge) and the judged items of
    history, for the judge configured in `settings`; with the reason it cannot correct, if any.
    `rubrics` (case id -> its rubric items now): labels and items of edited-away items are left out."""
    notes: list[str] = []
    if rubrics is not None:
        labels, notes = gone_items(labels, rubrics)
        judged = (i for i in judged if i.case_id not in rubrics or i.item in rubrics[i.case_id])
    found = _measure(labels, judged, settings)
    found.notes = notes
    return found


def _measure(labels: list[CalibrationLabel], judged: Iterable[CalibrationItem | JudgedItem], settings: JudgeSettings) -> Calibration:
    mine = current_labels(labels, settings)
    when = max((lab.labeled_at for lab in mine), default="")[:10]  # shown as a day
    if not labels:
        return Calibration(None, "not calibrated: no human labels yet — label judged items with `scarbook calibrate` "
                                 "(or `scarbook calibrate --export FILE`, then `--import FILE`)")
    if not mine:
        model, prompt, sampling = Counter((lab.judge_model, lab.judge_prompt_digest[:8], lab.judge_sampling)
                                          for lab in labels).most_common(1)[0][0]
        then, now = judges_apart(model, prompt, sampling, settings)
        return Calibration(None, f"stale: the labels were made on judge {then}, the judge is now {now} — label "
                                 "items it graded with `scarbook calibrate`")
    judged = (i for i in judged if same_judge(i.judge_model, i.judge_prompt_digest, i.judge_sampling, settings))
    strata = strata_from(mine, judged)
    error = estimate_error(strata)
    n = len(mine)
    human = Counter(lab.human_verdict for lab in mine)
    found = Calibration(error, None, n, when, strata=strata, label_digest=label_digest(mine))
    if len(human) == 1:
        only = next(iter(human))
        unmeasured = Vote.FAIL if only == Vote.PASS else Vote.PASS
        found.reason = (f"one class only: all {plural(n, 'label')} say {only}, so the judge's error on {unmeasured} items "
                        f"is not measured — label items the judge {'failed' if unmeasured == Vote.FAIL else 'passed'} "
                        "with `scarbook calibrate`")
    elif n < settings.calibration_min_labels or min(human[Vote.PASS], human[Vote.FAIL]) < settings.calibration_min_per_class:
        found.reason = (f"too few labels: {n} ({human[Vote.PASS]} PASS, {human[Vote.FAIL]} FAIL); correcting needs "
                        f"{settings.calibration_min_labels} with {settings.calibration_min_per_class} of each class "
                        "(judge.calibration_min_labels, judge.calibration_min_per_class) — label more with "
                        "`scarbook calibrate`")
    elif not error.pooled.q0.value + error.pooled.q1.value > 1:
        found.reason = (f"judge no better than chance: q0 + q1 = {error.pooled.q0.value + error.pooled.q1.value:.2f} "
                        "<= 1 — fix the rubric or the judge before trusting its rates")
    if not settings.correct:
        found.reason = "off (judge.correct: false in scarbook.yaml)"
    return found


def recorded_report(cal: Calibration, report: CalibrationReport) -> CalibrationReport | None:
    """What a sitting records as the judge in use's calibration (the library's "calibrated …" line reads it): its
    labels' agreement and kappa weighted back from the stratified sample. None when the judge in use has no labels —
    those just given were paired with another judge's verdicts (a sheet drawn under it, a draw from its items), and
    recording them as this judge's would call it calibrated where its calibration is stale."""
    if cal.error is None:
        return None
    pooled = cal.error.pooled
    return replace(report, overall=(pooled.agreement.value, pooled.kappa.value, cal.labels))


def sampled_from(history: History, labels: list[CalibrationLabel], settings: JudgeSettings) -> Iterator[JudgedItem]:
    """The judged items the labels were drawn from: those of sessions that started by the time the last
    label of the judge in use was made (a label made on a day: that whole day). A session run since —
    the one an eval reports — is not yet part of the population its W describes (it was: the eval and
    `calibrate --report` read different q0, q1). Lazy: nothing is read until iterated."""
    last_label = max((lab.labeled_at for lab in current_labels(labels, settings)), default="")
    yield from judged_in_history(history, last_label)


def calibration_for(history: History, workspaces_dir: Path, settings: JudgeSettings,
                    cases: Mapping[str, Case] | None = None) -> Calibration:
    """The Calibration of the judge in use, from workspaces/history/calibration.json and history;
    a calibration file that cannot be read leaves the raw rates, saying why. With `cases`, labels for
    rubric items a case no longer has are left out (Calibration.notes says which).

    Nothing is read when there are `cases` and none has an llm_judge check, and history's runs only when some
    label was made on the judge in use (the strata's sizes come from them): a report of one session
    in a project without labels costs the same whatever the history holds."""
    if cases and not any(c.judge_checks for c in cases.values()):  # (none at all: the cases' files are gone)
        return Calibration(None, NO_JUDGED_CASE)
    try:
        labels = read_labels(workspaces_dir / "history" / "calibration.json")  # closed before history is read
        rubrics = {cid: set(c.rubric_items) for cid, c in cases.items()} if cases is not None else None
        return measure(labels, sampled_from(history, labels, settings), settings, rubrics)
    except (ScarbookError, OSError, TypeError, ValueError) as exc:
        return Calibration(None, f"calibration unreadable: {getattr(exc, 'message', exc)}")


def case_targets(history: History, cases: dict[str, Case], default_threshold: float) -> list[CaseTarget]:
    """Each judged case in the latest session that ran it: its judged split and its threshold."""
    found = []
    for case_id, latest in sorted(history.latest_by_case().items()):
        split = judged_split(latest.runs)
        if split is not None and split[0] + split[1]:
            found.append(CaseTarget(case_id, *split, effective_threshold(cases.get(case_id), default_threshold)))
    return found


def label_advice(cal: Calibration, targets: list[CaseTarget]) -> list[str]:
    """For each judged case the gate leaves undecided: about how many more labels would decide it when
    labels alone can (it is judge-limited), else that it needs more runs first."""
    if cal.error is None:
        return []
    lines = []
    for t in targets:
        fixed = t.corrected(cal.error.for_case(t.case_id))
        if fixed is None or not fixed.lo <= t.threshold <= fixed.hi:
            continue
        where = (f"≈{pct_beside(fixed.rate, t.threshold)} against {threshold_pct(t.threshold)}, "
                 f"{fixed.ci_label.removeprefix('≈')} {interval_beside(fixed.lo, fixed.hi, t.threshold)} now")
        if fixed.labels_to_decide:
            lines.append(more_labels_words(fixed.labels_to_decide, f"would decide case {t.case_id} with its runs as "
                                                                   f"they are ({where})"))
        else:
            lines.append(f"case {t.case_id}: more runs first — with its judge's error known exactly its runs would "
                         f"still leave it undecided ({where})")
    return lines


def limiting_strata(cal: Calibration, targets: list[CaseTarget], settings: JudgeSettings) -> list[str]:
    """Which stratum limits the estimate: the class the calibration is short of, then per judged case
    the stratum (its judge's PASSes or FAILs) whose labels carry most of its corrected rate's
    uncertainty, with how many of its items are labelled."""
    if cal.error is None:
        return []
    lines = []
    labels = {s.human_pass + s.human_fail for s in cal.strata}
    human_fail = sum(s.human_fail for s in cal.strata)
    human_pass = sum(s.human_pass for s in cal.strata)
    for cls, have, verdict in (("FAIL", human_fail, "FAIL"), ("PASS", human_pass, "PASS")):
        if have < settings.calibration_min_per_class:
            lines.append(f"limits the estimate: {cls} labels, {have} of the {settings.calibration_min_per_class} "
                         f"needed — label the judge's {verdict}s (`scarbook calibrate` picks them first)")
    by_key = {(s.case_id, s.judge): s for s in cal.strata}
    for t in targets:
        fixed = t.corrected(cal.error.for_case(t.case_id))
        if fixed is None or len(fixed.judge_parts) != 3:
            continue
        verdict = "PASS" if fixed.judge_parts[1] >= fixed.judge_parts[2] else "FAIL"
        s = by_key.get((t.case_id, verdict))
        if s is None:
            continue
        rests = "q1 and the share of false passes" if verdict == Vote.PASS else "q0"
        lines.append(f"limits the estimate: {t.case_id} — its judge-{verdict} items ({s.n} labelled of "
                     f"{max(s.population, s.n)}): {rests} rest most on them")
    return lines if labels else []


def labelling_pool(labels: list[CalibrationLabel], judged: Iterable[CalibrationItem],
                   settings: JudgeSettings) -> tuple[JudgeSettings | None, set[LabelKey]]:
    """Where the next labels are drawn from: the judge in use's items when it graded any (its own strata), less
    those already paired with its verdicts — an item the person labelled under another judge stays in the draw,
    and is paired without asking again (label_store.pair_known); else every judge's items less those labelled.
    (judge, keys to leave out), for pick_items and pick_planned."""
    if any(item.graded_by(settings) for item in judged):
        return settings, {lab.key for lab in current_labels(labels, settings)}
    return None, {lab.key for lab in labels}


def next_items(labels: list[CalibrationLabel], runs, targets: list[CaseTarget], settings: JudgeSettings,
               sample: int, seed: int) -> tuple[list[CalibrationItem], bool]:
    """The next items to label, and whether they were picked for precision: to the strata whose labels
    shrink the corrected intervals most (stats/label_plan.py), topped up by the plain stratified draw;
    the plain draw alone before any label of this judge exists. Drawn from labelling_pool."""
    runs = list(runs)
    judged = judged_items(runs)
    judge, done = labelling_pool(labels, judged, settings)
    cal = measure(labels, judged, settings)
    plan: dict[tuple[str, str], int] = {}
    if cal.error is not None:
        mine = current_labels(labels, settings)
        labelled = Counter((lab.case_id, lab.judge_verdict) for lab in mine)
        models = {t.case_id: cal.error.for_case(t.case_id) for t in targets}
        human = Counter(lab.human_verdict for lab in mine)
        needs = LabelNeeds(human["PASS"], human["FAIL"], settings.calibration_min_per_class)
        plan = allocate(targets, models, labelled, stratum_counts(runs, done, judge), sample, needs)
    picked = pick_planned(runs, plan, seed, exclude=done, judge=judge) if plan else []
    if len(picked) < sample:
        picked += pick_items(runs, sample - len(picked), seed, exclude=done | {i.key for i in picked}, judge=judge)
    return picked, bool(plan)


def diff_note(cal: Calibration, a: SessionInfo, b: SessionInfo, settings: JudgeSettings,
              judges: tuple[SessionJudge | None, SessionJudge | None], rejudge: bool = False) -> str:
    """What the judges and the judge's measured error mean for `scarbook diff A B` (docs/statistics.md). `judges`:
    each session's, as its runs record it (history/session_judge.py). When they are not known to be one judge, which
    part differs or is unknown (not for a rejudge whose judges differ: its own note names them). With one judge for
    both sessions the true difference is the judged one / (q0 + q1 - 1), so the verdicts (a test of "any change")
    stand and only the sizes are rescaled. "" when no labels of the judge in use exist or the sessions were not
    judged."""
    mine, theirs = judges
    if mine is None or theirs is None or a.partial or b.partial:
        return ""
    line = judges_line(mine, theirs)
    if line:
        return "" if rejudge and match_judges(mine, theirs).differ else line
    if not cal.labels:
        return ""
    error = cal.usable_error
    if error is None:
        return f"judge: differences not corrected for the judge's error — {cal.reason}"
    in_use = judge_in_use(settings)
    if not match_judges(mine, in_use).same:  # one judge graded both, but not the one the labels measure
        return (f"judge: both sessions were graded by {described(mine, in_use)}, not by the judge in use "
                f"({described(in_use, mine)}) whose error the labels measure: differences not corrected for it; the "
                "same judge graded both sessions, so the verdicts stand")
    q0, q1 = error.pooled.q0.value, error.pooled.q1.value
    return (f"judge: with its measured error (q0 {q0:.2f}, q1 {q1:.2f}, {plural(cal.labels, 'label')}) a true "
            f"difference reads × {q0 + q1 - 1:.2f}: the agent's differences are about {1 / (q0 + q1 - 1):.1f}× "
            "those above; the same judge graded both sessions, so the verdicts stand "
            "(one-item rubrics; docs/statistics.md)")


def _iv(est) -> str:
    if est.value != est.value:  # NaN
        return "n/a"
    return f"{est.value:.2f} [{est.lo:.2f}, {est.hi:.2f}]"


def format_calibration(cal: Calibration, settings: JudgeSettings) -> str:
    """The judge's measured error, pooled and per case, and whether rates are corrected with it."""
    lines = [f"judge {settings.model} (prompt {settings.prompt_digest[:8]}): "
             + (f"{plural(cal.labels, 'label')}, last {cal.calibrated_at or '?'}" if cal.labels else "no labels"),
             "corrected rates: " + ("on" if cal.usable else f"not used, the raw rates stand — {cal.reason}")]
    lines += [f"note: {note}" for note in cal.notes]
    if cal.error is None:
        return "\n".join(lines)
    head = f"{'':<24} {'labels':>6}  {'sensitivity q1':<19} {'specificity q0':<19} {'agreement':<19} kappa"
    lines += ["", head]
    rows = [("pooled (weighted)", cal.error.pooled)] + sorted(cal.error.per_case.items())
    for name, model in rows:
        lines.append(f"{name[:24]:<24} {model.labels:>6}  {_iv(model.q1):<19} {_iv(model.q0):<19} "
                     f"{_iv(model.agreement):<19} {_iv(model.kappa)}")
    lines += ["", "95% intervals. Per rubric item, weighted back from the stratified sample (half judge-PASS, "
              "half judge-FAIL) by each stratum's judged items; per case shrunk toward the pool. A run graded "
              "on m items: q1^m, q0 (docs/statistics.md)."]
    return "\n".join(lines)
