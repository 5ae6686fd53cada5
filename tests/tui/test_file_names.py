"""The run review shows a file the agent named with terminal control characters with them escaped
("\\x1b[0mout.txt"), in its checks and its workspace diff, never as "out.txt" — on a terminal of 80x24 and a wide one."""

from __future__ import annotations

import json
import sys

import pytest
from textual.widgets import Static

from scarbook.tui.app import make_app
from tests.helpers.tui_fixtures import library_loaded, review_loaded, wait_until

AGENT = 'open("\\x1b[0mout.txt", "w").write("x")\nopen("tmp.txt", "w").write("ok")\n'


@pytest.fixture
def evaluated(project):
    """A session of one run whose agent created "\x1b[0mout.txt" beside the allowed tmp.txt (the run fails)."""
    (project.root / "agent.py").write_text(AGENT)
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, str(project.root / 'agent.py')])}}}\n"
                   "isolation: none\nruns: 1\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: only_changed, paths: [tmp.txt]}]\n")
    assert project.cli("eval", "-q").exit_code == 1
    return project


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "wide"])
async def test_the_review_shows_a_name_with_control_characters_escaped(evaluated, size) -> None:
    """Before: the review listed the created file as out.txt (history had dropped the escape sequence)."""
    app = make_app(evaluated.root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("v")  # the run review: the run's checks and its workspace diff
        review = await review_loaded(pilot)

        def shown() -> list[str]:
            return [line for w in review.query(Static) for line in str(w.render()).splitlines()]

        await wait_until(pilot, lambda: "workspace diff  (− seed, + workspace)" in shown(), what="the run's detail")
        lines = shown()
        assert " ✗ 1. only_changed: changed outside the allowed list: created \\x1b[0mout.txt" in lines
        assert " created  \\x1b[0mout.txt" in lines  # the diff's heading of the file
        assert " created  out.txt" not in lines


# An agent that makes, beside the allowed tmp.txt: a file named with a terminal escape, one in a folder so named
# holding a bidirectional control, one whose name is not UTF-8, and a link so named to a file outside its workspace.
AGENT_MANY = """\
import os, sys
open("\\x1b[0mout.txt", "w").write("x\\n")
open("tmp.txt", "w").write("ok")
os.mkdir("d\\x1b[1m")
open("d\\x1b[1m/in\\u202e.txt", "w").write("inner\\n")
open(b"bad\\xff.txt", "wb").write(b"not utf-8 name\\n")
os.symlink(sys.argv[1], "\\x1b[0mlink")
"""


@pytest.fixture
def evaluated_many(project, tmp_path):
    """A failed run whose kept workspace holds agent-made names of every kind escape_name writes."""
    secret = tmp_path / "outside.txt"
    secret.write_text("SECRET\n")
    (project.root / "agent.py").write_text(AGENT_MANY)
    argv = [sys.executable, str(project.root / "agent.py"), str(secret)]
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\nisolation: none\nruns: 1\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: only_changed, paths: [tmp.txt]}]\n")
    assert project.cli("eval", "-q").exit_code == 1
    return project


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "wide"])
async def test_the_review_diffs_the_file_an_escaped_name_stands_for(evaluated_many, size) -> None:
    """The file diff reads the file on disk whose name, escaped, is the one shown — never a link's target.
    Before, every such file said "(not shown: path '\\\\x1b[0mout.txt' uses backslashes; write it with '/')":
    the escaped name was taken for the file's."""
    app = make_app(evaluated_many.root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("v")
        review = await review_loaded(pilot)

        def shown() -> list[str]:
            return [line for w in review.query(Static) for line in str(w.render()).splitlines()]

        await wait_until(pilot, lambda: "workspace diff  (− seed, + workspace)" in shown(), what="the run's detail")
        lines = shown()

        def under(heading: str) -> str:
            return lines[lines.index(heading) + 1]

        assert under(" created  \\x1b[0mout.txt") == "   +x"
        assert under(" created  d\\x1b[1m/in\\u202e.txt") == "   +inner"
        assert under(" created  bad\\udcff.txt") == "   +not utf-8 name"
        assert under(" created  \\x1b[0mlink") == "   (not shown: \\x1b[0mlink is a symlink)"
        assert not any("SECRET" in line or "backslashes" in line for line in lines)
