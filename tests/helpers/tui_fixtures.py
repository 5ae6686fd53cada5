"""Shared fixtures and helpers for the TUI tests: a copy of the bundled project in tmp_path,
the demo agent at full speed, and small waits on real app state (no sleeps-and-hope)."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

SIZE = (140, 45)


@pytest.fixture
def fast_demo(monkeypatch):
    """The demo agent reads SCARBOOK_DEMO_DELAY; 0 makes a run take milliseconds."""
    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")


@pytest.fixture
def project_root(tmp_path: Path, fast_demo) -> Path:
    """A copy of the bundled scar collection and scarbook.yaml."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copytree(REPO / "cases", root / "cases")
    shutil.copy(REPO / "scarbook.yaml", root / "scarbook.yaml")
    return root


def copy_project(src: Path, dest: Path, agent_seed=None) -> Path:
    shutil.copytree(src / "cases", dest / "cases")
    text = (src / "scarbook.yaml").read_text()
    if agent_seed is not None:
        text = text.replace("agent:\n  type: demo\n", f"agent:\n  type: demo\n  seed: {agent_seed}\n")
        assert f"seed: {agent_seed}" in text
    (dest / "scarbook.yaml").write_text(text)
    return dest


JUDGED_CASE = """\
id: judged-summary
title: Summary claimed tests passed
task: Summarise the test log in summary.md
checks:
  - {type: file_exists, path: summary.md}
  - type: llm_judge
    artifact: summary.md
    rubric:
      - the summary names the failing test
      - the summary does not claim all tests passed
      - the summary is under five lines
"""


def add_judged_case(root: Path) -> Path:
    folder = root / "cases" / "judged-summary"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(JUDGED_CASE)
    return folder


class Gate(threading.Event):
    """A read or a write a test holds back until it lets it go (`set()`), however long the test takes to
    look: a gate that let go by itself after a few seconds (`wait(5)`) let go before a test on a loaded
    machine had looked, and the test then waited for a state that had come and gone (issue 37.2).
    `hold()` goes in the held function. On the UI thread it does not wait (that would hang the app):
    it notes it in `on_ui_thread`, and the test's own check of what is on screen fails."""

    def __init__(self) -> None:
        super().__init__()
        self.on_ui_thread = False

    def hold(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.on_ui_thread = True
            return
        self.wait()


def calls_on_ui_thread(monkeypatch, module, name: str) -> list[bool]:
    """`module.name` patched to note, for each call, whether it ran on the UI thread (the main thread, where
    the test drives the app), then do what it did: the list the test reads afterwards."""
    real = getattr(module, name)
    noted: list[bool] = []

    def noting(*args, **kwargs):
        noted.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, noting)
    return noted


@pytest.fixture
def gate():
    """A Gate, let go at teardown whatever the test did (a held worker thread would keep the process)."""
    held = Gate()
    yield held
    held.set()


