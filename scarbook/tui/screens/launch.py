"""The launch modal: which cases, how many runs, concurrency, label, and the judge calls it costs.

Run makes its fields an `EvalRequest`, as `scarbook eval` makes its options, and session/plan.py's
`plan_eval` makes it the same `SessionPlan`; the App (`StartSession`) prepares and runs it through the
same pipeline (prepare_session, run_session)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Static

from scarbook.cases.io import CaseSet
from scarbook.errors import ScarbookError
from scarbook.models import Case
from scarbook.models.words import ExecutorType, Undecided
from scarbook.run.plan import SessionSite
from scarbook.session.estimate import JudgeHistory, estimate_plan, price, read_judge_history
from scarbook.session.plan import DEFAULT_MAX_RUNS, EvalRequest, judge_key_missing, plan_eval
from scarbook.stats.sequential import SequentialRule
from scarbook.text import plural
from scarbook.tui.host import HostModalScreen
from scarbook.tui.messages import StartSession
from scarbook.tui.mounting import unless_removed

MIN_ADAPTIVE_CAP = SequentialRule.min_runs  # the rule never stops a case before this many runs


class LaunchScreen(HostModalScreen):
    BINDINGS = [Binding("escape,q", "cancel", "Cancel"), Binding("ctrl+r", "run", "Run", priority=True)]
    # Focused the moment the form is built: a focus() from on_mount lands a turn later, after Textual has
    # focused the first focusable widget, and a key typed in between acts there (tests/tui/test_first_focus.py)
    AUTO_FOCUS = "#runs"

    def __init__(self, selected: list[Case], filtered: list[Case], all_cases: list[Case]) -> None:
        super().__init__()
        self.scopes = [("selected", selected), ("filtered", filtered), ("all", all_cases)]
        self.scopes = [(name, cases) for name, cases in self.scopes if cases]
        self.judge_history: JudgeHistory | None = None  # read on a thread once the form is up

    def compose(self) -> ComposeResult:
        cfg = self.app.project.config
        # Compact fields (one line each) fit the whole form in 80×24; the form scrolls if it still does not
        # fit, and Run / Cancel sit below the scrolling part, so they are always on screen.
        with Vertical(id="launch"):
            with VerticalScroll(id="launch-form"):
                yield Label("Run cases", classes="title")
                with RadioSet(id="scope", compact=True):
                    for name, cases in self.scopes:
                        what = cases[0].id if name == "selected" else plural(len(cases), "case")
                        yield RadioButton(f"{name}: {what}", value=(name == "all" if len(self.scopes) > 1 else True),
                                          id=f"scope-{name}", compact=True)
                yield Label("runs per case (a number, or pick a preset)")
                with Horizontal(id="presets"):
                    yield Input(str(cfg.runs), id="runs", restrict=r"[0-9]*", max_length=4, compact=True)
                    for name, n in cfg.presets.items():
                        yield Button(f"{name} {n}", id=f"preset-{name}", classes="preset", compact=True)
                if cfg.agents:  # scarbook.yaml's agents: none ticked runs agent:, one runs it, several compare them
                    yield Label("agents (none: agent:; two or more: compared, the first ticked the baseline)")
                    with Horizontal(id="agents"):
                        for name in cfg.agents:
                            yield Checkbox(name, id=f"agent-{name}", classes="agent", compact=True)
                yield Checkbox("adaptive: stop each case once decided (runs = the cap)", id="adaptive", compact=True)
                yield Checkbox("run on the Ray cluster (scarbook.yaml's executor:)", value=cfg.executor.type == ExecutorType.RAY,
                               id="ray", compact=True)
                with Horizontal(classes="pair"):
                    yield Label("concurrency")
                    yield Input(str(cfg.concurrency), id="concurrency", restrict=r"[0-9]*", max_length=3, compact=True)
                with Horizontal(classes="pair"):
                    yield Label("label")
                    yield Input("", id="label", placeholder="e.g. prompt-v2", compact=True)
                yield Static("", id="estimate")
                yield Static("", id="launch-error", classes="error")
            with Horizontal(classes="buttons", id="launch-buttons"):
                yield Button("Run", id="run", variant="primary", compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    @unless_removed
    def on_mount(self) -> None:
        self._update_estimate()
        self._fit_form()
        if any(c.judge_checks for _, cases in self.scopes for c in cases):
            self.run_worker(self._read_judge_history, thread=True, exit_on_error=False)

    def _read_judge_history(self) -> None:
        """History's judge tokens per call (every session is read: off the UI's loop), then the price from them,
        as `scarbook eval --dry-run` prices the same plan."""
        history = read_judge_history(self.app.project.history)
        self.app.call_from_thread(self._priced, history)

    def _priced(self, history: JudgeHistory) -> None:
        self.judge_history = history
        self._update_estimate()

    @unless_removed
    def on_resize(self) -> None:
        self._fit_form()

    def _fit_form(self) -> None:
        """The form scrolls within what the screen leaves beside the border and the Run / Cancel line."""
        self.query_one("#launch-form").styles.max_height = max(3, self.size.height - 3)

    def chosen_cases(self) -> list[Case]:
        radio = self.query_one("#scope", RadioSet)
        idx = radio.pressed_index if radio.pressed_index >= 0 else len(self.scopes) - 1
        return self.scopes[idx][1]

    def chosen_agents(self) -> list[str]:
        """The named agents ticked, in scarbook.yaml's order, with gate.compare's baseline first when ticked."""
        names = [str(box.label) for box in self.query(".agent").results(Checkbox) if box.value]
        compare = self.app.project.config.gate.compare
        if compare is not None and compare.baseline in names:
            names.remove(compare.baseline)
            names.insert(0, compare.baseline)
        return names

    def _runs(self) -> int | None:
        text = self.query_one("#runs", Input).value
        return int(text) if text.isdigit() and int(text) > 0 else None

    def skip_judge(self, cases: list[Case]) -> bool:
        return judge_key_missing(self.app.project.config.judge, cases, self.app.judge_env)

    def _update_estimate(self) -> None:
        cases, runs = self.chosen_cases(), self._runs()
        out = self.query_one("#estimate", Static)
        if runs is None:
            out.update("runs must be a positive number")
            return
        adaptive = self.query_one("#adaptive", Checkbox).value
        if adaptive and runs < MIN_ADAPTIVE_CAP:
            out.update(f"adaptive needs a cap of at least {MIN_ADAPTIVE_CAP} runs per case")
            return
        skip = self.skip_judge(cases)
        agents = self.chosen_agents()
        each = len(agents) if len(agents) > 1 else 1  # a session of several agents runs each case per agent
        # scarbook.yaml's gate.undecided: more: its looks add runs to an undecided case, up to the cap (plan_eval's)
        looks = not adaptive and self.app.project.config.gate.undecided == Undecided.MORE and runs < DEFAULT_MAX_RUNS
        top = DEFAULT_MAX_RUNS if looks else runs  # the most runs a case may get
        est = estimate_plan(SessionSite.of(self.app.project), cases, top, skip_judge=skip or self.judge_history is None,
                            adaptive=adaptive, history=self.judge_history, agents=each)
        per = f" × {plural(each, 'agent')} (baseline {agents[0]})" if each > 1 else ""
        if adaptive:
            lines = [f"{est.fewest} to {est.agent_runs} runs: {plural(len(cases), 'case')}{per}, each stops once the "
                     f"evidence decides it (at most {runs})"]
        else:
            lines = [f"{runs * len(cases) * each} runs: {plural(len(cases), 'case')} × {runs}{per}"]
            if looks:
                lines.append(f"undecided: more may add runs to a case they leave undecided, up to {top} a case: at "
                             f"most {est.agent_runs} runs")
        upto = "up to " if adaptive or looks else ""
        judged = est.judged
        if not judged:
            lines.append("judge calls: 0 (no case has an llm_judge check)")
        elif skip:
            env = self.app.project.config.judge.api_key_env
            lines.append(f"no API key in ${env}: judge checks will be skipped "
                         f"({plural(judged, 'case')} {'has' if judged == 1 else 'have'} llm_judge checks; "
                         "the session is marked partial)")
        else:
            cost = (f"{est.judge.calls} API calls, about {price(est.judge.cost_usd)}" if est.judge is not None
                    else "pricing from past sessions…")
            lines.append(f"judge calls: {upto}{top * each} × {plural(judged, 'case')} with llm_judge = "
                         f"{upto}{top * each * judged} ({cost})")
        out.update("\n".join(lines))

    @on(RadioSet.Changed, "#scope")
    @on(Checkbox.Changed, "#adaptive")
    @on(Checkbox.Changed, ".agent")
    @on(Input.Changed, "#runs")
    def _changed(self) -> None:
        self._update_estimate()

    @on(Button.Pressed, ".preset")
    def _preset(self, event: Button.Pressed) -> None:
        name = (event.button.id or "").removeprefix("preset-")
        self.query_one("#runs", Input).value = str(self.app.project.config.presets[name])

    def _refuse(self, message: str) -> None:
        """Run's refusal, under the estimate at the form's foot: scrolled into view once it is laid out (at 80x24
        with agents and a judged case the form is taller than its pane, and the fix was below the fold)."""
        error = self.query_one("#launch-error", Static)
        error.update(Text(message))  # it may quote the label as typed: "[/]" in it is text, not markup
        self.call_after_refresh(error.scroll_visible, animate=False)

    @on(Button.Pressed, "#run")
    @on(Input.Submitted)
    def action_run(self) -> None:
        runs = self._runs()
        conc_text = self.query_one("#concurrency", Input).value
        if runs is None:
            self._refuse("runs must be a positive number, e.g. 10")
            return
        adaptive = self.query_one("#adaptive", Checkbox).value
        if adaptive and runs < MIN_ADAPTIVE_CAP:
            self._refuse(f"adaptive needs a cap of at least {MIN_ADAPTIVE_CAP} runs per case")
            return
        if not conc_text.isdigit() or int(conc_text) < 1:
            self._refuse("concurrency must be a positive number, e.g. 4")
            return
        cases = self.chosen_cases()
        agents = self.chosen_agents()
        request = EvalRequest(SessionSite.of(self.app.project), CaseSet(cases),
                              case_ids=tuple(c.id for c in cases), runs="auto" if adaptive else str(runs),
                              max_runs=runs if adaptive else DEFAULT_MAX_RUNS, concurrency=int(conc_text),
                              label=self.query_one("#label", Input).value.strip(), judge_env=self.app.judge_env,
                              skip_judge_without_key=True, watched=True, agents=tuple(agents) if len(agents) > 1 else (),
                              agent=agents[0] if len(agents) == 1 else None)
        try:
            planned = plan_eval(request)
        except ScarbookError as exc:
            self._refuse(str(exc))
            return
        self.app.post_message(StartSession(planned.plan, "ray" if self.query_one("#ray", Checkbox).value else "local",
                                           tuple(planned.notes)))
        self.dismiss(None)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
