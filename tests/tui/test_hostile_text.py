"""The TUI against hostile strings (README: Threat model): what an agent under test makes — its output and stderr,
the files it writes (names and contents), its transcript, the judge's reasons quoting its artifact — and what an
incident log puts in a case (title, task, rubric items) is shown on every screen as the characters it is.

A real agent process prints and writes Rich/Textual markup (a colour, a link, action links `[@click=app.quit]`),
terminal escape sequences (clear screen, OSC 52 clipboard write, an OSC 8 hyperlink), C0/C1 controls and NUL,
bidirectional overrides and zero-width characters, a 100,000-character line and bytes that are not UTF-8, into
files named `[red]x[/]` and with an ESC in their name. The real app, driven by keys at 80x24 and wide, then shows
each screen; on each, every widget's text and every segment drawn are read: no control character or bidi control
is left (they are written as visible escapes, as the CLI's writer does), no text is a link or an action, the
markup is shown as typed, the app is still running and every drawn line is the terminal's width."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from click.testing import CliRunner
from textual.widgets import Input, OptionList

from scarbook.cases.io import load_case
from scarbook.cli import main
from scarbook.tui.app import make_app
from scarbook.tui.screens.calibrate import CalibrateScreen
from scarbook.tui.screens.import_scar import ImportScreen
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401
from tests.helpers.tui_fixtures import (
    editor_ready,
    library_loaded,
    review_loaded,
    save_done,
    screen_text,
    wait_until,
)
from tests.helpers.widget_texts import widget_texts

ACTIONS = "[@click=app.quit]Q[/] [@click=app.action_delete]D[/]"
MARKUP = f"[bold red]x[/] [link=https://evil.example]click[/link] {ACTIONS}"
ESCAPES = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]8;;https://evil.example\x1b\\osc8\x1b]8;;\x1b\\"
CONTROLS = "\x00\x01\x07\x08\r\x7f\x85\x9b"
BIDI = "\u202etxt.exe \u200b\u200d"  # an override (shown "exe.txt") and two zero-width characters
HOSTILE = f"{MARKUP} {ESCAPES}{CONTROLS} {BIDI}"
SIZES = pytest.mark.parametrize("size", [(80, 24), (180, 50)], ids=["80x24", "wide"])

AGENT = f"""\
import json, os, sys
H = {HOSTILE!r}
LONG = "L" * 100_000
open("tmp.txt", "w").write(H + "\\n" + LONG + "\\n")
open("j.txt", "w").write(H.replace("\\x00", ""))  # the judged artifact: text (a NUL makes it binary)
os.mkdir("[red]x[")
open("[red]x[/]", "w").write(H)
open("e\\x1b[31mvil\\u202e.txt", "w").write(H)
open("bad.txt", "wb").write(b"ok \\xff\\xfe\\xc3( " + H.encode())
said = [{{"type": "task", "text": "Task " + H}},
        {{"type": "tool_call", "id": "c1", "name": "tool" + H, "input": {{"path": H, "content": H}}}},
        {{"type": "tool_result", "id": "c1", "output": H, "is_error": False}}, {{"type": "final", "text": H}}]
