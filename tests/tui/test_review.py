"""The run review, driven by keys: status filters with counts, next and previous failed run, the −/+
diff of a modified file, the transcript timeline (T), keys typed while it loads; snapshots at 80×24
and 200×50 of the diff and of the timeline."""

from __future__ import annotations

import json
import threading

import pytest
from textual.widgets import OptionList

from scarbook.history.store import History
from scarbook.models import CheckResult, RunRecord, SessionInfo, WorkspaceDiff
from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.screens.review import ReviewScreen
from scarbook.tui.widgets.timeline import Timeline
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    fast_demo,
    library_loaded,
    move_library_cursor,
    palette_offers,
    plain,
    project_root,
    review_loaded,
    save_done,
    type_text,
    wait_until,
)
from tests.tui.test_snapshots import freeze_cursors

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

SID = "20260201-100000-beef"
# k -> status; run 2 kept its workspace (README.md modified, tmp.txt created) and left a transcript
STATUSES = {1: "pass", 2: "fail", 3: "error", 4: "unjudged", 5: "fail", 6: "pass"}
README_NOW = "# tiny-agent\n\nA tiny agent that writes everything.\n\n## Usage\n\nnode src/main.js \"your task\"\n"
TRANSCRIPT = [
    {"type": "task", "text": "Extract the first line of README.md and write it to tmp.txt"},
    {"type": "tool_call", "id": "call_1", "name": "read_file", "input": {"path": "README.md"}},
    {"type": "tool_result", "id": "call_1", "output": "# tiny-agent\n\nA minimal AI agent.\n", "is_error": False},
    {"type": "tool_call", "id": "call_2", "name": "write_file", "input": {"path": "tmp.txt", "content": "# tiny-agent\n"}},
    {"type": "tool_result", "id": "call_2", "output": "wrote 13 bytes to tmp.txt", "is_error": False},
    {"type": "final", "text": "done — tmp.txt has one line"},
]


