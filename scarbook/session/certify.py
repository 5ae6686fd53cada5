"""Does a case catch its scar? `scarbook verify`, `scarbook import`'s certification of the draft it
wrote and the TUI's verify (and its import) all run this one use case: the judge chosen the same way
(no key: rule checks decide what they can, a scar only the judge can catch stays unverified), each
result stored for the library's badge."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from scarbook.cases.verifications import Verification, VerificationStore
from scarbook.models import Case
from scarbook.project import Project
from scarbook.session.plan import judge_key_in
from scarbook.tools.verify import JUDGED_TIMES, verify_case


@dataclass
class Verified:
    results: list[Verification] = field(default_factory=list)
    # why the judge did not grade (its key is not set); "" when it did or no case needs it
    judge_missing: str = ""


async def verify_cases(project: Project, cases: list[Case], *, skip_judge: bool = False,
                       env: Mapping[str, str] | None = None, times: int = JUDGED_TIMES) -> Verified:
    """Verify each case against its scar (tools/verify.py) and store the results (workspaces/history/verify.json).
    `env`: where the judge's key is read (None: this process's, as a session's plan reads it)."""
    from scarbook.judge import judge_for

    settings = project.config.judge
    judge, missing = None, ""
    if skip_judge or not any(c.judge_checks for c in cases):
        pass
    elif not judge_key_in(project.config.judge, env):
        # no key, no judge: asked before one is built, so the SDK is never imported for a judge that cannot be called
        missing = f"no judge key in ${settings.api_key_env}"
    else:  # the judge's SDK is imported on first use (seconds on a loaded machine): not on the caller's loop
        judge = await asyncio.to_thread(judge_for, cases, settings, env=env)
    results = [await verify_case(c, judge, times, max_read=project.config.max_read_bytes) for c in cases]
    VerificationStore(project.workspaces_dir).save(results)
    return Verified(results, missing)