open(os.environ["SCARBOOK_TRANSCRIPT"], "a").write("".join(json.dumps(r) + "\\n" for r in said))
print(H)
print(LONG)
print(H, file=sys.stderr)
"""

# Every C0 control but newline and tab, DEL and C1, and the bidirectional controls the CLI's writer escapes.
BAD = ({*range(0x20)} - {0x09, 0x0a}) | {*range(0x7f, 0xa0)} | {0x061c, 0x200e, 0x200f, *range(0x202a, 0x202f),
                                                                *range(0x2066, 0x206a)}


def bad_characters(text: str) -> list[str]:
    return sorted({hex(ord(c)) for c in text if ord(c) in BAD})


def assert_inert(app, where: str, shows: tuple[str, ...] = ()) -> None:
    """What `app` draws now and what its screen's widgets hold: no control character, no bidi control, no link or
    action made of the agent's text, every line the terminal's width; each of `shows` is somewhere, as typed."""
    assert app.is_running, f"{where}: the app has quit"
    problems = []
    texts = widget_texts(app.screen)
    for name, text in texts.items():
        if bad_characters(text):
            problems.append(f"{name} holds {bad_characters(text)}: {text[:160]!r}")
    width = app.size.width
    drawn = []
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        drawn.append("".join(seg.text for seg in strip))
        if strip.cell_length != width:
            problems.append(f"line {y} is {strip.cell_length} cells wide, not {width}")
        for seg in strip:
            if seg.style and (seg.style.link or "@click" in (seg.style.meta or {})):
                problems.append(f"line {y}: {seg.text!r} is a link or an action: {seg.style.link or seg.style.meta}")
            if bad_characters(seg.text):
                problems.append(f"line {y} draws {bad_characters(seg.text)}: {seg.text[:80]!r}")
    everything = "\n".join([*texts.values(), *drawn])
    problems += [f"does not show {s!r}" for s in shows if s not in everything]
    assert not problems, f"{where} ({type(app.screen).__name__}):\n" + "\n".join(problems)


@pytest.fixture
def hostile(tmp_path, judge_server, monkeypatch):
    """A project whose agent makes the hostile strings and whose cases hold them (as an imported incident's
    would): c fails a cheap check quoting tmp.txt, j is graded by the judge, which quotes the artifact back."""
    root = tmp_path / "proj"
    (root / "agent.py").parent.mkdir()
    (root / "agent.py").write_text(AGENT)
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent: {{type: command, argv: {json.dumps([sys.executable, str(root / 'agent.py')])}}}
        isolation: none
        runs: 1
        concurrency: 1
        timeout_s: 30
        judge: {{model: m, base_url: {judge_server.url}, max_retries: 1, timeout_s: {JUDGE_TIMEOUT_S}}}
        gate: {{mode: point}}
        """))
    cases = {"c": [{"type": "contains", "path": "tmp.txt", "text": "never-there"}],
             "j": [{"type": "llm_judge", "artifact": "j.txt", "rubric": ["item " + HOSTILE]}]}
    for cid, checks in cases.items():
        (root / "cases" / cid).mkdir(parents=True)
        (root / "cases" / cid / "case.yaml").write_text(json.dumps(
            {"id": cid, "title": "T " + HOSTILE, "task": "task " + HOSTILE, "checks": checks,
             "scar": {"what_went_wrong": "w " + HOSTILE, "family": "fam"}}))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-hostile")
    judge_server.default = tool_reply([("FAIL", "reason " + HOSTILE)])
    return root