def write_runs(root) -> None:
    project = Project.discover(root)
    history = History(project.workspaces_dir)
    info = SessionInfo(id=SID, label="prompt-v2", started_at="2026-02-01T10:00:00+00:00", runs_per_case=6,
                       case_ids=["write-one-line"], fingerprint=project.config.fingerprint(), agent="demo")
    history.start_session(info)
    logs = project.workspaces_dir / SID / "write-one-line"
    ws = logs / "2"
    ws.mkdir(parents=True)
    (ws / "README.md").write_text(README_NOW)
    (ws / "tmp.txt").write_text("# tiny-agent\nA minimal AI agent.\n")
    (logs / "2.transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in TRANSCRIPT))
    (logs / "2.stderr.log").write_text("warning: rewrote README.md\n")
    for k, status in STATUSES.items():
        checks = [CheckResult("file_exists", "pass", "tmp.txt exists", 0),
                  CheckResult("line_count", "fail", "tmp.txt has 2 lines, expected exactly 1", 1)]
        history.record_run(RunRecord(
            session_id=SID, case_id="write-one-line", k=k, status=status, duration_s=1.0 + k,
            reason={"pass": "all checks passed", "fail": "check 2 (line_count): tmp.txt has 2 lines, expected exactly 1",
                    "error": "judge unreachable", "unjudged": "judge skipped"}[status],
            checks=checks if k == 2 else [], workspace=str(logs / str(k)), workspace_kept=k == 2,
            diff=WorkspaceDiff(created=["tmp.txt"], modified=["README.md"]) if k == 2 else WorkspaceDiff(),
            transcript_path=str(logs / "2.transcript.jsonl") if k == 2 else None,
            output_excerpt="done — tmp.txt has one line" if k == 2 else "",
            stderr_path=str(logs / "2.stderr.log") if k == 2 else None, started_at=info.started_at))
    history.finish_session(info)


async def open_review(pilot) -> ReviewScreen:
    await library_loaded(pilot)
    await move_library_cursor(pilot, "write-one-line")
    await pilot.press("v")
    return await review_loaded(pilot)


def listed(screen: ReviewScreen) -> list[int]:
    return [r.k for r in screen.shown]


def highlighted_k(screen: ReviewScreen) -> int | None:
    run = screen.current_run
    return run.k if run is not None else None


async def test_filter_keys_show_the_runs_of_a_status_and_the_counts(project_root):
    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        status = lambda: plain(review.query_one("#review-status"))  # noqa: E731
        assert status() == "show [all 6] failed 3 fail 2 error 1 unjudged 1 pass 2  s: filter"
        assert listed(review) == [1, 2, 3, 4, 5, 6] and highlighted_k(review) == 2
        await pilot.press("s")
        # issue 26.12: the unjudged run 4 reached no verdict, so it is not counted failed
        assert "[failed 3]" in status() and listed(review) == [2, 3, 5]
        assert review.query_one("#runs-list", OptionList).option_count == 3
        assert highlighted_k(review) == 2  # the highlighted run stays when the filter shows it
        await pilot.press("s")
        assert "[fail 2]" in status() and listed(review) == [2, 5]
        await pilot.press("s", "s")
        assert "[unjudged 1]" in status() and listed(review) == [4] and highlighted_k(review) == 4
        await wait_until(pilot, lambda: review.loaded, what="run 4's detail")
        assert plain(review.query_one("#run-body")).startswith("run #4: UNJUDGED — judge skipped\n")
        await pilot.press("s")
        assert "[pass 2]" in status() and listed(review) == [1, 6]
        await pilot.press("c")  # c acts on the shown run: a passed one
        await wait_until(pilot, lambda: app._notifications, what="the notification")
        assert [n.message for n in app._notifications][-1].startswith("this run passed")
        await pilot.press("S", "S")
        assert "[error 1]" in status() and listed(review) == [3]


async def test_f_and_shift_f_go_to_the_next_and_previous_failed_run_wrapping(project_root):
    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        seen = []
        for key in ["f", "f", "f", "f", "F", "F", "F"]:
            await pilot.press(key)
            seen.append(highlighted_k(review))
        assert seen == [3, 5, 2, 3, 2, 5, 3]  # the unjudged run 4 is not a failed run (issue 26.12)
        await pilot.press("s", "s", "s", "s", "s")  # pass: no failed run shown
        assert listed(review) == [1, 6]
        await pilot.press("F")
        await wait_until(pilot, lambda: app._notifications, what="the notification")
        assert [n.message for n in app._notifications] == ["no failed run among the pass runs shown"]
        assert highlighted_k(review) == 1


async def test_a_modified_file_shows_minus_old_plus_new_lines_not_the_whole_new_content(project_root):
    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        body = plain(review.query_one("#run-body"))
        diff = body[body.index("workspace diff"):]
        assert diff.startswith("workspace diff  (− seed, + workspace)\n"
                               " created  tmp.txt\n   +# tiny-agent\n   +A minimal AI agent.\n"
                               " modified README.md\n   @@ -1,5 +1,5 @@\n    # tiny-agent\n    \n"
                               "   -A minimal AI agent.\n   +A tiny agent that writes everything.\n    \n    ## Usage\n")
        assert "node src/main.js" not in body  # the unchanged end of README.md is not repeated
        assert "stderr log\nwarning: rewrote README.md\n" in body


async def test_T_shows_the_runs_transcript_as_a_timeline_and_a_run_without_one_says_so(project_root):
    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        timeline = review.query_one("#run-timeline", Timeline)
        await pilot.press("T")
        await wait_until(pilot, lambda: timeline.display and timeline.transcript is not None, what="the timeline")
        labels = [str(node.label) for node in timeline.root.children]
        assert labels == ["user: Extract the first line of README.md and write it to tmp.txt",
                          "⚙ read_file README.md", "⚙ write_file tmp.txt", "assistant: done — tmp.txt has one line"]
        assert review.query_one("#run-detail").display is False
        await pilot.press("f")  # run 3 left no transcript: one line, no timeline
        note = review.query_one("#timeline-note")
        await wait_until(pilot, lambda: "no transcript" in plain(note), what="run 3's note")
        assert plain(note) == "this run left no transcript (the agent did not write $SCARBOOK_TRANSCRIPT)"
        assert timeline.display is False
        await pilot.press("T")
        assert review.query_one("#run-detail").display and highlighted_k(review) == 3


async def test_the_timeline_opens_on_its_first_row_and_down_goes_to_the_second(project_root):
    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        timeline = review.query_one("#run-timeline", Timeline)
        await pilot.press("T")
        await wait_until(pilot, lambda: timeline.display and timeline.transcript is not None, what="the timeline")
        await pilot.press("tab")
        assert app.focused is timeline
        assert timeline.cursor_node is not None, "no row highlighted"
        assert str(timeline.cursor_node.label) == "user: Extract the first line of README.md and write it to tmp.txt"
        await pilot.press("down")
        assert str(timeline.cursor_node.label) == "⚙ read_file README.md"
        await pilot.press("enter")  # opens the highlighted call
        await wait_until(pilot, lambda: timeline.cursor_node.is_expanded, what="the call to open")
        assert [str(n.label) for n in timeline.cursor_node.children][0] == "input"


async def test_a_hostile_transcript_is_one_line_in_the_timeline_pane(project_root, tmp_path):
    write_runs(project_root)
    path = project_root / "workspaces" / SID / "write-one-line" / "2.transcript.jsonl"
    path.unlink()
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    path.symlink_to(secret)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        await pilot.press("T")
        note = review.query_one("#timeline-note")
        await wait_until(pilot, lambda: "not shown" in plain(note), what="the note")
        assert plain(note) == "transcript not shown: 2.transcript.jsonl is a symlink"
        assert review.query_one("#run-timeline", Timeline).display is False
        await pilot.press("t")  # importing it is refused too: a link is never followed
        await wait_until(pilot, lambda: app._notifications, what="the notification")
        assert [n.message for n in app._notifications] == ["transcript not imported: 2.transcript.jsonl is a symlink"]
        assert app.screen is review


async def test_terminal_escapes_in_a_transcript_never_reach_the_screen(project_root):
    write_runs(project_root)
    path = project_root / "workspaces" / SID / "write-one-line" / "2.transcript.jsonl"
    path.write_text(json.dumps({"type": "task", "text": "hi\x1b]0;pwned\x07 there\x1b[2J"}) + "\n"
                    + json.dumps({"type": "tool_call", "id": "c1", "name": "bash\x1b[31m",
                                  "input": {"command": "ls\x1b[5m"}}) + "\n")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        await pilot.press("T")
        timeline = review.query_one("#run-timeline", Timeline)
        await wait_until(pilot, lambda: timeline.display and timeline.transcript is not None, what="the timeline")
        labels = [str(node.label) for node in timeline.root.children]
        assert labels == ["user: hi there", "⚙ bash: ls"]


async def test_keys_typed_while_the_review_loads_act_once_it_is_there(project_root, monkeypatch):
    import scarbook.tui.screens.review as review_module

    write_runs(project_root)
    gate = threading.Event()
    real = review_module.load_review

    def slow_load(*args):
        assert gate.wait(60), "the test never opened the gate"
        return real(*args)

    monkeypatch.setattr(review_module, "load_review", slow_load)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        review = app.screen
        assert plain(review.query_one("#review-loading")) == "loading the runs…"
        await pilot.press("s", "s")  # the fail filter
        app.set_focus(None)  # a key typed while nothing has the focus is kept too
        await pilot.press("f", "T")  # next failed run, the timeline
        await pilot.pause(0.2)
        assert review.data is None and review.filter == "all"  # nothing acted yet: still loading
        gate.set()
        await wait_until(pilot, lambda: review.filter == "fail" and highlighted_k(review) == 5
                         and review.query_one("#run-timeline-pane").display, what="the typed keys to act")
        assert listed(review) == [2, 5]
        assert review.query_one("#review-loading").display is False and app.focused is review.query_one("#runs-list")


def slow_review_reader(monkeypatch, gate: threading.Event, name: str) -> None:
    """The review's reader `name` waits for `gate`; called on the UI thread it fails at once (it would
    freeze the app)."""
    import scarbook.tui.screens.review as review_module

    real = getattr(review_module, name)

    def slow(*args):
        assert threading.current_thread() is not threading.main_thread(), f"{name} ran on the UI thread"
        assert gate.wait(60), "the test never opened the gate"
        return real(*args)

    monkeypatch.setattr(review_module, name, slow)


async def test_c_reads_the_draft_off_the_ui_thread_and_keys_typed_meanwhile_reach_the_editor(project_root,
                                                                                            monkeypatch):
    from scarbook.tui.screens.editor import EditorScreen

    write_runs(project_root)
    gate = threading.Event()
    slow_review_reader(monkeypatch, gate, "draft_from_run")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        await pilot.press("c")
        note = review.query_one("#review-loading")
        # the app keeps working while the draft is read: it says so and takes keys
        await wait_until(pilot, lambda: note.display and plain(note) == "making a draft case from run #2…",
                         what="the drafting note")
        await type_text(pilot, "my-scar")  # the new case's id, typed before the editor is there
        await wait_until(pilot, lambda: len(app.keys.keys) == 7, what="the keys to be kept")
        assert app.screen is review and highlighted_k(review) == 2
        gate.set()
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen) and app.screen.accepts_keys
                         and app.screen.query_one("#case-id").value == "my-scar",
                         what="the draft with the typed keys in its id")
        assert not (project_root / "cases" / "write-one-line-run2").exists()  # written on save only
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (project_root / "cases" / "my-scar" / "case.yaml").is_file(),
                         what="the saved draft")
        await save_done(pilot)  # the seed files are copied after case.yaml, on the same thread


