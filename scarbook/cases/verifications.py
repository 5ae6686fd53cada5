"""The latest verification of each case's scar, kept so the library can show a badge without re-running it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from tinydb import Query, TinyDB

from scarbook.cases.io import case_digest
from scarbook.fs.json_store import AtomicJSONStorage
from scarbook.models import Case

CATCHES, MISSES, REJECTS_GOOD, UNVERIFIED, ERROR = (
    "catches the scar", "misses the scar", "rejects the good artifact", "unverified", "error")


@dataclass
class Verification:
    case_id: str
    outcome: str
    detail: str
    failed_verdict: str | None = None  # pass / fail / error on the failed artifact
    good_verdict: str | None = None
    digest: str = ""
    at: str = ""

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
            return {d["case_id"]: Verification(**d) for d in db.all()}

    def badge(self, case: Case, latest: dict[str, Verification]) -> str:
        """verified / misses / unverified; a case changed since its verification is unverified."""
        v = latest.get(case.id)
        if v is None or v.digest != case_digest(case):
            return "unverified"
        return {CATCHES: "verified", MISSES: "misses", REJECTS_GOOD: "rejects good"}.get(v.outcome, "unverified")
