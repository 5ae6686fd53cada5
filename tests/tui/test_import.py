"""The import screen, driven through the real app: from a transcript file to a saved draft case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, SelectionList

from scarbook.cases.ids import suggest_case_id
from scarbook.cases.io import load_case
from scarbook.project import Project
from scarbook.transcripts import Message, ToolCall, ToolResult
from scarbook.tui.app import ScarbookApp, make_app
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.import_scar import ImportScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.widgets.path_suggester import complete_path
from scarbook.tui.widgets.timeline import Timeline
from tests.helpers.hostile_logs import half_emoji_log
from tests.helpers.paths import TRANSCRIPTS
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    plain,
    project_root,
    type_at_once,
    type_text,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

CLAUDE = TRANSCRIPTS / "claude_code_session.jsonl"
NATIVE = TRANSCRIPTS / "scarbook_run.jsonl"


async def open_import(pilot, path: Path | None = None) -> tuple[ImportScreen, list]:
    """Push the import screen over the library; returns it and the list its dismiss result lands in."""
    await library_loaded(pilot)
    results: list = []
    screen = ImportScreen(path)
    pilot.app.push_screen(screen, results.append)
    await wait_until(pilot, lambda: pilot.app.screen is screen and screen.is_mounted, what="the import screen")
    await pilot.pause()
    if path is not None:
        await loaded(pilot, screen, path)
    return screen, results


async def loaded(pilot, screen: ImportScreen, path: Path) -> None:
    want = path.resolve()  # the screen reads a relative path from the current directory
    await wait_until(pilot, lambda: screen.transcript_path is not None and screen.transcript_path.resolve() == want,
                     what=f"{path.name} to load")
    await pilot.pause()


async def replace_text(pilot, selector: str, text: str) -> None:
    pilot.app.screen.query_one(selector, Input).focus()
    await pilot.press("ctrl+shift+a", "backspace")
    await type_text(pilot, text)


async def open_path(pilot, path: Path) -> None:
    """Put a long path in the path field (typing it key by key is slow) and press Enter."""
    field = pilot.app.screen.query_one("#import-path", Input)
    field.focus()
    field.value = str(path)
    await pilot.press("end", "enter")


async def test_claude_code_log_to_saved_case_with_picked_artifact_and_ticked_seed(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, CLAUDE)
        assert plain(screen.query_one("#import-error")) == ""
        assert "claude-code" in plain(screen.query_one("#import-summary"))
        # the default id comes from the task
        assert screen.query_one("#import-id", Input).value == "extract-the-first-line-of-readme"

        options = screen.query_one("#candidates", OptionList)
        assert app.focused is options
        assert options.option_count == 11
        await pilot.press("home")
        assert "final answer" in plain(screen.query_one("#candidate-preview"))
        await pilot.press("down")  # candidate 2: the file tmp.txt
        assert screen.artifact_number == 2
        preview = plain(screen.query_one("#candidate-preview"))
        assert preview.startswith("file tmp.txt (final content)\n# tiny-agent\nA tiny agent!")

        await pilot.press("enter")  # choosing the artifact moves on to the seeds
        seeds = screen.query_one("#seeds", SelectionList)
        assert app.focused is seeds
        assert [seeds.get_option_at_index(i).value for i in range(seeds.option_count)] == \
            ["README.md", "docs/notes.md", "src", "screenshot.png"]
        # only suggestions whose content the transcript holds can be ticked
        assert [seeds.get_option_at_index(i).disabled for i in range(seeds.option_count)] == \
            [False, False, True, True]
        await pilot.press("home", "space")
        assert seeds.selected == ["README.md"]
        note = plain(screen.query_one("#seed-note"))
        assert note == ("README.md: read by Read; content from its result\n1 ticked; 2 of 4 can be copied, "
                        "the rest are not whole in the transcript (add them in the editor)")

        await replace_text(pilot, "#import-id", "cc-scar")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the import screen to close")
        assert results == ["cc-scar"]
        await wait_until(pilot, lambda: editor_ready(app), what="the editor on the draft")

    folder = project_root / "cases" / "cc-scar"
    case = load_case(folder)
    assert case.id == "cc-scar"
    assert case.task == "Extract the first line of README.md and write it to tmp.txt"
    assert [c.to_dict() for c in case.checks] == [{"type": "file_exists", "path": "tmp.txt"}]
    assert (folder / case.scar.failed_artifact).read_text() == "# tiny-agent\nA tiny agent!\n"
    assert (folder / case.scar.transcript).read_bytes() == CLAUDE.read_bytes()
    assert (folder / "seed" / "README.md").read_text().startswith("# tiny-agent\nA tiny agent.")
    assert not (folder / "seed" / "docs" / "notes.md").exists()  # suggested, not ticked
    assert sorted(p.name for p in (folder / "seed").rglob("*")) == ["README.md"]


async def test_timeline_shows_messages_and_collapsed_tool_calls_with_their_results(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, _ = await open_import(pilot, CLAUDE)
        tree = screen.query_one("#timeline", Timeline)
        top = tree.root.children
        t = screen.transcript
        calls = [e for e in t.entries if isinstance(e, ToolCall)]
        # one node per message and per call; results sit under their calls
        assert len(top) == len(t.messages) + len(calls)
        assert not any(isinstance(n.data, ToolResult) for n in top)
        assert str(top[0].label) == "user: Extract the first line of README.md and write it to tmp.txt"
        write = next(n for n in top if isinstance(n.data, ToolCall) and n.data.name == "Write")
        assert str(write.label) == "⚙ Write tmp.txt"
        assert not write.is_expanded
        tree.focus()
        tree.move_cursor(write)
        await pilot.press("enter")
        assert write.is_expanded
        inputs, result = write.children
        assert [str(n.label) for n in inputs.children][0].startswith("file_path: /home/dev/tiny-agent/tmp.txt")
        assert str(result.label).startswith("→ result: File created successfully")
        failed = next(n for n in top if isinstance(n.data, ToolCall) and n.data.name == "Edit"
                      and "missing.txt" in str(n.label))
        assert str(failed.label) == "⚙ Edit missing.txt  (error)"
        sub = [n for n in top if isinstance(n.data, Message) and n.data.sidechain]
        assert sub and all(str(n.label).startswith("  ↳ subagent ") for n in sub)


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_unknown_file_shows_formats_tried_on_screen(project_root, monkeypatch, size):
    """The way to keep the file whole is the command with its flag, quoted: this screen has no --format (it said
    "`--format plain` keeps the whole file", advice no key here could follow)."""
    monkeypatch.chdir(TRANSCRIPTS)  # a relative path is read from the current directory
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot)
        assert app.focused is screen.query_one("#import-path", Input)
        bad = TRANSCRIPTS / "unknown.json"
        await type_text(pilot, "unknown.json")
        await pilot.press("enter")
        error = screen.query_one("#import-error")
        await wait_until(pilot, lambda: plain(error) != "", what="the error")
        assert plain(error) == (f"{bad}: not a transcript scarbook can read: a JSON object with keys hello; no format "
                                f"is close; `scarbook import {bad} --format plain` keeps the whole file as the "
                                "failed artifact")
        assert screen.transcript is None
        # nothing loaded: creating says so instead of writing anything
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: plain(error) != "" and "not a transcript" not in plain(error),
                         what="ctrl+s's answer")  # (the key may still be queued behind the read under load)
        assert plain(error) == "load a transcript first: type its path and press Enter"
        assert results == [] and app.screen is screen

        await open_path(pilot, TRANSCRIPTS / "no-such-file.jsonl")
        await wait_until(pilot, lambda: "no-such-file" in plain(error), what="the missing-file error")
        assert "no-such-file.jsonl" in plain(error)


async def test_path_field_completes_file_names_with_the_right_arrow(project_root, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, _ = await open_import(pilot)
        field = screen.query_one("#import-path", Input)
        await type_text(pilot, "claude_c")
        await wait_until(pilot, lambda: field._suggestion != "", what="the completion")
        await pilot.press("right")
        assert field.value == "claude_code_session.jsonl"
        await pilot.press("enter")
        await loaded(pilot, screen, TRANSCRIPTS / "claude_code_session.jsonl")
        assert screen.transcript.format == "claude-code"


async def test_taken_and_malformed_ids_show_their_error_and_write_nothing(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, CLAUDE)
        error = screen.query_one("#import-error")
        before = sorted(p.name for p in (project_root / "cases").iterdir())
        await replace_text(pilot, "#import-id", "write-one-line")
        await pilot.press("enter")
        assert plain(error) == ("not created: a case named 'write-one-line' already exists "
                                f"({project_root / 'cases' / 'write-one-line'}); choose another id")
        await replace_text(pilot, "#import-id", "Bad Id")
        await pilot.press("enter")
        assert plain(error) == ("not created: case id 'Bad Id' is not valid: use lowercase letters, digits, "
                                "'-' and '_', starting with a letter or digit")
        await replace_text(pilot, "#import-id", "")
        await pilot.press("ctrl+s")
        assert plain(error).startswith("not created: type a case id")
        assert sorted(p.name for p in (project_root / "cases").iterdir()) == before
        assert results == [] and app.screen is screen
        # the error clears once a good id is used
        await replace_text(pilot, "#import-id", "fixed-id")
        await pilot.press("enter")
        await wait_until(pilot, lambda: results, what="the screen to close")
    assert results == ["fixed-id"]
    assert load_case(project_root / "cases" / "fixed-id").id == "fixed-id"


async def test_failed_scarbook_run_transcript_becomes_a_case(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, NATIVE)
        assert "scarbook" in plain(screen.query_one("#import-summary"))
        assert screen.artifact_number == 2  # default: the last file written
        assert "# tiny-agent\nA tiny agent." in plain(screen.query_one("#candidate-preview"))
        seeds = screen.query_one("#seeds", SelectionList)
        assert seeds.option_count == 1 and seeds.get_option_at_index(0).value == "README.md"
        # leave the seed unticked: the draft gets no seed folder
        await replace_text(pilot, "#import-id", "native-scar")
        await pilot.click("#create")
        await wait_until(pilot, lambda: results, what="the screen to close")
        # The editor opens on the draft: leaving the app while its form mounts would tear it down
        # half-built (NoMatches on the check-type Select under load), so wait until it is ready.
        await wait_until(pilot, lambda: editor_ready(app), what="the editor on the draft")
    folder = project_root / "cases" / "native-scar"
    case = load_case(folder)
    assert (folder / case.scar.failed_artifact).read_text() == "# tiny-agent\nA tiny agent.\n"
    assert not (folder / "seed").exists()


async def test_loading_another_file_replaces_the_transcript(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, _ = await open_import(pilot, NATIVE)
        assert screen.query_one("#candidates", OptionList).option_count == 7
        await open_path(pilot, CLAUDE)
        await loaded(pilot, screen, CLAUDE)
        assert screen.query_one("#candidates", OptionList).option_count == 11
        assert screen.query_one("#seeds", SelectionList).option_count == 4


async def test_enter_on_a_tool_result_in_the_timeline_picks_it_as_the_artifact(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, _ = await open_import(pilot, NATIVE)
        tree = screen.query_one("#timeline", Timeline)
        missing = next(n for n in tree.root.children
                       if isinstance(n.data, ToolCall) and n.data.input.get("path") == "LICENSE")
        tree.focus()
        tree.move_cursor(missing)
        await pilot.press("enter")  # opens the call
        result = missing.children[1]
        assert isinstance(result.data, ToolResult)
        tree.move_cursor(result)
        await pilot.press("enter")
        assert screen.artifact_number == 7
        assert "no such file: LICENSE" in plain(screen.query_one("#candidate-preview"))


async def test_megabytes_of_tool_output_are_cut_in_view_and_saved_whole(project_root, tmp_path):
    big = "".join(f"line {i:07d} of a very long build log\n" for i in range(140_000))
    log = tmp_path / "big.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        {"type": "task", "text": "Build the project"},
        {"type": "tool_call", "id": "b", "name": "bash", "input": {"command": "make"}},
        {"type": "tool_result", "id": "b", "output": big, "is_error": True},
        {"type": "final", "text": "Build succeeded."}]))
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, log)
        tree = screen.query_one("#timeline", Timeline)
        call = tree.root.children[1]
        assert str(call.label) == "⚙ bash: make  (error)"
        tree.focus()
        tree.move_cursor(call)
        await pilot.press("enter")  # opens the call: its input and result are made now
        result = call.children[1]
        assert len(result.children) == 31
        assert str(result.children[-1].label) == "… 139,970 more lines"
        screen.query_one("#candidates", OptionList).focus()
        await pilot.press("end")  # the tool result
        assert screen.artifact_number == 2
        shown = plain(screen.query_one("#candidate-preview"))
        assert shown.endswith(f"… {len(big) - 2000:,} more characters (saved whole)")
        await pilot.press("ctrl+s")  # the suggested id: build-the-project
        await wait_until(pilot, lambda: results, what="the screen to close")
    case = load_case(project_root / "cases" / "build-the-project")
    assert (case.root / case.scar.failed_artifact).read_text() == big


async def test_leaving_while_a_big_log_loads_does_not_crash(project_root, tmp_path):
    log = tmp_path / "big.log"
    log.write_text("".join(f"step {i}: compiling module {i}\n" for i in range(200_000)))  # plain text, ~6 MB
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        results: list = []
        app.push_screen(ImportScreen(log), results.append)
        await pilot.pause()
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert results == [None]
        assert isinstance(app.screen, LibraryScreen)
    assert not (project_root / "cases" / "step-0-compiling-module-0").exists()


async def test_import_lands_in_the_editor_on_the_draft(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, CLAUDE)
        await replace_text(pilot, "#import-id", "cc-scar")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await pilot.pause()
        editor = app.screen
        assert results == ["cc-scar"]
        assert [type(s).__name__ for s in app.screen_stack][-2:] == ["LibraryScreen", "EditorScreen"]
        assert editor.query_one("#case-id", Input).value == "cc-scar"
        assert editor.query_one("#task").text == "Extract the first line of README.md and write it to tmp.txt"
        assert "# tiny-agent\nA tiny agent!" in plain(editor.query_one("#artifact-preview"))


def test_import_screen_snapshot(project_root, snap_compare, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)  # a relative path: the frame must not show this machine's folders
    app = make_app(project_root)

    async def ready(pilot):
        screen, _ = await open_import(pilot, Path(CLAUDE.name))
        tree = screen.query_one("#timeline", Timeline)
        next(n for n in tree.root.children if isinstance(n.data, ToolCall) and n.data.name == "Write").expand()
        await pilot.press("down")  # candidate 3, the Read README.md result, in the preview
        for field in screen.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_suggested_id_is_a_short_unique_slug_of_the_task():
    assert suggest_case_id("Extract the first line of README.md and write it") == "extract-the-first-line-of-readme"
    assert suggest_case_id("Fix config.json", {"fix-config-json"}) == "fix-config-json-2"
    assert suggest_case_id("Fix config.json", {"fix-config-json", "fix-config-json-2"}) == "fix-config-json-3"
    assert suggest_case_id("") == "imported-scar"
    assert suggest_case_id("!!! ???") == "imported-scar"


def test_path_completion(tmp_path: Path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "session-1.jsonl").write_text("")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / ".hidden").write_text("")
    assert complete_path("lo", tmp_path) == "logs/"
    assert complete_path("logs/s", tmp_path) == "logs/session-1.jsonl"
    assert complete_path("logs/session-1.jsonl", tmp_path) is None  # already complete
    assert complete_path(f"{tmp_path}/no", tmp_path) == f"{tmp_path}/notes.txt"
    assert complete_path(".h", tmp_path) == ".hidden"
    assert complete_path("zz", tmp_path) is None
    assert complete_path("", tmp_path) is None


async def test_otel_file_with_several_traces_lets_the_user_pick_one_by_key(project_root):
    """Issue 15 item 9: the screen says which of the file's traces it shows; ctrl+t moves to the
    next one, and the draft is made from the trace on screen (never a merge of both)."""
    two = TRANSCRIPTS / "real" / "otel_two_traces.jsonl"
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, two)
        summary = plain(screen.query_one("#import-summary"))
        assert "task: Summarise the incident report" in summary
        assert ("trace 2 of 2: bbbb0000000000000000000000000002 (2 spans, started 2026-11-12 17:30:00 UTC) "
                "— ctrl+t shows the next") in summary
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: screen.transcript.trace == "aaaa0000000000000000000000000001",
                         what="the first trace")
        await pilot.pause()
        summary = plain(screen.query_one("#import-summary"))
        assert "task: Translate hello to French" in summary
        assert "trace 1 of 2: aaaa0000000000000000000000000001" in summary
        assert screen.query_one("#import-id", Input).value == "translate-hello-to-french"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the draft")
        case = load_case(project_root / "cases" / results[0])
        assert case.task == "Translate hello to French"
        assert (case.root / case.scar.failed_artifact).read_text() == "Bonjour"


async def test_keys_typed_while_the_transcript_loads_act_once_it_is_shown(project_root, monkeypatch):
    """cases/ is listed (for the suggested id) in the load worker, not on the UI thread; while the
    reading is held back the screen says so, and two `down`s typed meanwhile wait and then move
    through the candidates (they went to the path field or nowhere)."""
    import threading

    from scarbook.tui.screens import import_scar

    gate, listed_on = threading.Event(), []

    def gated_listing(cases_dir):
        listed_on.append(threading.current_thread())
        # Held until the test has seen the keys wait (no time bound: on a loaded machine the test looked after
        # a 5 s bound had let the load finish); a listing on the UI thread is not held (it would hang the
        # app) and fails the last assert instead.
        if threading.current_thread() is not threading.main_thread():
            gate.wait()
        return {p.name for p in cases_dir.iterdir()}

    monkeypatch.setattr(import_scar, "list_case_ids", gated_listing, raising=False)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await library_loaded(pilot)
            screen = ImportScreen(CLAUDE)
            app.push_screen(screen)
            await wait_until(pilot, lambda: app.screen is screen and screen.is_mounted, what="the import screen")
            type_at_once(app, ["down", "down"])
            await wait_until(pilot, lambda: listed_on, what="cases/ to be listed")
            # Before the keys were held they reached the path field and did nothing.
            await wait_until(pilot, lambda: len(app.keys.keys) == 2, what="the two downs held while loading")
            assert screen.transcript is None and "reading" in plain(screen.query_one("#import-summary"))
        finally:
            gate.set()  # (a failed wait above must not leave the load worker held as the app closes)
        await loaded(pilot, screen, CLAUDE)
        candidates = screen.query_one("#candidates", OptionList)
        await wait_until(pilot, lambda: candidates.highlighted == 3, what="the two downs to act")
        assert screen.artifact_number == 4
    assert listed_on[0] is not threading.main_thread()


async def test_multi_turn_session_the_task_follows_the_artifacts_turn(project_root):
    """Issue 26 item 3: after /compact the default artifact answers turn 2; the summary, the
    suggested id and the preview say turn 2's prompt, and picking turn 1's file makes it the task."""
    log = TRANSCRIPTS / "public_shapes" / "cc_compact_turns.jsonl"
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, log)
        assert "task: Now write the changelog to CHANGES.md" in plain(screen.query_one("#import-summary"))
        assert screen.query_one("#import-id", Input).value == suggest_case_id("Now write the changelog to CHANGES.md",
                                                                              set())
        assert screen.artifact_number == 3
        assert plain(screen.query_one("#candidate-preview")).endswith(
            "\n\ntask (turn 2 of 2): Now write the changelog to CHANGES.md")
        await pilot.press("up")  # candidate 2: a.txt, written in turn 1
        assert screen.artifact_number == 2
        assert plain(screen.query_one("#candidate-preview")).endswith("\n\ntask (turn 1 of 2): Write hello to a.txt")
        await replace_text(pilot, "#import-id", "turn-one")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the draft")
    case = load_case(project_root / "cases" / "turn-one")
    assert (case.task, case.scar.artifact_at) == ("Write hello to a.txt", "a.txt")


async def test_inspect_log_with_several_samples_lets_the_user_pick_one_by_key(project_root, tmp_path):
    """Issue 26 item 18: an Inspect eval log (written here by scarbook's exporter, whose logs Inspect's
    own reader reads in tests/reports/test_inspect_log) shows one sample, the first that did not pass; ctrl+t
    moves to the next, and the draft is made from the sample on screen."""
    from scarbook.models import Case as CaseModel
    from scarbook.models import RunRecord, RunStatus, SessionInfo
    from scarbook.reports.inspect_log import write_inspect_log

    log = tmp_path / "2026-11-12T17-30-00-00-00_scarbook_s1.json"
    runs = [RunRecord("s1", "greet", 1, RunStatus.PASS, "ok", output_excerpt="hello!"),
            RunRecord("s1", "french", 1, RunStatus.FAIL, "no 'Bonjour'", output_excerpt="Hola")]
    write_inspect_log(log, SessionInfo(id="s1", started_at="2026-11-12T17:30:00+00:00", runs_per_case=1,
                                       case_ids=["greet", "french"], agent="demo"), runs,
                      {"greet": CaseModel("greet", "Say hello"), "french": CaseModel("french", "Translate hello to French")})
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, log)
        summary = plain(screen.query_one("#import-summary"))
        assert "task: Translate hello to French" in summary
        assert "sample 2 of 2: french:1 (verdict I; Translate hello to French) — ctrl+t shows the next" in summary
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: screen.transcript.trace == "greet:1", what="the other sample")
        await pilot.pause()
        summary = plain(screen.query_one("#import-summary"))
        assert "task: Say hello" in summary and "sample 1 of 2: greet:1" in summary
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the draft")
        case = load_case(project_root / "cases" / results[0])
        assert case.task == "Say hello"
        assert (case.root / case.scar.failed_artifact).read_text() == "hello!"


@pytest.mark.parametrize("size", [(3, 3), (12, 5)])
async def test_the_import_screen_in_a_pane_a_few_columns_wide_does_not_crash(project_root, size):
    """The candidates list had no room inside its border and Textual crashed the app ('range() arg 3 must not be
    zero'). Widened back, the artifact is picked by keys as ever."""
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot, CLAUDE)
        assert app.is_running
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        screen.query_one("#candidates", OptionList).focus()
        await pilot.press("home", "down")
        assert screen.artifact_number == 2


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_enter_on_a_candidate_without_seeds_puts_the_cursor_after_the_id(project_root, size):
    """With no seed to tick, Enter on the artifact goes on to the case id: its text was selected, so the next key
    typed replaced the suggested id (a 2 made the id '2'). The cursor is at its end, nothing selected, and what is
    typed is added to it."""
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot, TRANSCRIPTS / "anthropic_response.json")
        assert screen.seeds == []
        field = screen.query_one("#import-id", Input)
        suggested = field.value
        assert suggested and app.focused is screen.query_one("#candidates", OptionList)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is field, what="the case id field")
        await pilot.pause()
        assert field.selection.is_empty and field.cursor_position == len(suggested)
        await pilot.press("-", "2", "enter")
        await wait_until(pilot, lambda: results, what="the draft")
    assert results == [f"{suggested}-2"]
    assert load_case(project_root / "cases" / f"{suggested}-2").id == f"{suggested}-2"


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_log_holding_half_an_emoji_fills_the_screen_and_files_its_draft(project_root, tmp_path, size):
    """A lone surrogate (half an emoji, as Claude Code cuts text) made the candidates' list raise in the loading
    worker: the screen stayed without candidates or id, and took no key but escape. It now reads as U+FFFD."""
    log = half_emoji_log(tmp_path / "cut.jsonl")
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot, log)
        options = screen.query_one("#candidates", OptionList)
        assert options.option_count == 4
        await pilot.press("home")
        assert plain(screen.query_one("#candidate-preview")) == (
            "final answer\nDone \ufffd\n\nsuggested check {type: no_writes_outside, paths: []}: the incident wrote "
            "NOTE.md (the artifact is its answer)")
        assert screen.query_one("#import-id", Input).value == "write-the-release-note"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the draft")
    assert results == ["write-the-release-note"]
    case = load_case(project_root / "cases" / "write-the-release-note")
    assert case.task == "Write the release note \ufffd"
    assert (case.root / case.scar.failed_artifact).read_text() == "Done \ufffd"


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_log_powershell_wrote_in_utf16_is_named_so_with_the_command_that_converts_it(project_root, tmp_path,
                                                                                               monkeypatch, size):
    """It was "a binary file (not UTF-8 text) … save the log as UTF-8 text": the screen names UTF-16 and the command."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "session.jsonl").write_bytes(b"\xff\xfe" + '{"type": "user"}\r\n'.encode("utf-16-le"))
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot)
        await type_text(pilot, "session.jsonl")
        await pilot.press("enter")
        error = screen.query_one("#import-error")
        await wait_until(pilot, lambda: plain(error) != "", what="the error")
        log, utf8 = tmp_path / "session.jsonl", tmp_path / "session-utf8.jsonl"
        assert plain(error) == (f"{log}: not a transcript scarbook can read: UTF-16 text (not UTF-8); no format is "
                                f"close; convert it to UTF-8 and import that: `iconv -f UTF-16 -t UTF-8 {log} > {utf8}` "
                                f"(in PowerShell, `Get-Content {log} | Set-Content -Encoding utf8 {utf8}`)")
        assert screen.transcript is None and app.focused is screen.query_one("#import-path", Input)


async def test_a_folder_typed_for_the_transcript_names_the_files_in_it(project_root, tmp_path, monkeypatch):
    """A project's folder of session logs typed in the path field said "is a directory, not a transcript file"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "5f1c.jsonl").write_text("{}\n")
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await open_import(pilot)
        await type_text(pilot, "logs")
        await pilot.press("enter")
        error = screen.query_one("#import-error")
        await wait_until(pilot, lambda: plain(error) != "", what="the error")
        assert plain(error) == (f"{tmp_path / 'logs'}: a folder, not a transcript file; name one of the files in it: "
                                "5f1c.jsonl (newest first)")


