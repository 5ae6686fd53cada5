"""Judging through the Message Batches API (issue 27): the same requests as online, at the batch price.

`BatchGrader` is the Grader of a session run with `eval --judge-batch` (or `judge.batch: true`). Its
`grade_artifact` sends nothing: it answers what the verdict cache holds, builds each other sample's
request exactly as the online judge would (`Judge.request`: same prompt, same cache breakpoints, same
nonce rule), and hands back the check as waiting (`PendingCheck`, a "judge skipped" result, so the
run has no verdict yet). A check every sample of which is cached is graded at once, never batched.

The session (scarbook.run.batch_session) submits every waiting request as one batch (`submit`),
polls it (`poll`), reads its results (`results`, mapped back by custom_id: the API does not keep
request order) and grades each check with `grade_pending`, as the online judge grades: a malformed
reply is asked again once (online, fresh nonce); an errored, expired or canceled request, or one with
no result, makes the check an error (cause: judge). Tokens answered by the batch are priced at the
price table's batch multiplier.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from scarbook.checks.context import CheckContext
from scarbook.checks.verdict import JUDGE_SKIPPED
from scarbook.judge.artifact import Artifact, ArtifactRefused
from scarbook.judge.cache import SampleKey
from scarbook.judge.client import api_call, tool_input_of
from scarbook.judge.errors import JudgeUnavailable
from scarbook.judge.judge import ARTIFACT_EXCERPT, MALFORMED, Judge, JudgeRecord
from scarbook.judge.pricing import usage_from_sdk
from scarbook.judge.prompt import TOOL_NAME, new_nonce
from scarbook.judge.verdict import ItemVerdict, MalformedReply, parse_tool_input
from scarbook.models import Check, CheckResult, CheckStatus, JudgeDetail, Usage, Vote

if TYPE_CHECKING:
    import anthropic  # (imported by the functions that call it, as in scarbook.judge.client)

WAITING = f"{JUDGE_SKIPPED} (waiting for the batch judge)"


def _digest(key: SampleKey | None) -> str | None:
    return key.digest if key is not None else None


def batch_params(request: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of `messages.create` as a batch request's params (the body fields that
    travel in extra_body online, such as temperature, are plain fields of params)."""
    params = {k: v for k, v in request.items() if k != "extra_body"}
    params.update(request.get("extra_body") or {})
    return params


@dataclass
class PendingCheck:
    """One llm_judge check of one run, waiting for the batch. Plain data (written to batch.json)."""

    ref: str  # hands the check from the grader to the session
    type: str
    rubric: list[str]
    artifact: dict[str, Any]  # the Artifact's fields
    task: str | None  # the task as the judge is shown it (None: not shown)
    # per sample: {"sample", "key"} and either "custom_id" + "params" (asked in the batch) or "cached"
    samples: list[dict[str, Any]] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict)  # {"hits", "saved", "graded_at", "notes"} of cached samples
    case_id: str = ""
    k: int = 0
    index: int = 0
    item_ids: list[str] = field(default_factory=list)  # the rubric items' ids ([]: a batch.json from before them)

    def requests(self) -> list[dict[str, Any]]:
        return [{"custom_id": s["custom_id"], "params": s["params"]} for s in self.samples if "custom_id" in s]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PendingCheck:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class BatchGrader:
    """The Grader of a --judge-batch session: judge checks wait for the batch instead of calling."""

    batched = True

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.settings = judge.settings
        self.artifacts = judge.artifacts  # kept for `scarbook rejudge`, as online
        self.cache = judge.cache
        self.pending: dict[str, PendingCheck] = {}
        self._count = 0
        self._prefix = secrets.token_hex(3)  # custom ids stay unique if a session submits a second batch

    def preflight(self) -> None:
        self.judge.preflight()

    def api_key_present(self) -> bool:
        return self.judge.api_key_present()

    async def grade(self, check: Check, ctx: CheckContext) -> CheckResult:
        return await self.judge.grade(check, ctx)

    async def grade_artifact(self, check: Check, artifact: Artifact | ArtifactRefused, task: str) -> CheckResult:
        rubric = check.rubric
        if not rubric or isinstance(artifact, ArtifactRefused):
            return await self.judge.grade_artifact(check, artifact, task)  # no call either way
        judge, record = self.judge, JudgeRecord(self.settings)
        shown = task if check.params.get("include_task") else None
        pending = PendingCheck(secrets.token_hex(8), check.type, rubric, asdict(artifact), shown,
                               item_ids=check.rubric_ids)
        nonce = new_nonce(artifact.text) if self.settings.samples > 1 else None  # the run's samples share one, as online
        for index in range(self.settings.samples):
            key = judge.sample_key(index, rubric, artifact, shown)
            hit = await judge.cached(key, len(rubric), record)
            if hit is not None:
                pending.samples.append({"sample": index, "key": _digest(key), "cached": [asdict(v) for v in hit]})
                continue
            self._count += 1
            pending.samples.append({"sample": index, "key": _digest(key), "custom_id": f"judge-{self._prefix}-{self._count}",
                                    "params": batch_params(judge.request(rubric, artifact, shown, nonce))})
        if not pending.requests():
            return await judge.grade_artifact(check, artifact, task)  # all cached: graded now, not batched
        pending.cache = {"hits": record.cache_hits, "saved": record.saved.to_dict(), "graded_at": record.graded_at,
                         "notes": list(record.cache_notes)}
        self.pending[pending.ref] = pending
        return CheckResult(type=check.type, status=CheckStatus.SKIPPED, detail=WAITING,
                           judge=JudgeDetail.waiting_for(pending.ref, self.settings.model, artifact.describe()))

    def take(self, result: CheckResult) -> PendingCheck | None:
        """The pending check a result stands for (removed from the grader), or None."""
        judge = result.judge
        if judge is None or not judge.waiting:
            return None
        return self.pending.pop(str(judge.ref), None)


