"""`scarbook eval`: run the scar collection N times and gate CI on the pass rates.

It parses the options into one request, with the site they apply to (the project's folder, scarbook.yaml
as read, its history) and the cases as read; nothing below this command is handed the project. What the
options mean is the session layer's (scarbook/session/): the plan (session/plan.py), the estimate
(--dry-run, printed by cli/estimate.py), the report and its gate (session/report.py). Running the plan and
printing what it did is cli/eval_run.py, loaded only when a session runs: `scarbook eval --dry-run`
imports none of the runner, the judge or the reports."""

from __future__ import annotations

from pathlib import Path

import click

from scarbook.cli.common import (
    NamedFile,
    examples,
    friendly_errors,
    get_project,
    refuse_shared_names,
    report_case_problems,
)
from scarbook.cli.estimate import print_estimate
from scarbook.errors import ScarbookError
from scarbook.run.plan import SessionSite
from scarbook.session.plan import DEFAULT_MAX_RUNS, DEFAULT_ONLY, EvalRequest, plan_eval


@click.command("eval", epilog=examples(
    "scarbook eval --runs 20",
    "scarbook eval write-one-line --runs 20 --label prompt-v2",
    "scarbook eval --preset release --junit report.xml --json report.json",
    "scarbook eval --agents baseline,candidate --runs 20"))
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("-n", "--runs", default=None, help="Runs per case (default from scarbook.yaml), or 'auto' "
              "to stop each case once the evidence decides it against its threshold.")
@click.option("--preset", default=None, help="A named run count from scarbook.yaml (daily, prompt-change, release).")
@click.option("--max-runs", type=click.IntRange(1), default=DEFAULT_MAX_RUNS, show_default=True,
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
@click.option("-l", "--label", default="", help="A name for this session, e.g. prompt-v2 (for `scarbook diff`); not latest or previous, which pick by place, nor a recorded session's id; at most 120 characters.")
@click.option("-t", "--tag", "tags", multiple=True, help="Only cases with this tag (repeatable).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.001), default=None, help="Per-run timeout in seconds.")
@click.option("--json", "json_path", type=NamedFile(), default=None, help="Write the report as JSON (- for standard output).")
@click.option("--junit", "junit_path", type=NamedFile(), default=None, help="Write a JUnit XML report (- for standard output).")
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
@click.option("--isolation", type=click.Choice(["none", "sandbox", "slot", "auto"]), default=None,
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
@click.option("--agents", "agents", metavar="A,B,...", default=None,
              help="Compare named agents of scarbook.yaml's agents: in one session (the first is the baseline): "
              "each case runs N times per agent, in blocks of one run of each, same seeds, judge and sandbox; "
              "each candidate is decided better, worse, same within the margin or undecided, and the gate "
              "(gate.compare) exits 1 when one is shown worse than the baseline by more than the margin.")
@click.pass_context
@friendly_errors
def eval_command(ctx: click.Context, case_ids, runs, preset, max_runs, gate_mode, alpha, undecided, min_verdicts,
                 concurrency, label, tags, timeout_s,
                 json_path, junit_path, keep_all, skip_judge, no_judge_cache, judge_batch, max_cost, dry_run, quiet, against_ref,
                 isolation, executor_kind, shard_spec, session_id, retry_infra, rerun_ref, only,
                 record, replay_ref, fork_at, agents) -> None:
    """Run the selected cases (default: all) N times and print the case x pass-rate table.

    Exit codes: 0 no case decided below its threshold; 1 some case decided below (see --gate),
    or regressed against --against (Holm-corrected); 2 usage or config error (each printed;
    nothing runs); 3 no verdict: errors left a case with fewer judged runs than --min-verdicts,
    some runs were unjudged (--skip-judge: rule checks passed, the judge never graded), a case is
    undecided under --undecided fail, or the session did not finish (cancelled with Ctrl-C,
    stopped by --max-cost, aborted by the judge, crashed) — a partial session never gates green,
    even when a case is below its threshold. With --agents: 1 when a candidate is shown worse than
    the baseline by more than gate.compare's margin (default 5 points) on a case or the suite.

    Ctrl-C (or SIGTERM, SIGHUP) stops launching runs, kills the running agents (whole process
    group) and keeps every finished run in history; a second Ctrl-C quits at once.
    """
    project = get_project(ctx)
    refuse_shared_names({"--json": json_path, "--junit": junit_path})
    found = project.load_cases()
    report_case_problems(found.problems)
    request = EvalRequest(
        SessionSite(project.root, project.config), found,
        case_ids=case_ids, tags=tags, runs=runs, preset=preset, max_runs=max_runs, gate_mode=gate_mode, alpha=alpha,
        undecided=undecided, min_verdicts=min_verdicts, concurrency=concurrency, label=label, timeout_s=timeout_s,
        keep_all=keep_all, skip_judge=skip_judge, judge_cache=not no_judge_cache, judge_batch=judge_batch,
        max_cost=max_cost, against=against_ref, shard=shard_spec, session_id=session_id, retry_infra=retry_infra,
        rerun=rerun_ref, only=only, record=record, replay=replay_ref, fork_at=fork_at, dry_run=dry_run,
        agents=split_names(agents), isolation=isolation,
        reports={o: Path(p) for o, p in (("--json", json_path), ("--junit", junit_path)) if p})
    planned = plan_eval(request)
    if dry_run:
        print_estimate(planned)
        return
    from scarbook.cli.eval_run import run_planned  # the session's machinery: loaded when a session runs

    ctx.exit(run_planned(planned, quiet=quiet, executor_kind=executor_kind, json_path=json_path,
                         junit_path=junit_path))


def split_names(value: str | None) -> tuple[str, ...]:
    """--agents a,b,c: the names as given (empty ones dropped; what they name is the plan's to check). Given
    with no name at all — `--agents "$AGENTS"` with AGENTS unset — it is refused: the session ran agent: alone
    and gated as one agent, not the comparison asked for."""
    names = tuple(n.strip() for n in (value or "").split(",") if n.strip())
    if value is not None and not names:
        raise ScarbookError(f"--agents {value!r} names no agent (was the variable it came from unset?) — give two or "
                            "more names of scarbook.yaml's agents:, e.g. --agents baseline,candidate")
    return names


COMMANDS = [eval_command]
