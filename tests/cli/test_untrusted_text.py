"""Issue 25 (4): agent- and transcript-derived text reaches the terminal only through one terminal-safe
writer. Every command that prints such text is run against the same hostile strings, on a CI runner
(GITHUB_ACTIONS=true): no control sequence may reach the terminal, and no line may start with `::`
(a GitHub workflow command: `::error::`, `::add-mask::`, `::set-env`)."""

from __future__ import annotations

import json
import sys

import pytest

from scarbook.text import terminal_text

OSC52 = "\x1b]52;c;cHduZWQ=\x07"  # writes the clipboard
OSC0 = "\x1b]0;pwned-title\x07"  # sets the window title
RAW = "\x07\x08\r\x9b6n\x7f"  # bell, backspace, carriage return, C1 CSI (cursor report), DEL
HOSTILE = f"{OSC52}{OSC0}raw{RAW}bytes x\n::error::tr-pwned\n  ::add-mask::m ##[error]old-pwned"
FNAME = "f\n::error::fname-pwned"

# The agent: writes a transcript with the hostile strings in its task, a write and its final answer,
# creates a file whose name holds a newline, prints them, and fails its check (so `show` prints it all).
AGENT = f"""\
import json, os
H = {HOSTILE!r}
F = {FNAME!r}
open("tmp.txt", "w").write(H)
open(F, "w").write(H)
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as fh:
    for rec in ({{"type": "task", "text": "Task " + H}},
                {{"type": "tool_call", "id": "c1", "name": "write_file", "input": {{"path": F, "content": H}}}},
                {{"type": "tool_result", "id": "c1", "output": H, "is_error": False}},
                {{"type": "final", "text": H}}):
        fh.write(json.dumps(rec) + "\\n")
print(H)
"""


def assert_terminal_safe(text: str) -> None:
    assert "\x1b" not in text, repr(text)
    bad = sorted({hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f})
    assert not bad, f"control characters {bad} in {text!r}"
    starts = [line for line in text.split("\n") if line.strip().startswith("::")]
    assert not starts, f"workflow command lines {starts}"
    assert "##[" not in text


@pytest.fixture(params=["none", "sandbox"])  # the transcript and the workspace are the agent's in both
def hostile(project, monkeypatch, request):
    if request.param == "sandbox":
        from scarbook.agents.sandbox import require_sandbox
        from scarbook.errors import ScarbookError

        try:
            require_sandbox(project.root)
        except ScarbookError as exc:
            pytest.skip(f"bubblewrap cannot start here: {exc.message}")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', AGENT])}}}\ntimeout_s: 20\n"
                   f"isolation: {request.param}\n")
    project.case("c", "id: c\ntitle: hostile\ntask: Write tmp.txt\nchecks:\n"
                      "  - {type: contains, path: tmp.txt, text: never-there}\n")
    project.cli("eval", "--runs", "1", "-q")
    history = project.load().history
    info = history.sessions()[0]
    (run,) = history.runs(info.id)
    assert run.status == "fail" and run.transcript_path
    # Unconfined, the agent can write the history too: a label and a note of its own.
    doc_path = history.dir / info.id / "session.json"
    doc = json.loads(doc_path.read_text())
    doc["session"]["1"]["label"], doc["session"]["1"]["note"] = "L" + HOSTILE, "N" + HOSTILE
    doc_path.write_text(json.dumps(doc))
    return project, run.transcript_path


COMMANDS = {
    "import --list": lambda p, t: p.cli("import", t, "--list"),
    "import (draft) then list": lambda p, t: (p.cli("import", t, "--id", "pwned"), p.cli("list"))[1],
    "show": lambda p, t: p.cli("show", "c"),
    "report": lambda p, t: p.cli("report"),
    "sessions": lambda p, t: p.cli("sessions"),
}
# What each command must still show of the hostile text (neutralized, not dropped).
SHOWN = {
    "import --list": ["task: Task rawbytes x\n\\x3a:error::tr-pwned\n  \\x3a:add-mask::m \\x23#[error]old-pwned",
                      "file         file f\n\\x3a:error::fname-pwned (final content)"],
    "import (draft) then list": ["Task rawbytes x"],
    "show": ["\\x3a:error::tr-pwned"],
    "report": ["\\x3a:error::tr-pwned"],
    "sessions": ["Lraw\\x07\\x08"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_hostile_text_never_reaches_the_terminal_raw(hostile, command: str) -> None:
    project, transcript = hostile
    result = COMMANDS[command](project, transcript)
    assert_terminal_safe(result.output)
    for shown in SHOWN[command]:
        assert shown in result.output, result.output


def test_the_writer_keeps_colour_and_leaves_ordinary_text_alone() -> None:
    assert terminal_text("\x1b[32mPASS\x1b[0m — a::b", ci=True) == "\x1b[32mPASS\x1b[0m — a::b"
    # the CLI's writer drops a text's colour too and keeps only its own (tests/cli/test_one_writer.py)
    assert terminal_text("\x1b[32mPASS\x1b[0m — a::b", keep_colour=False) == "PASS — a::b"
    assert terminal_text("\x1b[8mhidden\x1b[0m") == "hidden\x1b[0m"  # conceal is not colour
    assert terminal_text("x\n ::set-env name=A::1", ci=False) == "x\n ::set-env name=A::1"  # not a CI log
    assert terminal_text("x\n ::set-env name=A::1", ci=True) == "x\n \\x3a:set-env name=A::1"
