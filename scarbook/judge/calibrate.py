"""Calibrate the judge: humans grade a sample of rubric items, then we measure agreement.

Flow: `pick_items` draws judged rubric items stratified across cases and across the judge's
PASS/FAIL verdicts; the UI shows item + artifact (never the judge's verdict) and the human grades;
`CalibrationStore.save_label` keeps each label in history; `agreement` gives agreement rate and
Cohen's kappa per case and overall, with the disagreements. Labels are keyed by (case id, rubric
item text, artifact digest), so a later judge model or judge prompt is scored against the same
labels (`rescore`). `calibration_status` says when the judge was last calibrated and whether a
change of judge made that stale (judge/identity.py: model, prompt, samples, temperature, max_tokens, endpoint).

Kappa with a single class: when the human and the judge each gave only one label, and the same
one (say every item PASS), chance agreement is 1 and kappa is 0/0. We return NaN ("not
measurable") rather than 1.0: all-PASS agreement says nothing about whether the judge can spot a
FAIL. The agreement rate is still reported; `format_report` prints "n/a (one class)".
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tinydb import Query, TinyDB

from scarbook.errors import HistoryError
from scarbook.fs.json_store import AtomicJSONStorage, damaged_message
from scarbook.judge.artifact import OUTPUT
from scarbook.judge.identity import judges_apart, same_judge, sampling_of
from scarbook.judge.settings import JudgeSettings
from scarbook.judge.verdict import VERDICTS
from scarbook.models import CheckResult, JudgeDetail, RunRecord, Vote

LabelKey = tuple[str, str, str]  # (case id, rubric item text, artifact digest)


def artifact_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:16]


@dataclass
class CalibrationItem:
    """One judged rubric item to show a human. `judge_verdict` must stay hidden until reveal."""

    case_id: str
    item: str  # the rubric item text
    item_index: int  # 0-based position in the check's rubric
    check_index: int
    artifact: str  # the artifact text the judge graded
    judge_verdict: str
    judge_reason: str
    judge_model: str
    judge_prompt_digest: str
    session_id: str = ""
    k: int = 0
    judge_sampling: str = ""  # sampling_of its judge record: "samples=3 temperature=0.0 max_tokens=… base_url=…"

    @property
    def artifact_digest(self) -> str:
        return artifact_digest(self.artifact)

    @property
    def key(self) -> LabelKey:
        return (self.case_id, self.item, self.artifact_digest)


def _read_judge(result: CheckResult, run: RunRecord) -> tuple[str, str, str, list[tuple[int, str, str, str]]]:
    """(artifact, model, prompt digest, [(item index, item text, verdict, reason)]) of a judged result;
    an output artifact with no stored excerpt falls back to the run's output excerpt."""
    judge = result.judge or JudgeDetail()
    artifact = judge.artifact_excerpt
    if artifact is None and (judge.artifact is None or judge.artifact.source == OUTPUT):
        artifact = run.output_excerpt
    items = [(it.item - 1, it.text, str(it.verdict).upper(), it.reason) for it in judge.items]
    return artifact or "", judge.model, judge.prompt_digest or "", items


def judged_items(runs: Iterable[RunRecord]) -> list[CalibrationItem]:
    """Every PASS/FAIL-graded rubric item of every llm_judge result in `runs`."""
    found = []
    for run in runs:
        for pos, result in enumerate(run.checks):
            if result.type != "llm_judge" or not result.judge:
                continue
            artifact, model, prompt, items = _read_judge(result, run)
            for index, text, verdict, reason in items:
                if verdict in VERDICTS and text:
                    check_index = result.index if result.index else pos
                    found.append(CalibrationItem(run.case_id, text, index, check_index, artifact, verdict,
                                                 reason, model, prompt, run.session_id, run.k,
                                                 sampling_of(result.judge)))
    return found


def pick_items(judged_runs: Iterable[RunRecord], sample: int = 20, seed: int = 0,
               exclude: Iterable[LabelKey] = ()) -> list[CalibrationItem]:
    """Up to `sample` distinct items, taken round-robin over cases and, within a case,
    alternating the judge's FAIL and PASS verdicts (seeded shuffle inside each stratum)."""
    rng = random.Random(seed)
    seen = set(exclude)
    strata: dict[str, dict[str, list[CalibrationItem]]] = defaultdict(lambda: {Vote.FAIL: [], Vote.PASS: []})
    for item in judged_items(judged_runs):
        if item.key not in seen:
            seen.add(item.key)
            strata[item.case_id][item.judge_verdict].append(item)
    for by_verdict in strata.values():
        for queue in by_verdict.values():
            rng.shuffle(queue)
    prefer = {case: Vote.FAIL for case in strata}  # FAILs are rarer: take one first
    picked: list[CalibrationItem] = []
    while len(picked) < sample and any(q for s in strata.values() for q in s.values()):
        for case in sorted(strata):
            if len(picked) >= sample:
                break
            first = prefer[case]
            other = Vote.PASS if first == Vote.FAIL else Vote.FAIL
            queue = strata[case][first] or strata[case][other]
            if queue:
                picked.append(queue.pop())
                prefer[case] = other
    return picked


