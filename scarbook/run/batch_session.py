"""A --judge-batch session's last step: submit the judge's requests as one Message Batch, wait for it,
grade the runs that waited, and leave the session ready to finish (issue 27).

Kill-safe. The runs that wait are recorded in history like any run, as unjudged (their judge check
"waiting for the batch judge"). Before anything is sent, every waiting check, with its requests, is
written to <history>/<session>/batch.json and the session is recorded as `judging`, with the sha256 of
that file and which run each request id grades (its `batch` record: digest, runs); the moment a
batch's create is sent is recorded, and its id the moment the batch exists. A scarbook killed after
that loses nothing: `scarbook resume SESSION` reads batch.json — refused, by name, unless it is what
was submitted (an agent could rewrite it: a cached PASS put in, two runs' ids swapped) — polls the
recorded batch, grades, puts the judged runs in place of the waiting ones and finishes the session
as the eval would have. A batch whose create was sent but whose id was never heard (killed in
between) is looked for among the API's batches and adopted (judge.batch.find_sent), never created
twice; one never sent is submitted. Until then the session has no verdict: a gate never reads it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.agents.usage import usage_of_checks
from scarbook.checks.verdict import verdict_of
from scarbook.errors import AbortSession, HistoryError
from scarbook.fs.files import atomic_write_text, describe_os_error
from scarbook.history.store import History, now_iso
from scarbook.judge.batch import BatchStatus, PendingCheck, find_sent, grade_pending, poll, results, submit
from scarbook.judge.errors import JudgeUnavailable
from scarbook.judge.judge import Judge
from scarbook.models import CheckResult, CheckStatus, JudgeDetail, RunRecord, SessionInfo, SessionState
from scarbook.models.session_parts import BatchRecord
from scarbook.run.cause_matching import AgentFacts
from scarbook.run.cause_patterns import Pattern
from scarbook.run.causes import attribute
from scarbook.run.events import BatchProgress, Event
from scarbook.text import plural

BATCH_FILE = "batch.json"
VERSION = 1
# One Message Batch holds at most 100,000 requests and 256 MB: a session past either is sent in chunks
# (a check's samples always in one), each recorded as it is created.
MAX_REQUESTS = 100_000
MAX_BYTES = 200 * 1024 * 1024  # below 256 MB: room for the envelope


@dataclass
class BatchPlan:
    """What a judging session needs to be finished later: its waiting checks and the reports asked for."""

    checks: list[PendingCheck]
    reports: dict[str, str] = field(default_factory=dict)  # option ("--json", "--junit") -> path
    against: str = ""  # eval --against: "baseline" or a session id

    def write(self, folder: Path) -> str:
        """Write batch.json; its sha256 (which the session records: `read` checks it)."""
        data = {"version": VERSION, "checks": [c.to_dict() for c in self.checks], "reports": self.reports,
                "against": self.against}
        text = json.dumps(data, ensure_ascii=False)
        atomic_write_text(folder / BATCH_FILE, text)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def id_map(self) -> dict[str, list[Any]]:
        """Each request's custom id -> [case, k, check index]: which run its answer grades."""
        return {s["custom_id"]: [c.case_id, c.k, c.index] for c in self.checks for s in c.samples if "custom_id" in s}

    def chunks(self, max_requests: int, max_bytes: int) -> list[list[PendingCheck]]:
        """The checks in batches within the API's limits, in order (the same split on every call)."""
        parts: list[list[PendingCheck]] = [[]]
        count = size = 0
        for check in self.checks:
            requests = check.requests()
            n, b = len(requests), sum(len(json.dumps(r, ensure_ascii=False).encode()) for r in requests)
            if parts[-1] and (count + n > max_requests or size + b > max_bytes):
                parts.append([])
                count = size = 0
            parts[-1].append(check)
            count, size = count + n, size + b
        return parts

    @classmethod
    def read(cls, folder: Path, info: SessionInfo) -> BatchPlan:
        """batch.json, if it is what session `info` submitted (its recorded sha256 and request ids);
        HistoryError naming it otherwise."""
        path = folder / BATCH_FILE
        try:
            raw = path.read_bytes()
            if info.batch is None or hashlib.sha256(raw).hexdigest() != info.batch.digest:
                raise HistoryError(_not_submitted(path, info))
            data = json.loads(raw.decode("utf-8"))
            if data.get("version") != VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
            plan = cls([PendingCheck.from_dict(c) for c in data["checks"]], dict(data.get("reports") or {}),
                       str(data.get("against") or ""))
            if plan.id_map() != info.batch.runs:
                raise HistoryError(_not_submitted(path, info))
            return plan
        except OSError as exc:
            raise HistoryError(f"could not read {path}: {describe_os_error(exc)} — the judge's waiting requests "
                               "are recorded there; without it the session cannot be finished") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise HistoryError(f"{path} is damaged ({exc}): the session's waiting judge requests cannot be read") from None


