"""The `llm_judge` check: grade one artifact against a rubric, verdict computed in code.

Status: "pass" (every item PASS by majority), "fail" (some item FAIL, or the artifact cannot be
judged: missing, binary, a symlink out of the workspace), "error" (no verdict could be reached:
malformed reply after one re-ask, judge unreachable after the SDK's retries). A rejected key
raises JudgeAuthError so the runner aborts the session once instead of erroring every run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scarbook.checks.context import CheckContext
from scarbook.judge.artifact import Artifact, ArtifactRefused
from scarbook.judge.artifact_store import ArtifactStore
from scarbook.judge.cache import SampleKey, VerdictCache
from scarbook.judge.client import call_judge, make_client
from scarbook.judge.errors import (
    SKIP_HINT,
    JudgeAuthError,
    JudgeKeyMissing,
    JudgeUnavailable,
    KeyHint,
    key_missing_message,
)
from scarbook.judge.inputs import read_check_artifact
from scarbook.judge.pricing import priced
from scarbook.judge.prompt import build_request, new_nonce
from scarbook.judge.settings import JudgeSettings
from scarbook.judge.verdict import (
    MALFORMED,
    ItemVerdict,
    MalformedReply,
    decide,
    overall,
    parse_tool_input,
    summarize,
)
from scarbook.models import (
    BatchUse,
    CacheUse,
    Check,
    CheckResult,
    CheckStatus,
    JudgedArtifact,
    JudgeDetail,
    JudgeItem,
    Usage,
)
from scarbook.models.rubric import resolve_item_ids
from scarbook.proc import credentials

if TYPE_CHECKING:
    import anthropic  # (the SDK is imported where a client is made: scarbook.judge.client)

ARTIFACT_EXCERPT = 20_000



class Judge:
    def __init__(self, settings: JudgeSettings | None = None, env: Mapping[str, str] | None = None,
                 cache: VerdictCache | None = None, key_hint: KeyHint = SKIP_HINT) -> None:
        self.settings = settings or JudgeSettings()
        self.key_hint = key_hint  # what a key problem's message ends with: what else the command can do
        self._env = credentials.environ() if env is None else env  # (a session withholds the key from os.environ)
        self.cache = cache  # None: every sample is sent (judge.cache: false, --no-judge-cache)
        self.artifacts: ArtifactStore | None = None  # where graded artifacts are kept (judge_for sets it)
        self._client: anthropic.AsyncAnthropic | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- key ---------------------------------------------------------------------------------
    def api_key_present(self) -> bool:
        return bool(self._env.get(self.settings.api_key_env, "").strip())

    def preflight(self) -> None:
        """Raise before any run starts if the judge cannot possibly be called (no key)."""
        if not self.api_key_present():
            raise JudgeKeyMissing(key_missing_message(self.settings.api_key_env, self.key_hint))

    def _client_or_abort(self) -> anthropic.AsyncAnthropic:
        if not self.api_key_present():
            # Reaching grade() without a key is the same mistake for every run: abort once.
            raise JudgeAuthError(key_missing_message(self.settings.api_key_env, self.key_hint))
        loop = asyncio.get_running_loop()
        # One client (one connection pool) per event loop: a Judge reused by a second
        # asyncio.run() (CLI then TUI, or one test after another) must not touch a dead loop's sockets.
        if self._client is None or self._client_loop is not loop:
            self._client = make_client(self.settings, self._env[self.settings.api_key_env].strip())
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None
        self._client_loop = None

    # -- grading -----------------------------------------------------------------------------
    async def grade(self, check: Check, ctx: CheckContext) -> CheckResult:
        started = time.monotonic()
        record = JudgeRecord(self.settings)
        status, detail = await self._grade(check, ctx, record)
        return CheckResult(
            type=check.type,
            status=status,
            detail=detail,
            judge=record.to_detail(),
            duration_s=time.monotonic() - started,
        )

    async def grade_artifact(self, check: Check, artifact: Artifact | ArtifactRefused, task: str) -> CheckResult:
        """Grade an artifact read earlier (on the machine that ran the agent, capped at
        settings.max_artifact_bytes by `read_check_artifact`); `task` is the case's task."""
        started = time.monotonic()
        record = JudgeRecord(self.settings)
        status, detail = await self._grade(check, None, record, artifact, task)
        return CheckResult(type=check.type, status=status, detail=detail, judge=record.to_detail(),
                           duration_s=time.monotonic() - started)

    async def _grade(self, check: Check, ctx: CheckContext | None, record: JudgeRecord,
                     artifact: Artifact | ArtifactRefused | None = None, task: str = "") -> tuple[CheckStatus, str]:
        rubric = check.rubric
        record.item_ids = check.rubric_ids
        if not rubric:
            record.error = "llm_judge check has no rubric items"
            return CheckStatus.ERROR, record.error
        if ctx is not None:
            # Off the event loop: a read of an agent-written file is never done on it.
            artifact = await asyncio.to_thread(read_check_artifact, check, ctx, self.settings.max_artifact_bytes)
            task = ctx.case.task
        if isinstance(artifact, ArtifactRefused):
            record.error = artifact.detail
            return CheckStatus.FAIL, artifact.detail
        assert artifact is not None
        record.artifact = artifact.describe()
        # Kept so a human can later grade the same text (scarbook calibrate) without the workspace.
        record.artifact_excerpt = artifact.text[:ARTIFACT_EXCERPT]
        shown_task = task if check.params.get("include_task") else None
        samples: list[list[ItemVerdict]] = []
        # The samples of one run share a nonce (still secret: the artifact was written before it was
        # drawn), so their requests are byte-identical and the later ones read the artifact from the
        # prompt cache; a re-ask after a malformed reply draws a fresh one.
        shared = new_nonce(artifact.text) if self.settings.samples > 1 else None
        # Samples run one after another, not gathered: a 401 or an exhausted retry budget stops
        # the rest at once, and the runner already runs many runs concurrently.
        try:
            for index in range(self.settings.samples):
                samples.append(await self._sample(index, rubric, artifact, shown_task, record, shared))
        except MalformedReply as bad:
            record.error = MALFORMED + str(bad)
            return CheckStatus.ERROR, record.error
        except JudgeUnavailable as down:
            record.error = down.detail
            return CheckStatus.ERROR, down.detail
        return record.decide(rubric, samples)

    async def _sample(self, index: int, rubric: list[str], artifact: Artifact, task: str | None,
                      record: JudgeRecord, nonce: str | None) -> list[ItemVerdict]:
        """Sample `index`: from the verdict cache when an earlier session graded the same, else asked."""
        key = self.sample_key(index, rubric, artifact, task)
        hit = await self.cached(key, len(rubric), record)
        if hit is not None:
            return hit
        spent = Usage()
        verdicts = await self._one_sample(self._client_or_abort(), rubric, artifact, task, record, spent, nonce)
        await self.remember(key, verdicts, spent, record)
        return verdicts

    def sample_key(self, index: int, rubric: list[str], artifact: Artifact, task: str | None) -> SampleKey | None:
        """The verdict cache's key of sample `index` (None: no cache)."""
        if self.cache is None:
            return None
        s = self.settings
        return SampleKey(artifact.text, artifact.label, artifact.truncation_note(s.max_artifact_bytes), task,
                         tuple(rubric), s.model, s.recorded_base_url(), s.prompt_digest, s.temperature, s.max_tokens,
                         index)

    async def cached(self, key: SampleKey | None, n_items: int, record: JudgeRecord) -> list[ItemVerdict] | None:
        """The cached verdicts of a sample (counted on `record` as a hit), or None."""
        cache = self.cache
        if cache is None or key is None:
            return None
        before = len(cache.warnings)
        hit = await asyncio.to_thread(cache.get, key, n_items)
        record.cache_notes += cache.warnings[before:]
        if hit is None:
            return None
        record.cache_hits += 1
        record.saved.add(hit.usage)
        record.graded_at = min(filter(None, (record.graded_at, hit.graded_at)))
        return hit.verdicts

    async def remember(self, key: SampleKey | None, verdicts: list[ItemVerdict], spent: Usage, record: JudgeRecord, *,
                       batch: bool = False) -> None:
        """Cache a sample's verdicts with what they cost (at the batch price when `batch`)."""
        cache = self.cache
        if cache is None or key is None:
            return
        priced_spent = priced(spent, self.settings.model, self.settings.prices, batch=batch)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        before = len(cache.warnings)
        await asyncio.to_thread(cache.put, key, verdicts, priced_spent, now)
        record.cache_notes += cache.warnings[before:]

    def request(self, rubric: list[str], artifact: Artifact, task: str | None, nonce: str | None) -> dict[str, Any]:
        """The keyword arguments of one judge call (online and in a batch alike)."""
        return build_request(
            self.settings.sampling,
            rubric=rubric,
            artifact=artifact.text,
            artifact_label=artifact.label,
            task=task,
            truncation_note=artifact.truncation_note(self.settings.max_artifact_bytes),
            nonce=nonce,
            cache_artifact=self.settings.samples > 1,
        )

    async def _one_sample(
        self, client: anthropic.AsyncAnthropic, rubric: list[str], artifact: Artifact, task: str | None, record: JudgeRecord,
        spent: Usage, nonce: str | None, first_attempt: int = 0,
    ) -> list[ItemVerdict]:
        """One independent judgement; a malformed reply is asked again once, with a fresh nonce.
        `first_attempt=1`: only that re-ask (the first attempt's reply came from a batch)."""
        for attempt in range(first_attempt, 2):
            request = self.request(rubric, artifact, task, nonce if attempt == 0 else None)
            try:
                reply = await call_judge(client, self.settings, request, key_hint=self.key_hint)
            except JudgeUnavailable as down:
                record.retries += down.retries
                raise
            record.calls += 1
            record.retries += reply.retries
            record.usage.add(reply.usage)
            spent.add(reply.usage)
            try:
                if reply.tool_input is None:
                    cut = " (the reply hit max_tokens)" if reply.stop_reason == "max_tokens" else ""
                    raise MalformedReply(f"no {request['tool_choice']['name']} tool call in the reply{cut}")
                return parse_tool_input(reply.tool_input, len(rubric))
            except MalformedReply:
                if attempt == 1:
                    raise
                record.reasks += 1
        raise AssertionError("unreachable")


    async def reask(self, rubric: list[str], artifact: Artifact, task: str | None, record: JudgeRecord,
                    spent: Usage) -> list[ItemVerdict]:
        """The one online re-ask of a sample whose batch reply was malformed (fresh nonce), as online."""
        record.reasks += 1
        return await self._one_sample(self._client_or_abort(), rubric, artifact, task, record, spent, None, 1)

    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client of this event loop (JudgeAuthError without a key)."""
        return self._client_or_abort()


class JudgeRecord:
    """Gathers, while a check is graded, what its JudgeDetail keeps (`to_detail`)."""

    def __init__(self, settings: JudgeSettings) -> None:
        self.settings = settings
        self.items: list[JudgeItem] = []
        self.verdict: CheckStatus | None = None
        self.usage = Usage()
        self.calls = 0
        self.retries = 0
        self.reasks = 0
        self.artifact: JudgedArtifact | None = None
        self.artifact_excerpt: str | None = None
        self.error: str | None = None
        self.cache_hits = 0  # samples answered by the verdict cache: no call, no tokens, no dollars
        self.saved = Usage()  # what those samples cost when they were first graded
        self.graded_at: str | None = None  # the earliest cached verdict's date
        self.cache_notes: list[str] = []  # damaged cache entries, named
        self.batch_usage = Usage()  # tokens answered through the Message Batches API (batch price)
        self.batch_id: str | None = None  # the Message Batch that answered, if one did
        self.batch_calls = 0  # how many of its requests
        self.item_ids: list[str] = []  # each rubric item's stable id (models/rubric.py), kept with its verdict

    def decide(self, rubric: list[str], samples: list[list[ItemVerdict]]) -> tuple[CheckStatus, str]:
        """The verdict of every sample's items by majority, kept on the record; (status, detail)."""
        ids = self.item_ids if len(self.item_ids) == len(rubric) else resolve_item_ids(rubric)
        self.items = decide(rubric, samples, ids)
        verdict = self.verdict = overall(self.items)
        return verdict, summarize(self.items)

    def to_detail(self) -> JudgeDetail:
        usage = priced(self.usage, self.settings.model, self.settings.prices)
        usage.add(priced(self.batch_usage, self.settings.model, self.settings.prices, batch=True))
        cache = (CacheUse(self.cache_hits, self.saved.cost_usd, self.saved.total_tokens, self.graded_at)
                 if self.cache_hits else None)
        return JudgeDetail(
            verdict=self.verdict, items=tuple(self.items), model=self.settings.model,
            base_url=self.settings.recorded_base_url(), samples=self.settings.samples,
            temperature=self.settings.temperature,  # with samples: which sampling graded (calibration)
            max_tokens=self.settings.max_tokens,  # with base_url: what else `scarbook diff` tells judges apart by
            usage=usage, calls=self.calls, retries=self.retries, reasks=self.reasks, artifact=self.artifact,
            artifact_excerpt=self.artifact_excerpt, prompt_digest=self.settings.prompt_digest, error=self.error,
            batch=BatchUse(self.batch_id, self.batch_calls) if self.batch_id is not None else None,
            cache=cache, cache_notes=tuple(self.cache_notes))


def usage_from_result(result: CheckResult) -> Usage:
    """The judge usage (tokens and cost) a CheckResult carries; zero for non-judge results."""
    return Usage(**result.judge.usage.to_dict()) if result.judge is not None else Usage()


def calls_from_result(result: CheckResult) -> int:
    """How many Messages API calls answered for this result (for RunRecord.judge_calls)."""
    return result.judge.calls if result.judge is not None else 0

