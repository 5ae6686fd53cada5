"""The noise floor: each case's latest A/A measurement (`scarbook noise`), kept beside the history.

An A/A pair is the same configuration run twice as two sessions. Its `spread` is the half-width of
the 95% interval of the difference between the two: how far two sessions of the very same agent
can land apart on this case at this many runs. `diff` and `eval --against` quote it, and call a
difference smaller than it *within noise*.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tinydb import Query, TinyDB

from scarbook.errors import HistoryError
from scarbook.fs.json_store import AtomicJSONStorage, damaged_message

FILE_NAME = "noise.json"


@dataclass
class NoiseMeasurement:
    case_id: str
    sessions: list[str] = field(default_factory=list)  # [A, B]
    runs: int = 0  # runs per case in each session
    rate_a: float | None = None
    rate_b: float | None = None
    diff: float | None = None  # rate_b - rate_a
    spread: float | None = None  # half-width of the 95% interval of the A/A difference
    p_holm: float | None = None
    disagree: bool = False  # the same configuration differed significantly from itself (Holm over the pair)
    fingerprint: str = ""  # the config both sessions ran (agent + judge)
    digest: str = ""  # the case's checks then
    at: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


class NoiseStore:
    def __init__(self, workspaces_dir: Path) -> None:
        self.path = Path(workspaces_dir) / "history" / FILE_NAME

    def save(self, measured: list[NoiseMeasurement]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with TinyDB(str(self.path), storage=AtomicJSONStorage) as db:
            q = Query()
            for m in measured:
                db.upsert(m.to_dict(), q.case_id == m.case_id)

    def latest(self) -> dict[str, NoiseMeasurement]:
        """Each case's latest measurement; a damaged file is a HistoryError naming it."""
        if not os.path.lexists(self.path):  # (False, not PermissionError, in a history folder closed to this user)
            return {}
        try:
            with TinyDB(str(self.path), storage=AtomicJSONStorage) as db:
                docs = db.all()
        except (ValueError, TypeError) as exc:
            raise HistoryError(damaged_message(self.path, f"it is not scarbook's noise record: {exc}")) from None
        known = NoiseMeasurement.__dataclass_fields__
        out = {}
        for doc in docs:
            try:
                m = NoiseMeasurement(**{k: v for k, v in doc.items() if k in known})
            except TypeError:
                continue
            if isinstance(m.case_id, str) and (m.spread is None or isinstance(m.spread, (int, float))):
                out[m.case_id] = m
        return out
