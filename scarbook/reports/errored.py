"""What the report files say of runs that reached no verdict — one agent's testcases and annotations
(reports/junit.py, reports/github.py) and a comparison's (reports/versus_files.py) alike, so a session of
several agents shows its errors as a session of one does: each run's line, the annotation's warnings, and
JUnit's `<error type="infra">` for a testcase some of whose runs the machine still failed on their last
attempt (the exit code is 3 for them: a dashboard must not read the testcase as passed).
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from scarbook.models import CauseKind, RunRecord, RunStatus, SessionInfo, SessionState
from scarbook.run.causes import cause_kind, is_infra
from scarbook.text import plural, report_text

INFRA_UNRESOLVED = "still failed by the machine on the last attempt — no verdict (exit 3)"
AGENT_ERRORS = "ended in an error of the agent's own doing (a replay it diverged from) — no verdict (exit 3)"


def agent_error(r: RunRecord) -> bool:
    """A run that reached no verdict by the agent's own doing (a replay it diverged from): left out of the rate,
    it would leave there only the runs the agent did not take out, so its session has no verdict."""
    return r.status == RunStatus.ERROR and cause_kind(r) == CauseKind.AGENT


# why a session that did not finish has no verdict (exit 3), and what finishes it where `scarbook resume` can
UNFINISHED: dict[str, str] = {
    SessionState.CANCELLED: "the session was cancelled (Ctrl-C, or its CI job cancelled)",
    SessionState.INTERRUPTED: "the session was interrupted (its scarbook was killed)",
    SessionState.ABORTED: "the session was aborted (the judge rejected its key)",
    SessionState.STOPPED_BUDGET: "the session was stopped by --max-cost",
    SessionState.CRASHED: "the session crashed (crash.txt beside its history)",
    SessionState.JUDGING: "the session is judging (its judge batch is not collected yet)",
    SessionState.RUNNING: "the session is still running"}
RESUMES: dict[str, str] = {SessionState.CANCELLED: "runs the rest", SessionState.INTERRUPTED: "runs the rest",
                           SessionState.ABORTED: "runs the rest once the key is fixed",
                           SessionState.JUDGING: "collects its verdicts"}


def unfinished_words(session: SessionInfo) -> str:
    """Why a session that did not finish has no verdict, and the `scarbook resume` that finishes it where one can
    (not a shard or a rejudge, which resume refuses); "" for a finished session."""
    why = UNFINISHED.get(str(session.state))  # (history reads an interrupted session's state as the plain word)
    if why is None:
        return ""
    resume = RESUMES.get(str(session.state))
    if session.shard is not None or (session.rerun_of is not None and session.rerun_of.rejudge):
        resume = None
    return (f"{why}, so its runs are part of the evidence (exit 3)"
            + (f" — `scarbook resume {session.id}` {resume}" if resume else ""))


def unfinished_error(tc: ET.Element, session: SessionInfo) -> bool:
    """An `<error type="incomplete">` on a testcase with no failure or error of its own when its session did not
    finish (exit 3: it saw part of the evidence; a dashboard read it as passed); whether one was added."""
    words = unfinished_words(session)
    if not words or tc.find("failure") is not None or tc.find("error") is not None:
        return False
    message = f"no verdict: {words}"
    ET.SubElement(tc, "error", message=message, type="incomplete").text = message
    return True


def run_line(r: RunRecord) -> str:
    """"run 3 (cand): error — agent exited with code 1: … [cause infra: api-overloaded] (2 attempts)"."""
    cause = f" [cause {r.cause.kind}: {r.cause.rule}]" if r.cause else ""
    tries = f" ({len(r.attempts)} attempts)" if len(r.attempts) > 1 else ""
    agent = f" ({r.agent})" if r.agent else ""
    return report_text(f"run {r.k}{agent}: {r.status} — {r.reason}{cause}{tries}", one_line=True)


def errored_warnings(errors: int, infra: int, who: str = "") -> list[str]:
    """A case's annotation warnings for its errored runs and the ones the machine left without a verdict;
    `who`: whose runs, in a session of several agents ("cand: ")."""
    out = []
    if errors:
        out.append(f"{who}{plural(errors, 'run')} errored (harness could not reach a verdict; not in the rate)")
    if infra:
        out.append(f"{who}{plural(infra, 'run')} still failed by the machine (infra) on the last attempt: no verdict")
    return out


def infra_error(tc: ET.Element, runs: Sequence[RunRecord]) -> bool:
    """An `<error type="infra">` on a testcase with no failure or error of its own when some of its runs' infra
    retries ran out, naming them (`type="agent"` for runs whose errors are the agent's own doing: exit 3 too);
    whether one was added (the suite's `errors` counts it)."""
    if tc.find("failure") is not None or tc.find("error") is not None:
        return False
    for kind, left, head, words in (("infra", [r for r in runs if is_infra(r)], "infra retries ran out: ", INFRA_UNRESOLVED),
                                    ("agent", [r for r in runs if agent_error(r)], "", AGENT_ERRORS)):
        if left:
            message = f"{head}{plural(len(left), 'run')} {words}"
            ET.SubElement(tc, "error", message=message, type=kind).text = "\n".join([message, *map(run_line, left)])
            return True
    return False