async def test_c_on_a_case_that_cannot_be_read_says_so_and_the_keys_typed_meanwhile_act_on_the_review(
        project_root, monkeypatch):
    write_runs(project_root)
    gate = threading.Event()
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        slow_review_reader(monkeypatch, gate, "load_case")
        (project_root / "cases" / "write-one-line" / "case.yaml").write_text("id: [unclosed\n")  # after it opened
        await pilot.press("c")
        loading = review.query_one("#review-loading")
        await wait_until(pilot, lambda: loading.display, what="the drafting note")
        await pilot.press("f")  # the next failed run: acts once the draft has failed
        await wait_until(pilot, lambda: app.keys.keys, what="the key to be kept")
        gate.set()
        await wait_until(pilot, lambda: app._notifications, what="the notification")
        (note,) = list(app._notifications)
        assert note.title == "could not make the draft case" and note.severity == "error"
        yaml_path = project_root / "cases" / "write-one-line" / "case.yaml"
        assert note.message == (f"{yaml_path}:2: malformed YAML: expected ',' or ']', but got '<stream end>' (while "
                                "parsing a flow sequence that starts at line 1) — fix the syntax (check indentation, "
                                "quotes and colons)")
        await wait_until(pilot, lambda: highlighted_k(review) == 3, what="f to act")
        assert app.screen is review and loading.display is False and app.focused is review.query_one("#runs-list")


