"""The latest verification of each case's scar, kept so the library can show a badge without re-running it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from tinydb import Query, TinyDB

from scarbook.cases.io import case_digest
from scarbook.fs.json_store import AtomicJSONStorage
from scarbook.models import Case, RunStatus

CATCHES, MISSES, REJECTS_GOOD, UNVERIFIED, ERROR = (
    "catches the scar", "misses the scar", "rejects the good artifact", "unverified", "error")
JUDGE_UNSTABLE = "judge unstable on this case"  # judged K times, the verdicts on an artifact differed
# The library's badges: certified = the failed artifact fails, the good one passes, and the judge (when
# the case has one) gave the same verdicts every time it was asked; verified = the failed one fails.
CERTIFIED, VERIFIED = "certified", "verified"


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

    @property
    def certified(self) -> bool:
        return (self.outcome == CATCHES and self.good_verdict == RunStatus.PASS and self.judge_stable is not False
                and (self.judge_stable is True or not self.needs_judge))

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
        if not self.path.exists():
            return {}
        with TinyDB(str(self.path), storage=AtomicJSONStorage) as db:
            known = Verification.__dataclass_fields__
            return {d["case_id"]: Verification(**{k: v for k, v in d.items() if k in known}) for d in db.all()}

    def badge(self, case: Case, latest: dict[str, Verification]) -> str:
        """certified / verified / misses / rejects good / judge unstable / unverified; a case changed
        since its verification is unverified."""
        v = latest.get(case.id)
        if v is None or v.digest != case_digest(case):
            return "unverified"
        return badge_of(v)


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
