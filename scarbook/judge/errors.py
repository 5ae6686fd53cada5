"""How the judge fails: a key problem aborts the session; an unreachable judge errors one run."""

from __future__ import annotations

from scarbook.errors import AbortSession, ScarbookError


class JudgeAuthError(AbortSession):
    """The judge's API key was rejected (401/403): every further run would fail the same way."""


class JudgeKeyMissing(ScarbookError):
    """No key in the configured env var; said before any run starts."""


class JudgeUnavailable(Exception):
    """The judge could not answer after the SDK's retries (429/529/5xx/timeout/connection).

    Not a ScarbookError: it becomes status "error" on one run, never a session abort.
    """

    def __init__(self, detail: str, retries: int) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retries = retries


# What a key problem's message ends with: what else the command can do. A session can run without its judge;
# a command that only judges gives its own (Judge(key_hint=...)), never an option it lacks.
SKIP_HINT = " or run with --skip-judge"


def key_missing_message(env: str, hint: str = SKIP_HINT) -> str:
    return f"the llm_judge checks need an API key, but {env} is not set: set {env}{hint}"


def auth_rejected_message(env: str, status: int, base_url: str, hint: str = SKIP_HINT) -> str:
    return (
        f"the judge at {base_url} rejected the API key in {env} (HTTP {status}); "
        f"the session stopped before grading more runs: check {env} (and judge.api_key_env / judge.base_url "
        f"in scarbook.yaml){hint}"
    )
