"""Reports a person reads in a browser or on a CI page show a bidirectional control the agent wrote as its
escape, as the CLI's writer does (tests/cli/test_one_writer.py): a file the agent named "\\u202etxt.exe" read
"exe.txt" in the HTML report, the GitHub step summary and junit.xml, which put the control in raw. A real
agent process, unconfined and sandboxed."""

from __future__ import annotations

import pytest

from tests.helpers.hostile_project import inline_agent

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
AGENT = """
open("out.txt", "w").write("x")
open("\\u202etxt.exe", "w").write("x")
"""


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_reports_show_a_bidi_control_escaped(project, isolation, monkeypatch) -> None:
    inline_agent(project, AGENT, isolation, "  - {type: only_changed, paths: [out.txt]}\n")
    summary, junit, page = (project.root / n for n in ("summary.md", "junit.xml", "report.html"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    project.cli("eval", "--runs", "1", "-q", "--junit", str(junit))
    project.cli("report", "--html", str(page))
    for path, shown in ((summary, "created \\\\u202etxt\\.exe"), (junit, "created \\u202etxt.exe"),
                        (page, "created \\u202etxt.exe")):
        text = path.read_text(encoding="utf-8")
        assert not any(c in text for c in BIDI), (path.name, [hex(ord(c)) for c in text if c in BIDI])
        assert shown in text, (path.name, text)
