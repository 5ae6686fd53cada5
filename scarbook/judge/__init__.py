"""The LLM judge: isolated, structured, injection-resistant, counted in tokens and dollars.

    settings = JudgeSettings.from_dict(raw.get("judge"), path)
    judge = Judge(settings)            # env=os.environ by default
    judge.preflight()                  # raises JudgeKeyMissing (a ScarbookError) without a key
    result = await judge.grade(check, ctx)   # CheckResult; raises JudgeAuthError on 401/403
    usage_from_result(result)          # scarbook.models.Usage for RunRecord.judge_usage

May use: checks, agents, transcripts, proc, fs, models, errors, text (judge/calibrate.py keeps its
labels through fs.json_store, not history).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scarbook.judge.artifact import Artifact, ArtifactRefused, read_artifact
    from scarbook.judge.errors import JudgeAuthError, JudgeKeyMissing, JudgeUnavailable
    from scarbook.judge.estimate import JudgeEstimate, estimate_judge_calls
    from scarbook.judge.factory import judge_for, preflighted_judge
    from scarbook.judge.grader import Grader
    from scarbook.judge.judge import MALFORMED, Judge, calls_from_result, usage_from_result
    from scarbook.judge.pricing import DEFAULT_PRICES, ModelPrice, price_for, priced
    from scarbook.judge.prompt import SYSTEM_PROMPT, TOOL_NAME, VERDICT_TOOL
    from scarbook.judge.settings import DEFAULT_API_KEY_ENV, DEFAULT_MODEL, JudgeSettings

__all__ = [
    "Artifact",
    "ArtifactRefused",
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MODEL",
    "DEFAULT_PRICES",
    "Grader",
    "Judge",
    "judge_for",
    "JudgeAuthError",
    "JudgeEstimate",
    "JudgeKeyMissing",
    "JudgeSettings",
    "JudgeUnavailable",
    "MALFORMED",
    "ModelPrice",
    "SYSTEM_PROMPT",
    "TOOL_NAME",
    "VERDICT_TOOL",
    "calls_from_result",
    "estimate_judge_calls",
    "preflighted_judge",
    "price_for",
    "priced",
    "read_artifact",
    "usage_from_result",
]

# Each name's module, loaded on first use (PEP 562): scarbook.judge.judge imports the anthropic SDK (~1.5 s),
# and config.py needs only JudgeSettings, so `scarbook eval --dry-run` loads neither the SDK nor the grader.
_HOME = {
    **dict.fromkeys(("Artifact", "ArtifactRefused", "read_artifact"), "artifact"),
    **dict.fromkeys(("JudgeAuthError", "JudgeKeyMissing", "JudgeUnavailable"), "errors"),
    **dict.fromkeys(("JudgeEstimate", "estimate_judge_calls"), "estimate"),
    **dict.fromkeys(("judge_for", "preflighted_judge"), "factory"),
    "Grader": "grader",
    **dict.fromkeys(("MALFORMED", "Judge", "calls_from_result", "usage_from_result"), "judge"),
    **dict.fromkeys(("DEFAULT_PRICES", "ModelPrice", "price_for", "priced"), "pricing"),
    **dict.fromkeys(("SYSTEM_PROMPT", "TOOL_NAME", "VERDICT_TOOL"), "prompt"),
    **dict.fromkeys(("DEFAULT_API_KEY_ENV", "DEFAULT_MODEL", "JudgeSettings"), "settings"),
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