async def test_a_log_of_thousands_of_tool_calls_makes_each_calls_input_and_result_when_it_is_opened(project_root,
                                                                                                    tmp_path):
    """50,000 lines of a Claude Code log (25,000 calls) took 4.7 s of the UI thread's CPU to show in the timeline,
    every call's input and result made up front (12 s at a load of 10, the screen taking no key meanwhile). A call's
    node is now made alone, and what is under it when it is first opened."""
    records = [{"type": "task", "text": "Run the tests until they pass"}]
    for i in range(3_000):
        records += [{"type": "tool_call", "id": f"c{i}", "name": "bash", "input": {"command": f"pytest -k t{i}"}},
                    {"type": "tool_result", "id": f"c{i}", "output": f"{i} passed\n", "is_error": False}]
    records.append({"type": "final", "text": "All tests pass."})
    log = tmp_path / "long.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in records))
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, _ = await open_import(pilot, log)
        tree = screen.query_one("#timeline", Timeline)
        calls = [n for n in tree.root.children if isinstance(n.data, ToolCall)]
        assert len(calls) == 3_000
        assert all(not n.children and n.allow_expand for n in calls)
        tree.focus()
        tree.move_cursor(calls[1_500])
        await pilot.press("enter")
        await wait_until(pilot, lambda: calls[1_500].children, what="the call's input and result")
        inputs, result = calls[1_500].children
        assert [str(n.label) for n in inputs.children] == ["command: pytest -k t1500"]
        assert str(result.label) == "→ result: 1500 passed"
        assert not calls[1_499].children


