"""What each check type accepts. The schema and the editor both read this table."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.checks import patterns
from scarbook.errors import CaseError
from scarbook.fs.paths import check_relative
from scarbook.fs.yamlio import line_of
from scarbook.models import Case, Check
from scarbook.models.rubric import ITEM_ID, ITEM_ID_RULE, resolve_item_ids
from scarbook.transcripts.tool_input import WRITTEN, mapping_problem, tool_input_of

# Bytes of one file a rule check reads at most, unless scarbook.yaml's max_read_bytes says otherwise (here,
# with the checks' declarations: config.py reads it without loading what a check sees, checks/context.py).
MAX_READ = 20_000_000
# Seconds a regex or output_regex check may match for (checks/patterns.py): a pattern that backtracks longer
# on the agent's text fails the check, the case's fault. Normal patterns take microseconds on an output and
# milliseconds on a file of MAX_READ bytes; a nested quantifier (`(\w+\s?)*`) can take forever.
REGEX_TIMEOUT_S = 2.0

# Field kinds: "path" (workspace-relative), "paths" (list of them), "str", "int", "number", "bool",
# "strs" (list of strings), "rubric" (list of items: a string, or {id, text}), "any" (any YAML value),
# "tool" (a tool call's input: {tool, field}), "artifact" ("output", a workspace path, or a tool call's input).


@dataclass(frozen=True)
class CheckSpec:
    type: str
    summary: str
    fields: dict[str, str]
    required: tuple[str, ...] = ()
    one_of: tuple[str, ...] = ()  # at least one of these must be given
    defaults: dict[str, Any] = field(default_factory=dict)
    transcript: bool = False  # a trajectory check: it reads the run's transcript, not the workspace
    # a required field another may stand in for: a file rule reads a tool call's input (`artifact:`) instead of
    # the file at `path` (transcripts/tool_input.py)
    instead: dict[str, str] = field(default_factory=dict)


CHECK_SPECS: dict[str, CheckSpec] = {
    s.type: s
    for s in [
        CheckSpec("file_exists", "a file exists in the workspace", {"path": "path"}, ("path",)),
        CheckSpec("file_absent", "a file does not exist", {"path": "path"}, ("path",)),
        CheckSpec("contains", "a file contains a text", {"path": "path", "text": "str", "artifact": "tool"},
                  ("path", "text"), instead={"path": "artifact"}),
        CheckSpec("not_contains", "a file does not contain a text", {"path": "path", "text": "str",
                  "artifact": "tool"}, ("path", "text"), instead={"path": "artifact"}),
        CheckSpec("regex", "a file matches a regular expression (re.search, multiline)",
                  {"path": "path", "pattern": "str", "artifact": "tool"}, ("path", "pattern"),
                  instead={"path": "artifact"}),
        CheckSpec("line_count", "a file's number of lines", {"path": "path", "equals": "int", "min": "int",
                  "max": "int", "artifact": "tool"}, ("path",), one_of=("equals", "min", "max"),
                  instead={"path": "artifact"}),
        CheckSpec("json_valid", "a file parses as JSON (optionally: the value at a JSON pointer)",
                  {"path": "path", "pointer": "str", "equals": "any", "artifact": "tool"}, ("path",),
                  instead={"path": "artifact"}),
        CheckSpec("only_changed", "no file outside this list was created, modified or deleted",
                  {"paths": "paths"}, ("paths",)),
        CheckSpec("output_contains", "the agent's final output contains a text", {"text": "str"}, ("text",)),
        CheckSpec("output_regex", "the agent's final output matches a regular expression",
                  {"pattern": "str"}, ("pattern",)),
        # Trajectory checks (scarbook.checks.trajectory): what the agent did, read from the run's transcript.
        CheckSpec("tool_called", "trajectory: the agent called a tool (name; min times, default 1; max times)",
                  {"name": "str", "min": "int", "max": "int"}, ("name",), transcript=True),
        CheckSpec("tool_not_called", "trajectory: the agent never called a tool", {"name": "str"}, ("name",),
                  transcript=True),
        CheckSpec("tool_order", "trajectory: the agent called these tools in this order (others may come between)",
                  {"names": "strs"}, ("names",), transcript=True),
        CheckSpec("max_tool_calls", "trajectory: at most n tool calls", {"n": "int"}, ("n",), transcript=True),
        CheckSpec("max_turns", "trajectory: at most n turns (model responses)", {"n": "int"}, ("n",),
                  transcript=True),
        CheckSpec("max_tokens", "trajectory: at most n tokens spent (input, output and cache)", {"n": "int"}, ("n",),
                  transcript=True),
        CheckSpec("max_cost_usd", "trajectory: at most this many dollars spent", {"usd": "number"}, ("usd",),
                  transcript=True),
        CheckSpec("no_writes_outside", "trajectory: the agent's file-writing tool calls wrote only paths matching "
                  "these globs", {"paths": "paths"}, ("paths",), transcript=True),
        CheckSpec("command", "a shell command run in the workspace exits 0 (it runs agent-written code: it gets "
                  "the agent's allow-listed environment plus the variables named in env)",
                  {"run": "str", "timeout_s": "number", "env": "strs"}, ("run",),
                  defaults={"timeout_s": 60}),
        CheckSpec("llm_judge", "an LLM judge grades each rubric item PASS/FAIL",
                  {"rubric": "rubric", "artifact": "artifact", "include_task": "bool"}, ("rubric",),
                  defaults={"artifact": "output"}),
    ]
}

TRAJECTORY_CHECKS = frozenset(t for t, s in CHECK_SPECS.items() if s.transcript)


def reads_transcript(check: Check) -> bool:
    """Whether the check reads the run's transcript: a trajectory check, or one whose artifact is a tool call's
    input (`artifact: {tool, field}`)."""
    return check.type in TRAJECTORY_CHECKS or tool_input_of(check.params.get("artifact")) is not None


def needs_transcript(case: Case, index: int, check: Check) -> str:
    """`cases/x/case.yaml:12: check 2 (llm_judge) reads the body of the last X call from the run's transcript`:
    said where the agent keeps none (the session refuses the case; lint says it first)."""
    ref = tool_input_of(check.params.get("artifact"))
    what = ref.label if ref is not None else "what the agent did"
    where = f"{case.root / 'case.yaml'}{f':{check.line}' if check.line else ''}" if case.root else case.id
    return f"{where}: check {index + 1} ({check.type}) reads {what} from the run's transcript"
_COUNTS = ("n", "min", "max")  # whole-number fields of the trajectory checks: 0 or more

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KIND_WORDS = {"path": "a workspace-relative path", "paths": "a list of workspace-relative paths",
              "str": "a string", "int": "an integer", "number": "a number", "bool": "true or false",
              "strs": "a list of strings", "rubric": "a list of items (a string, or {id, text})",
              "any": "a value", "tool": f"a tool call's input, {WRITTEN}",
              "artifact": f"'output', a workspace path, or a tool call's input {WRITTEN}"}


def _type_ok(kind: str, value: Any) -> bool:
    if kind in ("path", "str"):
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("paths", "strs"):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "rubric":
        return isinstance(value, list) and all(isinstance(v, (str, dict)) for v in value)
    if kind == "tool":
        return isinstance(value, dict)
    if kind == "artifact":
        return isinstance(value, (str, dict))
    return True


def _got(value: Any) -> str:
    """What a value of the wrong kind is, in the user's words (a list: which of its entries is wrong)."""
    if isinstance(value, list):
        wrong = next((n for n, v in enumerate(value) if not isinstance(v, (str, dict))), None)
        if wrong is not None:
            entry = value[wrong]
            name = next((word for kind, word in ((bool, "true/false"), (list, "a list"), (dict, "a mapping"),
                                                 ((int, float), "a number")) if isinstance(entry, kind)), "nothing")
            return f"a list whose entry {wrong + 1} is {name}"
        return "a list"
    return type(value).__name__


