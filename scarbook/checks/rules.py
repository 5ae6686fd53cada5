"""Rule checks: deterministic, free, millisecond-fast. Each returns (ok, one-line detail)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import signal as signal_module
import stat
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from scarbook.checks import patterns
from scarbook.checks.context import CheckContext
from scarbook.checks.verdict import CHECK_CRASHED
from scarbook.fs import safefs
from scarbook.proc import credentials
from scarbook.proc.common import BASE_ENV, shell_argv
from scarbook.proc.leftovers import PROJECT_VAR
from scarbook.proc.spawn import run_program
from scarbook.text import escape_name, plural
from scarbook.transcripts.tool_input import NoToolInput, ToolInput, last_call, last_tool_input, tool_input_of

Outcome = tuple[bool, str]


class CheckFailed(Exception):
    """Raised inside a rule to end it with a failing detail."""


class CheckSkipped(Exception):
    """Raised inside a rule that has nothing to check here (a trajectory check where no transcript is
    expected): the result is `skipped`, with this detail."""


class CheckUnread(Exception):
    """Raised inside a rule whose file is bigger than it may read: it fails unread, never a verdict on part
    of the file, and the fault is put on the case (the cap is a setting). Not an error: the agent made the
    file, and a sparse one of any size costs it nothing, so an error would let it take a run it failed out
    of its pass rate's denominator."""


