"""Text an agent controls never acts on the terminal or breaks a report: terminal escapes are dropped,
other control characters shown as `\\xNN`, in stored reasons, progress lines, `show` and junit.xml."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest

from scarbook.text import clean_text

HOSTILE = r'''
import sys
sys.stdout.write("answer \x1b[2J\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ \x07\x00 done\n")
sys.stderr.write("\x1b]0;pwned\x07\x1b[31mboom\x00\x1b[0m\n")
sys.exit(3)
'''


@pytest.mark.parametrize("raw, clean", [
    ("plain text\nnext line\ttab", "plain text\nnext line\ttab"),
    ("\x1b[31mred\x1b[0m", "red"),
    ("title \x1b]0;pwned\x07after", "title after"),
    ("link \x1b]8;;http://e\x1b\\txt\x1b]8;;\x1b\\ end", "link txt end"),
    ("bell\x07 nul\x00 ff\x0c del\x7f", "bell\\x07 nul\\x00 ff\\x0c del\\x7f"),
    ("8-bit csi \x9b31mred", "8-bit csi red"),
    ("crlf\r\nlone\rcr", "crlf\nlone\\x0dcr"),
    ("unterminated \x1b]0;title", "unterminated "),
    ("surrogate \ud800 nonchar \uffff", "surrogate \\ud800 nonchar \\uffff"),
])
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_clean_text_one_line() -> None:
    assert clean_text("a\n\n\tb\x1b[1m c", one_line=True) == "a b c"


def test_a_hostile_agents_escapes_reach_no_terminal_and_no_report(project) -> None:
    agent = project.root / "hostile.py"
    agent.write_text(HOSTILE)
    # isolation: none — its failure reason as unconfined (no "[in the sandbox: …]" suffix)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}]}}\nisolation: none\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: nope}]\n")
    junit = project.root / "junit.xml"
    result = project.cli("eval", "--runs", "1", "--junit", str(junit))
    assert result.exit_code == 1
    reason = "agent exited with code 3: boom\\x00"
    assert f"[1/1] c #1: fail — {reason}\n" in result.stderr
    for text in (result.stdout, result.stderr):
        assert "\x1b" not in text and "\x07" not in text and "\x00" not in text

    ET.parse(junit)  # well-formed
    xml = junit.read_text()
    assert reason in xml and "\x1b" not in xml

    shown = project.cli("show", "c")
    assert f"run 1: FAIL — {reason}" in shown.stdout
    assert "output: answer link \\x07\\x00 done" in shown.stdout
    assert "\x1b" not in shown.stdout and "\x00" not in shown.stdout
