"""What the run, verify and session code need of a judge: the `Grader` protocol.

`scarbook.judge.Judge` (the LLM judge over the Anthropic Messages API) is the one implementation;
the runner, `scarbook verify` and the session plan take a `Grader | None` (None: no judge checks,
or judging skipped), never `Any`. Importing this module does not load the anthropic SDK.
"""

from __future__ import annotations

from typing import Protocol

from scarbook.checks.context import CheckContext, CheckGrader
from scarbook.judge.artifact import Artifact, ArtifactRefused
from scarbook.judge.artifact_store import ArtifactStore
from scarbook.judge.settings import JudgeSettings
from scarbook.models import Check, CheckResult


class Grader(CheckGrader, Protocol):
    settings: JudgeSettings
    artifacts: ArtifactStore | None  # None: the artifacts it grades are not kept (no rejudge)

    def preflight(self) -> None:
        """Raise a ScarbookError (e.g. no API key) before any run starts."""

    async def grade(self, check: Check, ctx: CheckContext) -> CheckResult:
        """Grade an llm_judge check against the workspace and output in `ctx`."""

    async def grade_artifact(self, check: Check, artifact: Artifact | ArtifactRefused, task: str) -> CheckResult:
        """Grade an llm_judge check against an artifact read earlier (where the agent ran)."""


def is_batched(grader: object) -> bool:
    """A --judge-batch session's grader (scarbook.judge.batch.BatchGrader): its judge checks wait for
    a Message Batch. Asked without importing that module (it loads the SDK)."""
    return bool(getattr(grader, "batched", False))
