"""People's labels and the recorded calibrations: workspaces/history/calibration.json (TinyDB).

A person's PASS/FAIL is the truth about a rubric item on an artifact — (case id, item text, artifact digest) — and
is kept once, in the `truths` table. Each judge's verdict on that artifact is kept beside it, one per judge (its
model, prompt digest and sampling: judge/identity.py), in `verdicts`. A change of judge adds its own verdicts and
never replaces another's, so every judge's calibration reads its own (`labels()` gives a CalibrationLabel per truth
and judge verdict; history/judge_truth.current_labels takes the judge in use's).

A truth changes only by `relabel`, the person's explicit act: `save_label` with another verdict for a labelled item
raises LabelConflict. `pair_known` records the judge's verdicts on items the person labelled already, so nobody is
asked twice about one item on one artifact.

A file written before this layout holds one `labels` record per item with the judge's verdict of the time. It is
read as it is — readers never write; the first label saved migrates it to `truths` and `verdicts`, keeping the file
as it was beside it (calibration.json.v1) and saying so in `migrated`.
"""

from __future__ import annotations

import math
import shutil
from collections import Counter
from dataclasses import asdict, dataclass, fields
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tinydb import Query, TinyDB

from scarbook.errors import HistoryError, ScarbookError
from scarbook.fs.json_store import AtomicJSONStorage, damaged_message
from scarbook.judge.calibrate import (
    ByJudge,
    CalibrationItem,
    CalibrationLabel,
    CalibrationReport,
    JudgeKey,
    LabelKey,
    OnArtifact,
)
from scarbook.judge.identity import judges_apart, same_judge
from scarbook.judge.settings import JudgeSettings
from scarbook.judge.verdict import VERDICTS
from scarbook.text import plural

OLD_TABLE = "labels"  # the layout before truths and verdicts: one record per item, human and judge verdict in it
BACKUP_SUFFIX = ".v1"


class LabelConflict(ScarbookError):
    """A label given for an item the person labelled otherwise before: changing it is `relabel`'s job."""


@dataclass(frozen=True)
class Truth(OnArtifact):
    """A person's verdict on one rubric item on one artifact."""

    case_id: str
    item: str
    artifact_digest: str
    human_verdict: str
    labeled_at: str = ""
    artifact: str = ""  # kept so a later judge can grade the same text
    item_index: int = 0

    def described(self) -> str:
        return f"case {self.case_id}, item {self.item!r} (artifact {self.artifact_digest})"


@dataclass(frozen=True)
class JudgeVerdict(OnArtifact, ByJudge):
    """One judge's verdict on one rubric item on one artifact, recorded when it was paired with a truth."""

    case_id: str
    item: str
    artifact_digest: str
    judge_verdict: str
    judge_model: str = ""
    judge_prompt_digest: str = ""
    judge_sampling: str = ""
    judge_reason: str = ""
    paired_at: str = ""


def _record(cls, doc: dict) -> Any:
    """A record of `cls` from a stored document (TypeError on one that lacks a field: callers name the file)."""
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in doc.items() if k in known})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _by_key(key: LabelKey):
    q = Query()
    return (q.case_id == key[0]) & (q.item == key[1]) & (q.artifact_digest == key[2])


def _by_judge(key: LabelKey, judge: JudgeKey):
    q = Query()
    return _by_key(key) & (q.judge_model == judge[0]) & (q.judge_prompt_digest == judge[1]) & (q.judge_sampling == judge[2])


