"""Issue 25 (4), the TUI half: every widget that shows agent- or transcript-derived text shows it with
its control sequences removed (CSI, OSC, DCS, C0/C1 but tab and newline) and its Rich/Textual markup
as typed — never interpreted, never a MarkupError.

A real agent process writes the hostile strings into a file name, a file's content, stdout, stderr, its
transcript (task, tool call, result, final answer) and, unconfined, the session's label. The
real app is then driven by keys through the library, the run review (run detail with its diff), its
timeline, the import screen opened on the run's transcript, and the sessions list and one session; on each, the text
of every widget (and what the screen draws) is checked."""

from __future__ import annotations

import json
import sys

import pytest
from textual.widgets import DataTable, OptionList
from textual.widgets._toast import Toast

from scarbook.tui.app import make_app
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.screens.flakes import FlakeScreen
from scarbook.tui.screens.import_scar import ImportScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.tui_fixtures import editor_ready, library_loaded, review_loaded, wait_until
from tests.helpers.widget_texts import widget_texts

OSC52 = "\x1b]52;c;cHduZWQ=\x07"  # writes the clipboard
OSC0 = "\x1b]0;pwned-title\x07"  # sets the window title
CSI = "\x1b[2J\x1b[31m"  # clears the screen, turns the text red
DCS = "\x1bP1$r0m\x1b\\"  # a device control string
C1 = "\x9b6n\x9d0;c1-title\x9c\x85"  # 8-bit CSI (cursor report), 8-bit OSC, NEL
C0 = "\x07\x08\r\x7f\x00"  # bell, backspace, carriage return, DEL, NUL
MARKUP = "[bold red]MARKUP[/] [/] [link=https://evil.example]L[/link] [@click=app.quit]Q[/]"
HOSTILE = f"{OSC52}{OSC0}{CSI}{DCS}{C1}raw{C0}bytes\n{MARKUP}\n::error::pwned"
FNAME = f"f{OSC0}\n[bold red]name.txt"  # no [/]: a slash would make it a path

AGENT = f"""\
import json, os, sys
H, F = {HOSTILE!r}, {FNAME!r}
for name in ("tmp.txt", F):  # a file's content, and a file name
    open(name, "w").write(H)
said = [{{"type": "task", "text": "Task " + H}},
        {{"type": "tool_call", "id": "c1", "name": "write_file", "input": {{"path": F, "content": H}}}},
        {{"type": "tool_result", "id": "c1", "output": H, "is_error": False}}, {{"type": "final", "text": H}}]
open(os.environ["SCARBOOK_TRANSCRIPT"], "a").write("".join(json.dumps(r) + "\\n" for r in said))
print(H)
print(H, file=sys.stderr)
"""


def bad_characters(text: str) -> list[str]:
    return sorted({hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f})


def all_texts(screen) -> dict[str, str]:
    """The text each widget of `screen` shows (whole, not only its visible part), and the screen as drawn."""
    out = widget_texts(screen)
    out["(the screen as drawn)"] = "\n".join(strip.text for strip in screen._compositor.render_strips())
    return out


def assert_safe(screen, must_show: list[str]) -> None:
    """No control character in any widget's text; markup is shown as typed wherever its text is."""
    texts = all_texts(screen)
    for name, text in texts.items():
        assert not bad_characters(text), f"{type(screen).__name__} {name}: {bad_characters(text)} in {text!r}"
        if "MARKUP" in text:  # a cut label may end before it; where it is, it is the literal text
            assert "[bold red]MARKUP[/]" in text, f"{type(screen).__name__} {name}: markup interpreted: {text!r}"
    everything = "\n".join(texts.values())
    for shown in must_show:
        assert shown in everything, f"{type(screen).__name__} does not show {shown!r}"


@pytest.fixture
def hostile_run(project):
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', AGENT])}}}\ntimeout_s: 20\n"
                   "runs: 1\n")
    project.case("c", "id: c\ntitle: hostile\ntask: Write tmp.txt\nchecks:\n"
                      "  - {type: contains, path: tmp.txt, text: never-there}\n")
    assert project.cli("eval", "-q").exit_code == 1
    history = project.load().history
    info = history.sessions()[0]
    (run,) = history.runs(info.id)
    assert run.status == "fail" and run.transcript_path and run.workspace_kept
    doc_path = history.dir / info.id / "session.json"  # unconfined, the agent can write the history too
    doc = json.loads(doc_path.read_text())
    doc["session"]["1"]["label"] = "L" + HOSTILE
    doc_path.write_text(json.dumps(doc))
    return project


