"""One plan from either face (issue 32.4): the launch screen's fields and `scarbook eval`'s options
both become an EvalRequest that session/plan.py's plan_eval makes a SessionPlan, so the same choices
give an equal plan — the cases in the same order, the gate, the judge's batch setting, the cap."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from textual.widgets import Checkbox, Input, Static

from scarbook.cli import main
from scarbook.run.session import Preparation, SessionPlan
from scarbook.tui.app import make_app
from scarbook.tui.screens.launch import LaunchScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    add_judged_case,
    fast_demo,
    library_loaded,
    project_root,
    screen_text,
    type_text,
    wait_until,
)


def cli_plan(root, monkeypatch, *args: str) -> SessionPlan:
    """The plan `scarbook eval ARGS` hands to prepare_eval (stopped there: nothing runs)."""
    seen: list[SessionPlan] = []

    def prepare(site, plan):
        seen.append(plan)
        return Preparation(errors=["stopped by the test"])

    monkeypatch.setattr("scarbook.cli.eval_run.prepare_eval", prepare)
    result = CliRunner().invoke(main, ["-C", str(root), "eval", *args], catch_exceptions=False)
    assert result.exit_code == 2 and "stopped by the test" in result.stderr
    return seen[0]


async def focus(pilot, widget_id: str) -> None:
    """Tab to a field of the launch form, as a user would: once the form has its first focus (a Tab typed
    before the form is built goes nowhere, or on from where the form then puts the focus), and round the
    form at most once."""
    await wait_until(pilot, lambda: pilot.app.focused is not None, what="the form's first focus")
    passed: list = []
    while pilot.app.focused.id != widget_id:
        if pilot.app.focused in passed:
            raise AssertionError(f"tab never reached #{widget_id} (went round {[w.id for w in passed]})")
        passed.append(pilot.app.focused)
        await pilot.press("tab")


async def launch_form(pilot) -> None:
    """From the library (loaded): r opens the launch modal, and the focus goes to its runs field."""
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LaunchScreen), what="the launch modal")
    await focus(pilot, "runs")


async def tui_plan(root, monkeypatch, *, runs: str, concurrency: str, label: str, adaptive: bool,
                   judge_env=None) -> SessionPlan:
    """The plan the launch screen hands to the app when its fields are typed and ctrl+r pressed."""
    started: list[SessionPlan] = []
    app = make_app(root, judge_env=judge_env)
    monkeypatch.setattr(app, "start_session", lambda plan, executor=None, notes=(): started.append(plan))
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await launch_form(pilot)
        await pilot.press("ctrl+u", *runs)  # clear the field (scarbook.yaml's runs), type ours
        if adaptive:
            await focus(pilot, "adaptive")
            await pilot.press("space")
            assert app.screen.query_one("#adaptive", Checkbox).value
        await focus(pilot, "concurrency")
        await pilot.press("ctrl+u", *concurrency)
        await focus(pilot, "label")
        await type_text(pilot, label)
        assert app.screen.query_one("#label", Input).value == label
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: started, what="the launch screen to start a session")
    return started[0]


async def test_the_same_choices_give_an_equal_plan_from_the_cli_and_the_tui(project_root, monkeypatch) -> None:
    tui = await tui_plan(project_root, monkeypatch, runs="7", concurrency="2", label="faces", adaptive=False)
    cli = cli_plan(project_root, monkeypatch, "--runs", "7", "-j", "2", "--label", "faces")
    assert tui == cli
    assert (tui.runs, tui.concurrency, tui.label, tui.adaptive) == (7, 2, "faces", False)
    assert tui.gate is not None and tui.max_runs == 40  # what the TUI used to leave out (None) is the CLI's


async def test_adaptive_with_a_cap_is_runs_auto_with_max_runs(project_root, monkeypatch) -> None:
    tui = await tui_plan(project_root, monkeypatch, runs="12", concurrency="3", label="auto", adaptive=True)
    cli = cli_plan(project_root, monkeypatch, "--runs", "auto", "--max-runs", "12", "-j", "3", "-l", "auto")
    assert tui == cli
    assert (tui.runs, tui.adaptive, tui.max_runs) == (12, True, 12)


async def test_without_a_judge_key_the_tui_plans_the_session_without_the_judge(project_root, monkeypatch) -> None:
    """The launch screen runs a judged case without the judge when there is no key (the CLI refuses in
    preflight instead): the plan says why, in the same place as --skip-judge's."""
    from tests.helpers.tui_fixtures import add_judged_case

    add_judged_case(project_root)
    tui = await tui_plan(project_root, monkeypatch, runs="2", concurrency="1", label="nokey", adaptive=False,
                         judge_env={})
    assert (tui.skip_judge, tui.judge_skipped_why) == (True, "no API key in $ANTHROPIC_API_KEY")
    cli = cli_plan(project_root, monkeypatch, "--runs", "2", "-j", "1", "-l", "nokey", "--skip-judge")
    assert tui == SessionPlan(**{**vars(cli), "judge_skipped_why": "no API key in $ANTHROPIC_API_KEY",
                                 "judge_env": {}})