def pick_planned(judged_runs: Iterable[RunRecord], plan: Mapping[tuple[str, str], int], seed: int = 0,
                 exclude: Iterable[LabelKey] = ()) -> list[CalibrationItem]:
    """`plan[(case, judge verdict)]` distinct items from each stratum, drawn at random within it (so
    the stratified estimate stays unbiased however the labels are spread over the strata)."""
    rng = random.Random(seed)
    seen = set(exclude)
    strata: dict[tuple[str, str], list[CalibrationItem]] = defaultdict(list)
    for item in judged_items(judged_runs):
        if item.key not in seen:
            seen.add(item.key)
            strata[(item.case_id, item.judge_verdict)].append(item)
    picked: list[CalibrationItem] = []
    for key in sorted(plan):
        queue = strata.get(key, [])
        picked += rng.sample(queue, min(plan[key], len(queue)))
    return picked


def stratum_counts(judged_runs: Iterable[RunRecord], exclude: Iterable[LabelKey] = ()) -> Counter[tuple[str, str]]:
    """Distinct judged items per (case, judge verdict) not in `exclude`: what is left to label."""
    seen = set(exclude)
    counts: Counter[tuple[str, str]] = Counter()
    for item in judged_items(judged_runs):
        if item.key not in seen:
            seen.add(item.key)
            counts[(item.case_id, item.judge_verdict)] += 1
    return counts


def cohen_kappa(pairs: Iterable[tuple[Any, Any]]) -> float:
    """Cohen's kappa for (rater A, rater B) label pairs: (po - pe) / (1 - pe).
    NaN when it is not measurable: no pairs, or both raters used one and the same class."""
    pairs = list(pairs)
    if not pairs:
        return math.nan
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    count_a, count_b = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if expected >= 1:
        return math.nan
    return (observed - expected) / (1 - expected)


@dataclass
class CalibrationLabel:
    """A human's PASS/FAIL for one rubric item on one artifact, beside the judge's."""

    case_id: str
    item: str
    artifact_digest: str
    human_verdict: str
    judge_verdict: str
    judge_reason: str = ""
    judge_model: str = ""
    judge_prompt_digest: str = ""
    labeled_at: str = ""
    artifact: str = ""  # kept so a later judge can grade the same text
    item_index: int = 0
    judge_sampling: str = ""  # the judge's samples, temperature, max_tokens and base_url when it graded (sampling_of)

    @property
    def key(self) -> LabelKey:
        return (self.case_id, self.item, self.artifact_digest)

    @property
    def agrees(self) -> bool:
        return self.human_verdict == self.judge_verdict


Score = tuple[float, float, int]  # (agreement rate, kappa, number of labels)


@dataclass
class CalibrationReport:
    per_case: dict[str, Score]
    overall: Score
    disagreements: list[CalibrationLabel] = field(default_factory=list)


def _score(labels: list[CalibrationLabel]) -> Score:
    if not labels:
        return (math.nan, math.nan, 0)
    pairs = [(lab.human_verdict, lab.judge_verdict) for lab in labels]
    return (sum(lab.agrees for lab in labels) / len(labels), cohen_kappa(pairs), len(labels))


def agreement(labels: Iterable[CalibrationLabel]) -> CalibrationReport:
    labels = list(labels)
    by_case: dict[str, list[CalibrationLabel]] = defaultdict(list)
    for lab in labels:
        by_case[lab.case_id].append(lab)
    return CalibrationReport(
        per_case={case: _score(group) for case, group in sorted(by_case.items())},
        overall=_score(labels),
        disagreements=[lab for lab in labels if not lab.agrees],
    )


def rescore(labels: Iterable[CalibrationLabel], new_verdicts: Mapping[LabelKey, str],
            judge_model: str = "", judge_prompt_digest: str = "") -> list[CalibrationLabel]:
    """The stored human labels paired with a later judge's verdicts on the same items (by key);
    labels the new judge did not grade are left out. `agreement()` of the result scores it."""
    return [replace(lab, judge_verdict=new_verdicts[lab.key].upper(), judge_reason="",
                    judge_model=judge_model, judge_prompt_digest=judge_prompt_digest)
            for lab in labels if lab.key in new_verdicts]


def verdicts_by_key(runs: Iterable[RunRecord]) -> dict[LabelKey, str]:
    """A later session's judge verdicts, keyed like the labels (for `rescore`)."""
    return {item.key: item.judge_verdict for item in judged_items(runs)}


def _fmt(x: float, pct: bool = False) -> str:
    if math.isnan(x):
        return "n/a (one class)" if not pct else "n/a"
    return f"{x:.0%}" if pct else f"{x:.2f}"


