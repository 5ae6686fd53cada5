"""Trajectory checks: rules over what the agent did (the run's transcript), not the end state.

Whatever wrote the transcript — a CLI preset, the model-call recorder, the agent itself through
$SCARBOOK_TRANSCRIPT — it is one scarbook.transcripts.Transcript here. Every failing result names
the call that broke the rule: its number among the run's tool calls, the tool, an excerpt of its input.

Words used:
  tool call  a ToolCall entry of the transcript (a subagent's calls count too).
  turn       one model response: the agent's text and the tool calls it makes at once, up to the
             next tool result or user message; with the recorder, one `model_call` record.
  tokens     input + output + cache read + cache write (models.Usage.total_tokens). With the recorder,
             what it measured (the transcript is then its own list of calls: run/recorded_checks.py);
             without, the agent's own report ($SCARBOOK_USAGE, or its preset's) when there is one, else
             the transcript's — "reported by the agent" in the detail, its impossible values left out.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable
from typing import Any

from scarbook.checks.context import CheckContext
from scarbook.checks.rules import NO_TRANSCRIPT_RULE, CheckBroke, CheckSkipped, _excerpt
from scarbook.models import Usage
from scarbook.text import escape_name, plural
from scarbook.transcripts.files import file_operation, is_absolute, normalise_path, relative_path
from scarbook.transcripts.model import Entry, Message, ToolCall, Transcript

INPUT_EXCERPT = 80
# (ok, detail) or, failing at a tool call, (ok, detail, call_ref(...)): run_check keeps it as CheckResult.call
Outcome = tuple[bool, str] | tuple[bool, str, dict[str, Any] | None]


def _transcript(ctx: CheckContext) -> Transcript:
    if ctx.transcript is not None:
        return ctx.transcript
    if ctx.transcript_missing:  # the run should have one: the case cannot be checked so
        raise CheckBroke(NO_TRANSCRIPT_RULE, ctx.transcript_missing)
    raise CheckSkipped("not run: no transcript to check here (a trajectory check reads a run's transcript)")


def _named(pattern: str, name: str) -> bool:
    """A tool name as written, or a glob of them (`mcp__github__*`)."""
    return name == pattern or (any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(name, pattern))


def _input_excerpt(call: ToolCall) -> str:
    try:
        shown = json.dumps(call.input, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        shown = repr(call.input)
    return escape_name(_excerpt(shown, INPUT_EXCERPT))  # the paths in it are the agent's names: none reads as another


def describe_call(number: int, call: ToolCall) -> str:
    """`call 3 (write_file {"path": "README.md", ...})`: its 1-based number among the tool calls."""
    return f"call {number} ({call.name} {_input_excerpt(call)})"


def call_ref(number: int, call: ToolCall) -> dict[str, Any]:
    """The call a failing result names, as data (CheckResult.call): {index, tool, input (an excerpt)}."""
    return {"index": number, "tool": call.name, "input": _input_excerpt(call)}


def _calls(t: Transcript) -> list[ToolCall]:
    return t.tool_calls


def _tally(calls: list[ToolCall]) -> str:
    counts: dict[str, int] = {}
    for c in calls:
        counts[c.name] = counts.get(c.name, 0) + 1
    if not counts:
        return "no tool calls"
    shown = ", ".join(f"{name} ×{n}" for name, n in list(counts.items())[:8])
    return "calls: " + shown + (" …" if len(counts) > 8 else "")


def tool_called(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    calls = _calls(_transcript(ctx))
    name, high = p["name"], p.get("max")
    low = p.get("min", 1 if high is None else min(1, high))  # max: 0 alone means "never": min 0
    hits = [(i, c) for i, c in enumerate(calls, 1) if _named(name, c.name)]
    if high is not None and len(hits) > high:
        i, call = hits[high]
        return False, (f"{describe_call(i, call)} is {name} call {high + 1}; at most {high} allowed "
                       f"({plural(len(hits), 'call')} in all)"), call_ref(i, call)
    if len(hits) < low:
        last = f"; the last call was {describe_call(len(calls), calls[-1])}" if calls else ""
        return False, (f"{name} was called {plural(len(hits), 'time')}, expected at least {low} "
                       f"({_tally(calls)}){last}")
    return True, f"{name} was called {plural(len(hits), 'time')}" + (f", first at call {hits[0][0]}" if hits else "")


def tool_not_called(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    calls = _calls(_transcript(ctx))
    hits = [(i, c) for i, c in enumerate(calls, 1) if _named(p["name"], c.name)]
    if hits:
        i, call = hits[0]
        more = f" ({plural(len(hits), 'call')} in all)" if len(hits) > 1 else ""
        return False, f"{describe_call(i, call)} called {p['name']}, which must not be called{more}", call_ref(i, call)
    return True, f"{p['name']} was never called ({plural(len(calls), 'tool call')})"


def tool_order(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    calls = _calls(_transcript(ctx))
    names: list[str] = p["names"]
    at, matched = 0, list[int]()  # greedy: each name at its first call after the previous name's
    for want in names:
        found = next((i for i in range(at, len(calls)) if _named(want, calls[i].name)), None)
        if found is None:
            if not matched:
                return False, f"{want} was never called ({_tally(calls)})"
            prev = matched[-1]
            earlier = next((i for i in range(prev) if _named(want, calls[i].name)), None)
            why = (f"; it was called before, at {describe_call(earlier + 1, calls[earlier])}"
                   if earlier is not None else "; it was never called")
            return False, (f"no {want} call after {names[len(matched) - 1]} at {describe_call(prev + 1, calls[prev])}"
                           f"{why}"), call_ref(prev + 1, calls[prev])
        matched.append(found)
        at = found + 1
    return True, "called in order: " + ", ".join(f"{n} (call {i + 1})" for n, i in zip(names, matched, strict=True))


def max_tool_calls(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    calls = _calls(_transcript(ctx))
    n = p["n"]
    if len(calls) > n:
        return False, (f"{plural(len(calls), 'tool call')}, at most {n} allowed: {describe_call(n + 1, calls[n])} "
                       f"went past it ({_tally(calls)})"), call_ref(n + 1, calls[n])
    return True, f"{plural(len(calls), 'tool call')} (at most {n})"


def agent_turns(t: Transcript) -> list[list[Entry]]:
    """The agent's turns: runs of its messages and tool calls with no tool result or user message between."""
    turns: list[list[Entry]] = []
    inside = False
    for e in t.entries:
        agent = isinstance(e, ToolCall) or (isinstance(e, Message) and e.role == "assistant"
                                            and e.kind in ("text", "thinking"))
        if agent:
            if not inside:
                turns.append([])
            turns[-1].append(e)
        inside = agent  # a tool result or a user's message ends the turn
    return turns