@pytest.fixture(autouse=True)
def _fast(fast_demo) -> None:
    pass


async def warnings_before_the_runs(root, runs: str, title: str, adaptive: bool = False) -> list[list[str]]:
    """Launched from the modal with `runs` (adaptive: the cap), the lines of each warning titled `title`,
    once the session started; it is then let run to its end."""
    from tests.helpers.tui_fixtures import raised_notifications, wait_for_session

    app = make_app(root)
    raised = raised_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await launch_form(pilot)
        await pilot.press("ctrl+u", *runs)
        if adaptive:
            await focus(pilot, "adaptive")
            await pilot.press("space")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.live is not None, what="the session to start")
        # (_launch notifies before it sets app.live, but a notification reaches the app's list as a message,
        # handled later: read once the session has ended, not the moment it starts)
        await wait_for_session(pilot, app.live)
    found = [n for n in raised if n.title == title]
    assert all(n.severity == "warning" for n in found)
    return [str(n.message).splitlines() for n in found]


@pytest.mark.parametrize(("runs", "said"), [
    ("10", ["fix-json-config, rename-function, review-api-claims, write-one-line: 10 runs cannot show ≥ 80%; "
            "14 can; or use adaptive"]),
    ("20", []),
])
async def test_a_plan_too_small_to_decide_is_said_once_before_the_runs(project_root, runs, said) -> None:
    """Issue 39.7 / 37.11 in the TUI: launched with 10 runs, one warning before the runs groups the
    cases that plan cannot call above 80% even if every run passes (14 straight passes can); the
    bundled 20 runs can, and nothing is said."""
    assert await warnings_before_the_runs(project_root, runs, "this plan cannot decide") == ([said] if said else [])


@pytest.mark.parametrize(("cap", "said"), [
    ("60", ["adaptive can call a case \"above\" after a failure, because it decides within a margin (it weighs the "
            "threshold − 10 points against at most 99%): write-one-line (threshold 100%: \"above\" at 56 passes and "
            "1 fail) — use a fixed number of runs (adaptive off) when a case must never fail"]),
    ("40", []),  # within 40 runs a 100% case is called "above" only with no failure (31 straight passes)
])
async def test_adaptive_says_once_before_the_runs_which_cases_it_can_call_above_after_a_failure(project_root, cap,
                                                                                                  said) -> None:
    """threshold: 1.0 under adaptive: 56 passes and 1 fail were called "above" (the rule weighs 90% against 99%),
    where a fixed-N gate says below; nothing said so."""
    case = project_root / "cases" / "write-one-line" / "case.yaml"
    case.write_text(case.read_text().replace("threshold: 0.8", "threshold: 1.0"))
    assert await warnings_before_the_runs(project_root, cap, "adaptive decides within a margin",
                                          adaptive=True) == ([said] if said else [])


async def test_what_scarbook_yaml_set_aside_is_said_once_at_launch(project_root) -> None:
    """judge.batch: true under adaptive: `scarbook eval` warns that it is set aside (EvalPlan.notes) before the
    runs; the launch said nothing and the session judged online unsaid. Every reason is said: adaptive's rule, and
    the live screen that shows each verdict as its run ends (the note gave the first reason only)."""
    config = project_root / "scarbook.yaml"
    config.write_text(config.read_text().replace("  api_key_env: ANTHROPIC_API_KEY\n",
                                                 "  api_key_env: ANTHROPIC_API_KEY\n  batch: true\n"))
    assert "  batch: true\n" in config.read_text()
    said = await warnings_before_the_runs(project_root, "40", "scarbook.yaml set aside", adaptive=True)
    assert said == [["scarbook.yaml's judge.batch: true is set aside for this session: adaptive's rule decides each "
                     "case from verdicts as the runs end and the TUI's live screen shows each run's verdict as it "
                     "ends, and a batch gives them only after every run — the judge grades online"]]


async def test_scarbook_yamls_judge_batch_is_set_aside_at_launch_as_the_live_screen_shows_verdicts(project_root,
                                                                                                   monkeypatch) -> None:
    """judge.batch: true with a fixed number of runs: the TUI's launch sent the judge's requests in one batch after
    every run (its live screen showed no verdict until the API answered, minutes to a day later) while the README
    said "the TUI judges online". Now it judges online, and says so once at launch (before: no such warning)."""
    config = project_root / "scarbook.yaml"
    config.write_text(config.read_text().replace("  api_key_env: ANTHROPIC_API_KEY\n",
                                                 "  api_key_env: ANTHROPIC_API_KEY\n  batch: true\n"))
    assert "  batch: true\n" in config.read_text()
    said = await warnings_before_the_runs(project_root, "20", "scarbook.yaml set aside")
    assert said == [["scarbook.yaml's judge.batch: true is set aside for this session: the TUI's live screen shows "
                     "each run's verdict as it ends, and a batch gives them only after every run — the judge grades "
                     "online"]]
    plan = await tui_plan(project_root, monkeypatch, runs="20", concurrency="2", label="x", adaptive=False)
    assert not plan.judge_batch


