"""How the judge fails: a key problem aborts the session; an unreachable judge errors one run."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class KeyHint:
    """What a key problem's message says of the command that met it: what stopped, and what else it can do.
    A session can run without its judge; a command that only judges gives its own (Judge(key_hint=...)),
    never an option it lacks."""

    stopped: str  # "the session stopped before grading more runs"
    instead: str  # appended after "check $KEY (...)": " or run with --skip-judge"
    batch_out: KeyHint | None = None  # said instead once a batch of the session is out (None: this one)

    def once_sent(self) -> KeyHint:
        """The hint for a key problem met while a judge batch of the session is at the API."""
        return self.batch_out or self


# a key problem met while a session's judge batch is out (sent, and paid for): nothing is lost, the batch waits at
# the API for a key that works (the session's judging note then says what collects it) — never "run without the judge"
BATCH_OUT_HINT = KeyHint("its verdicts were not collected", "; the batch waits at the API meanwhile")
SKIP_HINT = KeyHint("the session stopped before grading more runs", " or run with --skip-judge", BATCH_OUT_HINT)
# the TUI's launch has no --skip-judge: it runs without its judge where no key is set
TUI_HINT = KeyHint(SKIP_HINT.stopped, " or start scarbook without it: the TUI then runs the rule checks only",
                   BATCH_OUT_HINT)


def key_missing_message(env: str, hint: KeyHint = SKIP_HINT) -> str:
    return f"the llm_judge checks need an API key, but {env} is not set: set {env}{hint.instead}"


def auth_rejected_message(env: str, status: int, base_url: str, hint: KeyHint = SKIP_HINT) -> str:
    return (
        f"the judge at {base_url} rejected the API key in {env} (HTTP {status}); "
        f"{hint.stopped}: check {env} (and judge.api_key_env / judge.base_url in scarbook.yaml){hint.instead}"
    )
