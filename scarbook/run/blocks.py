"""A session of several agents (`eval --agents`): its runs in blocks (issue 36).

Every case runs N times per agent. Block b of a case holds one run of each agent, in an order drawn
afresh for that block, so drift during the session (API load, time of day, a cache warming) hits every
agent alike and no agent always runs first. A case's run numbers k stay 1, 2, 3, ...: block b holds
k = (b - 1)·A + 1 .. b·A for A agents, and each run records which agent made it (RunRecord.agent), so
history keeps its one rule (each k of a case once) and every tool that reads runs by (case, k) reads
these too. The order is drawn from the session's id, the case and the block: the same plan draws the
same order, and a block's order is never guessable from another's.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from scarbook.models import RunRecord


def agent_for(session_id: str, case_id: str, k: int, names: Sequence[str]) -> str:
    """The agent that runs run k of the case: its block's order, drawn from (session, case, block)."""
    if not names:
        return ""
    block, position = divmod(k - 1, len(names))
    order = list(names)
    random.Random(f"{session_id}/{case_id}/{block}").shuffle(order)
    return order[position]


def runs_of_blocks(blocks: int, names: Sequence[str]) -> int:
    """The run numbers k a case's first `blocks` blocks take."""
    return blocks * max(1, len(names))


def by_agent(records: Iterable[RunRecord], names: Sequence[str]) -> dict[str, list[RunRecord]]:
    """A case's runs per agent (in k order); a run whose agent is not one of `names` is left out."""
    out: dict[str, list[RunRecord]] = {n: [] for n in names}
    for r in sorted(records, key=lambda r: r.k):
        if r.agent in out:
            out[r.agent].append(r)
    return out


def statuses_by_agent(results: Mapping[str, Iterable[RunRecord]], names: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """Each case's run statuses per agent, in k order (what stats/head_to_head's looks read)."""
    return {cid: {a: [r.status for r in runs] for a, runs in by_agent(records, names).items()}
            for cid, records in results.items()}
