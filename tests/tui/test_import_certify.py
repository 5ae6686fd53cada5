"""The import screen ends with the certification `scarbook verify` gives (issue 24.4): g marks the good
artifact among the candidates; the draft is certified in the background (a notification, the library
badge), partially — and saying so — when no good artifact was marked. The real app driven by keys,
the real judge SDK against tests/helpers/judge_server.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scarbook.cases.io import load_case
from scarbook.cases.verifications import VerificationStore
from scarbook.tui.app import make_app
from scarbook.tui.screens.import_scar import ImportScreen
from tests.cli.test_import_certify import TRANSCRIPT
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    project_root,
    raised_notifications,
    wait_until,
)

pytestmark = pytest.mark.usefixtures("inprocess_demo")


async def import_by_keys(pilot, transcript: Path, keys: list[str], case_id: str) -> None:
    await library_loaded(pilot)
    await pilot.press("i")  # the library opens the import screen
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ImportScreen), what="the import screen")
    screen = pilot.app.screen
    field = screen.query_one("#import-path")
    field.value = str(transcript)
    await pilot.press("end", "enter")
    await wait_until(pilot, lambda: screen.transcript is not None, what="the transcript to load")
    await pilot.pause()
    await pilot.press(*keys)
    screen.query_one("#import-id").value = case_id
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor on the draft")


def titles(raised: list) -> list[str]:
    return [n.title for n in raised]


async def test_a_marked_good_artifact_and_a_todo_rubric_leave_the_draft_unverified_saying_what_to_write(
        tmp_path, judge_server, monkeypatch):
    """The draft's one rubric item is the import's TODO: the judge failing it on the answer and passing it on the
    good artifact *certified* the draft (found as a newcomer). A placeholder certifies nothing: unverified, and the
    notification says where to write the item."""
    root = tmp_path / "proj"
    (root / "cases").mkdir(parents=True)
    (root / "scarbook.yaml").write_text(f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    (tmp_path / "t.json").write_text(json.dumps(TRANSCRIPT))
    judge_server.push(*[tool_reply([("FAIL", "claims done")])] * 3, *[tool_reply([("PASS", "fine")])] * 3)
    app = make_app(root)
    raised = raised_notifications(app)  # the certification may come while the editor still opens: kept
    async with app.run_test(size=SIZE) as pilot:
        # candidates: 1 the answer, 2 the file tmp.txt (highlighted), 3 the tool's result.
        # 3 is good (g marks it; its row says so), 1 — the answer — failed
        keys = ["end", "g", "home"]
        await import_by_keys(pilot, tmp_path / "t.json", keys, "said-done")
        await wait_until(pilot, lambda: "said-done: certification: unverified" in titles(raised), timeout=20,
                         what=f"the certification (notifications: {titles(raised)})")
        note = next(n for n in raised if n.title == "said-done: certification: unverified")
        assert note.message == (
            "only the import's TODO rubric item failed the failed artifact, and a placeholder says nothing of the "
            f"incident: write it in {root / 'cases' / 'said-done' / 'case.yaml'}, or draft the rubric from the "
            "incident with `scarbook rubric draft said-done`")
    case = load_case(root / "cases" / "said-done")
    assert case.scar.artifact_at == "output"
    assert (case.root / case.scar.failed_artifact).read_text() == "Done: tmp.txt holds the first line."
    assert (case.root / case.scar.good_artifact).read_text() == "wrote tmp.txt"
    assert len(judge_server.requests) == 6
    store = VerificationStore(root / "workspaces")
    assert store.badge(case, store.load()) == "unverified"


async def test_without_a_good_artifact_the_screen_says_certification_was_partial(project_root, monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "t.json").write_text(json.dumps(TRANSCRIPT))
    app = make_app(project_root)
    raised = raised_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await import_by_keys(pilot, tmp_path / "t.json", [], "first-line")  # the file tmp.txt, no good one
        await wait_until(pilot, lambda: "first-line: certification partial (misses)" in titles(raised), timeout=20,
                         what=f"the certification (notifications: {titles(raised)})")
        note = next(n for n in raised if n.title == "first-line: certification partial (misses)")
        assert note.message == (
            "every check passes the failed artifact — the case would not have caught the incident; sharpen the "
            "checks or rubric\ncertification partial: only (a) was checked — the failed artifact passes every "
            "check; the scar has no good artifact, so (b) that a right result passes was not checked — mark one "
            "with g on the import screen, or add scar.good_artifact")
    store = VerificationStore(project_root / "workspaces")
    assert store.badge(load_case(project_root / "cases" / "first-line"), store.load()) == "misses"
