"""Issue 33.18: every line the CLI prints goes through the one terminal-safe writer (cli/common.say).

A case title is text from outside (a shared case.yaml; an imported agent transcript's task): `scarbook
case trash` printed its OSC (window title) and CSI colour raw through a direct click.echo. Now no
escape a text brings reaches the terminal — colour neither: the CLI's own colours travel as marks only
the writer turns back into colour — and bidirectional controls (U+202E, which shows `exe.png` for
`gnp.exe`) are escaped. The source test reads cli/ and finds no other way to print."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from click.testing import CliRunner

import scarbook.cli
from scarbook.cli import main

CLI = Path(scarbook.cli.__file__).parent
OSC0 = "\x1b]0;pwned-title\x07"
RED = "\x1b[31m"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def _cli(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False, color=True)  # as on a tty


def _no_raw(text: str, *, own_colour: bool = False) -> None:
    """No escape in `text` (with `own_colour`, none but colour: a command's own, e.g. list's rates), no
    bidirectional control."""
    if own_colour:
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "\x1b" not in text, repr(text)
    assert not [c for c in text if c in BIDI], repr(text)


def test_case_trash_prints_a_hostile_title_escaped(project) -> None:
    # YAML's escapes: \e is ESC, \a BEL — the title holds OSC 0 (the window's title) and CSI 31m (red)
    project.case("c", 'id: c\ntitle: "\\e]0;pwned-title\\a\\e[31mlooks fine\\u202egnp.exe"\ntask: t\n'
                      "checks:\n  - {type: file_exists, path: a.txt}\n")
    assert _cli(project.root, "case", "rm", "c").exit_code == 0
    out = _cli(project.root, "case", "trash").output
    _no_raw(out)
    assert "looks fine\\u202egnp.exe" in out, out


def test_an_imported_transcripts_bidi_controls_reach_no_command_raw(project) -> None:
    agent = project.root / "agent.py"  # a hostile agent: its transcript's task carries the override
    agent.write_text(textwrap_agent())
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}], "
                   "transcript: true}\nruns: 1\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: never.txt}\n")
    assert _cli(project.root, "eval", "-q").exit_code == 1
    (run,) = project.load().history.runs(project.load().history.sessions()[0].id)
    assert _cli(project.root, "import", run.transcript_path, "--id", "drafted").exit_code == 0
    for args in (("list",), ("case", "rm", "drafted"), ("case", "trash"), ("show", "c")):
        result = _cli(project.root, *args)
        _no_raw(result.output, own_colour=True)
    assert "Fix \\u202etxt.exe the build" in _cli(project.root, "case", "trash").output


def textwrap_agent() -> str:
    return ("import json, os\n"
            "with open(os.environ['SCARBOOK_TRANSCRIPT'], 'a') as fh:\n"
            f"    fh.write(json.dumps({{'type': 'task', 'text': 'Fix {RLO}txt.exe the build'}}) + '\\n')\n"
            f"    fh.write(json.dumps({{'type': 'final', 'text': 'done {RLO}!'}}) + '\\n')\n"
            f"print('done {RLO}{RED}!')\n")


def test_the_clis_own_colour_stays() -> None:
    from scarbook.cli.common import safe_text, style

    assert safe_text(style("PASS", fg="green") + f" {RED}agent red{OSC0}") == "\x1b[32mPASS\x1b[0m agent red"
    assert safe_text("\ue000cafe31\ue001forged") == "\ue000cafe31\ue001forged"  # a mark without the nonce is text


# Ways of printing that are not the writer. click.echo is said inside say (and say_workflow_command: its
# `::` kept, for the annotations scarbook itself makes); what prints another
# way (a prompt, the progress bar's console) hands it safe_text(...) or a plain string.
DIRECT = {("click", "echo"), ("click", "secho"), ("click", "style"), ("sys.stdout", "write"), ("sys.stderr", "write")}
GUARDED = {("click", "confirm"), ("click", "prompt")}


def _name(node: ast.AST) -> str:
    return ast.unparse(node)


def test_no_cli_module_prints_around_the_writer() -> None:
    found = []
    for path in sorted(CLI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        writer = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in ("say", "say_workflow_command", "style")
                  and path.name == "common.py" for n in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or id(node) in writer:
                continue
            func = node.func
            where = f"{path.relative_to(CLI.parent.parent)}:{node.lineno}: {_name(func)}"
            if isinstance(func, ast.Name) and func.id == "print":
                found.append(where)
            elif isinstance(func, ast.Attribute):
                pair = (_name(func.value), func.attr)
                first = node.args[0] if node.args else None
                safe = isinstance(first, ast.Constant) or (
                    isinstance(first, ast.Call) and _name(first.func) == "safe_text")
                if pair in DIRECT or (func.attr == "print" and not safe) or (pair in GUARDED and not safe):
                    found.append(where)
    assert found == [], "print through cli/common.say (or hand safe_text(...) to what prints):\n" + "\n".join(found)