class CheckBroke(Exception):
    """Raised inside a rule that broke (timed out, could not start, crashed): it fails, and the
    fault is the case's, not the agent's (scarbook.run.causes rule `check-broke`)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(detail)
        self.rule = rule


def _entry(ctx: CheckContext, rel: str) -> os.stat_result:
    try:
        return safefs.entry(ctx.workspace, rel)
    except safefs.Refused as exc:
        raise CheckFailed(str(exc)) from None


def _file(ctx: CheckContext, rel: str) -> os.stat_result:
    """The lstat of the file `rel` names, failing the check if it is missing, a link or a folder."""
    st = _entry(ctx, rel)
    if stat.S_ISLNK(st.st_mode):
        raise CheckFailed(f"{rel} is a symlink")
    if stat.S_ISDIR(st.st_mode):
        raise CheckFailed(f"{rel} is a directory, not a file")
    return st


def _text(ctx: CheckContext, rel: str) -> str:
    """The file's text; a link, a pipe or a folder fails the check unread, and so does a file bigger than
    the read cap (CheckUnread: what lies past the cap could change the verdict, so none is drawn from part)."""
    cap = ctx.max_read
    try:
        data, size = safefs.read_file(ctx.workspace, rel, cap + 1)
    except safefs.Refused as exc:
        raise CheckFailed(str(exc)) from None
    if max(size, len(data)) > cap:
        raise CheckUnread(f"{rel} is {max(size, len(data)):,} bytes, more than the {cap:,} a rule check reads: "
                          "failed unread — raise max_read_bytes in scarbook.yaml to check it")
    return data.decode("utf-8", errors="replace")


NO_TRANSCRIPT_RULE = "check-no-transcript"


def tool_input_text(ctx: CheckContext, ref: ToolInput) -> str:
    """The text a check's `artifact: {tool, field}` names: the field of the run's last call to the tool (verify:
    of the scar's artifact, `ctx.artifact_calls`). No such call or field fails the check (the agent did not do
    the thing); no transcript where the run should have one breaks it (the case's)."""
    calls = ctx.artifact_calls if ctx.artifact_calls is not None and last_call(ctx.artifact_calls, ref) \
        else ctx.transcript
    if calls is None:
        if ctx.transcript_missing:
            raise CheckBroke(NO_TRANSCRIPT_RULE, ctx.transcript_missing)
        raise CheckSkipped(f"not run: no transcript to read {ref.label} from here")
    try:
        return last_tool_input(calls, ref)
    except NoToolInput as exc:
        raise CheckFailed(str(exc)) from None


def _subject(ctx: CheckContext, p: dict[str, Any]) -> tuple[str, str]:
    """(how the check names what it reads, its text): the file at `path`, or the tool call input `artifact` names."""
    ref = tool_input_of(p.get("artifact"))
    if ref is not None:
        return ref.label, tool_input_text(ctx, ref)
    return p["path"], _text(ctx, p["path"])


def _excerpt(text: str, n: int = 60) -> str:
    # No escaping here: callers show it with !r, which already writes a newline as \n (escaping
    # first made users see a doubled \\n).
    return text if len(text) <= n else text[: n - 1] + "…"


def file_exists(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    return True, f"{p['path']} exists ({_file(ctx, p['path']).st_size} bytes)"


def file_absent(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    try:
        safefs.entry(ctx.workspace, p["path"])
    except safefs.Refused as exc:
        if exc.missing:
            return True, f"{p['path']} is absent"
        return False, str(exc)
    return False, f"{p['path']} exists but must not"


def contains(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    where, text = _subject(ctx, p)
    if p["text"] in text:
        return True, f"{where} contains {_excerpt(p['text'])!r}"
    return False, f"{where} does not contain {_excerpt(p['text'])!r} (starts: {_excerpt(text)!r})"


def not_contains(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    where, text = _subject(ctx, p)
    if p["text"] in text:
        line = text[: text.index(p["text"])].count("\n") + 1
        return False, f"{where} contains {_excerpt(p['text'])!r} at line {line} but must not"
    return True, f"{where} does not contain {_excerpt(p['text'])!r}"


def _search(check: str, pattern: str, text: str, where: str, timeout_s: float) -> Outcome:
    try:
        m = patterns.search(pattern, text, timeout_s)
    except re.error as exc:
        raise CheckFailed(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
    except patterns.PatternTimedOut:
        # A fail, not an error: an error leaves the pass rate's denominator, and the agent chose the text.
        raise CheckBroke("check-timed-out", f"{check} check `{pattern}` did not finish within {timeout_s:g} s on "
                         f"{'the output' if where == 'output' else where} (catastrophic backtracking): {patterns.REWRITE}") from None
    if m:
        return True, f"{where} matches /{pattern}/ at {_excerpt(m.group(0))!r}"
    return False, f"{where} does not match /{pattern}/"


def regex(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    where, text = _subject(ctx, p)
    return _search("regex", p["pattern"], text, where, ctx.regex_timeout_s)


def count_lines(text: str) -> int:
    """Lines as a person counts them: 'a\\n' and 'a' are one line, '' is zero."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def line_count(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    rel, text = _subject(ctx, p)
    n = count_lines(text)
    if "equals" in p and n != p["equals"]:
        return False, f"{rel} has {plural(n, 'line')}, expected exactly {p['equals']}"
    if "min" in p and n < p["min"]:
        return False, f"{rel} has {plural(n, 'line')}, expected at least {p['min']}"
    if "max" in p and n > p["max"]:
        return False, f"{rel} has {plural(n, 'line')}, expected at most {p['max']}"
    return True, f"{rel} has {plural(n, 'line')}"


def _pointer(doc: Any, pointer: str) -> Any:
    """RFC 6901 JSON pointer lookup."""
    if pointer in ("", "/"):
        return doc
    if not pointer.startswith("/"):
        raise CheckFailed(f"JSON pointer {pointer!r} must start with '/'")
    cur = doc
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            if not (part.isascii() and part.isdigit()) or int(part) >= len(cur):  # ('²' is no index)
                raise CheckFailed(f"JSON pointer {pointer}: no index {part!r}")
            cur = cur[int(part)]
        elif isinstance(cur, dict):
            if part not in cur:
                raise CheckFailed(f"JSON pointer {pointer}: no key {part!r}")
            cur = cur[part]
        else:
            raise CheckFailed(f"JSON pointer {pointer}: {part!r} is inside a scalar")
    return cur


class NotJSON(ValueError):
    """NaN, Infinity or -Infinity: Python's JSON reader takes them, JSON (RFC 8259) and every other reader do not."""


def _not_json(constant: str) -> Any:
    raise NotJSON(constant)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: true is not 1 and false is not 0, which Python's == says they are (1 and 1.0 are
    one JSON number). Goes only as deep as both are lists or objects: `b` comes from case.yaml, bounded."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return bool(a == b)


def json_valid(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    rel, text = _subject(ctx, p)
    try:
        doc = json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        return False, f"{rel} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except NotJSON as exc:
        return False, f"{rel} is not valid JSON: {exc} is not a JSON value (Python's json.dumps writes it for a float)"
    # RFC 8259 (section 9) lets a reader limit nesting and numbers. Past Python's limits the agent's file fails
    # unread: "the check crashed" was an error, which takes the run out of the pass rate's denominator.
    except RecursionError:
        return False, f"{rel} nests deeper than a JSON reader here goes: failed unread (RFC 8259 lets a reader limit nesting)"
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        return False, (f"{rel} holds a number longer than a JSON reader here takes ({sys.get_int_max_str_digits():,} "
                       "digits): failed unread (RFC 8259 lets a reader limit numbers)")
    if "pointer" not in p:
        return True, f"{rel} is valid JSON"
    value = _pointer(doc, p["pointer"])
    if "equals" in p and not same_json(value, p["equals"]):
        return False, f"{rel}{p['pointer']} is {json.dumps(value)[:60]}, expected {json.dumps(p['equals'])[:60]}"
    return True, f"{rel}{p['pointer']} = {json.dumps(value)[:60]}"


def only_changed(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    allowed = p["paths"]
    outside = {f for f in ctx.diff.changed if not any(fnmatch.fnmatchcase(f, pat) for pat in allowed)}
    if outside:
        parts = []
        for kind in ("created", "modified", "deleted"):  # (a set: an agent can leave 200,000 files)
            hit = [f for f in getattr(ctx.diff, kind) if f in outside]
            if hit:
                parts.append(f"{kind} {', '.join(map(escape_name, hit[:5]))}{' …' if len(hit) > 5 else ''}")
        return False, "changed outside the allowed list: " + "; ".join(parts)
    return True, f"only {', '.join(allowed)} changed" if ctx.diff.changed else "nothing changed"


def output_contains(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    if p["text"] in ctx.output:
        return True, f"output contains {_excerpt(p['text'])!r}"
    return False, f"output does not contain {_excerpt(p['text'])!r} (output starts: {_excerpt(ctx.output)!r})"


def output_regex(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    return _search("output_regex", p["pattern"], ctx.output, "output", ctx.regex_timeout_s)


async def command(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    timeout = float(p.get("timeout_s") or ctx.command_timeout_s)
    tail = bytearray()

    def keep_tail(chunk: bytes) -> None:  # only the last line is shown; a flood must not fill memory
        tail.extend(chunk)
        del tail[:-4096]

    # The workspace is agent-written, so the command may run the agent's code: it gets what the agent
    # gets (the base variables and the agent's allow-list) plus what the case names, never all of ours.
    names = (*BASE_ENV, *ctx.env_allow, *p.get("env", ()))
    environ = credentials.environ()  # (a session withholds the keys from os.environ)
    env = {k: environ[k] for k in names if k in environ}
    if ctx.project_tag:
        env[PROJECT_VAR] = ctx.project_tag
    argv = shell_argv(p["run"])
    if ctx.sandbox is not None:  # agent-written code gets the agent's confinement
        argv = ctx.sandbox.wrap(argv, ctx.workspace)
    try:
        done = await run_program(argv, cwd=ctx.workspace, env=env, stdin_data=None,
                                 on_stdout=keep_tail, on_stderr=None, timeout_s=timeout,
                                 confined=ctx.sandbox is not None)
    except OSError as exc:
        if not os.path.isdir(ctx.workspace):  # the agent removed its workspace: the agent's doing
            raise
        raise CheckBroke("check-could-not-start",
                         f"command {p['run']!r} could not start: {exc.strerror or exc}") from None
    if done.timed_out:
        raise CheckBroke("check-timed-out", f"command {p['run']!r} timed out after {timeout:g}s")
    last_lines = tail.decode("utf-8", errors="replace").strip().splitlines()[-1:]
    last = f": {_excerpt(last_lines[0], 80)}" if last_lines else ""
    code = done.returncode
    if code is None:  # the spawner learned no exit status (it reaps what it ran: not expected)
        raise CheckBroke(CHECK_CRASHED, f"command {p['run']!r} ended without an exit status{last}")
    if code == 0:
        return True, f"command {p['run']!r} exited 0"
    if code in SHELL_CANNOT_RUN:  # the shell's own word: the program is missing or not executable
        raise CheckBroke("check-could-not-start", f"command {p['run']!r} exited {code} "
                         f"({SHELL_CANNOT_RUN[code]}){last}")
    signal = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else None  # sh reports a signal as 128+n
    if signal is not None:
        raise CheckBroke(CHECK_CRASHED, f"command {p['run']!r} was killed by signal {signal}"
                         f" ({_signal_name(signal)}){last}")
    return False, f"command {p['run']!r} exited {code}{last}"


SHELL_CANNOT_RUN = {126: "the shell found it but could not execute it", 127: "the shell did not find the program"}


def _signal_name(n: int) -> str:
    try:
        return signal_module.Signals(n).name
    except ValueError:
        return "unknown signal"


RuleFn = Callable[[CheckContext, dict[str, Any]], Outcome | Awaitable[Outcome]]

RULES: dict[str, RuleFn] = {
    "file_exists": file_exists, "file_absent": file_absent, "contains": contains,
    "not_contains": not_contains, "regex": regex, "line_count": line_count, "json_valid": json_valid,
    "only_changed": only_changed, "output_contains": output_contains, "output_regex": output_regex,
    "command": command,
}
# The rules that read workspace files; run_check runs them on a thread.
FILE_RULES = frozenset({"file_exists", "file_absent", "contains", "not_contains", "regex", "line_count", "json_valid"})
# ... and the rules that may take up to their time limit (a pattern that backtracks): on a thread too.
THREAD_RULES = FILE_RULES | {"output_regex"}
