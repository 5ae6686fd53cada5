"""`scarbook eval`: run the scar collection N times and gate CI on the pass rates."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Literal

import click
import msgspec

from scarbook.cli.against import echo_against, echo_annotations, resolve_against
from scarbook.cli.common import (
    case_id_of_arg,
    friendly_errors,
    get_project,
    refuse_unknown_cases,
    report_case_problems,
    say_written,
    warn,
)
from scarbook.config import GatePolicy
from scarbook.errors import ScarbookError
from scarbook.history.judge_truth import calibration_for
from scarbook.models import Case, GateMode, Isolation, SessionState, Undecided
from scarbook.project import Project
from scarbook.record import RecordSettings
from scarbook.reports.table import build_report, format_summary, format_table
from scarbook.reports.write import ReportPaths, write_reports
from scarbook.run.events import BatchProgress, CaseDecided, RunFinished, RunRetried, SessionFinished, SessionStarted
from scarbook.run.outcome import EXIT_OK, EXIT_USAGE
from scarbook.run.ray.executor import make_executor
from scarbook.run.runner import SessionControl, run_session
from scarbook.run.session import ReadySession, SessionPlan, prepare_session
from scarbook.run.shard import Shard
from scarbook.text import clean_text, cut_chars, plural
from scarbook.tools.rerun import DEFAULT_ONLY, RerunPick, pick_rerun
from scarbook.views.compare import compare_with_baseline


def select_cases(project: Project, names: tuple[str, ...], tags: tuple[str, ...]) -> list[Case]:
    found = project.load_cases()
    report_case_problems(found.problems)
    names = tuple(case_id_of_arg(project, n) for n in names)
    refuse_unknown_cases(project, found, names)
    if found.problems and not names:
        # A gate that skips a broken case would go green without it: nothing runs (docs/ci.md, exit 2).
        raise ScarbookError(f"{plural(len(found.problems), 'invalid case')} in {project.cases_dir} (see above) — "
                            "fix it, or name the cases to run: scarbook eval CASE...")
    by_id = found.by_id()
    cases = [by_id[n] for n in names] if names else list(found.cases)
    if tags:
        cases = [c for c in cases if set(tags) & set(c.tags)]
    if not cases:
        raise ScarbookError(f"no cases to run in {project.cases_dir}"
                            + (f" with tag {', '.join(tags)}" if tags else "")
                            + " — add one with the TUI (`scarbook`) or `scarbook import`")
    return cases


def resolve_runs(project: Project, runs: str | None, preset: str | None) -> int | Literal["auto"]:
    if runs and preset:
        raise ScarbookError("give --runs or --preset, not both")
    if preset:
        presets = project.config.presets
        if preset not in presets:
            raise ScarbookError(f"no preset {preset!r} — scarbook.yaml defines: {', '.join(presets)}")
        return presets[preset]
    if runs is None:
        return project.config.runs
    if runs == "auto":
        return "auto"
    if not runs.isdigit() or int(runs) < 1:
        raise ScarbookError(f"--runs must be a positive number or 'auto', got {runs!r}")
    return int(runs)


def gate_policy(project: Project, mode: str | None, alpha: float | None, undecided: str | None,
                min_verdicts: int | None, *, sharded: bool = False) -> GatePolicy:
    """scarbook.yaml's gate with the command line's flags over it."""
    gate = project.config.gate
    gate = msgspec.structs.replace(gate, mode=gate.mode if mode is None else GateMode(mode),
                                   alpha=gate.alpha if alpha is None else alpha,
                                   undecided=gate.undecided if undecided is None else Undecided(undecided),
                   min_verdicts=gate.min_verdicts if min_verdicts is None else min_verdicts)
    if gate.undecided == "more" and sharded:
        raise ScarbookError("--undecided more adds runs as the evidence comes in: it cannot run as a shard "
                            "(use --undecided pass or fail with --shard)")
    return gate


def make_judge(project: Project, cases: list[Case], skip_judge: bool):
    """The judge for `scarbook verify` (preflighted: no key is said before anything runs)."""
    from scarbook.judge import judge_for

    judge = judge_for(cases, project.config.judge, skip=skip_judge)
    if judge is not None:
        judge.preflight()
    return judge


class Progress:
    """A rich progress bar on a terminal; plain lines otherwise (CI logs)."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.done, self.quiet = total, 0, quiet
        self.tty = sys.stderr.isatty() and not quiet
        self.bar = None
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.task = self.bar.add_task("running", total=total)
            self.bar.start()

    def run_finished(self, ev: RunFinished) -> None:
        self.done += 1
        r = ev.run
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{r.case_id} #{r.k} {r.status}")
        elif not self.quiet:
            click.echo(f"[{self.done}/{self.total}] {r.case_id} #{r.k}: {r.status} — {clean_text(r.reason, one_line=True)}",
                       err=True)

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False)  # run text is never markup
        elif not self.quiet:
            click.echo(text, err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


async def _drive(ready: ReadySession, progress: Progress, executor=None) -> SessionFinished:
    control = SessionControl()
    loop = asyncio.get_running_loop()
    interrupted = {"n": 0}
    # SIGTERM (a CI runner cancelling the job) and SIGHUP (the terminal closed) stop like Ctrl-C.
    signals = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]

    def on_signal(sig: signal.Signals) -> None:
        interrupted["n"] += 1
        if interrupted["n"] == 1:
            said = "interrupted" if sig == signal.SIGINT else f"{sig.name} received"
            progress.note(f"{said}: stopping — running agents are killed, finished runs are kept "
                          "(Ctrl-C again to quit at once)")
            control.cancel()
        else:
            for s in signals:
                loop.remove_signal_handler(s)
            raise KeyboardInterrupt

    for sig in signals:
        try:
            loop.add_signal_handler(sig, on_signal, sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    finished = None
    async for ev in run_session(ready, control=control, executor=executor):
        if isinstance(ev, RunFinished):
            progress.run_finished(ev)
        elif isinstance(ev, CaseDecided):
            progress.note(f"{ev.case_id}: decided {ev.decision} after {plural(ev.runs, 'run')}")
        elif isinstance(ev, BatchProgress):
            progress.note(batch_progress_line(ev))
        elif isinstance(ev, RunRetried):
            progress.note(retry_note(ev))
        elif isinstance(ev, SessionStarted):
            progress.note(f"session {ev.session.id}: {plural(len(ready.plan.cases), 'case')}")
            if ev.stale_killed:
                warn(f"killed {plural(len(ev.stale_killed), 'process', 'processes')} an earlier scarbook left "
                     f"running when it was killed: {', '.join(ev.stale_killed)}")
        elif isinstance(ev, SessionFinished):
            finished = ev
    assert finished is not None  # run_session's last event, however the session ended
    return finished


def drive_session(ready: ReadySession, progress: Progress, executor=None) -> SessionFinished:
    """Run the session under `progress`; then say the damaged judge-cache entries its runs met and why
    it aborted or crashed (once, here: not repeated in the summary)."""
    try:
        finished = asyncio.run(_drive(ready, progress, executor))
    finally:
        progress.close()
    for note in judge_cache_notes(finished.runs):
        warn(note)
    info = finished.session
    if info.state in (SessionState.ABORTED, SessionState.CRASHED) and info.note:
        click.echo(f"scarbook: {info.note}", err=True)
    return finished


def batch_progress_line(ev: BatchProgress) -> str:
    """One line per change of the judge's batch: submitted / done."""
    return (f"judge batch {ev.batch_id}: {ev.done}/{plural(ev.submitted, 'request')} done"
            + ("" if ev.status == "ended" else f" ({ev.status.replace('_', ' ')}; Ctrl-C leaves it to "
                                                 f"`scarbook resume {ev.session_id}`)"))


def retry_note(ev: RunRetried) -> str:
    """The progress line of a run retried after an infra error (the evidence is the agent's text)."""
    rule = ev.cause.get("rule") or "infra"
    evidence = clean_text(str(ev.cause.get("evidence") or ""), one_line=True)
    return (f"{ev.case_id} #{ev.k}: infra error ({rule}{': ' + cut_chars(evidence, 100) if evidence else ''}) — "
            f"retrying, attempt {ev.attempt} of {ev.of}")


def judge_cache_notes(runs) -> list[str]:
    """The damaged judge-cache entries the session's runs met, each named once (they were ignored)."""
    notes: list[str] = []
    for run in runs:
        for check in run.checks:
            for note in (check.judge or {}).get("cache_notes") or []:
                if note not in notes:
                    notes.append(note)
    return notes


def _pick_rerun(project: Project, rerun_ref: str | None, only: str, case_ids: tuple[str, ...],
                tags: tuple[str, ...]) -> RerunPick | None:
    """--rerun SESSION --only ...: the source's cases to run again (tools/rerun.py), or None without --rerun."""
    if rerun_ref is None:
        if only != DEFAULT_ONLY:
            raise ScarbookError("--only chooses which runs of --rerun's session pick their case: give --rerun SESSION")
        return None
    if case_ids or tags:
        raise ScarbookError("--rerun picks the cases itself (those of the session with a matching run): "
                            "give no CASE names or --tag")
    return pick_rerun(project.history, rerun_ref, only)


def record_option(project: Project, record: bool, replay_ref: str | None, fork_at: int | None):
    """--record / --replay SESSION [--fork-at K] over scarbook.yaml's record: (its upstreams kept)."""
    if fork_at is not None and replay_ref is None:
        raise ScarbookError("--fork-at K goes with --replay SESSION: it replays the first K calls of each run")
    if not record and replay_ref is None:
        return None
    base = project.config.record or RecordSettings()
    if replay_ref is None:
        return msgspec.structs.replace(base, mode="record", source=None, fork_at=None)
    return msgspec.structs.replace(base, mode="replay", source=replay_ref, fork_at=fork_at)


@click.command("eval")
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("-n", "--runs", default=None, help="Runs per case (default from scarbook.yaml), or 'auto' "
              "to stop each case once the evidence decides it against its threshold.")
@click.option("--preset", default=None, help="A named run count from scarbook.yaml (daily, prompt-change, release).")
@click.option("--max-runs", type=click.IntRange(1), default=40, show_default=True,
              help="Cap per case with --runs auto, and with --undecided more.")
@click.option("--gate", "gate_mode", type=click.Choice(["evidence", "point"]), default=None,
              help="evidence: a case is red only when its runs show it below its threshold (family-wise false "
              "red at most --alpha); point: red when its rate is below (default from scarbook.yaml's gate:, "
              "else evidence).")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True, max_open=True), default=None,
              help="The gate's error rate (default 0.05).")
