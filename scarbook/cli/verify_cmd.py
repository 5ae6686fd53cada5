"""`scarbook verify`: does each case catch its own scar? `scarbook import` ends with the same certification
(verify_judge, say_verification)."""

from __future__ import annotations

import asyncio
import os

import click

from scarbook.cases.io import save_case
from scarbook.cases.verifications import CATCHES, ERROR, UNVERIFIED, VerificationStore
from scarbook.cli.common import friendly_errors, get_project, say, warn
from scarbook.run.session import SessionPlan, prepare_session
from scarbook.tools.verify import JUDGED_TIMES, reproduce_incident, verify_case


@click.command("verify")
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("--skip-judge", is_flag=True, help="Verify with rule checks only (as when no judge key is set): a scar "
              "that only an llm_judge check would catch stays unverified.")
@click.option("--judged", "times", type=click.IntRange(1), default=JUDGED_TIMES, show_default=True,
              help="Judge each artifact this many times (cases with an llm_judge check): differing verdicts "
              "are shown as 'judge unstable on this case' instead of certifying.")
@click.option("--reproduce", "reproduce", type=click.IntRange(1), default=None, metavar="N",
              help="Also run the agent N times on each case and record in case.yaml how often the incident "
              "reproduced (scar.reproduced: runs, fails, date, agent).")
@click.pass_context
@friendly_errors
def verify_command(ctx: click.Context, case_ids: tuple[str, ...], skip_judge: bool, times: int,
                   reproduce: int | None) -> None:
    """Certify each case's scar: (a) the failed artifact must FAIL the checks, (b) the good one PASS,
    both judged --judged times so an unstable judge shows; with --reproduce N, (c) how often the agent
    reproduces the incident. Badges: certified (a, b, judge stable), verified (a), misses, rejects
    good, judge unstable, unverified.

    Exit 1 when a case misses its scar, rejects its good artifact or its judge is unstable, 3 on errors.
    """
    from scarbook.cli.eval_cmd import select_cases

    project = get_project(ctx)
    cases = select_cases(project, case_ids, ())
    judge = verify_judge(project, cases, skip_judge)

    async def go():
        return [await verify_case(c, judge, times) for c in cases]

    results = asyncio.run(go())
    VerificationStore(project.workspaces_dir).save(results)
    width = max(len(c.id) for c in cases)
    for v in results:
        say_verification(v, width)
    if reproduce:
        _reproduce(ctx, project, cases, reproduce, width)
    bad = [v for v in results if v.outcome not in (CATCHES, UNVERIFIED, ERROR)]
    if bad:
        ctx.exit(1)
    if any(v.outcome == ERROR for v in results):
        ctx.exit(3)


def _reproduce(ctx: click.Context, project, cases, n: int, width: int) -> None:
    """verify --reproduce N: run the agent N times per case and write scar.reproduced to its case.yaml."""
    for case in cases:
        if case.scar is None:
            say(f"{case.id:<{width}}  reproduce: no scar to reproduce")
            continue
        prep = prepare_session(project, SessionPlan([case], n, label=f"reproduce {case.id}"))
        if prep.session is None:
            for error in prep.errors:
                say(f"scarbook: {error}", err=True)
            ctx.exit(2)
        for note in prep.notes:
            warn(note)
        counts = asyncio.run(reproduce_incident(prep.session))
        if counts is None:
            say(f"{case.id:<{width}}  reproduce: the session did not finish — nothing recorded", err=True)
            ctx.exit(3)
        case.scar.reproduced = counts
        save_case(case, project.cases_dir)
        say(f"{case.id:<{width}}  reproduced the incident in {counts['fails']} of {counts['runs']} runs "
            f"(session {counts['session']}; recorded as scar.reproduced)")


def verify_judge(project, cases, skip_judge: bool, quiet: bool = False):
    """The judge verify uses; None (said on stderr unless `quiet`) when its key is not set."""
    from scarbook.judge import judge_for

    # no key, no judge: asked before one is built, so the SDK is never imported for a judge that cannot be called
    if os.environ.get(project.config.judge.api_key_env, "").strip():
        return judge_for(cases, project.config.judge, skip=skip_judge)
    if not skip_judge and not quiet and any(c.judge_checks for c in cases):
        # Rule checks still decide every scar they can; only one that needs the judge stays unverified.
        say(f"verify: no judge key in ${project.config.judge.api_key_env}: llm_judge checks are skipped; "
            "a scar only the judge can catch stays unverified", err=True)
    judge = None
    return judge


def say_verification(v, width: int) -> None:
    colour = {CATCHES: "green", UNVERIFIED: "yellow", ERROR: "magenta"}.get(v.outcome, "red")
    say(f"{v.case_id:<{width}}  {click.style(v.outcome, fg=colour)}: {v.detail}")
    if v.certified:
        how = (f"the judge gave the same verdicts all {v.judged} times" if v.judge_stable
               else "rule checks only, no judge to disagree")
        say(f"{'':<{width}}  {click.style('certified', fg='green')}: the failed artifact fails, the good one "
            f"passes; {how}")


COMMANDS = [verify_command]
