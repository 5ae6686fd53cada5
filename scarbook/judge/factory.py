"""The judge a set of cases needs — without loading the anthropic SDK when none is needed.

Importing the SDK costs 1.5 s on a quiet machine and 4-10 s on a loaded 2-core one; a session, `verify`
or the TUI's first run whose cases have no `llm_judge` check must not wait for it (issue 26.13)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from scarbook.judge.artifact_store import FOLDER as ARTIFACTS_FOLDER
from scarbook.judge.artifact_store import ArtifactStore
from scarbook.judge.cache import FOLDER, VerdictCache
from scarbook.judge.errors import SKIP_HINT, KeyHint
from scarbook.judge.settings import JudgeSettings
from scarbook.models import Case

if TYPE_CHECKING:
    from scarbook.judge.batch import BatchGrader
    from scarbook.judge.judge import Judge


def judge_for(cases: Iterable[Case], settings: JudgeSettings, *, env: Mapping[str, str] | None = None,
              workspaces: Path | None = None, use_cache: bool = True, batch: bool = False, confined: bool = False,
              key_hint: KeyHint = SKIP_HINT) -> Judge | BatchGrader | None:
    """The judge a set of cases needs: None when none has an llm_judge check (a session that skips judging asks
    for none).
    With `workspaces` (and judge.cache on, `use_cache` not turned off by --no-judge-cache) its
    verdicts are cached in workspaces/judge-cache, and (judge.keep_artifacts) the artifacts it grades
    are kept in workspaces/judge-artifacts for `scarbook rejudge`. `batch` (eval --judge-batch): its
    requests wait for one Message Batch (scarbook.judge.batch). `confined`: the session's agents run in the
    sandbox, so its cache never reads what an unconfined agent could have written (judge/cache_trust.py).
    `key_hint`: what its key problems end with (judge/errors.py): a command that cannot run without its judge
    gives its own."""
    if not any(c.judge_checks for c in cases):
        return None
    from scarbook.judge.judge import Judge  # the SDK loads here, only when a judge will grade

    cache = VerdictCache(workspaces / FOLDER, confined=confined) \
        if workspaces is not None and use_cache and settings.cache else None
    judge = Judge(settings, env=env, cache=cache, key_hint=key_hint)
    if workspaces is not None and settings.keep_artifacts:
        judge.artifacts = ArtifactStore(workspaces / ARTIFACTS_FOLDER)
    if batch:
        from scarbook.judge.batch import BatchGrader

        return BatchGrader(judge)
    return judge


def preflighted_judge(cases: Iterable[Case], settings: JudgeSettings, *, env: Mapping[str, str] | None = None,
                      workspaces: Path | None = None, use_cache: bool = True, batch: bool = False,
                      confined: bool = False, key_hint: KeyHint = SKIP_HINT) -> tuple[Judge | BatchGrader | None, str | None]:
    """`judge_for`'s judge, preflighted before any run (its API key is set): (the judge, None); (None, None)
    when no case needs one; (None, why) when it cannot grade. A session's preparation (run/session.py) and a
    rejudge's (tools/rejudge.py) both start their judge so."""
    from scarbook.errors import ScarbookError

    judge = judge_for(cases, settings, env=env, workspaces=workspaces, use_cache=use_cache, batch=batch,
                      confined=confined, key_hint=key_hint)
    if judge is not None:
        try:
            judge.preflight()
        except ScarbookError as exc:
            return None, exc.message
    return judge, None