@pytest.mark.parametrize("where", ["reading", "showing"])
@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_bug_in_reading_a_log_is_said_and_the_screen_takes_keys(project_root, monkeypatch, size, where):
    """A reader's bug (half an emoji once made candidates() raise) left the screen frozen: no candidates, no id,
    no error, and only escape worked. Forced here by a reader that raises, in the load's thread or as the
    transcript is shown: the error names the file and what to do, and the path field takes the next file."""
    from scarbook.tui.screens import import_scar

    def broken(*args, **kwargs):
        raise ValueError("a reader's bug")
    name = "load_transcript" if where == "reading" else "candidates"
    original = getattr(import_scar, name)
    monkeypatch.setattr(import_scar, name, broken)
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot)
        await open_path(pilot, CLAUDE)
        error = screen.query_one("#import-error")
        await wait_until(pilot, lambda: plain(error) != "", what="the error")
        assert plain(error) == (f"{CLAUDE}: scarbook failed reading this log (ValueError: a reader's bug) — a bug in "
                                f"scarbook: please report it with the log; meanwhile `scarbook import {CLAUDE} "
                                "--format plain` keeps the whole file as the failed artifact")
        assert screen.transcript is None and app.focused is screen.query_one("#import-path", Input)
        monkeypatch.setattr(import_scar, name, original)  # the next file reads: the screen took the keys
        await open_path(pilot, NATIVE)
        await loaded(pilot, screen, NATIVE)
        assert screen.transcript is not None and results == []