async def test_help_lists_the_review_keys_and_the_palette_runs_them(project_root):
    import io

    from rich.console import Console

    from scarbook.tui.screens.help import HelpScreen
    from tests.helpers.tui_fixtures import type_text

    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.table)
        text = " ".join(console.export_text().split())
        for key, does in [("f", "Next failed"), ("F", "Previous failed"), ("s", "Filter"), ("S", "Previous filter"),
                          ("T", "Timeline"), ("c", "New scar"), ("t", "Import transcript")]:
            assert f"{key} {does}" in text, (key, text)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is review, what="back on the review")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "previous failed")
        await palette_offers(pilot, "previous failed")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is review and highlighted_k(review) == 5, what="run 5")


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")])
def test_review_diff_snapshot(project_root, snap_compare, size):
    """The failed run with its −/+ diff of README.md (red/green) and the created tmp.txt; the filter
    line with counts above the runs list."""
    write_runs(project_root)
    app = make_app(project_root)

    async def ready(pilot):
        review = await open_review(pilot)
        review.query_one("#run-detail").scroll_end(animate=False)
        freeze_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")])
def test_review_timeline_snapshot(project_root, snap_compare, size):
    """T: the failed run's transcript as a timeline beside the runs list (failed filter on), its first row
    highlighted."""
    write_runs(project_root)
    app = make_app(project_root)

    async def ready(pilot):
        review = await open_review(pilot)
        await pilot.press("s", "T")
        timeline = review.query_one("#run-timeline", Timeline)
        await wait_until(pilot, lambda: timeline.display and timeline.transcript is not None, what="the timeline")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)


CAUSES = {2: {"kind": "agent", "rule": "check-fail", "evidence": "check 2 (line_count): tmp.txt has 2 lines"},
          3: {"kind": "judge", "rule": "judge-error", "evidence": "check 1 (llm_judge): judge unreachable"},
          5: {"kind": "infra", "rule": "killed-by-signal", "evidence": "killed by signal 9 (SIGKILL), not by scarbook's "
                                                                          "timeout"}}