def _not_submitted(path: Path, info: SessionInfo) -> str:
    return (f"{path} is not what session {info.id} submitted (its sha256 is recorded in the session's record at "
            "submit): it was changed since, so its waiting requests cannot be trusted — the session cannot be "
            "finished from it; run its cases again")


class StillJudging(Exception):
    """The batch's results are not in (cancelled while waiting, or the API could not be reached):
    the session stays `judging`; str() says why."""


def resume_hint(sid: str) -> str:
    return f"`scarbook resume {sid}` collects the verdicts and finishes the session"


async def _adopt(judge: Judge, info: SessionInfo, n: int, part: list[PendingCheck],
                 ids: list[str | None]) -> BatchStatus | None:
    """Batch `n` of the session, when its create was sent before (a scarbook killed before the reply)."""
    sent_at = ((info.batch.sending if info.batch is not None else None) or {}).get(str(n))
    if not sent_at:
        return None
    try:
        return await find_sent(judge, part, sent_at, ids, one_out=any(ids))
    except JudgeUnavailable as down:  # it may exist: sending again could pay twice
        raise StillJudging(f"judge batch {n + 1} was sent at {sent_at} but its id never came back, and the "
                           f"batches could not be listed to find it: {down.detail}") from None


async def judge_in_batch(history: History, info: SessionInfo, judge: Judge, plan: BatchPlan, runs: list[RunRecord],
                         patterns: tuple[Pattern, ...], poll_s: float, emit: Callable[[Event], None]) -> list[RunRecord]:
    """Submit (what no recorded batch holds), wait, grade; the session's runs with the waiting ones
    judged (written to history in their place). Raises StillJudging when the results are not in (a batch is at
    the API: the key rejected after one was sent leaves it there too); AbortSession when the judge rejected the key
    before any was sent (the waiting runs are then recorded as errors whose cause is judge-rejected-key)."""
    parts = plan.chunks(MAX_REQUESTS, MAX_BYTES)
    ids = recorded_ids(info, len(parts))
    info.note = ""  # a resumed session's "is judging" note; how this ends sets its own
    if not any(ids):
        if info.batch is None:  # what is submitted, as the session records it: resume checks batch.json against it
            info.batch = BatchRecord(plan.write(history.dir / info.id), plan.id_map(), keys=("digest", "runs"))
        info.state = SessionState.JUDGING
        info.batch = info.batch.updated(id=None, ids=tuple(ids), requests=sum(len(c.requests()) for c in plan.checks))
        history.update_session(info)
    for n, part in enumerate(parts):
        if ids[n]:
            continue
        try:
            status = await _adopt(judge, info, n, part, ids)
            if status is None:
                # before the create: resume looks for it
                assert info.batch is not None  # recorded above, or by the session resumed (it has ids)
                info.batch = info.batch.updated(sending={**(info.batch.sending or {}), str(n): now_iso()})
                history.update_session(info)
                status = await submit(judge, part, one_out=any(ids))
        except (JudgeUnavailable, AbortSession) as exc:
            why = exc.detail if isinstance(exc, JudgeUnavailable) else exc.message
            if any(ids):  # part of it is sent (and paid for): resume (with the key fixed) sends the rest
                raise StillJudging(f"judge batch {n + 1} of {len(parts)} could not be submitted: {why}") from None
            if isinstance(exc, AbortSession):  # the key was rejected: each waiting run met it (resume runs them again)
                _finish(history, info, plan, runs, patterns, _all_failed(plan, why), {p.ref: why for p in plan.checks})
                raise
            # as online: the judge could not be reached, each waiting run errors (and the session says why)
            why = f"the judge batch could not be submitted: {why}"
            info.note = f"{why} ({plural(len(plan.checks), 'waiting judge check')}: an error each)"
            return _finish(history, info, plan, runs, patterns, _all_failed(plan, why))
        ids[n] = status.id
        assert info.batch is not None
        info.batch = info.batch.updated(id=ids[0], ids=tuple(ids), submitted_at=now_iso())
        history.update_session(info)
        emit(BatchProgress(info.id, status.id, status.submitted, status.done, status.processing_status))
    sent = [i for i in ids if i is not None]
    assert len(sent) == len(ids)  # every part was sent above (or the loop raised)
    await _wait(judge, info, sent, poll_s, emit)
    answers: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for batch_id, part in zip(sent, parts, strict=True):
        try:
            answers.update(await results(judge, batch_id))
        except JudgeUnavailable as down:
            raise StillJudging(f"the results of judge batch {batch_id} could not be read: {down.detail}") from None
        except AbortSession as exc:  # the key was rejected now: the batch stays, a fixed key collects it
            raise StillJudging(f"the results of judge batch {batch_id} could not be read: {exc.message}") from None
        owner.update((c.ref, batch_id) for c in part)
    graded, rejected = [], {}
    for pending in plan.checks:
        try:
            graded.append(await grade_pending(judge, pending, answers, owner[pending.ref]))
        except AbortSession as exc:  # a malformed reply's online re-ask met a rejected key
            graded.append(_failed(pending, exc.message))
            rejected[pending.ref] = exc.message
    judged = _finish(history, info, plan, runs, patterns, graded, rejected)
    if rejected:  # as online, the session stops there: resume runs the runs the key stopped again once it is fixed
        raise AbortSession(next(iter(rejected.values())))
    return judged


