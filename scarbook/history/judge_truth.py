"""The judge's measured error for the judge configuration in use, from the labels in calibration.json
and the judged items in history — or why there is none and the raw numbers stand.

Only labels made on the current judge's verdicts (same judge model and judge prompt digest) count:
the sample was drawn stratified by that judge's verdicts, and the strata's sizes come from the items
the same judge graded in history. After a model or prompt change the calibration is *stale* until
new items are labelled (`scarbook calibrate` draws them from the new judge's verdicts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.history.store import History
from scarbook.judge.calibrate import CalibrationItem, CalibrationLabel, CalibrationStore, judged_items
from scarbook.judge.settings import JudgeSettings
from scarbook.stats.judge_error import JudgeError, Stratum, estimate_error
from scarbook.text import plural


@dataclass
class Calibration:
    error: JudgeError | None  # None: not usable, `reason` says why
    reason: str | None
    labels: int = 0
    calibrated_at: str = ""

    @property
    def usable(self) -> bool:
        return self.error is not None and self.reason is None

    def to_dict(self) -> dict:
        return {"usable": self.usable, "reason": self.reason, "labels": self.labels,
                "calibrated_at": self.calibrated_at,
                **({"error": self.error.to_dict()} if self.error is not None else {})}


def strata_from(labels: Iterable[CalibrationLabel], judged: Iterable[CalibrationItem]) -> list[Stratum]:
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
    return [Stratum(c, v, population[(c, v)], tally[(c, v, "PASS")], tally[(c, v, "FAIL")])
            for c in cases for v in ("PASS", "FAIL")]


def current_labels(labels: Iterable[CalibrationLabel], settings: JudgeSettings) -> list[CalibrationLabel]:
    return [lab for lab in labels
            if lab.judge_model == settings.model and lab.judge_prompt_digest == settings.prompt_digest]


def measure(labels: list[CalibrationLabel], judged: Iterable[CalibrationItem], settings: JudgeSettings) -> Calibration:
    """The judge's error from the stored labels (all of them, every judge) and the judged items of
    history, for the judge configured in `settings`; with the reason it cannot correct, if any."""
    mine = current_labels(labels, settings)
    when = max((lab.labeled_at for lab in mine), default="")
    if not labels:
        return Calibration(None, "not calibrated: no human labels yet — label judged items with `scarbook calibrate` "
                                 "(or `scarbook calibrate --export FILE`, then `--import FILE`)")
    if not mine:
        other = Counter((lab.judge_model, lab.judge_prompt_digest[:8]) for lab in labels).most_common(1)[0][0]
        return Calibration(None, f"stale: the labels were made on judge {other[0]} (prompt {other[1]}), the judge is now "
                                 f"{settings.model} (prompt {settings.prompt_digest[:8]}) — label items it graded "
                                 "with `scarbook calibrate`")
    judged = (i for i in judged if i.judge_model == settings.model and i.judge_prompt_digest == settings.prompt_digest)
    error = estimate_error(strata_from(mine, judged))
    n = len(mine)
    human = Counter(lab.human_verdict for lab in mine)
    found = Calibration(error, None, n, when)
    if len(human) == 1:
        only = next(iter(human))
        other = "FAIL" if only == "PASS" else "PASS"
        found.reason = (f"one class only: all {plural(n, 'label')} say {only}, so the judge's error on {other} items "
                        f"is not measured — label items the judge {'failed' if other == 'FAIL' else 'passed'} "
                        "with `scarbook calibrate`")
    elif n < settings.calibration_min_labels or min(human["PASS"], human["FAIL"]) < settings.calibration_min_per_class:
        found.reason = (f"too few labels: {n} ({human['PASS']} PASS, {human['FAIL']} FAIL); correcting needs "
                        f"{settings.calibration_min_labels} with {settings.calibration_min_per_class} of each class "
                        "(judge.calibration_min_labels, judge.calibration_min_per_class) — label more with "
                        "`scarbook calibrate`")
    elif not error.pooled.q0.value + error.pooled.q1.value > 1:
        found.reason = (f"judge no better than chance: q0 + q1 = {error.pooled.q0.value + error.pooled.q1.value:.2f} "
                        "<= 1 — fix the rubric or the judge before trusting its rates")
    if not settings.correct:
        found.reason = "off (judge.correct: false in scarbook.yaml)"
    return found


def calibration_for(history: History, workspaces_dir: Path, settings: JudgeSettings) -> Calibration:
    """The Calibration of the judge in use, from workspaces/history/calibration.json and history;
    a calibration file that cannot be read leaves the raw rates, saying why."""
    try:
        store = CalibrationStore(workspaces_dir / "history" / "calibration.json")
    except (ScarbookError, OSError, ValueError) as exc:
        return Calibration(None, f"calibration unreadable: {getattr(exc, 'message', exc)}")
    try:
        return measure(store.labels(), judged_items(history.iter_all_runs()), settings)
    except (ScarbookError, TypeError, ValueError) as exc:
        return Calibration(None, f"calibration unreadable: {getattr(exc, 'message', exc)}")
    finally:
        store.close()


def _iv(est) -> str:
    if est.value != est.value:  # NaN
        return "n/a"
    return f"{est.value:.2f} [{est.lo:.2f}, {est.hi:.2f}]"


def format_calibration(cal: Calibration, settings: JudgeSettings) -> str:
    """The judge's measured error, pooled and per case, and whether rates are corrected with it."""
    lines = [f"judge {settings.model} (prompt {settings.prompt_digest[:8]}): "
             + (f"{plural(cal.labels, 'label')}, last {cal.calibrated_at or '?'}" if cal.labels else "no labels"),
             "corrected rates: " + ("on" if cal.usable else f"not used, the raw rates stand — {cal.reason}")]
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
