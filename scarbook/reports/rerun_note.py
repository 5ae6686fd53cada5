"""The report's line for a session that re-ran (`eval --rerun`) or graded again (`scarbook rejudge`) another:
its `rerun_of` link, in words (tools/rerun.py and tools/rejudge.py make the link)."""

from __future__ import annotations

from scarbook.models.session_parts import RerunLink
from scarbook.text import plural


def rejudge_line(link: RerunLink, state: str = "finished", recorded: int | None = None) -> str:
    """The report's line: what this session graded again, from what. `recorded`: the runs it holds; fewer
    than it planned (a session that stopped: `state`), it says it meant to grade them and how many it holds."""
    unjudgeable = link.not_rejudgeable or ()
    model = f" with judge {link.judge_model}" if link.judge_model else ""
    tail = f"; {plural(len(unjudgeable), 'run')} not re-judgeable" if unjudgeable else ""
    short = recorded is not None and recorded < sum((link.cases or {}).values())
    done = "to grade again" if short else "graded again"
    stopped = f"; the session was {state} with {recorded} of them recorded" if short else ""
    return (f"rejudge of session {link.session}{model}: {plural(int(link.regraded or 0), 'run')} "
            f"{done} from kept artifacts, {int(link.carried or 0)} carried (rule checks failed), "
            f"no agent runs{tail}{stopped}; the source session's rates are unchanged")


def rerun_line(link: RerunLink, state: str = "finished", recorded: int | None = None) -> str:
    """The report's line: what this session re-ran (or graded again: `scarbook rejudge`), from what."""
    if link.rejudge:
        return rejudge_line(link, state, recorded)
    cases = link.cases or {}
    listed = ", ".join(f"{cid} ({n})" for cid, n in cases.items())
    return (f"re-run of session {link.session} (only {', '.join(link.only)}): "
            f"{len(cases)} case{'s' if len(cases) != 1 else ''} — {listed} (matching runs in the source); "
            "the source session's rates are unchanged")