@dataclass
class BatchStatus:
    id: str
    processing_status: str  # in_progress | canceling | ended
    submitted: int
    done: int  # requests no longer processing


async def submit(judge: Judge, checks: list[PendingCheck], *, one_out: bool = False) -> BatchStatus:
    """Create one batch of every waiting request (JudgeUnavailable, JudgeAuthError as online; with `one_out`, another
    batch of the session is at the API already, and a key problem's message says so: KeyHint.once_sent)."""
    requests = [r for c in checks for r in c.requests()]
    client = judge.client()
    batch = await api_call(client, judge.settings,
                           lambda: client.messages.batches.create(requests=requests),  # type: ignore[arg-type]  # plain dicts of the Request shape
                           key_hint=judge.key_hint.once_sent() if one_out else judge.key_hint)
    return _status(batch, client, "POST /v1/messages/batches")


# How far before its recorded send a batch's creation may look (the API's clock is not this machine's).
CLOCK_SLACK = timedelta(minutes=10)


async def find_sent(judge: Judge, checks: list[PendingCheck], sent_at: str, taken: list[str | None], *,
                    one_out: bool = False) -> BatchStatus | None:
    """The batch of `checks` a scarbook sent at `sent_at` and was killed before hearing of, or None.

    The Batches API keeps no name or metadata on a batch, so it is found by what can be seen: created
    since the send (less CLOCK_SLACK), holding as many requests, not one of this session's already, and —
    once it has ended and its results can be read — holding exactly these custom ids (a batch still in
    progress is checked so when its results are read: an id missing there is a judge error on its run).
    The earliest such batch; JudgeUnavailable when the list cannot be read (then nothing may be sent)."""
    want = {r["custom_id"] for c in checks for r in c.requests()}
    client = judge.client()
    since = datetime.fromisoformat(sent_at.replace("Z", "+00:00")) - CLOCK_SLACK

    async def listed() -> list[Any]:
        found = []
        async for batch in client.messages.batches.list(limit=100):  # newest first
            if not isinstance(batch.created_at, datetime):
                raise _not_a_batch(client, "GET /v1/messages/batches", batch)
            if batch.created_at < since:
                break
            found.append(batch)
        return found

    hint = judge.key_hint.once_sent() if one_out else judge.key_hint
    for batch in sorted(await api_call(client, judge.settings, listed, key_hint=hint), key=lambda b: b.created_at):
        status = _status(batch, client, "GET /v1/messages/batches")
        if batch.id in taken or status.submitted != len(want):
            continue
        if status.processing_status == "ended" and set(await results(judge, batch.id)) != want:
            continue
        return status
    return None


async def poll(judge: Judge, batch_id: str) -> BatchStatus:
    client = judge.client()
    return _status(await api_call(client, judge.settings, lambda: client.messages.batches.retrieve(batch_id),
                                    key_hint=judge.key_hint.once_sent()),
                   client, f"GET /v1/messages/batches/{batch_id}")


COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")
STATES = ("in_progress", "canceling", "ended")


def _status(batch: Any, client: anthropic.AsyncAnthropic, asked: str) -> BatchStatus:
    """The SDK builds its reply objects without checking them: a reply that is not a message batch (a
    vendor or proxy answering this path with something else) is the judge's error, said as such."""
    counts = getattr(batch, "request_counts", None)
    numbers = [getattr(counts, name, None) for name in COUNTS]
    if (not isinstance(getattr(batch, "id", None), str) or getattr(batch, "processing_status", None) not in STATES
            or not all(isinstance(n, int) and n >= 0 for n in numbers)):
        raise _not_a_batch(client, asked, batch)
    total = sum(numbers)  # type: ignore[arg-type]  # ints, checked above
    return BatchStatus(batch.id, batch.processing_status, total, total - counts.processing)  # type: ignore[union-attr]


