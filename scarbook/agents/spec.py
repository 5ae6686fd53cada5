"""Every agent type scarbook can run, one row each: scarbook.yaml's `agent:` declared per type.

A row is a frozen msgspec Struct tagged with its type (`class CommandSpec(AgentSpec, tag="command", frozen=True)`):
its fields are the settings that type takes (their defaults, bounds and words for a mistake, as every
other section of scarbook.yaml declares them: scarbook/fs/settings.py), its ClassVars say what it can do,
and `build` makes the agent. AGENT_KINDS lists the rows; adding an agent type is one class there. The
keys a type takes, the type names a mistake lists and the messages all come from the rows
(tests/agents/test_agent_rows.py adds a type in a test and runs it).

Capabilities are declared, not probed:
  KEEPS_TRANSCRIPT  scarbook keeps a transcript of every run without the agent's help (the demo agent
                    writes one; the CLI presets' event stream is one). A command agent that always writes
                    $SCARBOOK_TRANSCRIPT itself says `transcript: true`. `keeps_transcript` is the one
                    question the session's preflight asks (trajectory checks).
  SANDBOX           it is a program, so `isolation: sandbox` can run it in bubblewrap; an in-process
                    agent (python) cannot be confined.
  NETWORK           it cannot work offline (a CLI preset calls its model's API): in the sandbox it needs
                    `network: true`, else preflight refuses the session instead of failing every run.

A spec is plain data, so it pickles to a remote worker and builds the same agent there.

Program arguments: `{root}` in any argv element becomes the project root (the folder holding
scarbook.yaml), and an argument after the program that names an existing file relative to the
project root is made absolute, because the agent runs with the run's workspace as its working
directory: `argv: [python, agent.py, "{task}"]` runs the project's agent.py, not a file the
workspace does not have. Arguments holding `{task}`, options (`-x`) and absolute paths are kept
as written.
"""

# No `from __future__ import annotations` here: msgspec reads these Structs' field types the first time
# scarbook.yaml is converted, and a string annotation is compiled and evaluated there, each (issue 38).

import functools
import os
import shlex
import sys
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta

from scarbook.fs.settings import Words, convert, explain

if TYPE_CHECKING:
    from scarbook.agents.base import Agent

DEFAULT_MAX_OUTPUT = 1_000_000
ROOT = "{root}"
TASK = "{task}"


class AgentSpec(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True, kw_only=True, tag_field="type"):
    """What every agent type shares: its words in a message, its capabilities, and `build`."""

    NAME: ClassVar[str] = "agent"
    UNKNOWN: ClassVar[str] = "unknown key {key!r} for {a_kind} agent"
    TAKES: ClassVar[str] = "{a_kind} agent takes: {keys}"
    TAG_FIX: ClassVar[str] = 'write e.g. agent: {type: command, argv: [./agent, "{task}"]}'
    KEEPS_TRANSCRIPT: ClassVar[bool] = False
    SANDBOX: ClassVar[bool] = True
    NETWORK: ClassVar[bool] = False
    SPLIT: ClassVar[tuple[str, ...]] = ()  # list settings scarbook.yaml may also give as one string (split as a shell would)
    # what the refusal of trajectory checks adds for an agent that keeps no transcript ("": nothing)
    TRANSCRIPT_HINT: ClassVar[str] = ""

    @property
    def type(self) -> str:
        return str(self.__struct_config__.tag)

    def build(self, project_root: Path | None) -> "Agent":
        raise NotImplementedError(f"the {self.type} agent type has no build")

    def transcript_kept(self) -> bool:
        """Every run of this agent leaves a transcript (its type keeps one, or its settings say it writes one)."""
        return self.KEEPS_TRANSCRIPT

    def preparation_failed(self, exc: Exception) -> str:
        """What the user reads when building or preflighting this agent raised something unforeseen."""
        return f"the agent ({self.type}) could not be prepared: {type(exc).__name__}: {exc}"

    @classmethod
    def from_config(cls, raw: "Mapping[str, Any] | AgentSpec | None") -> "AgentSpec":
        """The spec Config.agent describes (checked when scarbook.yaml was read; a value built in code is
        checked here, and a mistake is a ValueError in the words scarbook.yaml's would get)."""
        if isinstance(raw, AgentSpec):
            return raw
        data = dict(raw or {"type": "demo"})
        try:
            return msgspec.convert(data, agent_specs())
        except msgspec.ValidationError as exc:
            err = explain(exc, data, agent_specs(), Path())
            raise ValueError(f"{err.problem} — {err.fix}" if err.fix else err.problem) from None


# The words a mistake in a list setting gets (each type its own fix).
Argv = Annotated[tuple[str, ...], Meta(min_length=1, extra={"must": "must be a non-empty list of strings",
                                                            "fix": 'write argv: [python, agent.py, "{task}"]'})]