async def _review(pilot):
    await pilot.press("escape")  # from wherever the step before left it: the library, then v
    await library_loaded(pilot)
    await pilot.press("v")  # the run review: the run's detail, its output, stderr and the diff
    review = await review_loaded(pilot)
    await wait_until(pilot, lambda: "final output" in "\n".join(all_texts(review).values()), what="the detail")


async def _timeline(pilot):
    await pilot.press("T")  # the run's transcript as a timeline
    await wait_until(pilot, lambda: "Task" in all_texts(pilot.app.screen)["Timeline#run-timeline"],
                     what="the run's timeline")


async def _import(pilot):
    await pilot.press("t")  # the import screen on the run's transcript
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, ImportScreen) and app.screen.transcript is not None,
                     what="the import screen to load the run's transcript")
    await pilot.pause()
    for _ in range(app.screen.query_one("#candidates", OptionList).option_count - 1):
        assert_safe(app.screen, [])  # each candidate's preview in turn
        await pilot.press("down")


async def _draft(pilot):
    await pilot.press("escape")  # back to the review: c drafts a new scar from the run, in the editor
    await review_loaded(pilot)
    await pilot.press("c")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor on the draft")


async def _trends(pilot):
    for _ in range(4):  # editor (its unsaved draft left: y), review, then the library
        if isinstance(pilot.app.screen, LibraryScreen):
            break
        await pilot.press("y" if isinstance(pilot.app.screen, ConfirmScreen) else "escape")
        await pilot.pause(0.1)
    await library_loaded(pilot)
    await pilot.press("t")  # cases × sessions, each session's column headed by its label
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, FlakeScreen), what="the trends grid")
    await pilot.pause()


async def _sessions(pilot):
    await pilot.press("escape")
    await library_loaded(pilot)
    await pilot.press("h")  # the sessions, with the label the agent wrote
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="the sessions")
    await pilot.pause()


async def _session(pilot):
    sessions = pilot.app.screen
    await pilot.press("enter")  # one session: its label in the title
    await wait_until(pilot, lambda: pilot.app.screen is not sessions, what="the session's screen")
    await pilot.pause()


RAW_SHOWN = "raw\\x07\\x08"  # the C0 bytes as visible escapes; the sequences before them are gone
# (screen, how to get there by keys from the step before, text it must show — neutralized, not dropped)
SCREENS = [
    ("library: rows and notes", None, ["hostile"]),
    ("run review: detail, output, stderr, diff", _review, [MARKUP, "f\\x1b]0;pwned-title\\x07\\x0a[bold red]name.txt",
                                                          RAW_SHOWN]),
    ("run review: timeline", _timeline, ["Task ", MARKUP]),
    ("import screen: summary, candidates, preview, seeds, timeline", _import, [MARKUP, "[bold red]name.txt"]),
    ("new scar from the run: the editor", _draft, ["draft from c run 1"]),
    ("trends: cases x sessions", _trends, ["L"]),
    ("sessions", _sessions, ["L\\x85" + RAW_SHOWN]),
    ("one session", _session, ["L\\x85" + RAW_SHOWN]),
]


async def test_hostile_text_is_shown_inert_on_every_screen(hostile_run):
    app = make_app(hostile_run.root)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:  # toasts are widgets to check too
        await library_loaded(pilot)
        for name, go, must_show in SCREENS:
            if go is not None:
                await go(pilot)
            try:
                assert_safe(app.screen, must_show)
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from None


async def test_an_error_quoting_a_file_name_is_notified_as_text_not_markup(project):
    """A notification that quotes a path or a file's text (here: an invalid case in a folder whose name
    looks like markup) shows it as typed; Textual would otherwise read it as markup."""
    project.case("ok", "id: ok\ntask: t\nchecks:\n  - {type: file_exists, path: a}\n")
    folder = project.cases_dir / "[bold]bad"
    folder.mkdir()
    (folder / "case.yaml").write_text("id: bad\ntask: t\nchecks:\n  - {type: nope}\n")
    app = make_app(project.root)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        library = await library_loaded(pilot)
        library.query_one("#cases", DataTable).move_cursor(row=[r.key for r in library.shown].index("[bold]bad"))
        await pilot.press("e")  # edit: the case file is invalid, a notification says why
        await wait_until(pilot, lambda: app.screen.query(Toast), what="the notification")
        await pilot.pause()
        assert_safe(app.screen, [f"{folder / 'case.yaml'}:1: id 'bad' differs from its folder name '[bold]bad'"])
