"""The sessions screen resumes an interrupted, cancelled or aborted session with r: `scarbook resume`'s pipeline
(session/resume.py plans the missing runs, session/prepare.py prepares them) on the live screen a launch uses.
The key is offered only where it applies; a refusal is said in session/resume.py's own words.

Each session is a real `scarbook eval` of the demo agent, cut back as if its scarbook had stopped after its
first run (tests/helpers/stopped_session.py, as tests/cli/test_resume.py builds them)."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest
from textual.widgets._footer import FooterKey

from scarbook.history.store import History
from scarbook.tui.app import make_app
from tests.helpers.stopped_session import stopped_short
from tests.helpers.tui_fixtures import SIZE, library_loaded, raised_notifications, wait_for_session, wait_until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param(SIZE, id="wide")]


@pytest.fixture
def interrupted(project) -> str:
    """A session of case c (3 runs planned) that kept its first run, its scarbook gone: interrupted."""
    return stopped_short(project)


@pytest.fixture
def cancelled(project) -> str:
    """As `interrupted`, stopped with Ctrl-C: cancelled."""
    return stopped_short(project, "cancelled")


@pytest.fixture
def cancelled_then_finished(project, cancelled) -> str:
    """`cancelled`, then a finished session of the same case (the newest); the cancelled one's id."""
    assert project.cli("eval", "-q", "--runs", "3").exit_code in (0, 1)
    return cancelled


KEY_REJECTED = ("the judge at http://127.0.0.1:1 rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the session "
                "stopped before grading more runs: check ANTHROPIC_API_KEY")


def aborted(project) -> str:
    """A session of case c (3 runs planned) that the judge's rejected key aborted at run 2, recorded as the runner
    records it (an error, cause judge-rejected-key); run 1 kept, run 3 never ran."""
    sid = stopped_short(project, "aborted", keep=2)
    runs = project.workspaces / "history" / sid / "runs-c.jsonl"
    docs = [json.loads(line) for line in runs.read_text().splitlines()]
    docs[1].update(status="error", reason=KEY_REJECTED,
                   cause={"kind": "judge", "rule": "judge-rejected-key", "evidence": KEY_REJECTED})
    runs.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return sid


@pytest.fixture(params=["interrupted", "aborted"])
def stopped(project, request) -> tuple[str, str]:
    """An interrupted session (as `interrupted`) or an aborted one (`aborted`): its state and id."""
    return request.param, stopped_short(project) if request.param == "interrupted" else aborted(project)


def footer_keys(screen) -> list[str]:
    return [key.description for key in screen.query(FooterKey)]


@asynccontextmanager
async def sessions_screen(project, size: tuple[int, int], count: int = 1):
    """The app over `project` at `size` on the sessions screen, once it lists `count` sessions: (pilot, screen)."""
    from scarbook.tui.screens.sessions import SessionsScreen

    app = make_app(project.root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == count,
                         what="the sessions")
        await pilot.pause()
        yield pilot, app.screen


@pytest.mark.parametrize("size", SIZES)
async def test_r_resumes_a_stopped_session_on_the_live_screen_to_its_planned_runs(project, stopped, size) -> None:
    """Aborted: the run that met the judge's rejected key runs again beside the one kept, as `scarbook resume` runs it
    (that row failed before: no Resume on an aborted session)."""
    from scarbook.tui.screens.live import LiveScreen

    state, sid = stopped
    async with sessions_screen(project, size) as (pilot, screen):
        app = pilot.app
        assert screen.sessions[0].state == state
        assert "Resume" in footer_keys(screen)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen) and app.live is not None,
                         what="the live screen")
        await wait_for_session(pilot, app.live)
        assert app.live.info is not None and app.live.info.id == sid
        assert app.live.finished_runs == 3 and app.live.planned == 3  # the runs it held, and those it ran now
        await pilot.press("escape")  # back on the sessions: read again, complete, nothing to resume
        await wait_until(pilot, lambda: app.screen is screen and screen.sessions[0].state == "finished",
                         what="the sessions read again")
        await pilot.pause()
        assert "Resume" not in footer_keys(screen)
    history = History(project.workspaces)
    info = history.read_session(sid)
    runs = history.runs(sid)
    assert info.state == "finished" and info.recorded == {"c": 3} and not runs.problems
    assert sorted(r.k for r in runs) == [1, 2, 3] and "error" not in {r.status for r in runs}
    assert len(history.sessions()) == 1  # under its own id


async def test_a_refused_resume_says_resume_py_s_message_and_leaves_the_session_as_it_was(project,
                                                                                          cancelled) -> None:
    from scarbook.cases.io import case_digest

    sid = cancelled
    was = History(project.workspaces).read_session(sid).case_digests["c"]
    project.case("c", "id: c\ntask: another task\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    now = case_digest(project.load().load_cases().by_id()["c"])
    async with sessions_screen(project, (80, 24)) as (pilot, _):
        app = pilot.app
        raised = raised_notifications(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: any(n.title == "cannot resume" for n in raised), what="the refusal")
        assert app.live is None
    (refusal,) = [n for n in raised if n.title == "cannot resume"]
    assert refusal.message == (f"case c changed since session {sid} started (its task, checks or seed: digest {was} "
                               f"→ {now}): its new runs would not be comparable with the ones kept — put the case "
                               "back as it was, or run `scarbook eval` afresh")
    after = History(project.workspaces)
    assert after.read_session(sid).state == "cancelled" and len(after.runs(sid)) == 1
    after.hold_session(after.read_session(sid))  # not left held by the refused resume
    after.let_go(sid)


@pytest.mark.parametrize("size", SIZES)
async def test_the_resume_key_is_offered_only_on_a_session_that_can_be_resumed(project, cancelled_then_finished,
                                                                             size) -> None:
    stopped = cancelled_then_finished
    async with sessions_screen(project, size, count=2) as (pilot, screen):
        app = pilot.app
        assert [s.state for s in screen.sessions] == ["finished", "cancelled"]
        assert "Resume" not in footer_keys(screen)
        await pilot.press("r")  # nothing to resume on a finished session: nothing starts
        await pilot.pause()
        assert app.live is None and not app.preparing
        await pilot.press("down")
        await wait_until(pilot, lambda: "Resume" in footer_keys(screen), what="Resume in the footer")
        await pilot.press("up")
        await wait_until(pilot, lambda: "Resume" not in footer_keys(screen), what="Resume gone from the footer")
    assert History(project.workspaces).read_session(stopped).state == "cancelled"