async def test_a_refusal_at_80x24_is_scrolled_into_view_with_its_fix(project_root) -> None:
    """With three agents and a judged case without its key, the launch form at 80x24 holds more lines than its
    pane: Run's refusal was written below the fold, its fix ("choose another label, e.g. latest-run") off screen
    and nothing on screen moving. The form scrolls to it."""
    add_judged_case(project_root)
    config = project_root / "scarbook.yaml"
    config.write_text(config.read_text() + "agents:\n  a: {type: demo}\n  b: {type: demo}\n  c: {type: demo}\n")
    app = make_app(project_root, judge_env={})
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        await focus(pilot, "label")
        await type_text(pilot, "latest")
        await pilot.press("ctrl+r")
        error = app.screen.query_one("#launch-error")
        await wait_until(pilot, lambda: "latest-run" in str(error.render()), what="the refusal")
        await wait_until(pilot, lambda: "another label, e.g. latest-run" in screen_text(app), what="its fix on screen")
        assert isinstance(app.screen, LaunchScreen)


async def test_presets_and_agents_wider_than_80_columns_are_reached_and_shown(project_root) -> None:
    """Five presets and three agents with long names: their rows ran past the form's right edge at 80x24, so the
    last preset and the last agent could be tabbed to and pressed while nothing of them was on screen. Each row
    scrolls to the choice in focus."""
    config = project_root / "scarbook.yaml"
    text = config.read_text()
    start = text.index("presets:")
    end = text.index("stale_after_days:")
    config.write_text(text[:start] + "presets: {nightly-regression: 50, weekly-full-sweep: 100, quick-smoke-check: 5, "
                      "release-candidate: 200, prompt-change: 20}\n" + text[end:]
                      + "agents:\n  baseline-claude-sonnet: {type: demo}\n  candidate-claude-opus-long: {type: demo}\n"
                      "  another-candidate-agent: {type: demo}\n")
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        await focus(pilot, "preset-release-candidate")
        await wait_until(pilot, lambda: "release-candidate 200" in screen_text(app), what="the preset on screen")
        await pilot.press("enter")
        assert app.screen.query_one("#runs", Input).value == "200"
        await focus(pilot, "agent-another-candidate-agent")
        await wait_until(pilot, lambda: "another-candidate-agent" in screen_text(app), what="the agent on screen")
        await pilot.press("space")
        assert app.screen.query_one("#agent-another-candidate-agent", Checkbox).value


async def test_the_estimate_says_how_many_runs_undecided_more_may_add(project_root) -> None:
    """With scarbook.yaml's gate.undecided: more the modal said '50 runs: 5 cases × 10' and 'judge calls: 10 × 1
    case', though the session's looks add runs to an undecided case up to 40."""
    (project_root / "scarbook.yaml").write_text((project_root / "scarbook.yaml").read_text()
                                                + "gate: {undecided: more}\n")
    add_judged_case(project_root)
    app = make_app(project_root, judge_env={"ANTHROPIC_API_KEY": "sk-test"})
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await launch_form(pilot)
        await pilot.press("ctrl+u", "1", "0")
        estimate = app.screen.query_one("#estimate", Static)
        runs, more, judge = str(estimate.render()).splitlines()[:3]
        assert (runs, more) == ("50 runs: 5 cases × 10", "undecided: more may add runs to a case they leave "
                                                        "undecided, up to 40 a case: at most 200 runs")
        assert judge.startswith("judge calls: up to 40 × 1 case with llm_judge = up to 40 ("), judge
        await pilot.press("ctrl+u", "4", "0")  # at the cap: nothing to add
        runs, judge = str(estimate.render()).splitlines()[:2]
        assert runs == "200 runs: 5 cases × 40" and judge.startswith("judge calls: 40 × 1 case with llm_judge = 40 (")


LONG_LABEL_FIX = " (a name to pick the session by, e.g. prompt-v2) — choose a shorter label"


@pytest.mark.parametrize("label, said", [
    ("x[/] " + "y" * 300, f"label 'x[/] {'y' * 19}'… is 305 characters long; at most 120{LONG_LABEL_FIX}"),
    ("[bold]x[/] " + "y" * 300, f"label '[bold]x[/] {'y' * 13}'… is 311 characters long; at most 120{LONG_LABEL_FIX}"),
], ids=["a closing tag", "a style"])
async def test_a_refusal_quoting_the_label_shows_it_as_typed(project_root, label, said) -> None:
    """Run's refusal quotes the label typed. Before: the refusal was written as markup — a label holding `[/]` raised
    MarkupError and the app crashed; `[bold]x[/]` showed as a bold "x", the label not as typed."""
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        app.screen.query_one("#label", Input).value = label
        await pilot.pause()
        await pilot.press("ctrl+r")
        error = app.screen.query_one("#launch-error")
        await wait_until(pilot, lambda: "characters long" in str(error.render()), what="the refusal")
        assert str(error.render()) == said
        assert app.is_running and app._exception is None and isinstance(app.screen, LaunchScreen)
