"""A file the agent named with terminal control characters ("\\x1b[0mout.txt") is shown with them escaped wherever a
workspace file's name is printed — history, `show`, the JSON and HTML reports — never as "out.txt", the name of
another file (run/causes: only_changed names it; the record's list of changed files holds it)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.only_changed_run import only_changed_run

AGENT = """\
open("\\x1b[0mout.txt", "w").write("x")
open("tmp.txt", "w").write("ok")
open("\\u202etxt.exe", "w").write("x")
"""
ESCAPED = ["\\x1b[0mout.txt", "tmp.txt", "\\u202etxt.exe"]  # as sorted: ESC, t, then U+202E
DETAIL = "changed outside the allowed list: created \\x1b[0mout.txt, \\u202etxt.exe"


def test_a_name_with_control_characters_is_shown_escaped_never_as_another_name(project, tmp_path: Path) -> None:
    """Before: history kept "out.txt" (the escape sequence dropped), and `show`, the reports and only_changed's
    detail said the agent had created out.txt."""
    run, reported = only_changed_run(project, AGENT, tmp_path / "r.json")
    assert (run.diff.created, run.checks[0].detail) == (ESCAPED, DETAIL)
    assert (reported["diff"]["created"], reported["checks"][0]["detail"]) == (ESCAPED, DETAIL)
    shown = project.cli("show", "c").output.splitlines()
    assert f"  [   fail] 1. only_changed: {DETAIL}" in shown
    assert "  diff: created \\x1b[0mout.txt, tmp.txt, \\u202etxt.exe" in shown
    assert project.cli("report", "--html", str(tmp_path / "r.html")).exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert all(f"<li>created: {name}</li>" in page for name in ESCAPED)
