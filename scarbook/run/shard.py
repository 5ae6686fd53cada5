"""A shard of a session: `scarbook eval --shard I/N --session-id ID` runs a fixed 1/N of the session's
(case, k) jobs and records them as the session folder `ID.shard-I-of-N` (tools/merge.py joins them).

The split is round-robin by position in a fixed order (case id, then k), so it does not depend on the
order cases were named in, and every shard gets a share of every case (when a case has at least as
many runs as there are shards): with 2 cases and 2 shards, each shard runs half of each case.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from scarbook.errors import ScarbookError
from scarbook.models.session_parts import ShardHeader
from scarbook.models.words import SELECTORS

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SHARD_SPEC = re.compile(r"(\d+)/(\d+)")
SHARD_FOLDER = re.compile(r"(?P<session>.+)\.shard-(?P<index>\d+)-of-(?P<count>\d+)")  # Shard.folder_id
@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as the user writes it
    count: int
    session_id: str

    @classmethod
    def parse(cls, spec: str, session_id: str | None) -> Shard:
        m = SHARD_SPEC.fullmatch(spec.strip())
        if not m or not 1 <= int(m[1]) <= int(m[2]):
            raise ScarbookError(f"--shard takes I/N with 1 <= I <= N (e.g. --shard 2/4), got {spec!r}")
        if not session_id:
            raise ScarbookError("--shard needs --session-id: the name every shard of the session shares "
                                "(e.g. --session-id \"$CI_PIPELINE_ID\"), so `scarbook merge` can join them")
        check_session_id(session_id)
        return cls(int(m[1]), int(m[2]), session_id)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def folder_id(self) -> str:
        """The history folder (session id) this shard records into."""
        return f"{self.session_id}.shard-{self.index}-of-{self.count}"

    def to_dict(self) -> dict[str, object]:
        return {"session": self.session_id, "index": self.index, "count": self.count}

    def header(self) -> ShardHeader:
        """What the shard's session.json records of it: to_dict() and a nonce of its own, so a header
        copied from another shard (the agent of one job can write its history) is told apart."""
        return ShardHeader(self.session_id, self.index, self.count, secrets.token_hex(8))

    def jobs(self, case_ids: list[str], runs: int, *, whole_cases: bool = False) -> dict[str, list[int]]:
        """Case id -> the run numbers k this shard runs (every case listed, maybe with none). `whole_cases`
        (a session of several agents): every run of a case goes to one shard, so each shard compares
        the agents on its cases in blocks, under the same drift (cases dealt round-robin by id)."""
        mine: dict[str, list[int]] = {cid: [] for cid in case_ids}
        if whole_cases:
            for j, cid in enumerate(sorted(set(case_ids))):
                if j % self.count == self.index - 1:
                    mine[cid] = list(range(1, runs + 1))
            return mine
        for j, (cid, k) in enumerate(all_jobs(case_ids, runs)):
            if j % self.count == self.index - 1:
                mine[cid].append(k)
        return mine


def all_jobs(case_ids: list[str], runs: int) -> list[tuple[str, int]]:
    """Every (case, k) of a session in the order the shards deal them out: a case's runs one after
    another, so consecutive k go to different shards (k first would give a case to one shard only
    whenever the number of cases is a multiple of the number of shards)."""
    return [(cid, k) for cid in sorted(set(case_ids)) for k in range(1, runs + 1)]


def check_session_id(session_id: str) -> str:
    if not SESSION_ID.fullmatch(session_id):
        raise ScarbookError(f"--session-id must be 1-64 letters, digits, '.', '_' or '-' (starting with a letter "
                            f"or digit), got {session_id!r}")
    if session_id.endswith(".damaged"):
        raise ScarbookError(f"--session-id {session_id!r} ends in '.damaged', the mark of history moved aside: "
                            "scarbook would never list it — choose another")
    if session_id in SELECTORS:
        raise ScarbookError(f"--session-id {session_id!r} is a word scarbook reads as the newest sessions (latest, "
                            "previous) — choose another")
    return session_id
