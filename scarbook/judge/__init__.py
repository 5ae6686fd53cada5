"""The LLM judge: isolated, structured, injection-resistant, counted in tokens and dollars.

    settings = JudgeSettings.from_dict(raw.get("judge"), path)
    judge = Judge(settings)            # env=os.environ by default
    judge.preflight()                  # raises JudgeKeyMissing (a ScarbookError) without a key
    result = await judge.grade(check, ctx)   # CheckResult; raises JudgeAuthError on 401/403
    usage_from_result(result)          # scarbook.models.Usage for RunRecord.judge_usage
"""

from scarbook.judge.artifact import Artifact, ArtifactRefused, read_artifact
from scarbook.judge.errors import JudgeAuthError, JudgeKeyMissing, JudgeUnavailable
from scarbook.judge.estimate import JudgeEstimate, estimate_judge_calls
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
    "Judge",
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
