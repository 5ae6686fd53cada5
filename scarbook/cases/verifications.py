"""The latest verification of each case's scar, kept so the library can show a badge without re-running it."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tinydb import Query, TinyDB

from scarbook.cases.io import case_digest
from scarbook.errors import HistoryError
from scarbook.fs.json_store import AtomicJSONStorage, damaged_message
from scarbook.models import Case, ItemFinding, RunStatus

CATCHES, MISSES, REJECTS_GOOD, UNVERIFIED, ERROR = (
    "catches the scar", "misses the scar", "rejects the good artifact", "unverified", "error")
JUDGE_UNSTABLE = "judge unstable on this case"  # judged K times, the verdicts on an artifact differed
# The library's badges: certified = the failed artifact fails, the good one passes, and the judge (when
# the case has one) gave the same verdicts every time it was asked; verified = the failed one fails.
CERTIFIED, VERIFIED = "certified", "verified"


@dataclass
class ItemCertification:
    """One rubric item or rule check of a verified case: what it did on the scar's artifacts (tools/item_certify.py)."""

    item_id: str  # the rubric item's id; "" for a rule check
    text: str  # the item's words, or the rule check in one line
    kind: str  # "llm_judge" for a rubric item, else the rule check's type
    check_index: int
    finding: ItemFinding
    why: str
    failed_votes: list[str] = field(default_factory=list)  # PASS/FAIL each time (a rule check: its status, once)
    good_votes: list[str] = field(default_factory=list)

    @property
    def is_item(self) -> bool:
        return bool(self.item_id)

    @classmethod
    def from_dict(cls, data: dict) -> ItemCertification:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["finding"] = ItemFinding(known.get("finding", ItemFinding.UNDECIDED))
        return cls(**known)


@dataclass
class Verification:
    case_id: str
    outcome: str
    detail: str
    failed_verdict: RunStatus | str | None = None  # pass / fail / error on the failed artifact
    good_verdict: RunStatus | str | None = None
    digest: str = ""
    at: str = ""
    judged: int = 1  # how many times each artifact went through the checks (K: the judge is asked K times)
    failed_votes: list[str] = field(default_factory=list)  # each time's verdict on the failed artifact
    good_votes: list[str] = field(default_factory=list)
    judge_stable: bool | None = None  # None: no judge took part (rule checks only, or no judge)
    needs_judge: bool = False  # the case has llm_judge checks (certification needs them judged, stably)
    items: list[ItemCertification] = field(default_factory=list)  # each rubric item's and rule check's finding

    @property
    def catching(self) -> list[ItemCertification]:
        return [i for i in self.items if i.finding == ItemFinding.CATCHING]

    @property
    def certified(self) -> bool:
        # a case none of whose items or rule checks catch the incident cannot be certified (issue 35.2);
        # a verification from before items were certified (no items) is read as it was
        return (self.outcome == CATCHES and self.good_verdict == RunStatus.PASS and self.judge_stable is not False
                and (self.judge_stable is True or not self.needs_judge) and (not self.items or bool(self.catching)))

    @property
    def ok(self) -> bool:
        return self.outcome == CATCHES

    def to_dict(self) -> dict:
        return asdict(self)


class VerificationStore:
    """The latest verification per case, so the library can show a badge without re-running it."""

    def __init__(self, workspaces_dir: Path) -> None:
        self.path = Path(workspaces_dir) / "history" / "verify.json"

    def save(self, results: list[Verification]) -> None:
        with TinyDB(str(self.path), storage=AtomicJSONStorage) as db:
            q = Query()
            for v in results:
                db.upsert(v.to_dict(), q.case_id == v.case_id)

    def move(self, old: str | None, new: str) -> None:
        """A renamed case keeps its verification (its checks did not change); `new`'s old entry, if
        a case of that id was verified once, goes. `old` None: only forget `new` (a fresh copy)."""
        if not self.path.exists():
            return
        with TinyDB(str(self.path), storage=AtomicJSONStorage) as db:
            q = Query()
            db.remove(q.case_id == new)
            if old is not None:
                db.update({"case_id": new}, q.case_id == old)

    def load(self) -> dict[str, Verification]:
        if not os.path.lexists(self.path):  # (False, not PermissionError, in a history folder closed to this user)
            return {}
        try:
            with TinyDB(str(self.path), storage=AtomicJSONStorage) as db:
                return {d["case_id"]: _verification(d) for d in db.all()}
        except (AttributeError, KeyError, TypeError, ValueError):  # JSON, but not what `verify` writes
            raise HistoryError(damaged_message(self.path, "it is not scarbook's verification record")) from None

    def badge(self, case: Case, latest: dict[str, Verification]) -> str:
        """certified / verified / misses / rejects good / judge unstable / unverified; a case changed
        since its verification is unverified."""
        v = latest.get(case.id)
        if v is None or v.digest != case_digest(case):
            return "unverified"
        return badge_of(v)


def _verification(doc: dict) -> Verification:
    known = {k: v for k, v in doc.items() if k in Verification.__dataclass_fields__}
    known["items"] = [ItemCertification.from_dict(i) for i in known.get("items") or [] if isinstance(i, dict)]
    return Verification(**known)


def badge_of(v: Verification) -> str:
    """The library badge a fresh verification earns."""
    if v.certified:
        return CERTIFIED
    return {CATCHES: VERIFIED, MISSES: "misses", REJECTS_GOOD: "rejects good",
            JUDGE_UNSTABLE: "judge unstable"}.get(v.outcome, "unverified")


def partial_note(v: Verification) -> str:
    """What a certification without a good artifact checked, and what it could not."""
    says: dict[str, str] = {RunStatus.FAIL: "fails its checks", RunStatus.PASS: "passes every check"}
    said = says.get(v.failed_verdict or "", "was not decided")
    return (f"certification partial: only (a) was checked — the failed artifact {said}; the scar has no good "
            "artifact, so (b) that a right result passes was not checked")
