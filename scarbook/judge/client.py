"""One Messages API call for the judge, through the real `anthropic` SDK.

The SDK retries 408/409/429/5xx/529, connection errors and timeouts with backoff (`max_retries`,
honouring `retry-after`); this module only turns what is left into our terms: a Reply, a
JudgeUnavailable (the run errors), or a JudgeAuthError (the session aborts).
"""

from __future__ import annotations

import functools
import ssl
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from scarbook.judge.errors import SKIP_HINT, JudgeAuthError, JudgeUnavailable, KeyHint, auth_rejected_message
from scarbook.judge.pricing import usage_from_sdk
from scarbook.judge.prompt import TOOL_NAME
from scarbook.judge.settings import JudgeSettings
from scarbook.judge.verdict import SeveralCalls
from scarbook.models import Usage

if TYPE_CHECKING:
    import anthropic

# The SDK (~1.5 s to import) is imported by the functions that call it, so a module that only names the
# judge's client (the rubric draft's dialog, the certification) loads it in the thread that asks (issue 38.5).

T = TypeVar("T")


@dataclass
class Reply:
    tool_input: Any  # the forced tool call's input, or None if the reply has no such call
    stop_reason: str | None
    usage: Usage
    retries: int  # transport retries the SDK took for this call


@functools.cache  # once per process (two threads racing at the start may each build one: harmless)
def shared_tls() -> ssl.SSLContext | None:
    """The TLS context every judge client of this process uses: the default one of the HTTP library the
    SDK is built on (httpx, or httpx2 from anthropic 2.x: the CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR),
    built once. Left to itself the SDK builds one per client, reading the CA bundle each time (about
    20 ms of CPU), and there is a client per event loop: per session, per TUI screen. None where that
    library is not found: each client then builds its own, as before."""
    import anthropic

    for cls in anthropic.DefaultAsyncHttpxClient.__mro__:
        library = sys.modules.get(cls.__module__.partition(".")[0])
        if library is not None and callable(getattr(library, "create_ssl_context", None)):
            return library.create_ssl_context()
    return None


def make_client(settings: JudgeSettings, api_key: str) -> anthropic.AsyncAnthropic:
    import anthropic

    tls = shared_tls()
    return anthropic.AsyncAnthropic(
        api_key=api_key,
        base_url=settings.base_url,
        timeout=settings.timeout_s,
        max_retries=settings.max_retries,
        # the SDK's own client and transport settings (keep-alive, proxies from the environment), with the
        # shared context
        http_client=None if tls is None else anthropic.DefaultAsyncHttpxClient(verify=tls),
    )


async def call_judge(client: anthropic.AsyncAnthropic, settings: JudgeSettings, request: dict[str, Any], *,
                     key_hint: KeyHint = SKIP_HINT) -> Reply:
    async def create() -> tuple[Any, Any]:
        raw = await client.messages.with_raw_response.create(**request)
        try:
            message = await raw.parse()
        except ValueError:  # a 200 whose body is not JSON
            message = None
        if message is None or isinstance(message, str):  # (the SDK hands back text it could not read as JSON)
            raise no_api_reply(raw.http_response, _where(client))
        return raw, message

    raw, message = await api_call(client, settings, create, key_hint=key_hint)
    tool_input = tool_input_of(message, (request.get("tool_choice") or {}).get("name", TOOL_NAME))
    return Reply(tool_input, message.stop_reason, usage_from_sdk(message.usage), raw.retries_taken)


def tool_input_of(message: Any, name: str = TOOL_NAME) -> Any:
    """The input of the forced tool `name`'s call in a reply (the verdict tool unless said), or None (also for
    a reply that has no content list: the SDK does not check what it reads); SeveralCalls when it is called
    more than once (which the parsers refuse as malformed)."""
    content = getattr(message, "content", None)
    calls = [getattr(block, "input", None) for block in (content if isinstance(content, list) else ())
             if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == name]
    if len(calls) > 1:
        return SeveralCalls(name, len(calls))
    return calls[0] if calls else None


async def api_call(client: anthropic.AsyncAnthropic, settings: JudgeSettings, call: Callable[[], Awaitable[T]], *,
                   key_hint: KeyHint = SKIP_HINT) -> T:
    """`call()` (one SDK request, its retries the SDK's), with what is left of its errors in our terms; a rejected
    key's message ends with `key_hint` (judge/errors.py)."""
    import anthropic  # loaded already: the client was made by make_client

    try:
        return await call()
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        raise JudgeAuthError(auth_rejected_message(settings.api_key_env, exc.status_code, _where(client),
                                                 key_hint)) from None
    except anthropic.APITimeoutError:
        raise JudgeUnavailable(
            f"judge timed out after {settings.timeout_s:g}s ({_tries(settings.max_retries)})", settings.max_retries
        ) from None
    except anthropic.APIConnectionError as exc:
        raise JudgeUnavailable(
            f"judge unreachable at {_where(client)} ({_tries(settings.max_retries)}): {exc}", settings.max_retries
        ) from None
    except anthropic.APIStatusError as exc:
        retried = settings.max_retries if _retryable(exc.status_code) else 0
        what = f"judge answered HTTP {exc.status_code}"
        if retried:
            what += f" ({_tries(retried)})"
        raise JudgeUnavailable(f"{what}: {_api_message(exc)}", retried) from None


def no_api_reply(response: Any, where: str) -> JudgeUnavailable:
    """A success status whose body is no Messages API reply: base_url leads to a web page (or a proxy's login
    page), not to the API. Not asked again: the same URL gives the same page."""
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    text = " ".join(response.text[:80].split())
    body = repr(text) if text else "an empty body"
    return JudgeUnavailable(f"the judge at {where} answered HTTP {response.status_code} with no Messages API reply "
                            f"({kind}: {body}) — check judge.base_url in scarbook.yaml: the API's root, e.g. "
                            "https://api.anthropic.com", 0)


def _where(client: anthropic.AsyncAnthropic) -> str:
    return str(client.base_url).rstrip("/")


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _tries(retries: int) -> str:
    return f"after {retries} retr{'y' if retries == 1 else 'ies'}"


def _api_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return " ".join(error["message"].split())[:200]
    return " ".join(str(exc.message).split())[:200]