def _not_a_batch(client: anthropic.AsyncAnthropic, asked: str, batch: Any) -> JudgeUnavailable:
    try:
        shown = json.dumps(batch.to_dict() if hasattr(batch, "to_dict") else batch, default=str)
    except (TypeError, ValueError):
        shown = repr(batch)
    return JudgeUnavailable(f"the judge at {str(client.base_url).rstrip('/')} answered {asked} with something that "
                            f"is not a message batch ({' '.join(shown.split())[:120]}) — does it offer the Message "
                            "Batches API? Judge online (without --judge-batch, or judge.batch: false)", 0)


async def results(judge: Judge, batch_id: str) -> dict[str, Any]:
    """custom_id -> the request's result (an ended batch's results file, read whole)."""
    import anthropic  # loaded already: judge.client() made the SDK's client

    client = judge.client()

    async def read() -> dict[str, Any]:
        try:
            stream = await client.messages.batches.results(batch_id)
        except anthropic.APIStatusError:
            raise
        except anthropic.AnthropicError as exc:  # no results_url: not ended
            raise JudgeUnavailable(f"judge batch {batch_id} has no results yet: {exc}", 0) from None
        # a line that is not a result is left out: its request then has no result (a judge error on its run)
        return {line.custom_id: line.result async for line in stream
                if isinstance(getattr(line, "custom_id", None), str)
                and getattr(getattr(line, "result", None), "type", None) in RESULT_TYPES}

    return await api_call(client, judge.settings, read, key_hint=judge.key_hint.once_sent())


RESULT_TYPES = ("succeeded", "errored", "canceled", "expired")


async def grade_pending(judge: Judge, pending: PendingCheck, answers: dict[str, Any], batch_id: str) -> CheckResult:
    """Grade one waiting check from the batch's answers, as the online judge would have."""
    record = JudgeRecord(judge.settings)
    artifact = Artifact(**pending.artifact)
    record.artifact = artifact.describe()
    record.artifact_excerpt = artifact.text[:ARTIFACT_EXCERPT]
    cache = pending.cache
    record.cache_hits = int(cache.get("hits") or 0)
    record.saved = Usage(**(cache.get("saved") or {}))
    record.graded_at = cache.get("graded_at")
    record.cache_notes = list(cache.get("notes") or [])
    record.batch_id = batch_id
    record.item_ids = list(pending.item_ids)
    rubric = pending.rubric
    samples: list[list[ItemVerdict]] = []
    status: CheckStatus
    try:
        for sample in pending.samples:
            if "cached" in sample:
                samples.append([ItemVerdict(v["item"], Vote(v["verdict"]), v["reason"]) for v in sample["cached"]])
            else:
                samples.append(await _answered(judge, pending, sample, answers, batch_id, record, artifact))
    except MalformedReply as bad:
        record.error = MALFORMED + str(bad)
        status, detail = CheckStatus.ERROR, record.error
    except JudgeUnavailable as down:
        record.error = down.detail
        status, detail = CheckStatus.ERROR, down.detail
    else:
        status, detail = record.decide(rubric, samples)
    return CheckResult(type=pending.type, status=status, detail=detail, index=pending.index, judge=record.to_detail())


async def _answered(judge: Judge, pending: PendingCheck, sample: dict[str, Any], answers: dict[str, Any],
                    batch_id: str, record: JudgeRecord, artifact: Artifact) -> list[ItemVerdict]:
    custom_id = sample["custom_id"]
    result = answers.get(custom_id)
    if result is None:
        raise JudgeUnavailable(f"judge batch {batch_id} has no result for request {custom_id}", 0)
    if result.type == "errored":
        error = getattr(result.error, "error", None)
        what = f"{getattr(error, 'type', 'error')}: {' '.join(str(getattr(error, 'message', '')).split())[:200]}"
        raise JudgeUnavailable(f"judge batch request {custom_id} errored ({what})", 0)
    if result.type == "expired":
        raise JudgeUnavailable(f"judge batch request {custom_id} expired: the batch did not answer it within "
                               "24 hours — run the case again", 0)
    if result.type == "canceled":
        raise JudgeUnavailable(f"judge batch request {custom_id} was canceled (the batch {batch_id} was canceled)", 0)
    message = result.message
    spent = usage_from_sdk(message.usage)
    # cached under the key of what was asked, worked out again: never a key read back from batch.json
    key = judge.sample_key(int(sample.get("sample") or 0), pending.rubric, artifact, pending.task)
    record.calls += 1
    assert record.batch_id is not None  # set when the batch's answers were taken (the caller's first step)
    record.batch_calls += 1
    record.batch_usage.add(spent)
    tool_input = tool_input_of(message)
    try:
        if tool_input is None:
            cut = " (the reply hit max_tokens)" if getattr(message, "stop_reason", None) == "max_tokens" else ""
            raise MalformedReply(f"no {TOOL_NAME} tool call in the reply{cut}")
        verdicts = parse_tool_input(tool_input, len(pending.rubric))
        await judge.remember(key, verdicts, spent, record, batch=True)
        return verdicts
    except MalformedReply:
        online = Usage()
        verdicts = await judge.reask(pending.rubric, artifact, pending.task, record, online)
        await judge.remember(key, verdicts, online, record)
        return verdicts
