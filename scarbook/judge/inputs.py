"""What a judge check grades, read where the agent ran: the artifact (capped), or why it cannot be.

Kept apart from judge.py (which loads the anthropic SDK) so a worker that only ran the agent can
read the artifact cheaply and ship the text to the process that calls the judge.
"""

from __future__ import annotations

from pathlib import Path

from scarbook.judge.artifact import OUTPUT, Artifact, ArtifactRefused, read_artifact
from scarbook.models import Check


def read_check_artifact(check: Check, workspace: Path, output: str, max_bytes: int) -> Artifact | ArtifactRefused:
    """The artifact an llm_judge check grades, or the refusal that fails the run (nothing is sent)."""
    try:
        return read_artifact(str(check.params.get("artifact", OUTPUT)), workspace, output, max_bytes)
    except ArtifactRefused as refused:
        return refused