async def test_the_review_filters_by_cause_and_shows_a_runs_cause_and_attempts(project_root):
    """Issue 24: after the status filters, one filter per cause the runs have; the detail says the cause
    and each earlier attempt."""
    write_runs(project_root)
    runs_file = next((project_root / "workspaces" / "history" / SID).glob("runs-*"))
    lines = []
    for line in runs_file.read_text().splitlines():
        doc = json.loads(line)
        if doc.get("k") in CAUSES:
            doc["cause"] = CAUSES[doc["k"]]
        if doc.get("k") == 5:
            doc["attempts"] = [{"attempt": 1, "status": "fail", "reason": "agent was killed by signal 9",
                                "cause": CAUSES[5]}, {"attempt": 2, "status": "fail", "reason": doc["reason"],
                                                      "cause": CAUSES[5]}]
        lines.append(json.dumps(doc))
    runs_file.write_text("\n".join(lines) + "\n")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        status = lambda: plain(review.query_one("#review-status"))  # noqa: E731
        # run 5, written a fail with an infra cause as an older scarbook did, reads as an error (history/records.py)
        assert status() == ("show [all 6] failed 3 fail 1 error 2 unjudged 1 pass 2 · why: agent 1 infra 1 judge 1"
                            "  s: filter")
        await pilot.press("S")  # backwards from all: the last filter, judge
        assert "[judge 1]" in status() and listed(review) == [3]
        await pilot.press("S")
        assert "[infra 1]" in status() and listed(review) == [5]
        await wait_until(pilot, lambda: review.loaded, what="run 5's detail")
        body = plain(review.query_one("#run-body"))
        assert ("cause: infra (killed-by-signal) — killed by signal 9 (SIGKILL), not by scarbook's timeout\n"
                "attempt 1: fail — infra (killed-by-signal, the agent's own word): agent was killed by signal 9 · retried\n") in body



async def test_a_closed_review_has_no_highlighted_run_and_a_read_that_comes_back_late_is_dropped(
        project_root, monkeypatch):
    """A run's detail read on a thread can come back after the review was closed (seen in a loaded suite run:
    NoMatches '#runs-list' on ReviewScreen() raised from current_run, ending the app). A closed review has no
    highlighted run, and the late read changes nothing."""
    write_runs(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        run = review.current_run
        assert run is not None
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is not review and not review.is_attached, what="the review to close")
        assert review.current_run is None and review.loaded
        review.details.pop(run.k, None)
        await review._load_detail(run).wait()  # what the worker does when its thread comes back: nothing to show
        await pilot.pause()
        assert app._exception is None and app.is_running


async def test_s_reaches_a_filter_per_rubric_item_that_shows_the_runs_it_failed(project_root):
    """Issue 35.3: after the status and cause filters, one filter per rubric item that failed some run."""
    from tests.helpers.item_history import plant

    items = [("r000001", "tmp.txt holds one line"), ("r000002", "the answer names tmp.txt")]
    plant(project_root / "workspaces", "write-one-line", items, sessions=1, runs=4,
          votes=lambda s, k, ident: ("FAIL",) if (ident == "r000001" and k in (2, 3)) or k == 3 else ("PASS",))
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        review = await open_review(pilot)
        status = lambda: plain(review.query_one("#review-status"))  # noqa: E731
        assert "item r000001 2" in status() and "item r000002 1" in status()
        while not review.filter.startswith("item "):
            await pilot.press("s")
        assert "[item r000001 2]" in status() and listed(review) == [2, 3]
        await pilot.press("s")
        assert "[item r000002 1]" in status() and listed(review) == [3]


@pytest.mark.parametrize("runs, said", [(1, "1 run"), (2, "2 runs")])
async def test_the_review_subtitle_counts_the_runs_in_english(project_root, runs, said):
    """The review's subtitle said "1 runs" for a session of one run."""
    from datetime import UTC, datetime

    from tests.tui.test_library import record_session

    fingerprint = Project.discover(project_root).config.fingerprint()
    record_session(project_root, "20261205-000000-aaaa", datetime.now(UTC).isoformat(timespec="seconds"), fingerprint,
                   {"write-one-line": ["pass"] * runs})
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        review = await open_review(pilot)
        assert review.sub_title == f"write-one-line · session old · {said}"