def max_turns(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    t = _transcript(ctx)
    turns, n = agent_turns(t), p["n"]
    if t.model_calls and t.model_calls != len(turns):  # the recorder counted the model calls: they are the turns
        said = plural(t.model_calls, "turn") + " (model calls)"
        if t.model_calls <= n:
            return True, f"{said} (at most {n})"
        return False, f"{said}, at most {n} allowed: model call {n + 1} went past it"
    if len(turns) <= n:
        return True, f"{plural(len(turns), 'turn')} (at most {n})"
    first = turns[n]
    call = next((e for e in first if isinstance(e, ToolCall)), None)
    said = f"{plural(len(turns), 'turn')}, at most {n} allowed: turn {n + 1} began with "
    if call is None:
        text = next((e.text for e in first if isinstance(e, Message)), "")
        return False, said + f"its message {_excerpt(' '.join(text.split()), INPUT_EXCERPT)!r}"
    number = _calls(t).index(call) + 1
    return False, said + describe_call(number, call), call_ref(number, call)


def _usage(ctx: CheckContext, t: Transcript) -> Usage | None:
    if not ctx.measured and ctx.agent_usage is not None and (ctx.agent_usage.total_tokens or ctx.agent_usage.cost_usd):
        return ctx.agent_usage
    return t.usage


def _spent(ctx: CheckContext) -> str:
    """How the figures were had: measured by scarbook's recorder, or the agent's own word for them."""
    return "spent" if ctx.measured else "reported by the agent"


def _step_past(t: Transcript, amount: Callable[[Usage, str | None], float],
               limit: float) -> tuple[str, dict[str, Any] | None]:
    """Where a budget was passed, when the transcript reports usage step by step (the recorder writes one
    usage record per model call): `; passed at model call 3, which made call 5 (write_file {...})`."""
    if len(t.usage_steps) < 2:
        return "", None
    calls = [(i, e) for i, e in enumerate(t.entries) if isinstance(e, ToolCall)]
    step_word = "model call" if t.model_calls == len(t.usage_steps) else "usage record"
    spent, since = 0.0, 0
    for step, (at, model, u) in enumerate(t.usage_steps, 1):
        spent += amount(u, model or t.model)
        if spent > limit:
            made = [(n, c) for n, (i, c) in enumerate(calls, 1) if since <= i < at]
            if not made:
                return f"; passed at {step_word} {step}", None
            return f"; passed at {step_word} {step}, which made {describe_call(*made[0])}", call_ref(*made[0])
        since = at
    return "", None


def _no_usage(what: str) -> CheckBroke:
    return CheckBroke("check-no-usage", f"the run recorded no {what}: the agent reported none (in $SCARBOOK_USAGE or "
                                        "its transcript's usage records) — turn on record: or use a preset, "
                                        "or have the agent write them")


def _not_counted(ctx: CheckContext, counted: str, limit: str) -> tuple[bool, str]:
    """The failing outcome when the recorder could not count some calls' tokens (the agent cut them off, or left
    them unanswered; ctx.unmeasured): what it counted is within the limit, but what the run spent is not known."""
    more = f" (and {len(ctx.unmeasured) - 1} more)" if len(ctx.unmeasured) > 1 else ""
    return False, (f"the recorder counted {counted}, at most {limit} allowed, but {ctx.unmeasured[0]}{more}: its "
                   "tokens were not counted, so the budget is not shown kept")


def max_tokens(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    usage = _usage(ctx, _transcript(ctx))
    if (usage is None or not usage.total_tokens) and ctx.unmeasured:
        return _not_counted(ctx, "no tokens", f"{p['n']:,}")
    if usage is None or not usage.total_tokens:
        raise _no_usage("tokens")
    t, n, total = ctx.transcript, p["n"], usage.total_tokens
    parts = f"{usage.input_tokens:,} in, {usage.output_tokens:,} out" + (
        f", {usage.cache_read_tokens + usage.cache_write_tokens:,} cache" if usage.cache_read_tokens
        or usage.cache_write_tokens else "")
    if total > n:
        where, ref = _step_past(t, lambda u, _m: u.total_tokens, n) if t is not None and usage is t.usage \
            else ("", None)
        return False, f"{total:,} tokens {_spent(ctx)} ({parts}), at most {n:,} allowed{where}", ref
    if ctx.unmeasured:
        return _not_counted(ctx, f"{total:,} tokens ({parts})", f"{n:,}")
    return True, f"{total:,} tokens {_spent(ctx)} ({parts}), at most {n:,}"


def max_cost_usd(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    t = _transcript(ctx)
    usage = _usage(ctx, t)
    cost, priced = (usage.cost_usd if usage else 0.0), ""
    if usage is not None and usage.total_tokens and not cost and ctx.price is not None and t.model:
        price = ctx.price
        models = {m or t.model for _, m, _ in t.usage_steps} if usage is t.usage else {t.model}
        if usage is t.usage and len(models) > 1:  # each step at its own model's price
            cost = sum(price(m or t.model, u) for _, m, u in t.usage_steps)
            priced = f" ({usage.total_tokens:,} tokens at the prices of {', '.join(sorted(models))})"
        else:
            cost, priced = price(t.model, usage), f" ({usage.total_tokens:,} tokens at {t.model}'s price)"
    if not cost and ctx.unmeasured:
        return _not_counted(ctx, "$0", f"${p['usd']:g}")
    if not cost:
        if usage is not None and usage.total_tokens:
            raise CheckBroke("check-no-usage", f"the run recorded {usage.total_tokens:,} tokens but no cost "
                             f"({'no model named' if not t.model else f'no price for {t.model}'}): add its price under "
                             "judge.prices, have the agent write cost_usd to $SCARBOOK_USAGE, or check max_tokens")
        raise _no_usage("cost")
    usd = p["usd"]
    if cost > usd:
        where, ref = "", None
        if usage is t.usage and ctx.price is not None:  # the transcript's own steps, priced one by one
            step_price = ctx.price
            where, ref = _step_past(t, lambda u, m: step_price(m, u) if m else 0.0, usd)
        return False, f"${cost:.4f} {_spent(ctx)}{priced}, at most ${usd:g} allowed{where}", ref
    if ctx.unmeasured:
        return _not_counted(ctx, f"${cost:.4f}{priced}", f"${usd:g}")
    return True, f"${cost:.4f} {_spent(ctx)}{priced}, at most ${usd:g}"


def _workspace_path(path: str, roots: list[str]) -> str:
    """The path as the case names it: relative to the workspace (absolute when it is outside)."""
    p = normalise_path(path)
    for root in roots:
        if is_absolute(p):
            p = relative_path(p, root)
    return p


def no_writes_outside(ctx: CheckContext, p: dict[str, Any]) -> Outcome:
    t = _transcript(ctx)
    allowed: list[str] = p["paths"]
    failed = {r.call_id for r in t.tool_results if r.is_error}
    roots = [r for r in dict.fromkeys([os.fspath(ctx.workspace), os.path.realpath(ctx.workspace), t.cwd or ""]) if r]
    writes = 0
    for number, call in enumerate(_calls(t), 1):
        op = file_operation(call)
        if op is None or op.kind not in ("write", "edit", "insert") or (call.id and call.id in failed):
            continue  # not a write, or one whose result was an error: it changed nothing
        writes += 1
        rel = _workspace_path(op.path, roots)
        inside = not is_absolute(rel) and rel != ".." and not rel.startswith("../")
        if not inside:
            return False, f"{describe_call(number, call)} wrote {escape_name(rel)}, outside the workspace", call_ref(number, call)
        if not any(fnmatch.fnmatchcase(rel, g) for g in allowed):
            where = f"outside {', '.join(allowed)}" if allowed else "and no writes are allowed"
            return False, f"{describe_call(number, call)} wrote {escape_name(rel)}, {where}", call_ref(number, call)
    if not writes:
        return True, "no file-writing tool calls"
    return True, f"{plural(writes, 'write')}, all inside {', '.join(allowed)}"


TRAJECTORY_RULES = {
    "tool_called": tool_called, "tool_not_called": tool_not_called, "tool_order": tool_order,
    "max_tool_calls": max_tool_calls, "max_turns": max_turns, "max_tokens": max_tokens,
    "max_cost_usd": max_cost_usd, "no_writes_outside": no_writes_outside,
}