def parse_check(data: Any, path: Path, line: int | None) -> Check:
    """Validate one entry of `checks:`; raise CaseError naming file, line and fix."""
    if not isinstance(data, dict):
        raise CaseError(path, "each check must be a mapping with a 'type'", line=line,
                        fix="write it as {type: file_exists, path: out.txt}")
    ctype = data.get("type")
    if "type" not in data:
        raise CaseError(path, "a check has no 'type'", line=line, fix=f"add type: one of {', '.join(CHECK_SPECS)}")
    if ctype not in CHECK_SPECS:
        known = ", ".join(CHECK_SPECS)
        import difflib  # only to name the check type meant

        close = difflib.get_close_matches(str(ctype), CHECK_SPECS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise CaseError(path, f"unknown check type {ctype!r}", line=line_of(data, "type") or line,
                        fix=f"{hint}use one of: {known}")
    spec = CHECK_SPECS[ctype]
    params: dict[str, Any] = {}
    for key, value in data.items():
        if key == "type":
            continue
        kline = line_of(data, key) or line
        if key not in spec.fields:
            allowed = ", ".join(spec.fields)
            raise CaseError(path, f"unknown key {key!r} in {ctype} check", line=kline,
                            fix=f"{ctype} takes: {allowed}")
        _check_value(f"{ctype}.{key}", spec.fields[key], value, path, kline)
        params[key] = _plain(value)
    _require(spec, params, data, path, line)
    if spec.one_of and not any(k in params for k in spec.one_of):
        raise CaseError(path, f"{ctype} check needs one of: {', '.join(spec.one_of)}", line=line,
                        fix=f"add e.g. {spec.one_of[0]}: 1")
    if ctype == "line_count":
        _validate_line_count(params, data, path, line)
    item_ids: list[str] = []
    if ctype == "llm_judge":
        item_ids = _rubric_items(params, data.get("rubric"), path, line_of(data, "rubric") or line)
        _validate_judge(params, path, line_of(data, "rubric") or line)
    for key, verb in (("text", "contains"), ("pattern", "matches")):
        if params.get(key) == "" and ctype != "llm_judge":
            raise CaseError(path, f"{ctype}.{key} is empty: every text {verb} it, so the check decides nothing",
                            line=line_of(data, key) or line, fix=f"write the {key} to look for")
    pointer = params.get("pointer") if ctype == "json_valid" else None
    if pointer and not pointer.startswith("/"):
        raise CaseError(path, f"json_valid.pointer {pointer!r} must start with '/' (a JSON pointer, RFC 6901): every "
                        "run would fail it", line=line_of(data, "pointer") or line, fix=f"write e.g. pointer: /{pointer}")
    if ctype == "command" and not params["run"].strip():
        raise CaseError(path, "command.run is empty: the shell runs nothing and exits 0, so it would pass every run",
                        line=line_of(data, "run") or line, fix="write the command to run, e.g. run: python -m pytest -q")
    for name in params.get("env", []) if ctype == "command" else []:
        if not _ENV_NAME.fullmatch(name):
            raise CaseError(path, f"command.env: {name!r} is not an environment variable name",
                            line=line_of(data, "env") or line, fix="list names only, e.g. env: [API_TOKEN]")
    if "timeout_s" in params:
        t = params["timeout_s"]
        if not (math.isfinite(t) and t > 0):
            raise CaseError(path, f"{ctype}.timeout_s must be a positive number of seconds, got {t!r}",
                            line=line_of(data, "timeout_s") or line, fix="write e.g. timeout_s: 60")
    if "pattern" in params and (why := patterns.syntax_error(params["pattern"])) is not None:
        raise CaseError(path, f"{ctype}.pattern is not a valid regular expression: {why}",
                        line=line_of(data, "pattern") or line,
                        fix="fix the pattern (Python `re` syntax; quote it in single quotes in YAML)")
    if spec.transcript:
        _validate_trajectory(ctype, params, data, path, line)
    for key, value in spec.defaults.items():
        params.setdefault(key, value)
    written = frozenset(i for i in item_ids if i)
    ids = resolve_item_ids(params["rubric"], item_ids) if ctype == "llm_judge" else []
    return Check(type=ctype, params=params, line=line, item_ids=ids, written_ids=written)


def _check_value(name: str, kind: str, value: Any, path: Path, line: int | None) -> None:
    """One field's value against its kind: a path inside the workspace, a tool call's input as {tool, field}."""
    key = name.split(".", 1)[1]
    if not _type_ok(kind, value):
        raise CaseError(path, f"{name} must be {KIND_WORDS[kind]}, got {_got(value)}",
                        line=line, fix=f"write {key} as {KIND_WORDS[kind]}")
    for rel in ([value] if kind == "path" else value if kind == "paths" else []):
        why = check_relative(rel)
        if why:
            raise CaseError(path, f"{name}: {why}", line=line, fix="use a path relative to the workspace root, inside it")
    why = mapping_problem(value) if isinstance(value, dict) and kind in ("tool", "artifact") else None
    if why:
        raise CaseError(path, f"{name}: {why}", line=line, fix=f"write it as {key}: {WRITTEN}")


def _require(spec: CheckSpec, params: dict[str, Any], data: Any, path: Path, line: int | None) -> None:
    """Every required key given, or the one that may stand in for it (`instead`), never both."""
    for req in spec.required:
        other = spec.instead.get(req)
        if req in params and other in params:
            raise CaseError(path, f"{spec.type} check has both {req!r} and {other!r}: it reads one of them",
                            line=line_of(data, other) or line,
                            fix=f"keep {req} for a workspace file, or {other} for a tool call's input")
        if req not in params and other not in params:
            also = f" (or {other}: {WRITTEN})" if other else ""
            raise CaseError(path, f"{spec.type} check is missing required key {req!r}", line=line,
                            fix=f"add {req}: ...{also}")


def _validate_line_count(params: dict[str, Any], data: Any, path: Path, line: int | None) -> None:
    """Bounds a file's line count can meet: a negative one, or min above max, would fail every run."""
    for key in ("equals", "min", "max"):
        if params.get(key, 0) < 0:
            raise CaseError(path, f"line_count.{key} must be 0 or more, got {params[key]}",
                            line=line_of(data, key) or line, fix=f"write e.g. {key}: 1")
    if "min" in params and "max" in params and params["min"] > params["max"]:
        raise CaseError(path, f"line_count.min ({params['min']}) is more than line_count.max ({params['max']}): "
                        "no file can pass", line=line_of(data, "min") or line,
                        fix="swap them, or fix the one that is wrong")


def _rubric_items(params: dict[str, Any], raw: Any, path: Path, line: int | None) -> list[str]:
    """An llm_judge's rubric as texts (params["rubric"]) and the id written beside each ("" for none)."""
    texts, ids = [], []
    for n, item in enumerate(params["rubric"]):
        iline = line_of(raw, n) or line
        if isinstance(item, str):
            texts.append(item)
            ids.append("")
            continue
        fix = "write the item as {id: r3f2a9c, text: \"the answer names the file\"}, or as the text alone"
        unknown = sorted(set(item) - {"id", "text"})
        if unknown:
            raise CaseError(path, f"unknown key {unknown[0]!r} in rubric item {n + 1}", line=iline, fix=fix)
        text, ident = item.get("text"), item.get("id")
        if not isinstance(text, str):
            raise CaseError(path, f"rubric item {n + 1} has no text", line=iline, fix=fix)
        if not isinstance(ident, str) or not ITEM_ID.match(ident):
            raise CaseError(path, f"rubric item {n + 1}: id {ident!r} is not an item id", line=iline,
                            fix=f"an item id is {ITEM_ID_RULE}; or leave id out and scarbook writes one")
        if ident in ids:
            raise CaseError(path, f"rubric item {n + 1}: id {ident!r} is given to item {ids.index(ident) + 1} too",
                            line=iline, fix="give each item its own id (a copied item: delete its id line)")
        texts.append(text)
        ids.append(ident)
    params["rubric"] = texts
    return ids


def _validate_judge(params: dict[str, Any], path: Path, line: int | None) -> None:
    rubric = params["rubric"]
    if not rubric or any(not item.strip() for item in rubric):
        raise CaseError(path, "llm_judge.rubric needs at least one non-empty item", line=line,
                        fix="write one judgeable statement per item")
    artifact = params.get("artifact", "output")
    if isinstance(artifact, str) and artifact != "output":
        why = check_relative(artifact)
        if why:
            raise CaseError(path, f"llm_judge.artifact: {why}", line=line,
                            fix="use 'output' or a path relative to the workspace root")


def _validate_trajectory(ctype: str, params: dict[str, Any], data: dict, path: Path, line: int | None) -> None:
    for key in _COUNTS:
        if key in params and params[key] < 0:
            raise CaseError(path, f"{ctype}.{key} must be 0 or more, got {params[key]}",
                            line=line_of(data, key) or line, fix=f"write e.g. {key}: {12 if key == 'n' else 1}")
    if "min" in params and "max" in params and params["min"] > params["max"]:
        raise CaseError(path, f"{ctype}.min ({params['min']}) is more than max ({params['max']}): no run could pass",
                        line=line_of(data, "min") or line, fix="make min at most max")
    names = [params["name"]] if "name" in params else params.get("names", [])
    if "names" in params and not names:
        raise CaseError(path, f"{ctype}.names needs at least one tool name", line=line_of(data, "names") or line,
                        fix="write names: [read_file, write_file]")
    if any(not n.strip() for n in names):
        key = "name" if "name" in params else "names"
        raise CaseError(path, f"{ctype}.{key}: a tool name is empty", line=line_of(data, key) or line,
                        fix="name the tool as the agent calls it, e.g. write_file or Bash")
    if "usd" in params and not (math.isfinite(params["usd"]) and params["usd"] >= 0):
        raise CaseError(path, f"{ctype}.usd must be a number of dollars, 0 or more, got {params['usd']!r}",
                        line=line_of(data, "usd") or line, fix="write e.g. usd: 0.50")
    for glob in params.get("paths", []) if ctype == "no_writes_outside" else []:
        why = glob_problem(glob)
        if why:
            raise CaseError(path, f"{ctype}.paths: {glob!r} is not a valid glob: {why}",
                            line=line_of(data, "paths") or line,
                            fix="write globs as only_changed does: src/*.py, docs/** ('*' also matches '/')")


def glob_problem(glob: str) -> str | None:
    """Why fnmatch would not read `glob` as the user meant it (an unclosed '['), or None."""
    i = 0
    while i < len(glob):
        if glob[i] == "[":
            j = i + 1
            if j < len(glob) and glob[j] in "!^":
                j += 1
            if j < len(glob) and glob[j] == "]":
                j += 1
            close = glob.find("]", j)
            if close < 0:
                return f"the '[' at position {i + 1} is never closed (write [[] for a literal '[')"
            i = close
        i += 1
    return None


def _plain(value: Any) -> Any:
    """Strip the line-number wrappers so params are plain dicts and lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
