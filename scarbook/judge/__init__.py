"""The LLM judge: isolated, structured, injection-resistant, counted in tokens and dollars.

    settings = JudgeSettings.from_dict(raw.get("judge"), path)
    judge = Judge(settings)            # env=os.environ by default
    judge.preflight()                  # raises JudgeKeyMissing (a ScarbookError) without a key
    result = await judge.grade(check, ctx)   # CheckResult; raises JudgeAuthError on 401/403
    usage_from_result(result)          # scarbook.models.Usage for RunRecord.judge_usage

May use: checks, agents, transcripts, proc, fs, models, errors, text (judge/calibrate.py keeps its
labels through fs.json_store, not history).
"""

from scarbook.judge.artifact import Artifact, ArtifactRefused, read_artifact
from scarbook.judge.errors import JudgeAuthError, JudgeKeyMissing, JudgeUnavailable
from scarbook.judge.estimate import JudgeEstimate, estimate_judge_calls
from scarbook.judge.factory import judge_for
from scarbook.judge.grader import Grader
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
    "price_for",
    "priced",
    "read_artifact",
    "usage_from_result",
]

# scarbook.judge.judge imports the anthropic SDK, which takes ~1.5 s to import. config.py needs only
# JudgeSettings, so the SDK is loaded on first use of these names (PEP 562), not on every CLI start.
_LAZY = {"MALFORMED", "Judge", "calls_from_result", "usage_from_result"}


def __getattr__(name: str):
    if name in _LAZY:
        from scarbook.judge import judge as _judge

        return getattr(_judge, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