def recorded_ids(info: SessionInfo, count: int) -> list[str | None]:
    """The id of each of the session's `count` batches, None where none was recorded."""
    ids = info.batch.batch_ids if info.batch is not None else [None]
    return [*ids, *[None] * (count - len(ids))][:count]


async def _wait(judge: Judge, info: SessionInfo, ids: list[str], poll_s: float, emit: Callable[[Event], None]) -> None:
    said: dict[str, tuple[int, str]] = {}
    waiting = list(ids)
    while True:
        for batch_id in list(waiting):
            try:
                status = await poll(judge, batch_id)
            except JudgeUnavailable as down:
                raise StillJudging(f"judge batch {batch_id} could not be polled: {down.detail}") from None
            except AbortSession as exc:  # the key was rejected now: the batch stays, a fixed key collects it
                raise StillJudging(f"judge batch {batch_id} could not be polled: {exc.message}") from None
            if (status.done, status.processing_status) != said.get(batch_id):
                said[batch_id] = (status.done, status.processing_status)
                emit(BatchProgress(info.id, batch_id, status.submitted, status.done, status.processing_status))
            if status.processing_status == "ended":
                waiting.remove(batch_id)
        if not waiting:
            return
        await asyncio.sleep(poll_s)


def _failed(pending: PendingCheck, why: str) -> CheckResult:
    return CheckResult(type=pending.type, status=CheckStatus.ERROR, detail=why, index=pending.index,
                       judge=JudgeDetail.failed(why))