@click.option("--undecided", type=click.Choice(["pass", "fail", "more"]), default=None,
              help="A case the evidence cannot decide: pass with a warning (default), fail (exit 3: release "
              "gates), or more (run it again, up to --max-runs, until it decides).")
@click.option("--min-verdicts", type=click.IntRange(1), default=None,
              help="Judged runs a case needs for a verdict (default: half its runs, at least 3).")
@click.option("-j", "--concurrency", type=click.IntRange(1), default=None, help="Runs at once.")
@click.option("-l", "--label", default="", help="A name for this session, e.g. prompt-v2 (for `scarbook diff`).")
@click.option("-t", "--tag", "tags", multiple=True, help="Only cases with this tag (repeatable).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.001), default=None, help="Per-run timeout in seconds.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Write the report as JSON.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), default=None, help="Write a JUnit XML report.")
@click.option("--keep-all", is_flag=True, help="Keep the workspaces of passing runs too.")
@click.option("--skip-judge", is_flag=True, help="Run the rule checks only; judge checks are reported as skipped.")
@click.option("--no-judge-cache", "no_judge_cache", is_flag=True,
              help="Send every judge sample, even one an earlier session graded identically (see judge.cache).")
@click.option("--judge-batch", "judge_batch", is_flag=True,
              help="Send the judge's requests as one Message Batch once the agents are done: half the price, "
              "answered within 24 hours; killed meanwhile, `scarbook resume SESSION` finishes it (see judge.batch).")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, help="Stop starting runs once spend (USD) reaches this.")