class CalibrationStore:
    """People's labels, each judge's verdicts beside them, and calibration results, in one TinyDB file
    (workspaces/history/calibration.json)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db = TinyDB(str(self.path), storage=AtomicJSONStorage)
        self._truths = self._db.table("truths")
        self._verdicts = self._db.table("verdicts")
        self._runs = self._db.table("calibrations")
        self.migrated = ""  # what migrating an older file did, for the person to read ("" when nothing)

    def close(self) -> None:
        self._db.close()

    # -- reading --------------------------------------------------------------------------------
    def truths(self) -> dict[LabelKey, Truth]:
        """Each labelled item's truth: the person's verdict (a file of the older layout: read from its records)."""
        found = {t.key: t for t in (_record(Truth, doc) for doc in self._truths.all())}
        for doc in self._db.table(OLD_TABLE).all():
            truth = _record(Truth, doc)
            found.setdefault(truth.key, truth)
        return found

    def verdicts(self) -> list[JudgeVerdict]:
        """Every judge's verdict paired with a truth, one per (item, judge)."""
        found = {(v.key, v.judge_key): v for v in (_record(JudgeVerdict, doc) for doc in self._verdicts.all())}
        for doc in self._db.table(OLD_TABLE).all():
            verdict = _record(JudgeVerdict, {"paired_at": doc.get("labeled_at", ""), **doc})
            found.setdefault((verdict.key, verdict.judge_key), verdict)
        return list(found.values())

    def labels(self, case_id: str | None = None) -> list[CalibrationLabel]:
        """Each truth beside each judge's verdict on it: one label per (item, judge)."""
        truths = self.truths()
        found = []
        for v in self.verdicts():
            t = truths.get(v.key)
            if t is not None and (case_id is None or t.case_id == case_id):
                found.append(CalibrationLabel(t.case_id, t.item, t.artifact_digest, t.human_verdict, v.judge_verdict,
                                              v.judge_reason, v.judge_model, v.judge_prompt_digest, v.paired_at,
                                              t.artifact, t.item_index, v.judge_sampling))
        return found

    def labeled_keys(self) -> set[LabelKey]:
        return set(self.truths())

    # -- writing --------------------------------------------------------------------------------
    def save_label(self, item: CalibrationItem, human_verdict: str, labeled_at: str | None = None) -> CalibrationLabel:
        """Store the person's verdict for this item on this artifact, beside the verdict of the judge that graded
        `item`. An item labelled already keeps its label (the same verdict again: only the judge's verdict is
        added); another verdict raises LabelConflict — `relabel` changes a label."""
        when = labeled_at or _now()
        truth = self.save_truth(item, human_verdict, when)
        paired = self._pair(item, when)
        return CalibrationLabel(truth.case_id, truth.item, truth.artifact_digest, truth.human_verdict,
                                paired.judge_verdict, paired.judge_reason, paired.judge_model,
                                paired.judge_prompt_digest, paired.paired_at, truth.artifact, truth.item_index,
                                paired.judge_sampling)

    def save_truth(self, item: CalibrationItem, human_verdict: str, labeled_at: str | None = None) -> Truth:
        """Store the person's verdict for this item on this artifact, paired with no judge's verdict yet (a label
        whose judge a sheet does not name: label_files.py); `pair_known` pairs it when a draw takes the item. An
        item labelled already keeps its label; another verdict raises LabelConflict."""
        verdict = human_verdict.upper()
        if verdict not in VERDICTS:
            raise ValueError(f"a label is PASS or FAIL, got {human_verdict!r}")
        self._migrate()
        truth = self.truths().get(item.key)
        if truth is None:
            truth = Truth(item.case_id, item.item, item.artifact_digest, verdict, labeled_at or _now(), item.artifact,
                          item.item_index)
            self._truths.insert(asdict(truth))
        elif truth.human_verdict != verdict:
            raise LabelConflict(f"{truth.described()} is labelled {truth.human_verdict} in {self.path} "
                                f"({truth.labeled_at[:10]}), not {verdict}: a label changes only when you relabel it")
        return truth

    def _pair(self, item: CalibrationItem, when: str) -> JudgeVerdict:
        """The verdict of `item`'s judge on its artifact, recorded once: a judge paired already keeps its first."""
        known = self._verdicts.get(_by_judge(item.key, item.judge_key))
        if isinstance(known, dict):
            return _record(JudgeVerdict, known)
        paired = JudgeVerdict(item.case_id, item.item, item.artifact_digest, item.judge_verdict, item.judge_model,
                              item.judge_prompt_digest, item.judge_sampling, item.judge_reason, when)
        self._verdicts.insert(asdict(paired))
        return paired

    def pair_known(self, items: list[CalibrationItem]) -> tuple[list[CalibrationLabel], list[CalibrationItem]]:
        """Of the items drawn to label: those the person labelled already, paired with their judge's verdicts (no
        question asked), and the rest — the ones to ask about."""
        truths = self.truths()
        known = [item for item in items if item.key in truths]
        return ([self.save_label(item, truths[item.key].human_verdict) for item in known],
                [item for item in items if item.key not in truths])

    def relabel(self, key: LabelKey, human_verdict: str, labeled_at: str | None = None) -> Truth:
        """The person changes their label on an item: the truth before (each judge's verdict stays as it was)."""
        verdict = human_verdict.upper()
        if verdict not in VERDICTS:
            raise ValueError(f"a label is PASS or FAIL, got {human_verdict!r}")
        self._migrate()
        before = self.truths()[key]
        self._truths.update({"human_verdict": verdict, "labeled_at": labeled_at or _now()}, _by_key(key))
        return before

    def _migrate(self) -> None:
        """An older file's `labels` records split into truths and verdicts (before the first write), the file as it
        was kept beside it. Crash-safe: until the old table is dropped its records still read as they did."""
        old = self._db.table(OLD_TABLE).all()
        if not old:
            return
        backup = self.path.with_name(self.path.name + BACKUP_SUFFIX)
        if not backup.exists():
            shutil.copy2(self.path, backup)
        truths = {k for k in (_record(Truth, doc).key for doc in self._truths.all())}
        pairs = {(v.key, v.judge_key) for v in (_record(JudgeVerdict, doc) for doc in self._verdicts.all())}
        new_truths, new_verdicts = [], []
        for doc in old:
            truth = _record(Truth, doc)
            verdict = _record(JudgeVerdict, {"paired_at": doc.get("labeled_at", ""), **doc})
            if truth.key not in truths:
                truths.add(truth.key)
                new_truths.append(asdict(truth))
            if (verdict.key, verdict.judge_key) not in pairs:
                pairs.add((verdict.key, verdict.judge_key))
                new_verdicts.append(asdict(verdict))
        self._truths.insert_multiple(new_truths)
        self._verdicts.insert_multiple(new_verdicts)
        self._db.drop_table(OLD_TABLE)
        self.migrated = (f"{self.path}: {plural(len(old), 'label')} moved to the layout that keeps your verdict once "
                         "per item and artifact and each judge's verdict beside it (a change of judge no longer "
                         f"replaces one); the file as it was: {backup}")

    # -- calibrations ---------------------------------------------------------------------------
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
    """Every human label in calibration.json (one per judge verdict beside it), the file closed again before the
    caller goes on (a damaged file: HistoryError; one that does not hold labels: TypeError or ValueError)."""
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