async def wait_until(pilot, condition, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            app = pilot.app
            raise AssertionError(f"timed out after {timeout}s waiting for {what} (screens: "
                                 f"{[type(s).__name__ for s in app.screen_stack]}, top says "
                                 f"{getattr(app.screen, 'sub_title', '')!r})")
        await pilot.pause(0.02)


async def palette_offers(pilot, words: str) -> None:
    """After `words` were typed into the command palette: wait until the command it highlights (the one Enter
    runs) starts with them. The palette searches its providers as a task; a fixed pause (0.5 s) before Enter
    assumed the search was done by then, which a loaded machine does not promise."""
    def offered() -> bool:
        lists = pilot.app.screen.query("CommandList")
        if not lists:
            return False
        options = lists.first()
        at = options.highlighted
        return at is not None and str(options.get_option_at_index(at).prompt).startswith(words)

    await wait_until(pilot, offered, what=f"the palette to offer {words!r}")


async def live_screen_caught_up(pilot) -> None:
    """Wait until the screens were handed the app's session as it is now (once it is done: as it ended) and
    handled it. The app hands them its session's changes on a 10 Hz tick and once more when the session
    ends (tui/app.py, _flush_live); a fixed pause after the session ended (0.3 s) assumed that hand-over
    came within it, which a loaded machine does not promise."""
    app = pilot.app
    await wait_until(pilot, lambda: app.live is not None and app._posted_version == app.live.version,
                     what="the screens handed the session's last change")
    await pilot.pause()  # every message queued for the screen now (that change among them) is handled


async def wait_for_session(pilot, live, stall: float = 30.0, what: str = "the session to end") -> None:
    """Wait until `live` (a LiveSession) is done, however long its runs take on a busy machine, as long as it
    moves: it fails once nothing happened in the session (no run started or finished) for `stall` seconds.
    A fixed bound on the whole session fails a healthy one that is merely slow (60 s for 160 adaptive runs)."""
    seen, since = live.version, time.monotonic()
    while not live.done:
        if live.version != seen:
            seen, since = live.version, time.monotonic()
        elif time.monotonic() - since > stall:
            raise AssertionError(f"waiting for {what}: nothing happened in the session for {stall:g}s "
                                 f"({live.finished_runs} runs finished, {sum(live.running.values())} running)")
        await pilot.pause(0.02)


def raised_notifications(app) -> list:
    """Every notification `app` raises from now on (Textual's Notification: title, message, severity), kept.
    Textual's own list (`app._notifications`) drops one once its timeout has passed: a test that looks only
    after something slower (the editor a draft opens, on a busy machine) finds the notification gone."""
    raised: list = []
    add = app._notifications.add

    def keep(notification):
        raised.append(notification)
        return add(notification)

    app._notifications.add = keep
    return raised


def editor_ready(app) -> bool:
    """The editor is on top with its whole form built: opening a case reads it in a thread first, then
    builds the first screenful (typing goes in from then on) and the rest; a test that ends while the
    form is still mounting tears Textual's widgets down mid-mount."""
    from scarbook.tui.screens.editor import EditorScreen

    return isinstance(app.screen, EditorScreen) and app.screen.built and app.screen.accepts_keys


async def save_done(pilot) -> None:
    """The editor's save runs on a thread (scarbook.cases.editing): wait for its result on screen (the
    case saved, or why not). Keys typed meanwhile wait for it in the key queue, as a user's would."""
    await wait_until(pilot, lambda: not getattr(pilot.app.screen, "saving", False), what="the editor's save")
    await pilot.pause()


async def new_case_editor(pilot):
    """From the library, `n`: the editor of a new case, its whole form built."""
    await library_loaded(pilot)
    await pilot.press("n")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor")
    return pilot.app.screen


async def case_editor(pilot, case_id: str):
    """From the library, `e` on `case_id`: its editor, the form built."""
    await library_loaded(pilot)
    await move_library_cursor(pilot, case_id)
    await pilot.press("e")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor")
    return pilot.app.screen


async def library_loaded(pilot):
    from scarbook.tui.screens.library import LibraryScreen

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LibraryScreen) and pilot.app.screen.loaded
                     and pilot.app.screen.trends_loaded, what="the library and its trends to load")
    await pilot.pause()
    return pilot.app.screen


async def review_loaded(pilot):
    """The run review is on screen with its runs and the highlighted run's detail read."""
    from scarbook.tui.screens.review import ReviewScreen

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen) and pilot.app.screen.loaded,
                     what="the run review to load")
    await pilot.pause()
    return pilot.app.screen


async def type_text(pilot, text: str) -> None:
    keys = {" ": "space", "-": "minus", ".": "full_stop", "/": "slash", ",": "comma", "'": "apostrophe"}
    await pilot.press(*[keys.get(ch, ch) for ch in text])


async def move_library_cursor(pilot, case_id: str) -> None:
    lib = pilot.app.screen
    keys = [r.key for r in lib.shown]
    lib.query_one("#cases").move_cursor(row=keys.index(case_id))
    await pilot.pause()


def screen_text(app) -> str:
    """Every character currently painted on the terminal (the same render export_screenshot uses)."""
    return "\n".join("".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips())


def plain(widget) -> str:
    """The text a Static currently shows."""
    return str(widget.render())


async def click(pilot, selector: str) -> None:
    """Scroll the widget into view (the editor is taller than the terminal), then click it."""
    screen = pilot.app.screen
    widget = screen.query_one(selector)
    widget.scroll_visible(animate=False)
    await pilot.pause()
    # the scroll may land with a later refresh with a later refresh: wait for it (Pilot.click raises OutOfBounds when the widget's
    # corner is off the screen)
    await wait_until(pilot, lambda: widget.region.offset in screen.size.region, timeout=10,
                     what=f"{selector} to scroll into view")
    await pilot.click(selector)
    await pilot.pause()


def type_at_once(app, keys: list[str]) -> None:
    """Keys as a terminal delivers a burst of typing: all queued at once, with no wait between them
    (Pilot.press waits for the app to go idle after each key, which hides a lost key)."""
    from textual import events

    chars = {"space": " "}
    for key in keys:
        event = events.Key(key, chars.get(key, key if len(key) == 1 else None))
        event.set_sender(app)
        app._driver.send_message(event)


def python_agent_project(root: Path, cases: dict[str, str], module: str, agent: str,
                         config: str = "concurrency: 1\n") -> Path:
    """A project at `root`: each case id with its case.yaml's lines after `id:`, and a python agent
    (`agent`: the source of `module`, with `async def run(task, cwd)`) as its scarbook.yaml's agent. The
    module stays imported for the rest of the process: give each agent its own module name."""
    for cid, body in cases.items():
        (root / "cases" / cid).mkdir(parents=True)
        (root / "cases" / cid / "case.yaml").write_text(f"id: {cid}\n{body}")
    (root / f"{module}.py").write_text(agent)
    (root / "scarbook.yaml").write_text(f"agent: {{type: python, function: {module}:run}}\n" + config)
    return root