@pytest.fixture
def evaluated(hostile):
    """One session of both cases, run by the CLI (a sync fixture: `scarbook eval` runs its own event loop)."""
    result = CliRunner().invoke(main, ["-C", str(hostile), "eval", "-q"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return hostile


@SIZES
async def test_calibrate_shows_the_rubric_item_artifact_and_judges_reason_as_text(evaluated, size):
    """Before: the disagreements table put the rubric item, the artifact's start and the judge's reason into a Rich
    table as markup — `[@click=app.quit]Q[/]` in the judge's reason was a clickable "Q" that quit the app."""
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        screen = CalibrateScreen(sample=5)
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.loaded, what="the judged item")
        await pilot.pause()
        assert_inert(app, "grading", shows=("[bold red]x[/]",))
        await pilot.press("p")  # the judge said FAIL: one disagreement, listed with the judge's reason
        await wait_until(pilot, lambda: "│ reason" in screen_text(app), what="the report's disagreement painted")
        assert_inert(app, "the report", shows=("[bold", "reason"))


@SIZES
async def test_the_library_shows_a_cases_title_and_task_as_text(evaluated, size):
    """Before: the library's detail line drew the case's task raw — ESC [2J and OSC 52 went to the terminal, and so
    did NUL, DEL, C1 controls and U+202E; a wide title column drew the title's the same way."""
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        assert_inert(app, "the library on case c", shows=("task: task [bold red]x[/]", "T [bold"))
        await pilot.press("down")  # case j: its latest run failed on the judge's word
        await pilot.pause()
        assert_inert(app, "the library on case j", shows=("task: task [bold red]x[/]",))


@SIZES
async def test_the_run_review_its_filters_diff_and_timeline_show_the_agents_text_inert(evaluated, size):
    """The run review of case c: the run's detail (check reason quoting tmp.txt, output with its 100,000-character
    line, stderr, the workspace diff with files named `[red]x[/]`, with an ESC and U+202E, and one not UTF-8), each
    status filter, the transcript's timeline and its tool call opened. Before: U+202E was drawn raw in the check's
    quote, the diff and the timeline (a name reading "exe.txt" for "txt.exe")."""
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("v")
        review = await review_loaded(pilot)
        await wait_until(pilot, lambda: "workspace diff" in widget_texts(review).get("Static#run-body", ""),
                         what="the run's detail")
        assert_inert(app, "the run's detail", shows=(
            "[bold red]x[/] [link=https://evil.example]click[/link]", "created  [red]x[/]",
            "created  e\\x1b[31mvil\\u202e.txt", "bad.txt", "\\u202etxt.exe", ACTIONS))
        for _ in range(6):
            await pilot.press("s")  # each filter in turn: failed, fail, error, pass, causes, back to all
            await pilot.pause()
            assert_inert(app, f"the review's filter {review.filter}")
        await pilot.press("T")  # the run's transcript as a timeline
        await wait_until(pilot, lambda: "Task" in widget_texts(review).get("Timeline#run-timeline", ""),
                         what="the timeline")
        assert_inert(app, "the timeline", shows=("Task [bold red]x[/]", ACTIONS))
        await pilot.press("tab", "down", "enter")  # the tool call, opened: its name and inputs
        await pilot.pause()
        assert_inert(app, "the tool call opened", shows=("tool[bold red]x[/]",))


@SIZES
async def test_the_import_screen_on_the_runs_transcript_shows_it_inert(evaluated, size):
    """t in the run review opens the import screen on the run's transcript: its summary, each candidate artifact's
    preview, the seed files and the timeline. Before: U+202E was drawn raw in the previews and the timeline."""
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("v")
        await review_loaded(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, ImportScreen) and app.screen.transcript is not None,
                         what="the import screen on the run's transcript")
        await pilot.pause()
        candidates = app.screen.query_one("#candidates", OptionList)
        assert candidates.option_count >= 2
        for n in range(candidates.option_count):
            assert_inert(app, f"the import screen, candidate {n + 1}", shows=("[bold red]x[/]",))
            await pilot.press("down")
            await pilot.pause()


@SIZES
async def test_the_editor_shows_an_incidents_controls_escaped_and_saves_them_unchanged(evaluated, size):
    """The editor on case c, whose title, task and what-went-wrong hold the hostile strings. Before: its Inputs and
    TextArea drew them raw — ESC [2J, OSC 52 and NUL reached the terminal. Now each shows them as escapes
    (`\\x1b[2J`), and a field left as shown saves the case's own text: nothing is lost (an edited field saves what it
    shows)."""
    case_yaml = evaluated / "cases" / "c" / "case.yaml"
    before = load_case(case_yaml.parent)
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await pilot.pause()
        assert_inert(app, "the editor", shows=("T [bold red]x[/]", "task [bold red]x[/]", "\\x1b[2J\\x1b]52;c;cHduZWQ=",
                                               "\\x00\\x01\\x07\\x08\\x0d\\x7f\\x85\\x9b \\u202etxt.exe"))
        assert not app.screen.dirty  # what it shows is the case as it is
        app.screen.query_one("#scar-family", Input).focus()
        await pilot.press("end", "2")  # an edit elsewhere, then a save: the hostile fields keep their own text
        await pilot.press("ctrl+s")
        await save_done(pilot)
    after = load_case(case_yaml.parent)
    assert (after.title, after.task, after.scar.what_went_wrong, after.scar.family) == \
        (before.title, before.task, before.scar.what_went_wrong, "fam2")
    assert "\x1b[2J" in after.task