@click.option("--dry-run", is_flag=True, help="Estimate runs, judge calls and cost; run nothing.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.option("--against", "against_ref", metavar="baseline|SESSION", default=None,
              help="Compare each case with the baseline (scarbook-baseline.json, see `scarbook baseline set`) "
              "or a past session, as `scarbook diff` does; exit 1 on a significant (Holm-corrected) regression.")
@click.option("--isolation", type=click.Choice(["none", "sandbox", "auto"]), default=None,
              help="Run agents and command checks in a bubblewrap sandbox (Linux; sandbox: refuse to run "
                   "without it) or unconfined (none); auto, the default unless scarbook.yaml says: the sandbox "
                   "where it starts, else unconfined and said. README: Threat model.")
@click.option("--executor", "executor_kind", type=click.Choice(["local", "ray"]), default=None,
              help="Where runs execute: this machine, or the Ray cluster of scarbook.yaml's executor: section "
              "(default: its type, else local).")
@click.option("--shard", "shard_spec", metavar="I/N", default=None,
              help="Run only shard I of N of the session's (case, run) jobs, e.g. one job of a CI matrix; "
              "needs --session-id. `scarbook merge` joins the shards and gates.")
@click.option("--session-id", default=None, help="The session the shards share (e.g. the CI pipeline id).")
@click.option("--retry-infra", "retry_infra", type=int, default=None, metavar="N",
              help="Run a run the machine failed (cause infra: rate limit, 5xx, OOM, killed, could not start) "
              "again, at most N times; every attempt is kept with its cause. Default: scarbook.yaml's "
              "retry_infra (1). Not with --runs auto, which never retries.")