def format_report(report: CalibrationReport) -> str:
    lines = [f"{'case':<24} {'n':>3}  {'agreement':>9}  kappa"]
    for case, (agree, kappa, n) in report.per_case.items():
        lines.append(f"{case:<24} {n:>3}  {_fmt(agree, True):>9}  {_fmt(kappa)}")
    agree, kappa, n = report.overall
    lines.append(f"{'overall':<24} {n:>3}  {_fmt(agree, True):>9}  {_fmt(kappa)}")
    if report.disagreements:
        lines += ["", "disagreements (human vs judge):"]
        for lab in report.disagreements:
            why = f" — judge: {lab.judge_reason}" if lab.judge_reason else ""
            lines.append(f"  {lab.case_id}: {lab.item!r}: human {lab.human_verdict}, judge {lab.judge_verdict}{why}")
    return "\n".join(lines)


class CalibrationStore:
    """Human labels and calibration results, in one TinyDB file (workspaces/history/calibration.json)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db = TinyDB(str(self.path), storage=AtomicJSONStorage)
        self._labels = self._db.table("labels")
        self._runs = self._db.table("calibrations")

    def close(self) -> None:
        self._db.close()

    def save_label(self, item: CalibrationItem, human_verdict: str, labeled_at: str | None = None) -> CalibrationLabel:
        """Store (or replace) the human's verdict for this item on this artifact."""
        verdict = human_verdict.upper()
        if verdict not in VERDICTS:
            raise ValueError(f"a label is PASS or FAIL, got {human_verdict!r}")
        label = CalibrationLabel(item.case_id, item.item, item.artifact_digest, verdict, item.judge_verdict,
                                 item.judge_reason, item.judge_model, item.judge_prompt_digest,
                                 labeled_at or datetime.now(UTC).isoformat(timespec="seconds"), item.artifact,
                                 item.item_index,
                                 item.judge_sampling)
        q = Query()
        self._labels.upsert(asdict(label), (q.case_id == label.case_id) & (q.item == label.item)
                            & (q.artifact_digest == label.artifact_digest))
        return label

    def labels(self, case_id: str | None = None) -> list[CalibrationLabel]:
        known = CalibrationLabel.__dataclass_fields__
        found = [CalibrationLabel(**{k: v for k, v in doc.items() if k in known}) for doc in self._labels.all()]
        return [lab for lab in found if case_id is None or lab.case_id == case_id]

    def labeled_keys(self) -> set[LabelKey]:
        return {lab.key for lab in self.labels()}

    def record_calibration(self, report: CalibrationReport, judge: JudgeSettings, when: str | None = None) -> None:
        """Remember that this judge (model, prompt and sampling: judge/identity.py) was scored against the labels,
        and how well."""
        agree, kappa, n = report.overall
        self._runs.insert({"date": when or date.today().isoformat(), "judge_model": judge.model,
                           "judge_prompt_digest": judge.prompt_digest, "judge_sampling": judge.sampling_key,
                           "agreement": agree, "kappa": None if math.isnan(kappa) else kappa, "n": n})

    def last_calibration(self) -> dict[str, Any] | None:
        docs = self._runs.all()
        if not docs:
            return None
        latest = max(docs, key=lambda d: (d["date"], d.doc_id))
        return dict(latest)


def read_labels(path: Path | str) -> list[CalibrationLabel]:
    """Every human label in calibration.json, the file closed again before the caller goes on (a damaged
    file: HistoryError; one that does not hold labels: TypeError or ValueError)."""
    store = CalibrationStore(path)
    try:
        return store.labels()
    finally:
        store.close()


def calibration_status(store: CalibrationStore, judge: JudgeSettings) -> tuple[str | None, float | None, str]:
    """(date of the last calibration, its agreement rate, why it is stale or ""). Stale when the judge it was
    made on is not `judge` — its model, prompt, samples, temperature, max_tokens or endpoint (judge/identity.py,
    the rule the labels are counted by): "it was made on judge claude-x, max_tokens=1024, the judge is now
    claude-x, max_tokens=2048"."""
    try:
        last = store.last_calibration()
        if last is None:
            return (None, None, "")
        model, prompt, sampling = last["judge_model"], last["judge_prompt_digest"], last.get("judge_sampling", "")
        agree = last["agreement"]
        if not isinstance(last["date"], str) or not (agree is None or isinstance(agree, (int, float))):
            raise TypeError("a calibration's date is not text or its agreement not a number")
        if not all(isinstance(x, str) for x in (model, prompt, sampling)):
            raise TypeError("a calibration's judge is not text")
    except (KeyError, TypeError) as exc:  # a record scarbook did not write (the file is within an agent's reach)
        raise HistoryError(damaged_message(store.path, f"a calibration record lacks {exc}" if isinstance(exc, KeyError)
                                           else str(exc))) from None
    if same_judge(model, prompt, sampling, judge):
        return (last["date"], agree, "")
    then, now = judges_apart(model, prompt, sampling, judge)
    return (last["date"], agree, f"it was made on judge {then}, the judge is now {now}")
