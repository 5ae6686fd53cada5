"""Draft a case's rubric from its incident (issue 35.1): `scarbook rubric draft`, `scarbook import
--draft-rubric` and the TUI's draft key all run this one use case.

plan_draft says first what drafting will cost (the draft call and the certification's judge calls, from the
judge's price table) or, without a key or with `offline`, that the rubric will not be drafted; draft_rubric
asks the judge (its settings, client and key; the draft cached as verdicts are) or the offline proposer, and
certifies the proposals (tools/rubric_draft.py); accept_draft writes the kept ones into case.yaml.
"""

from __future__ import annotations

import asyncio
import copy
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scarbook.cases.io import save_case
from scarbook.cases.rule_proposals import propose_rule_checks
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.judge.cache import FOLDER as CACHE_FOLDER
from scarbook.judge.errors import JudgeAuthError, JudgeUnavailable, KeyHint
from scarbook.judge.estimate import estimate_judge_calls
from scarbook.judge.rubric_draft import DraftInputs, MalformedDraft, ask_for_draft, draft_cost
from scarbook.models import Case, Check
from scarbook.proc.credentials import environ
from scarbook.project import Project
from scarbook.session.plan import judge_key_in
from scarbook.text import plural
from scarbook.tools.item_certify import describe_check
from scarbook.tools.rubric_draft import ITEM, Proposal, RubricDraft, certify_proposals
from scarbook.tools.verify import JUDGED_TIMES, MAX_ARTIFACT, artifact_target

GUESSED_ITEMS = 6  # rubric items a draft proposes, for the certification's estimate
NOTHING_WRITTEN = "nothing was written"


def draft_key_hint(case_id: str) -> KeyHint:
    """What a judge key problem met while drafting ends with: drafting offline needs no judge (not --skip-judge,
    which drafting lacks)."""
    return KeyHint("the draft stopped", f" or draft without the judge: `scarbook rubric draft {shlex.quote(case_id)} "
                   "--offline` proposes rule checks from the artifacts")


@dataclass(frozen=True)
class DraftWords:
    """What a draft that fails says the face that asked for it can do instead: after a key the judge rejects
    (`key`), and after "draft again" for a reply it cannot use (`unusable`). The command line's by default."""

    key: KeyHint
    unusable: str = ", or propose rule checks offline with --offline"

    @classmethod
    def of_cli(cls, case_id: str) -> DraftWords:
        return cls(draft_key_hint(case_id))


@dataclass(frozen=True)
class DraftPlan:
    case: Case
    inputs: DraftInputs
    online: bool  # the judge drafts (False: the offline proposer)
    cost: str  # what drafting will cost, or why the rubric will not be drafted: said before anything runs
    times: int = JUDGED_TIMES
    judge_fix: str = ""  # offline: what lets the judge draft (leave out --offline, or set the key's variable)


def _read(case: Case, rel: str, what: str) -> str:
    assert case.root is not None
    try:
        data, _ = safefs.read_file(case.root, rel, MAX_ARTIFACT)
    except (safefs.Refused, OSError) as exc:
        raise ScarbookError(f"cannot draft a rubric for {case.id}: {what} {rel} cannot be read "
                            f"({getattr(exc, 'strerror', None) or exc}) — fix scar.{what.replace(' ', '_')} "
                            f"in {case.root / 'case.yaml'}") from None
    return data.decode("utf-8", errors="replace")


def plan_draft(project: Project, case: Case, *, note: str = "", offline: bool = False,
               env: Mapping[str, str] | None = None, times: int = JUDGED_TIMES) -> DraftPlan:
    scar = case.scar
    if scar is None or not scar.failed_artifact or case.root is None:
        raise ScarbookError(f"cannot draft a rubric for {case.id}: it has no scar.failed_artifact — add the "
                            "failed artifact under scar: in its case.yaml (scarbook import writes one)")
    failed = _read(case, scar.failed_artifact, "failed artifact")
    good = _read(case, scar.good_artifact, "good artifact") if scar.good_artifact else None
    inputs = DraftInputs(case.task, failed, good, note.strip(), artifact_target(case))
    settings = project.config.judge
    if offline or not judge_key_in(project.config.judge, env):
        why = "--offline" if offline else f"no judge key in ${settings.api_key_env}"
        fix = "leave out --offline" if offline else f"set ${settings.api_key_env}"
        return DraftPlan(case, inputs, False, f"the rubric is not drafted ({why}): rule checks are proposed from "
                         "the failed and good artifacts alone", times, fix)
    # the judge is shown what it grades: each artifact's first judge.max_artifact_bytes (a 2 MB log whole was a
    # prompt longer than any model takes, priced as if it were sent)
    failed, failed_size = _cut(failed, settings.max_artifact_bytes)
    good, good_size = _cut(good, settings.max_artifact_bytes) if good is not None else (None, None)
    inputs = DraftInputs(case.task, failed, good, note.strip(), artifact_target(case), (failed_size, good_size))
    sides = 2 if good is not None else 1
    guess = copy.copy(case)
    guess.checks = [Check("llm_judge", {"rubric": ["x" * 80] * GUESSED_ITEMS})]
    certify = estimate_judge_calls([guess], times * sides, [], settings)
    cost = (f"drafting: 1 judge call to {settings.model}, at most ${draft_cost(settings, inputs):.4f}; certifying "
            f"the proposed items: {plural(certify.calls, 'call')} ({times} on each artifact), about "
            f"${certify.cost_usd:.4f}")
    cut = [f"the {what} artifact is {size:,} bytes" for what, size in (("failed", failed_size), ("good", good_size))
           if size is not None]
    if cut:
        cost += (f"\n{' and '.join(cut)}: the judge is shown the first {settings.max_artifact_bytes:,} of "
                 f"{'each' if len(cut) > 1 else 'it'}, as when it grades (judge.max_artifact_bytes)")
    return DraftPlan(case, inputs, True, cost, times)