def _all_failed(plan: BatchPlan, why: str) -> list[CheckResult]:
    return [_failed(p, why) for p in plan.checks]


def _finish(history: History, info: SessionInfo, plan: BatchPlan, runs: list[RunRecord],
            patterns: tuple[Pattern, ...], graded: list[CheckResult],
            rejected: dict[str, str] | None = None) -> list[RunRecord]:
    """Put each graded check in its run, give the run its verdict and cause, rewrite those runs. `rejected`: the
    checks (by ref) the judge's rejected key stopped, with its message: a run whose verdict one of them decided has
    the cause judge-rejected-key, as online, so `scarbook resume` runs it again once the key is fixed."""
    by_run = {(r.case_id, r.k): r for r in runs}
    touched: dict[str, list[RunRecord]] = {}
    for pending, result in zip(plan.checks, graded, strict=True):
        run = by_run.get((pending.case_id, pending.k))
        if run is None or pending.index >= len(run.checks):
            continue  # not in the history read back (left out as damaged): nothing to put it in
        run.checks[pending.index] = result
        if run not in touched.setdefault(run.case_id, []):
            touched[run.case_id].append(run)
    waited = {(p.case_id, p.k, p.index): (rejected or {}).get(p.ref, "") for p in plan.checks}
    for case_runs in touched.values():
        for run in case_runs:
            mine = sorted(i for c, k, i in waited if (c, k) == (run.case_id, run.k))
            _stop_after_first_miss(run, mine)
            run.status, run.reason = verdict_of(run.checks)
            run.judge_usage, run.judge_calls = usage_of_checks(run.checks)
            # (a check the key stopped counts only while it is not `not run` behind an earlier miss)
            aborted = next((why for i in mine if (why := waited[run.case_id, run.k, i])
                            and run.checks[i].status == CheckStatus.ERROR), "")
            # the run reached the judge, so its agent finished (not crashed, not timed out)
            run.cause = attribute(run, AgentFacts(exit_code=run.exit_code), patterns, judge_aborted=aborted)
    for case_id, case_runs in touched.items():
        history.replace_runs(info.id, case_id, case_runs)
    info.state = SessionState.RUNNING  # judged: the session ends as a normal one now
    return runs


def _stop_after_first_miss(run: RunRecord, indexes: list[int]) -> None:
    """As online, judge checks count in order up to the first that does not pass; the batch graded
    the later ones too (all were sent at once): they are `not run`, keeping only what they cost."""
    stopped: CheckResult | None = None
    for i in indexes:
        result = run.checks[i]
        if stopped is not None:
            spent = result.judge.spent_only() if result.judge is not None else JudgeDetail(keys=("verdict",))
            run.checks[i] = CheckResult(result.type, CheckStatus.SKIPPED, f"not run: check {stopped.index + 1} ({stopped.type}) "
                                        "did not pass (graded in the batch, not counted)", i,
                                        judge=spent)
        elif result.status in (CheckStatus.FAIL, CheckStatus.ERROR):
            stopped = result


def waiting_checks(runs: list[RunRecord], take: Callable[[CheckResult], PendingCheck | None]) -> list[PendingCheck]:
    """The checks of finished runs that wait for the batch (`take`: the grader's), each told its run."""
    found = []
    for run in runs:
        for check in run.checks:
            pending = take(check)
            if pending is not None:
                pending.case_id, pending.k, pending.index = run.case_id, run.k, check.index
                found.append(pending)
    return found


def batch_note(info: SessionInfo, why: str = "") -> str:
    ids = [i for i in (info.batch.batch_ids if info.batch is not None else []) if i]
    batch = f"batch {ids[0]}" if len(ids) == 1 else f"batches {', '.join(ids)}" if ids else "a batch not yet submitted"
    return (f"session {info.id} is judging: its judge requests wait in {batch}"
            + (f" ({why})" if why else "") + f" — {resume_hint(info.id)}")