def labels_elsewhere(store: CalibrationStore, judge: JudgeSettings) -> str:
    """For a judge never calibrated: the labels the project holds that are none of its own — paired with another
    judge's verdicts (a sheet labelled under judge A, the cases now judged by B), or with none yet — and how the
    judge in use gets them paired; "" when there are none (or some are its own)."""
    count = len(store.truths())
    labels = store.labels()
    if not count or any(same_judge(lab.judge_model, lab.judge_prompt_digest, lab.judge_sampling, judge) for lab in labels):
        return ""
    judges = Counter((lab.judge_model, lab.judge_prompt_digest, lab.judge_sampling) for lab in labels)
    if judges:
        then, now = judges_apart(*judges.most_common(1)[0][0], judge)
        whose = f"for judge {then}" + (f" and {plural(len(judges) - 1, 'other')}" if len(judges) > 1 else "")
    else:
        now, whose = judges_apart("", "", "", judge)[1], "beside no judge's verdict yet"
    return (f"never calibrated for {now} — {plural(count, 'label')} {'exists' if count == 1 else 'exist'} {whose}: "
            f"`scarbook calibrate` (press j) pairs them with {judge.model}'s verdicts on the same artifacts, not "
            f"asking again (after `scarbook rejudge latest` if {judge.model} graded none)")