@click.option("--rerun", "rerun_ref", metavar="SESSION", default=None,
              help="Run again just the cases of SESSION (id, label, latest) that had a run matching --only, as a "
              "new session linked to it; the source's rates never change.")
@click.option("--only", "only", metavar="WHAT", default=DEFAULT_ONLY, show_default=True,
              help="With --rerun: which runs pick their case — statuses (fail, error, unjudged) and causes "
              "(agent, infra, judge, case), comma-separated.")
@click.option("--record", "record", is_flag=True,
              help="Record every model call of every run into its transcript: agents get ANTHROPIC_BASE_URL / "
              "OPENAI_BASE_URL pointing at a local proxy and a dummy key (scarbook.yaml's record: sets the upstreams).")
@click.option("--replay", "replay_ref", metavar="SESSION", default=None,
              help="Answer each run's model calls from SESSION's recordings, in order, offline and free; a request "
              "that differs from the recorded one makes the run an error (replay diverged).")
@click.option("--fork-at", "fork_at", type=click.IntRange(min=0), default=None, metavar="K",
              help="With --replay: replay the first K calls of each run, then call the model live.")
@click.pass_context
@friendly_errors
def eval_command(ctx: click.Context, case_ids, runs, preset, max_runs, gate_mode, alpha, undecided, min_verdicts,
                 concurrency, label, tags, timeout_s,
                 json_path, junit_path, keep_all, skip_judge, no_judge_cache, judge_batch, max_cost, dry_run, quiet, against_ref,
                 isolation, executor_kind, shard_spec, session_id, retry_infra, rerun_ref, only,
                 record, replay_ref, fork_at) -> None:
    """Run the selected cases (default: all) N times and print the case x pass-rate table.

    Exit codes: 0 no case decided below its threshold; 1 some case decided below (see --gate),
    or regressed against --against (Holm-corrected); 2 usage or config error (each printed;
    nothing runs); 3 no verdict: errors left a case with fewer judged runs than --min-verdicts,
    some runs were unjudged (--skip-judge: rule checks passed, the judge never graded), a case is
    undecided under --undecided fail, or the session did not finish (cancelled with Ctrl-C,
    stopped by --max-cost, aborted by the judge, crashed) — a partial session never gates green,
    even when a case is below its threshold.

    Ctrl-C (or SIGTERM, SIGHUP) stops launching runs, kills the running agents (whole process
    group) and keeps every finished run in history; a second Ctrl-C quits at once.
    """
    project = get_project(ctx)
    if isolation is not None:  # this session's: a new config, the project's stays as read
        project = replace(project, config=project.config.with_overrides(isolation=Isolation(isolation)))
    if session_id is not None and shard_spec is None:
        raise ScarbookError("--session-id names a sharded session: give --shard I/N too")
    shard = Shard.parse(shard_spec, session_id) if shard_spec is not None else None
    rerun = _pick_rerun(project, rerun_ref, only, case_ids, tags)
    cases = select_cases(project, tuple(rerun.case_ids) if rerun else case_ids, tags)
    asked = resolve_runs(project, runs, preset)
    adaptive = asked == "auto"  # each case decided by its evidence, at most --max-runs runs
    n = asked if isinstance(asked, int) else max_runs
    if dry_run:
        from scarbook.cli.estimate import print_estimate

        print_estimate(project, cases, n, skip_judge, batch=judge_batch or project.config.judge.batch)
        return
    gate = gate_policy(project, gate_mode, alpha, undecided, min_verdicts, sharded=shard is not None)
    recording = record_option(project, record, replay_ref, fork_at)
    baseline = resolve_against(project, against_ref, cases, skip_judge) if against_ref else None
    prep = prepare_session(project, SessionPlan(cases, n, label=label, concurrency=concurrency,
                                                keep_all=keep_all or None, skip_judge=skip_judge,
                                                judge_cache=not no_judge_cache,
                                                judge_batch=judge_batch or project.config.judge.batch, timeout_s=timeout_s, max_cost=max_cost, adaptive=adaptive,
                                                shard=shard, retry_infra=retry_infra, gate=gate,
                                                max_runs=max(n, max_runs), rerun_of=rerun.link() if rerun else None,
                                                against=_against_ref(against_ref, baseline),
                                                reports={o: Path(p) for o, p in (("--json", json_path),
                                                                                 ("--junit", junit_path)) if p},
                                                record=recording))
    if prep.session is None:
        for error in prep.errors:
            click.echo(f"scarbook: {error}", err=True)
        ctx.exit(EXIT_USAGE)
    for note in prep.notes:
        warn(note)
    executor = make_executor(project.config.executor, prep.session, executor_kind)
    if executor is not None:
        note = executor.connect()  # an unreachable cluster is a usage error, said before anything is recorded
        if note:
            warn(note)
    total = sum(map(len, shard.jobs([c.id for c in cases], n).values())) if shard else n * len(cases)
    finished = drive_session(prep.session, Progress(total, quiet), executor)
    info = finished.session
    if info.state == SessionState.JUDGING:  # the summary says it too; stderr for a CI log's reader
        click.echo(f"scarbook: {info.note} (exit 3: no verdict until then)", err=True)
    rep = build_report(info, finished.runs, {c.id: c for c in cases}, project.config,
                       calibration_for(project.history, project.workspaces_dir, project.config.judge,
                                       {c.id: c for c in cases}), policy=gate)
    against = compare_with_baseline(project, baseline, finished.session, finished.runs) if baseline else None
    rep.regressed = against.regressed if against else []
    ctx.exit(say_outcome(project, rep, against, info, shard, ReportPaths.given(json=json_path, junit=junit_path)))


def _against_ref(ref: str | None, baseline) -> str:
    """What `scarbook resume` compares a judged batch session with: the baseline file, or the session
    --against named (by id: `previous` means another session by then)."""
    if baseline is None:
        return ""
    return "baseline" if ref == "baseline" else baseline.session_id


def say_outcome(project: Project, rep, against, info, shard: Shard | None, paths: ReportPaths) -> int:
    """Print the table, the summary and the comparison, write the reports; the exit code."""
    click.echo(format_table(rep))
    click.echo(format_summary(rep))
    if against:
        echo_against(against, project)
    echo_annotations(project, rep, against)
    reports_ok = say_written(write_reports(rep, against, paths, summary_env=os.environ))
    code = rep.exit_code
    if shard is not None:
        click.echo(f"shard {shard.label} of session {shard.session_id}: the gate is decided by `scarbook merge` "
                   f"over all {shard.count} shards")
        code = EXIT_OK if info.state == SessionState.FINISHED else rep.exit_code
    # a report file asked for is missing: said above, and never a green exit (the session is recorded)
    return code if reports_ok or code != EXIT_OK else EXIT_USAGE

COMMANDS = [eval_command]
