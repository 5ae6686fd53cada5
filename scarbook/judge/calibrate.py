"""Calibrate the judge: humans grade a sample of rubric items, then we measure agreement.

Flow: `pick_items` draws judged rubric items stratified across cases and across the judge's
PASS/FAIL verdicts; the UI shows item + artifact (never the judge's verdict) and the human grades;
judge/label_store.CalibrationStore keeps each person's verdict once per (case id, rubric item text, artifact
digest), and beside it each judge's verdict on that artifact (a CalibrationLabel pairs the two); `agreement` gives
agreement rate and Cohen's kappa per case and overall, with the disagreements. A later judge model or judge prompt
is scored against the same labels (`rescore`); a draw for the judge in use (`judge=`) takes only the items it
graded (judge/identity.py: model, prompt, samples, temperature, max_tokens, endpoint).

Kappa with a single class: when the human and the judge each gave only one label, and the same
one (say every item PASS), chance agreement is 1 and kappa is 0/0. We return NaN ("not
measurable") rather than 1.0: all-PASS agreement says nothing about whether the judge can spot a
FAIL. The agreement rate is still reported; `format_report` prints "n/a (one class)".
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scarbook.judge.artifact import OUTPUT
from scarbook.judge.identity import same_judge, sampling_of
from scarbook.judge.settings import JudgeSettings
from scarbook.judge.verdict import VERDICTS
from scarbook.models import CheckResult, JudgeDetail, RunRecord, Vote

LabelKey = tuple[str, str, str]  # (case id, rubric item text, artifact digest)
JudgeKey = tuple[str, str, str]  # (judge model, prompt digest, sampling): one judge (judge/identity.py)


class OnArtifact:
    """A record about one rubric item on one artifact: its label key."""

    case_id: str
    item: str
    artifact_digest: str

    @property
    def key(self) -> LabelKey:
        return (self.case_id, self.item, self.artifact_digest)


class ByJudge:
    """A record of one judge's verdict: which judge (judge/identity.py), as a key."""

    judge_model: str
    judge_prompt_digest: str
    judge_sampling: str

    @property
    def judge_key(self) -> JudgeKey:
        return (self.judge_model, self.judge_prompt_digest, self.judge_sampling)

    @property
    def judge_tag(self) -> str:
        """The judge as a label sheet names it — "claude-x/3f2a91c0d4", its model and a digest of its whole key — so
        an import pairs each label with the verdict of the judge whose draw the person labelled (label_files.py)."""
        return f"{self.judge_model}/{hashlib.sha256(json.dumps(self.judge_key).encode()).hexdigest()[:10]}"


def artifact_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:16]


@dataclass
class CalibrationItem(ByJudge):
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

    def graded_by(self, judge: JudgeSettings) -> bool:
        """Was this item graded by the judge `judge` configures (judge/identity.same_judge)?"""
        return same_judge(self.judge_model, self.judge_prompt_digest, self.judge_sampling, judge)


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


def graded_by(judge: JudgeSettings | None, judged_runs: Iterable[RunRecord]) -> Iterator[CalibrationItem]:
    """The judged items of `judged_runs` that `judge` graded (its model, prompt and sampling); all of them for None."""
    for item in judged_items(judged_runs):
        if judge is None or item.graded_by(judge):
            yield item


def items_by_key(items: Iterable[CalibrationItem]) -> dict[LabelKey, dict[str, CalibrationItem]]:
    """Each label key's judged items, one per judge (by judge_tag, the first found): a label read back from a sheet
    is paired with the verdict of the judge whose draw the sheet holds, never with another's that graded the same
    artifact since (label_files.read_labels)."""
    found: dict[LabelKey, dict[str, CalibrationItem]] = defaultdict(dict)
    for item in items:
        found[item.key].setdefault(item.judge_tag, item)
    return dict(found)


def pick_items(judged_runs: Iterable[RunRecord], sample: int = 20, seed: int = 0,
               exclude: Iterable[LabelKey] = (), judge: JudgeSettings | None = None) -> list[CalibrationItem]:
    """Up to `sample` distinct items (of those `judge` graded, when given), taken round-robin over cases and, within
    a case, alternating the judge's FAIL and PASS verdicts (seeded shuffle inside each stratum)."""
    rng = random.Random(seed)
    seen = set(exclude)
    strata: dict[str, dict[str, list[CalibrationItem]]] = defaultdict(lambda: {Vote.FAIL: [], Vote.PASS: []})
    for item in graded_by(judge, judged_runs):
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
                 exclude: Iterable[LabelKey] = (), judge: JudgeSettings | None = None) -> list[CalibrationItem]:
    """`plan[(case, judge verdict)]` distinct items from each stratum, drawn at random within it (so
    the stratified estimate stays unbiased however the labels are spread over the strata)."""
    rng = random.Random(seed)
    seen = set(exclude)
    strata: dict[tuple[str, str], list[CalibrationItem]] = defaultdict(list)
    for item in graded_by(judge, judged_runs):
        if item.key not in seen:
            seen.add(item.key)
            strata[(item.case_id, item.judge_verdict)].append(item)
    picked: list[CalibrationItem] = []
    for key in sorted(plan):
        queue = strata.get(key, [])
        picked += rng.sample(queue, min(plan[key], len(queue)))
    return picked


def stratum_counts(judged_runs: Iterable[RunRecord], exclude: Iterable[LabelKey] = (),
                   judge: JudgeSettings | None = None) -> Counter[tuple[str, str]]:
    """Distinct judged items per (case, judge verdict) not in `exclude`: what is left to label."""
    seen = set(exclude)
    counts: Counter[tuple[str, str]] = Counter()
    for item in graded_by(judge, judged_runs):
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
class CalibrationLabel(OnArtifact, ByJudge):
    """A human's PASS/FAIL for one rubric item on one artifact, beside one judge's verdict on it (judge/label_store.py
    keeps the human's once and each judge's beside it). `labeled_at`: when this judge's verdict was paired with it."""

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