@pytest.mark.parametrize(("log", "word", "after"), [
    (TRANSCRIPTS / "web_export" / "chatgpt_conversations.json", "conversation", "67a0c1f2-0001-8000-9000-00000000aaaa"),
    (TRANSCRIPTS / "real" / "otel_two_traces.jsonl", "trace", "aaaa0000000000000000000000000001"),
])
@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_the_footer_names_what_ctrl_t_steps_through(project_root, log, word, after, size):
    """A ChatGPT export holds conversations, not traces: its footer said "Next trace". The key is named for what
    the file holds (the summary's word), at 80x24 and wide, and ctrl+t still steps to the next one."""
    from textual.widgets._footer import FooterKey

    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, _ = await open_import(pilot, log)
        shown = [key.description for key in screen.query(FooterKey)]
        assert f"Next {word}" in shown
        [key] = [k for k in screen.query(FooterKey) if k.description == f"Next {word}"]
        assert key.region.right <= size[0]  # on screen, not cut off the footer's end
        assert [d for d in shown if d.startswith("Next ")] == [f"Next {word}"]
        assert f"{word} 1 of 2" in plain(screen.query_one("#import-summary")) or \
            f"{word} 2 of 2" in plain(screen.query_one("#import-summary"))
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: screen.transcript.trace == after, what=f"the next {word}")


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_an_openhands_evaluations_instances_are_stepped_by_key(project_root, size):
    """OpenHands' evaluation output.jsonl was refused on this screen. It shows the first instance not resolved, says
    which of the run's instances it is, names ctrl+t "Next instance" (at 80x24 and wide), and ctrl+t shows the next
    one; the draft is made from the instance on screen."""
    from textual.widgets._footer import FooterKey

    output = TRANSCRIPTS / "openhands" / "output.jsonl"
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot, output)
        summary = plain(screen.query_one("#import-summary"))
        assert ("instance 2 of 3: acme__acme-102 (Fix the off-by-one in paginate(): the last page i…, not resolved) "
                "— ctrl+t shows the next") in " ".join(summary.split())
        [key] = [k for k in screen.query(FooterKey) if k.description == "Next instance"]
        assert key.region.right <= size[0]
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: screen.transcript.trace == "acme__acme-103", what="the next instance")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: screen.transcript.trace == "acme__acme-101", what="the first instance")
        await pilot.pause()
        summary = plain(screen.query_one("#import-summary"))
        assert "task: Bump the version in setup.cfg to 2.4.0" in summary
        assert "instance 1 of 3: acme__acme-101" in summary
        await replace_text(pilot, "#import-id", "bump")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the draft")
    case = load_case(project_root / "cases" / "bump")
    assert (case.root / case.scar.failed_artifact).read_text() == "# Changelog\n\n## 2.4.0\n- Bumped version.\n"
