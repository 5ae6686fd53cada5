"""What a judge check grades, read where the agent ran: the artifact (capped), or why it cannot be.

Kept apart from judge.py (which loads the anthropic SDK) so a worker that only ran the agent can
read the artifact cheaply and ship the text to the process that calls the judge.
"""

from __future__ import annotations

from scarbook.checks.context import CheckContext
from scarbook.checks.rules import CheckBroke, CheckFailed, CheckSkipped, tool_input_text
from scarbook.judge.artifact import OUTPUT, Artifact, ArtifactRefused, read_artifact, text_artifact
from scarbook.models import Check
from scarbook.transcripts.tool_input import tool_input_of


def read_check_artifact(check: Check, ctx: CheckContext, max_bytes: int) -> Artifact | ArtifactRefused:
    """The artifact an llm_judge check grades, or the refusal that fails the run (nothing is sent): the final
    output, a workspace file, or a tool call's input read from the run's transcript."""
    source = check.params.get("artifact", OUTPUT)
    ref = tool_input_of(source)
    try:
        if ref is not None:
            try:
                text = tool_input_text(ctx, ref)
            except (CheckFailed, CheckBroke, CheckSkipped) as exc:
                raise ArtifactRefused(str(exc)) from None
            return text_artifact(text, ref.label, ref.source, max_bytes)
        return read_artifact(str(source), ctx.workspace, ctx.output, max_bytes)
    except ArtifactRefused as refused:
        return refused