def _cut(text: str, cap: int) -> tuple[str, int | None]:
    """(the first `cap` bytes of `text` (a character cut in half at the end dropped), its whole size when cut)."""
    data = text.encode("utf-8")
    return (text, None) if len(data) <= cap else (data[:cap].decode("utf-8", errors="ignore"), len(data))


def _transcript_writes(case: Case) -> list[str]:
    """The files the incident's transcript shows the agent wrote ([] when it cannot be read)."""
    if case.root is None or case.scar is None or not case.scar.transcript:
        return []
    from scarbook.transcripts import candidates, load_transcript

    try:
        t = load_transcript(case.root / case.scar.transcript, None)
    except (ScarbookError, OSError, ValueError):
        return []
    return sorted({c.path for c in candidates(t) if c.kind == "file" and c.path and not c.astray
                   and not c.path.startswith("/")})


async def draft_rubric(project: Project, plan: DraftPlan, env: Mapping[str, str] | None = None,
                       words: DraftWords | None = None) -> RubricDraft:
    """Propose, lint and certify; MalformedDraft and an unreachable judge are a ScarbookError naming what
    went wrong (nothing is proposed, nothing written). `words`: what a rejected key's or an unusable reply's
    message says the face that drafts can do instead (None: the command line's)."""
    case, inputs, settings = plan.case, plan.inputs, project.config.judge
    env = environ() if env is None else env
    if not plan.online:
        found = propose_rule_checks(inputs.failed, inputs.good, inputs.artifact_at,
                                    await asyncio.to_thread(_transcript_writes, case))
        draft = RubricDraft(case.id, f"{plural(len(found), 'rule check')} proposed from the artifacts")
        draft.proposals = [Proposal(p.check["type"], describe_check(p.check), p.check,
                                    transcript_only=p.check["type"] == "only_changed") for p in found]
        await certify_proposals(case, draft, None, plan.times, max_read=project.config.max_read_bytes)
        return draft
    from scarbook.judge.cache import VerdictCache
    from scarbook.judge.judge import Judge

    cache = project.workspaces_dir / CACHE_FOLDER if settings.cache else None
    words = words or DraftWords.of_cli(case.id)
    hint = words.key
    try:
        proposed = await ask_for_draft(settings, env[settings.api_key_env].strip(), inputs, cache, key_hint=hint)
    except MalformedDraft as bad:
        raise ScarbookError(f"the judge's draft for {case.id} is not usable: {bad} — {NOTHING_WRITTEN}; draft "
                            f"again{words.unusable}") from None
    except JudgeUnavailable as down:
        raise ScarbookError(f"the judge could not draft {case.id}: {down.detail} — {NOTHING_WRITTEN}") from None
    except JudgeAuthError as exc:
        raise ScarbookError(f"{exc} — {NOTHING_WRITTEN}") from None
    said = f"drafted by {settings.model}" + (" (from the draft cache: no call)" if proposed.cached else
                                             f" for ${proposed.usage.cost_usd:.4f}")
    draft = RubricDraft(case.id, said, usage=proposed.usage, notes=list(proposed.notes))
    draft.proposals = [Proposal(ITEM, text) for text in proposed.items]
    draft.proposals += [Proposal(c["type"], describe_check(c), c) for c in proposed.checks]
    judge = Judge(settings, env=env, cache=VerdictCache(cache) if cache is not None else None, key_hint=hint)
    try:
        await certify_proposals(case, draft, judge, plan.times, max_read=project.config.max_read_bytes)
    finally:
        await judge.aclose()
    return draft


def accept_draft(project: Project, draft: RubricDraft) -> Path | None:
    """Write the kept proposals into the case's case.yaml (comments and layout kept); None: nothing kept."""
    if draft.case is None:
        return None
    return save_case(draft.case, project.cases_dir)


def _case_file(plan: DraftPlan) -> str:
    return str(plan.case.root / "case.yaml") if plan.case.root is not None else "the case's case.yaml"


def nothing_caught_hint(plan: DraftPlan) -> str:
    """What to do when no proposal catches the incident. Offline a --note is read by no one: rules come from the
    artifacts alone, so what helps is a good artifact to set the failed one against, or the judge."""
    if plan.online:
        return "add a --note on what went wrong, or write the checks by hand"
    good = "" if plan.inputs.good is not None else (
        f"add a good artifact (scar.good_artifact in {_case_file(plan)} names a right result: the lines "
        "the failed one lacks or adds become rule checks), ")
    return f"{good}let the judge draft ({plan.judge_fix}; a --note tells it what went wrong), or write the checks by hand"


def kept_summary(draft: RubricDraft) -> str:
    items = sum(1 for p in draft.kept if p.is_item)
    checks = len(draft.kept) - items
    return f"{plural(items, 'item')} and {plural(checks, 'rule check')}"