CommandEnv = Annotated[tuple[str, ...], Meta(extra={"must": "must be a list of variable names",
                                                    "fix": "write env: [PATH, HOME, ANTHROPIC_API_KEY]"})]
CliEnv = Annotated[tuple[str, ...], Meta(extra={"must": "must be a list of variable names", "fix": "write env: [HTTPS_PROXY]"})]
ClaudeCodeArgs = Annotated[tuple[str, ...], Meta(extra={"must": "must be a list of strings (extra claude-code arguments)",
                                                        "fix": "write args: [--model, claude-sonnet-4-5]"})]
CodexArgs = Annotated[tuple[str, ...], Meta(extra={"must": "must be a list of strings (extra codex arguments)",
                                                   "fix": "write args: [--full-auto, -m, gpt-5-codex]"})]
MaxOutput = Annotated[int, Meta(gt=0, extra={"must": "must be a positive whole number of bytes, got {value!r}",
                                             "fix": "write e.g. max_output_bytes: 1000000"})]


class DemoSpec(AgentSpec, tag="demo", frozen=True):
    """The offline stochastic demo agent (agents/demo.py), a real subprocess like any program agent."""

    KEEPS_TRANSCRIPT: ClassVar[bool] = True

    seed: int | str | None = None
    profile: str | None = None
    draws: Annotated[Literal["independent", "deck"] | None, Meta(extra={
        "must": "must be independent or deck, got {value!r}",
        "fix": "write draws: independent (each run drawn on its own) or deck (blocks of ten)"})] = None
    # seconds per run, set by the caller (the TUI's make_app); None: $SCARBOOK_DEMO_DELAY
    delay: Annotated[float | None, Meta(extra={"internal": "set by the program that runs the demo"})] = None

    def build(self, project_root: Path | None) -> "Agent":
        from scarbook.agents.command import CommandAgent

        # It needs the standard library only: run as a file, isolated and without site-packages (-I -S), it
        # starts in a quarter of the time `-m scarbook.agents.demo` takes (that imports scarbook.agents first).
        argv = [sys.executable, "-I", "-S", str(Path(__file__).with_name("demo.py"))]
        if self.seed is not None:
            argv += ["--seed", str(self.seed)]
        if self.profile:
            argv += ["--profile", str(self.profile)]
        if self.delay is not None:
            argv += ["--delay", str(self.delay)]
        if self.draws:
            argv += ["--draws", self.draws]
        label = "demo" + (f" ({self.profile})" if self.profile else "")
        return CommandAgent(argv, stdin=True, env_allow=["SCARBOOK_DEMO_DELAY", "SCARBOOK_DEMO_DRAWS"], label=label)


class CommandSpec(AgentSpec, tag="command", frozen=True):
    """Any program: argv with "{task}", or the task on stdin."""

    SPLIT: ClassVar[tuple[str, ...]] = ("argv",)
    TRANSCRIPT_HINT: ClassVar[str] = (" (or, if the agent writes $SCARBOOK_TRANSCRIPT itself, say so with `transcript: "
                                      "true` under agent:)")

    argv: Argv
    stdin: Annotated[bool | None, Meta(extra={"must": "must be true or false, got {value!r}",
                                              "fix": "write stdin: true"})] = None  # None: stdin when argv has no {task}
    env: CommandEnv = ()
    max_output_bytes: MaxOutput = DEFAULT_MAX_OUTPUT
    # the agent writes $SCARBOOK_TRANSCRIPT itself (trajectory checks may read it)
    transcript: Annotated[bool | None, Meta(extra={"must": "must be true or false, got {value!r}",
                                                   "fix": "write transcript: true"})] = None

    def transcript_kept(self) -> bool:
        return bool(self.transcript)

    def build(self, project_root: Path | None) -> "Agent":
        from scarbook.agents.command import CommandAgent

        return CommandAgent(self.resolved_argv(project_root), stdin=self.stdin, env_allow=list(self.env),
                            max_output_bytes=self.max_output_bytes, project_root=project_root,
                            label="command: " + " ".join(self.argv))

    def resolved_argv(self, project_root: Path | None) -> list[str]:
        """argv with `{root}` substituted and project-relative file arguments made absolute."""
        if project_root is None:
            return list(self.argv)
        root = str(Path(project_root).absolute())
        out = [a.replace(ROOT, root) for a in self.argv]
        for i in range(1, len(out)):
            out[i] = _project_file(out[i], root)
        return out


class PythonSpec(AgentSpec, tag="python", frozen=True):
    """A function in this process: run(task, cwd) -> final output."""

    SANDBOX: ClassVar[bool] = False

    function: Annotated[str, Meta(pattern=":", extra={"must": "must be 'module:function'",
                                                      "fix": "write function: my_agent.main:run"})]

    def build(self, project_root: Path | None) -> "Agent":
        from scarbook.agents.python import PythonAgent

        return PythonAgent(self.function, project_root)

    def preparation_failed(self, exc: Exception) -> str:  # its module runs code when imported
        module = self.function.partition(":")[0]
        return (f"agent.function {self.function!r}: importing {module!r} raised {type(exc).__name__}: {exc} "
                "— fix the module (it runs at import)")


class _CliSpec(AgentSpec, frozen=True):
    """A coding agent's CLI, headless (the presets): the user's extra arguments, variables passed through."""

    KEEPS_TRANSCRIPT: ClassVar[bool] = True
    NETWORK: ClassVar[bool] = True
    SPLIT: ClassVar[tuple[str, ...]] = ("args",)

    args: tuple[str, ...] = ()
    env: CliEnv = ()
    max_output_bytes: MaxOutput = DEFAULT_MAX_OUTPUT


class ClaudeCodeSpec(_CliSpec, tag="claude-code", frozen=True):
    """The Claude Code CLI (agents/claude_code.py)."""

    args: ClaudeCodeArgs = ()

    def build(self, project_root: Path | None) -> "Agent":
        from scarbook.agents.claude_code import ClaudeCodeAgent  # its module is loaded only when used

        return ClaudeCodeAgent(list(self.args), env=self.env, max_output_bytes=self.max_output_bytes,
                               project_root=project_root)


class CodexSpec(_CliSpec, tag="codex", frozen=True):
    """The OpenAI Codex CLI (agents/codex.py)."""

    args: CodexArgs = ()

    def build(self, project_root: Path | None) -> "Agent":
        from scarbook.agents.codex import CodexAgent  # its module is loaded only when used

        return CodexAgent(list(self.args), env=self.env, max_output_bytes=self.max_output_bytes,
                          project_root=project_root)


# The rows, in the order messages list them. Adding an agent type: its class above and its name here.
AGENT_KINDS: dict[str, type[AgentSpec]] = {
    str(k.__struct_config__.tag): k for k in (DemoSpec, CommandSpec, PythonSpec, ClaudeCodeSpec, CodexSpec)}


def agent_specs() -> Any:
    """The tagged union of every row AGENT_KINDS holds now (a test may add one)."""
    return _union(tuple(AGENT_KINDS.values()))


@functools.cache
def _union(rows: tuple[type[AgentSpec], ...]) -> Any:
    return typing.Union[rows]  # noqa: UP007 — built from a tuple at run time


def agent_settings(raw: Any, path: Path, line: int | None) -> dict[str, Any]:
    """scarbook.yaml's `agent:` checked against its type's row: the mapping as written (what the
    session's fingerprint hashes), its list settings written out (a string split, one left out empty);
    a mistake is a ConfigError naming the line and the fix. `agent: demo` is `agent: {type: demo}`."""
    data = raw if isinstance(raw, Mapping) else {"type": raw}
    kind = data.get("type")
    row = AGENT_KINDS.get(kind) if isinstance(kind, str) else None
    split = {k: shlex.split(data[k]) for k in (row.SPLIT if row else ()) if isinstance(data.get(k), str)}
    if split:
        data = _with_lines(data, {**data, **split})
    spec = convert(data, agent_specs(), path, line=line)
    lists = {f.name: list(getattr(spec, f.name)) for f in msgspec.structs.fields(spec) 
             if isinstance(getattr(spec, f.name), tuple)}
    return {**dict(data), **lists}


def _with_lines(old: Any, new: dict[str, Any]) -> Any:
    """`new` keeping the line numbers YAML gave `old` (scarbook.fs.yamlio's mappings know them)."""
    out = type(old)(new)
    for attr in ("lines", "line"):
        if hasattr(old, attr):
            setattr(out, attr, getattr(old, attr))
    return out


def keeps_transcript(spec: AgentSpec, *, recorded: bool = False) -> bool:
    """Whether every run of this agent leaves a transcript the trajectory checks can read: the session
    records its model calls (`record:`: the recorder writes one for every run), its type keeps one
    (demo, claude-code, codex), or a command agent says it writes $SCARBOOK_TRANSCRIPT (`transcript:
    true`). The session refuses trajectory checks before the first run otherwise."""
    return recorded or spec.transcript_kept()


def project_keeps_transcript(agent: object, record: object) -> bool:
    """keeps_transcript for scarbook.yaml's `agent:` and `record:` as config.Config holds them (lint and the
    editor ask it; an agent type this version cannot build is the session's error to say: True here)."""
    try:
        spec = AgentSpec.from_config(agent)  # type: ignore[arg-type]
    except ValueError:
        return True
    return keeps_transcript(spec, recorded=record is not None)


def _project_file(arg: str, root: str) -> str:
    if not arg or TASK in arg or arg.startswith("-") or os.path.isabs(arg):
        return arg
    candidate = os.path.join(root, arg)
    return candidate if os.path.isfile(candidate) else arg
